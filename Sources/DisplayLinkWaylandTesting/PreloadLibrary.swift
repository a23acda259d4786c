import Foundation

/// A small C library built while a test runs, to be preloaded (`LD_PRELOAD`) into a child process:
/// a probe that interposes a function to count its calls (llvmpipe's shader compiles, Swift's
/// allocations, frames presented).
package enum PreloadLibrary {
    package struct BuildError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Whether this process runs under a sanitizer: a child built alike could not load a preloaded
    /// library before the sanitizer's runtime, so probes cannot be used.
    package static var underSanitizer: Bool {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
    }

    /// Compiles `source` with the C compiler on `PATH` (clang, else cc) into `directory/name.so`
    /// and returns its path.
    package static func build(_ source: String, named name: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent(name + ".c"), library = directory.appendingPathComponent(name + ".so")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let compiler = try shell("command -v clang || command -v cc").output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !compiler.isEmpty else { throw BuildError(description: "no C compiler (clang or cc) on PATH to build \(name)") }
        let build = try shell("'\(compiler)' -O2 -shared -fPIC '\(file.path)' -o '\(library.path)' -ldl")
        guard build.status == 0 else { throw BuildError(description: "building \(name) failed: \(build.output)") }
        return library.path
    }

    private static func shell(_ command: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
