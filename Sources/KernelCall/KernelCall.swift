import Glibc
public import SystemPackage

/// The one way this package calls the kernel and the C libraries in front of it: `errno` is read
/// right after the call, before anything else (a log line, an allocation, another call) can change
/// it, and comes back as swift-system's `Errno`.
///
/// Each shape of C result has its call:
/// - ``check(_:)``: 0 on success (ioctls, most of libdrm);
/// - ``value(retryingInterrupts:_:)``: a non-negative value such as a descriptor, or -1;
/// - ``pointer(_:)``: a pointer, or nil.
///
/// All are inlinable and allocation-free, so the per-frame path can use them.
public enum KernelCall {
    /// Runs `call`, which returns 0 on success and anything else (with `errno` set) on failure.
    @inlinable
    public static func check(_ call: () -> Int32) throws(Errno) {
        if call() != 0 { throw Errno(rawValue: errno) }
    }

    /// Runs `call`, which returns 0 on success: nil, or the error. For paths that go on either
    /// way (a refusal decides the next step rather than ending the operation).
    @inlinable
    public static func status(_ call: () -> Int32) -> Errno? {
        call() == 0 ? nil : Errno(rawValue: errno)
    }

    /// Runs `call`, which returns a non-negative value (a descriptor, a byte count) or -1. A call
    /// interrupted by a signal (`EINTR`) is made again when `retryingInterrupts`.
    @inlinable
    public static func value(retryingInterrupts: Bool = true, _ call: () -> Int32) throws(Errno) -> Int32 {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = Errno(rawValue: errno)
            if code == .interrupted && retryingInterrupts { continue }
            throw code
        }
    }

    /// Runs `call`, which returns a pointer, or nil with `errno` set.
    @inlinable
    public static func pointer<Pointer>(_ call: () -> Pointer?) throws(Errno) -> Pointer {
        guard let result = call() else { throw Errno(rawValue: errno) }
        return result
    }
}
