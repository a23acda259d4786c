import Dispatch
import DisplayLinkCore
import KernelCall
internal import CDRM

/// Reads the device's events (page flips, queued vblanks) on the main queue with
/// `drmHandleEvent`, and hands each to its display. Flip and vblank requests carry the display's
/// unretained pointer (``DRMDisplay/eventToken``); the display outlives this reader.
@MainActor
final class DRMEventReader {
    private let fd: Int32
    private var source: DispatchSourceRead?
    private var context = drmEventContext()
    private weak var display: DRMDisplay?

    /// `crtcInVblankEvent`: the driver reports the CRTC with each flip (`page_flip_handler2`).
    init(fd: Int32, crtcInVblankEvent: Bool, display: DRMDisplay) {
        self.fd = fd
        self.display = display
        context.version = 4
        context.page_flip_handler = DRMEventReader.pageFlipHandler
        context.page_flip_handler2 = crtcInVblankEvent ? DRMEventReader.pageFlipHandler2 : nil
        context.sequence_handler = DRMEventReader.sequenceHandler
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .main)
        source.setEventHandler { [weak self] in
            onMainActor(self) { $0?.read() }
        }
        self.source = source
        source.resume()
    }

    private func read() {
        guard let display, display.isRunning else { return }
        if let refusal = KernelCall.status({ drmHandleEvent(fd, &context) }) {
            display.fail(.kernel(operation: "drmHandleEvent", errno: refusal))
        }
    }

    /// Stops reading; `closeDevice` runs once libdispatch has let go of the descriptor (its
    /// cancel handler, on the main queue after this returns).
    func stop(thenClose closeDevice: @escaping @MainActor () -> Void) {
        guard let source else {
            closeDevice()
            return
        }
        source.setCancelHandler { MainActor.assumeIsolated { closeDevice() } }
        source.cancel()
        self.source = nil
    }

    // Every frame passes through these and the event source's handler: `onMainActor` rather than
    // `MainActor.assumeIsolated`, which allocates on every call. libdrm calls them from
    // `drmHandleEvent`, which `read()` makes on the main actor.

    /// Both page-flip callbacks (with and without the CRTC id) report the same thing.
    /// `crtcID`: the CRTC the event names (nil from `page_flip_handler`, which names none).
    private nonisolated static func flipCompleted(
        _ sequence: UInt32, _ seconds: UInt32, _ microseconds: UInt32, _ crtcID: UInt32?,
        _ data: UnsafeMutableRawPointer?
    ) {
        guard let data else { return }
        let display = Unmanaged<DRMDisplay>.fromOpaque(data).takeUnretainedValue()
        let nanoseconds = Int64(seconds) * 1_000_000_000 + Int64(microseconds) * 1000  // < 2⁶³: no overflow
        let report = FlipEventReport(sequence: sequence, time: MonotonicInstant(nanoseconds: nanoseconds), crtcID: crtcID)
        onMainActor((display, report)) { event in
            event.0.flipEvent(event.1)
        }
    }

    private nonisolated static let pageFlipHandler: @convention(c) (Int32, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Void = {
        _, sequence, seconds, microseconds, data in flipCompleted(sequence, seconds, microseconds, nil, data)
    }

    private nonisolated static let pageFlipHandler2:
        @convention(c) (Int32, UInt32, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?)
            -> Void = { _, sequence, seconds, microseconds, crtcID, data in flipCompleted(sequence, seconds, microseconds, crtcID, data) }

    private nonisolated static let sequenceHandler: @convention(c) (Int32, UInt64, UInt64, UInt64) -> Void = {
        _, sequence, nanoseconds, token in
        guard let pointer = UnsafeMutableRawPointer(bitPattern: UInt(token)) else { return }
        let display = Unmanaged<DRMDisplay>.fromOpaque(pointer).takeUnretainedValue()
        onMainActor((display, sequence, MonotonicInstant(nanoseconds: Int64(truncatingIfNeeded: nanoseconds)))) { event in
            event.0.vblankEvent(sequence: event.1, time: event.2)
        }
    }
}
