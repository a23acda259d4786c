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

    /// Runs `/bin/sh -c command`; returns its status and what it wrote (standard output and error).
    /// posix_spawn, not Foundation's Process: in the vkms VM the latter cannot make its wake-up
    /// socket pair, and tests there build probes too.
    private static func shell(_ command: String) throws -> (status: Int32, output: String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BuildError(description: "pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let words: [String] = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else { throw BuildError(description: "cannot start /bin/sh: errno \(spawned)") }
        var output: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n > 0 { output += buffer[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exit, String(decoding: output, as: UTF8.self))
    }
}
