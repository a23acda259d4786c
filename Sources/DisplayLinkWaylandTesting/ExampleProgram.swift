import Glibc

/// A program of `Examples/` run as a child process that reports what it did on its standard
/// output, one line at a time, each starting with its name and a colon (`TouchKiosk: rest
/// offset=120.0`). The binary is the Examples package's debug build
/// (`swift build --package-path Examples`, which `make test` runs before the host suites and the
/// VM's: the checkout is shared into the VM at the same path).
package final class ExampleProgram {
    package struct NotBuilt: Error, CustomStringConvertible {
        package let path: String
        package var description: String {
            "\(path) is not built: run `swift build --package-path Examples` in the checkout (make test does, before the suites)"
        }
    }

    package let name: String
    package let process: ChildProcess

    /// The example's binary: `Examples/.build/debug/<name>` in this checkout.
    package static func path(_ name: String) -> String {
        var root = #filePath  // <root>/Sources/DisplayLinkWaylandTesting/ExampleProgram.swift
        for _ in 0..<3 { root = String(root[..<(root.lastIndex(of: "/") ?? root.startIndex)]) }
        return root + "/Examples/.build/debug/" + name
    }

    /// Starts the example `name` with `arguments` in `environment` (standard input /dev/null).
    package init(_ name: String, arguments: [String], environment: [String: String]) throws {
        let path = ExampleProgram.path(name)
        guard access(path, X_OK) == 0 else { throw NotBuilt(path: path) }
        self.name = name
        process = try ChildProcess([path] + arguments, environment: environment, output: .captured, errors: .captured)
    }

    deinit { process.stop() }

    /// Its report lines so far, without the name (lines that do not start with it are left out).
    package var lines: [String] {
        process.capturedOutput.split(separator: "\n").compactMap { line in
            line.hasPrefix(name + ": ") ? String(line.dropFirst(name.count + 2)) : nil
        }
    }

    /// Waits (a hang guard only) for a report line from `start` on that starts with `prefix`, or
    /// the program's end; returns the line's index and its `key=value` words, numbers as numbers.
    @MainActor
    package func line(from start: Int, _ prefix: String, within limit: Duration = .seconds(120)) async -> (
        index: Int, values: [String: Double]
    )? {
        func found() -> (Int, String)? {
            let lines = self.lines
            guard lines.count > start else { return nil }
            return lines[start...].enumerated().first { $0.element.hasPrefix(prefix) }.map { (start + $0.offset, $0.element) }
        }
        _ = await eventually(within: limit) { found() != nil || !process.isRunning }
        guard let (index, line) = found() else { return nil }
        var values: [String: Double] = [:]
        for word in line.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return (index, values)
    }

    /// Waits (a hang guard only) for the program to end; nil while it still runs after `limit`.
    @MainActor
    package func termination(within limit: Duration = .seconds(120)) async -> ChildProcess.Termination? {
        _ = await eventually(within: limit) { !process.isRunning }
        return process.termination
    }

    /// What it wrote (standard output, then standard error), for a failure's message.
    package var transcript: String { process.capturedOutput + process.capturedErrors }
}
