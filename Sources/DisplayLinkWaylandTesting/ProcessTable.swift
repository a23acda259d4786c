import Glibc

/// What `/proc` says about the processes running: how ``ChildProcess`` knows a process group is
/// gone, and how tests find a compositor that a child started (or that outlived it).
package enum ProcessTable {
    /// The fields of `/proc/PID/stat` that tell whether a process runs, and where it belongs.
    package struct Status: Sendable, Equatable {
        /// The state letter: `R`, `S`, `D`, `T`, `Z` (zombie), `X` (dead), …
        package var state: UInt8
        package var parent: pid_t
        package var group: pid_t

        /// Whether it has not ended: a zombie has, and holds nothing (no namespace, no socket).
        package var isLive: Bool { state != UInt8(ascii: "Z") && state != UInt8(ascii: "X") }
    }

    /// The status of `pid`; nil once it is gone (reaped).
    package static func status(of pid: pid_t) -> Status? {
        guard let stat = readFile("/proc/\(pid)/stat") else { return nil }
        // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after its
        // last ')'.
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 2, let state = fields[0].first,
            let parent = pid_t(String(decoding: fields[1], as: UTF8.self)),
            let group = pid_t(String(decoding: fields[2], as: UTF8.self))
        else { return nil }
        return Status(state: state, parent: parent, group: group)
    }

    /// Every process's id.
    package static func all() -> [pid_t] {
        directoryEntries("/proc")?.compactMap { pid_t($0.name) } ?? []
    }

    /// The processes of process group `group` that have not ended.
    package static func liveMembers(ofGroup group: pid_t) -> [pid_t] {
        all().filter { pid in status(of: pid).map { $0.group == group && $0.isLive } ?? false }
    }

    /// The processes that have not ended whose command line contains `text`, and whose parent is
    /// `parent` when given: a process that weston forks to start a helper client carries weston's
    /// command line until it execs, so a command line alone sometimes names two.
    package static func live(commandLineContaining text: String, parent: pid_t? = nil) -> [pid_t] {
        all().filter { pid in
            guard let status = status(of: pid), status.isLive, parent == nil || status.parent == parent,
                let line = readFile("/proc/\(pid)/cmdline")
            else { return false }
            return String(decoding: line.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self).contains(text)
        }
    }

    /// A file's text ("" when it cannot be read): logs, captured output, `/proc` files.
    /// A process's state, what it waits on in the kernel and its kernel stack (as root): what a
    /// test prints about a child that does not end.
    package static func kernelState(of pid: pid_t) -> String {
        func read(_ name: String) -> String { text(of: "/proc/\(pid)/\(name)").trimmingCharacters(in: .whitespacesAndNewlines) }
        let state = read("status").split(separator: "\n").first { $0.hasPrefix("State:") } ?? "State: ?"
        return "\(state), wchan \(read("wchan")), kernel stack:\n\(read("stack"))"
    }

    package static func text(of path: String) -> String {
        readFile(path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The entries of directory `path` but `.` and `..`; nil when it cannot be opened.
    static func directoryEntries(_ path: String) -> [(name: String, isDirectory: Bool)]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var entries: [(name: String, isDirectory: Bool)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { entries.append((name, entry.pointee.d_type == UInt8(DT_DIR))) }
        }
        return entries
    }

    /// A file's bytes; nil when it cannot be opened.
    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer.prefix(count)
        }
        return bytes
    }
}
