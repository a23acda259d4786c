import Dispatch
import Glibc

/// Keys from the controlling terminal in raw mode (no echo, no line buffering), for a DRM/KMS
/// program on a text console. The terminal's settings are restored by ``restore()`` (and deinit).
@MainActor
public final class TerminalKeyboard {
    /// Called with each byte typed (' ', '\r', 'q', 0x1b …).
    public var onKey: ((UInt8) -> Void)?
    private var saved = termios()
    private var isRaw = false
    private var source: DispatchSourceRead?

    /// Nil when standard input is not a terminal (then there is nothing to read keys from).
    public init?() {
        guard isatty(0) != 0, tcgetattr(0, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        raw.c_cc.6 = 1  // VMIN
        raw.c_cc.5 = 0  // VTIME
        guard tcsetattr(0, TCSANOW, &raw) == 0 else { return nil }
        isRaw = true
        let source = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated { self?.readKeys() }
        }
        self.source = source
        source.resume()
    }

    isolated deinit { restore() }

    private func readKeys() {
        var buffer: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0)
        let count = withUnsafeMutableBytes(of: &buffer) { read(0, $0.baseAddress, 8) }
        guard count > 0 else {
            source?.cancel()  // end of input
            return
        }
        withUnsafeBytes(of: &buffer) { raw in
            for i in 0..<count { onKey?(raw[i]) }
        }
    }

    /// Puts the terminal back as it was. Idempotent.
    public func restore() {
        source?.cancel()
        source = nil
        if isRaw {
            tcsetattr(0, TCSANOW, &saved)
            isRaw = false
        }
    }
}
