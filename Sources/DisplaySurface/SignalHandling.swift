import Dispatch
import Glibc

extension DisplaySurface {
    /// Surfaces open in this process, oldest first.
    static var openSurfaces: [WeakSurface] = []
    private static var signalSources: [DispatchSourceSignal] = []
    private static var afterSignal: (@MainActor (Int32) -> Void)?

    /// Opt-in: SIGINT and SIGTERM close every open surface, newest first (each restores its
    /// display: the CRTC put back and DRM master dropped, the window and connection closed, then
    /// its close handlers, e.g. a private compositor stopped), then call `handler` with the signal
    /// number, or without one end the process with status 128 + the signal. Surfaces opened with
    /// ``Options/graphics`` `.external` are left open for `handler`: the program's swapchain and
    /// `VkSurfaceKHR` must go before the window they were made on, so `handler` destroys them and
    /// closes the surface (without a handler the process ends with them open, the compositor
    /// closing the window).
    ///
    /// It closes the surfaces open when the signal is handled, whether they were opened before or
    /// after this call, so call it any time before the main queue runs (`dispatchMain()` or
    /// ``runMainLoop()``), e.g. right after opening the first surface. The signals are handled on
    /// the main queue (ignored by the process, read by Dispatch): from this call on, a signal that
    /// arrives while a surface is still opening waits until the main queue runs. Before this call
    /// a signal ends the process at once without closing anything (the CRTC is not put back, the
    /// close handlers do not run). Calling it again replaces the handler.
    public static func installSignalHandlers(then handler: (@MainActor (Int32) -> Void)? = nil) {
        afterSignal = handler
        guard signalSources.isEmpty else { return }
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler {
                MainActor.assumeIsolated { DisplaySurface.terminate(signal: signalNumber) }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Closes every open surface, newest first.
    public static func closeAll() {
        for entry in openSurfaces.reversed() { entry.surface?.close() }
        openSurfaces.removeAll()
        surfacesGeneration += 1
    }

    private static func terminate(signal signalNumber: Int32) {
        for entry in openSurfaces.reversed() where entry.surface?.options.graphics != .external { entry.surface?.close() }
        if let afterSignal {
            afterSignal(signalNumber)
        } else {
            exit(128 + signalNumber)
        }
    }
}
