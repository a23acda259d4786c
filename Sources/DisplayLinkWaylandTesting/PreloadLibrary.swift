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

    /// Builds `source` (as ``build(_:named:in:)``) in a scratch directory of its own, runs `body` with
    /// the library's path, and removes the directory. Under a sanitizer `body` does not run: `test`
    /// prints that it skipped.
    package static func withLibrary(_ source: String, named name: String, for test: String, _ body: (String) throws -> Void) throws {
        guard !underSanitizer else {
            print("\(test): skipped under a sanitizer (the probe cannot be preloaded before its runtime)")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(build(source, named: name, in: directory))
    }

    /// Runs `/bin/sh -c command`; returns its status and what it wrote (standard output and error).
    /// The limit only turns a hung compiler into a failure.
    private static func shell(_ command: String) throws -> (status: Int32, output: String) {
        let run = try ChildProcess.run(["/bin/sh", "-c", command], errors: .standardOutput, limit: .seconds(600))
        return (run.termination.status, run.output)
    }
}
