import DisplayLinkCore
import EGLGraphics
import SystemPackage

/// Drawing and presenting: the context bound per frame, the swap, and the swapped buffer handed
/// to the pacing (which sets the mode with it, flips it or holds it).
extension DRMDisplay {
    /// Binds the GL context for this frame.
    public func beginFrame() throws(EGLError) { try surface.beginFrame() }

    /// Unbinds the GL context from this thread.
    public func releaseCurrent() { surface.releaseCurrent() }

    /// Whether the context stays current after a flip's swap (see `EGLWindowSurface.staysCurrentAfterSwap`).
    public var staysCurrentAfterSwap: Bool {
        get { surface.staysCurrentAfterSwap }
        set { surface.staysCurrentAfterSwap = newValue }
    }

    /// Before the first frame: draws with `draw` into each buffer of the GBM surface in turn (up
    /// to four, as many as it hands out), and registers each for scanout (framebuffer, mapping),
    /// then gives them all back. Nothing is shown: the mode is set by the first presented frame.
    /// Allocating and faulting in a buffer would otherwise cost a frame its vblank. Leaves the
    /// context unbound; does nothing once the mode is set.
    public func prepareBuffers(upTo count: Int = 4, draw: () -> Void) throws(DRMError) {
        guard !pacer.isModeSet, isRunning else { return }
        var locked: [OpaquePointer] = []
        defer { for bo in locked { buffers.release(bo) } }
        for _ in 0..<count where buffers.hasFreeBuffer {
            do {
                try surface.beginFrame()
                draw()
                try surface.swapBuffers(damage: nil, surfaceHeight: height)
            } catch { throw .graphics(error.description) }
            let bo = try buffers.lockFront()
            _ = try buffers.scanoutBuffer(for: bo)  // gives `bo` back when it fails
            locked.append(bo)
        }
    }

    /// Presents the frame: swap, then set the mode (first frame) or queue a page flip.
    ///
    /// When the kernel refuses the buffer, the mode or the flip, the display has failed: the error
    /// is thrown here and also goes to ``onError``, and the links are invalidated (the schedulers
    /// counted on the frame reaching the screen; nothing would come after it).
    public func present() throws(DRMError) {
        guard isRunning else { return }
        do { try surface.swapBuffers(damage: nil, surfaceHeight: height) } catch { throw .graphics(error.description) }
        let bo = try buffers.lockFront()
        guard sessionActive else {
            // Another VT has the display: nothing is submitted (drawn outside a callback; dropped).
            buffers.release(bo)
            return
        }
        do {
            try pacer.submit(buffers.scanoutBuffer(for: bo))
        } catch {
            // The seat took master before its disable arrived (a VT switch during the first
            // frame's mode set): paused; the enable sets the mode again.
            if case .kernel(_, let code) = error, lostMasterToSeat(code) { return }
            fail(error)
            throw error
        }
    }

    /// The first frame: the mode set with `buffer` on screen (given back when it fails).
    func setMode(with buffer: ScanoutBuffer) throws(DRMError) {
        do { try crtc.setMode(buffer) } catch {
            buffers.release(buffer.bo)
            throw error
        }
        buffers.modeSet(with: buffer)
    }

    /// Queues a page flip to `buffer` (given back when it fails). Lost master is a pause, not a
    /// failure. `time`: when the flip was decided (recorded; default now).
    func queueFlip(_ buffer: ScanoutBuffer, decidedAt time: MonotonicInstant? = nil) throws(DRMError) {
        let userData = Unmanaged.passUnretained(self).toOpaque()
        let refusal =
            if let fault = faultHooks.flipCommit {
                fault(buffer.fb) { fb, event in crtc.flip(fb: fb, event: event, userData: userData) }
            } else {
                crtc.flip(fb: buffer.fb, event: true, userData: userData)
            }
        if let refusal {
            buffers.release(buffer.bo)
            if lostMasterToSeat(refusal) { return }
            throw .kernel(operation: crtc.flipOperation, errno: refusal)
        }
        buffers.flipQueued(buffer)
        diagnostics.flipSubmitted(at: time ?? MonotonicInstant.now())
    }

    // MARK: Kernel events

    func flipEvent(_ reported: FlipEventReport) {
        var report = reported
        if let fault = faultHooks.flipEvent { fault(&report) }
        guard isRunning else { return }
        if let named = report.crtcID, named != crtc.crtcID { report = ownCRTCVblank(instead: report) }
        let (sequence32, time) = (report.sequence, report.time)
        guard sessionActive, !resumeAwaitsFlip else {
            // A flip queued before the pause completed: only the buffers move on.
            buffers.flipCompleted()
            diagnostics.record(KernelVblank(sequence: pacer.sequence(extending: sequence32), time: time, kind: .flip))
            if resumeAwaitsFlip {
                resumeAwaitsFlip = false
                sessionEnabled()
            }
            return
        }
        pacer.flipCompleted(sequence32: sequence32, time: time)
    }

    func vblankEvent(sequence: UInt64, time: MonotonicInstant) {
        guard isRunning, sessionActive, !resumeAwaitsFlip else { return }
        pacer.vblankEvent(sequence: sequence, time: time)
    }

    /// A flip event naming a CRTC this display does not drive carries that CRTC's counter and time
    /// (a driver's bug): the event still completes this display's only pending flip, at a vblank
    /// read from its own CRTC now (the flip's or a later one), or, when the kernel gives none, with
    /// the values as they came.
    private func ownCRTCVblank(instead report: FlipEventReport) -> FlipEventReport {
        DRMDisplay.log.debug(
            "a flip event names CRTC \(report.crtcID ?? 0), not \(crtc.crtcID): its vblank is read from CRTC \(crtc.crtcID)")
        guard let current = crtc.currentVblank() else { return report }
        diagnostics.record(KernelVblank(sequence: current.sequence, time: current.time, kind: .current))
        return FlipEventReport(sequence: UInt32(truncatingIfNeeded: current.sequence), time: current.time, crtcID: crtc.crtcID)
    }
}
