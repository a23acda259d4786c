import Glibc

/// Writes a line to standard error (without touching the C `stderr` global).
func printError(_ message: String) {
    let line = "displaylink-demo: " + message + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}
