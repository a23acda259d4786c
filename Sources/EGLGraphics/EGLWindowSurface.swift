internal import CEGL

/// An EGL window surface on a native window (`wl_egl_window *`, `gbm_surface *`), or a pbuffer.
///
/// Thread affinity: an EGL context is current per thread, and the main dispatch queue is not
/// always served by one thread (after `dispatchMain()` on Linux, and under Swift's async main,
/// pool threads serve it, sometimes alternating with the main thread). ``beginFrame()`` binds the
/// context to the calling thread unless it is already current there on this surface (no EGL call
/// then), and ``swapBuffers(damage:surfaceHeight:)-([PixelRect],_)`` releases it again, so whichever thread runs
/// the next frame can bind it: a context current on one thread cannot be bound on another.
///
/// Buffer age: ``bufferAge`` says how many frames ago the back buffer was last drawn (0: unknown
/// or new), so a frame can redraw only what changed since (see ``EGLCurrentSurface``).
public final class EGLWindowSurface {
    public let owner: EGLDisplayContext
    let surface: EGLSurface
    private var rects: [EGLint]
    private var swapInterval: Int32 = 0
    private var bound = false
    private var destroyed = false

    /// A window surface on a native window pointer.
    public init(context: EGLDisplayContext, nativeWindow: UnsafeMutableRawPointer) throws(EGLError) {
        guard let surface = eglCreatePlatformWindowSurface(context.display, context.config, nativeWindow, nil) else {
            throw EGLError.last("eglCreatePlatformWindowSurface")
        }
        self.owner = context
        self.surface = surface
        rects = []
        rects.reserveCapacity(4 * 16)
    }

    /// An offscreen pbuffer surface (surfaceless platform).
    public init(context: EGLDisplayContext, pbufferWidth width: Int32, height: Int32) throws(EGLError) {
        let attributes: [EGLint] = [EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE]
        guard let surface = eglCreatePbufferSurface(context.display, context.config, attributes) else {
            throw EGLError.last("eglCreatePbufferSurface(\(width)×\(height))")
        }
        self.owner = context
        self.surface = surface
        rects = []
    }

    deinit {
        destroy()
    }

    /// Destroys the EGL surface now (before the native window it was made on goes). Idempotent;
    /// nothing works on the surface afterwards.
    public func destroy() {
        guard !destroyed else { return }
        destroyed = true
        // A terminated display took its surfaces with it.
        guard !owner.isTerminated else { return }
        if eglGetCurrentSurface(EGL_DRAW) == surface {
            eglMakeCurrent(owner.display, nil, nil, nil)
        }
        eglDestroySurface(owner.display, surface)
    }

    /// Reads the surface's back buffer (what was drawn since ``beginFrame()``, before the swap)
    /// as RGBA rows from the top, `width*4` bytes each. The context must be current (between
    /// ``beginFrame()`` and the swap). Nil when GL's read entry points cannot be found.
    public func readPixels(width: Int32, height: Int32) -> [UInt8]? {
        guard !destroyed, width > 0, height > 0,
            let readAddress = eglGetProcAddress("glReadPixels"),
            let storeAddress = eglGetProcAddress("glPixelStorei")
        else { return nil }
        typealias ReadPixels = @convention(c) (Int32, Int32, Int32, Int32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Void
        typealias PixelStore = @convention(c) (UInt32, Int32) -> Void
        let read = unsafeBitCast(readAddress, to: ReadPixels.self)
        let store = unsafeBitCast(storeAddress, to: PixelStore.self)
        let rowBytes = Int(width) * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * Int(height))
        store(0x0D05 /* GL_PACK_ALIGNMENT */, 1)
        pixels.withUnsafeMutableBytes { raw in
            read(0, 0, width, height, 0x1908 /* GL_RGBA */, 0x1401 /* GL_UNSIGNED_BYTE */, raw.baseAddress)
        }
        // GL's rows start at the bottom.
        var flipped = [UInt8](repeating: 0, count: pixels.count)
        for row in 0..<Int(height) {
            let from = (Int(height) - 1 - row) * rowBytes
            flipped.replaceSubrange(row * rowBytes..<(row + 1) * rowBytes, with: pixels[from..<from + rowBytes])
        }
        return flipped
    }

    /// Hands what was drawn so far to the driver (`glFlush`) without waiting for it: for a
    /// pbuffer, whose swap does nothing, this is what a swap does for a window (the frame is
    /// rendered while the next one is prepared). The context must be current. Allocation-free.
    public func flush() {
        if flushFunction == nil { flushFunction = eglGetProcAddress("glFlush") }
        flushFunction?()
    }

    /// `glFlush`, looked up once (EGL hands out core GL entry points, whose type is that of a
    /// function without arguments: no GL import here).
    private var flushFunction: (@convention(c) () -> Void)?

    /// Sets the swap interval (0: "never block in swap": the frame source, not the swap, paces
    /// rendering) and checks the surface can be made current. Leaves it unbound.
    public func configure(swapInterval: Int32 = 0) throws(EGLError) {
        self.swapInterval = swapInterval
        try bind()
        guard eglSwapInterval(owner.display, swapInterval) == EGL_TRUE else {
            throw EGLError.last("eglSwapInterval(\(swapInterval))")
        }
        release()
    }

    /// Makes the context current on this surface for the calling thread; call before drawing.
    /// Nothing is called when it already is (a thread that runs frames in a row between releases,
    /// or set-up code that bound it once).
    public func beginFrame() throws(EGLError) {
        if !isCurrentOnThisThread { try bind() }
        bound = true
    }

    /// Whether the context is current on the calling thread with this surface.
    public var isCurrentOnThisThread: Bool {
        !destroyed && eglGetCurrentContext() == owner.context && eglGetCurrentSurface(EGL_DRAW) == surface
    }

    /// How many frames ago the back buffer's contents were drawn, when the surface is current
    /// (between ``beginFrame()`` and the swap): 1 is the previous frame, 2 the one before; 0 when
    /// the contents are undefined (a new buffer) or the driver does not tell
    /// (`EGL_EXT_buffer_age`), so everything must be drawn.
    public var bufferAge: Int {
        guard !destroyed, owner.supportsBufferAge else { return 0 }
        var age: EGLint = 0
        guard eglQuerySurface(owner.display, surface, EGL_BUFFER_AGE_EXT, &age) == EGL_TRUE else { return 0 }
        return Int(max(0, age))
    }

    /// Unbinds the context from the calling thread, e.g. before `dispatchMain()` retires the main
    /// thread, so whichever thread runs the next frame can bind it.
    public func releaseCurrent() {
        release()
    }

    private func bind() throws(EGLError) {
        guard !destroyed else { throw EGLError(operation: "eglMakeCurrent", code: 0, hint: "The surface was destroyed.") }
        guard !owner.isTerminated else { throw EGLError(operation: "eglMakeCurrent", code: 0, hint: "The EGL display was terminated.") }
        guard eglMakeCurrent(owner.display, surface, surface, owner.context) == EGL_TRUE else {
            throw EGLError.last("eglMakeCurrent", hint: "Is the context still current on another thread?")
        }
    }

    private func release() {
        guard !destroyed, !owner.isTerminated else { return }
        eglMakeCurrent(owner.display, nil, nil, nil)
        bound = false
    }

    /// Whether the context stays current on the drawing thread after a swap (default: released,
    /// so that whichever thread draws the next frame can bind it). Set it where one thread draws
    /// every frame (`DisplaySurface`'s main loop does): binding and releasing cost two
    /// `eglMakeCurrent` calls a frame, each a driver flush check and a system call in libglvnd.
    /// ``beginFrame()`` still binds the context when something else was made current meanwhile.
    public var staysCurrentAfterSwap = false

    private func releaseAfterSwap() {
        if bound && !staysCurrentAfterSwap { release() }
    }

    /// Presents the back buffer with one damage rectangle (nil: everything). Allocation-free.
    public func swapBuffers(damage: PixelRect?, surfaceHeight: Int32) throws(EGLError) {
        rects.removeAll(keepingCapacity: true)
        if let damage { appendDamage(damage, surfaceHeight: surfaceHeight) }
        try swapWithRects()
    }

    /// Presents the back buffer. `damage` (surface pixels, top-left origin) tells the compositor
    /// what changed; empty means "everything". Falls back to a plain swap when the extension is
    /// missing.
    public func swapBuffers(damage: [PixelRect] = [], surfaceHeight: Int32) throws(EGLError) {
        rects.removeAll(keepingCapacity: true)
        for r in damage { appendDamage(r, surfaceHeight: surfaceHeight) }
        try swapWithRects()
    }

    /// Adds `r` to the damage in EGL's order (x, y, width, height) and origin (bottom-left).
    private func appendDamage(_ r: PixelRect, surfaceHeight: Int32) {
        guard !r.isEmpty else { return }
        rects.append(r.x); rects.append(surfaceHeight - r.y - r.height)
        rects.append(r.width); rects.append(r.height)
    }

    /// Swaps with the damage in `rects` (none: a plain swap, everything damaged).
    private func swapWithRects() throws(EGLError) {
        guard !destroyed else { throw EGLError(operation: "eglSwapBuffers", code: 0, hint: "The surface was destroyed.") }
        if let swapWithDamage = owner.swapWithDamage, !rects.isEmpty {
            let ok = rects.withUnsafeMutableBufferPointer { buffer in
                swapWithDamage(owner.display, surface, buffer.baseAddress, EGLint(buffer.count / 4))
            }
            releaseAfterSwap()
            guard ok == EGL_TRUE else { throw EGLError.last("eglSwapBuffersWithDamage") }
            return
        }
        let ok = eglSwapBuffers(owner.display, surface)
        releaseAfterSwap()
        guard ok == EGL_TRUE else { throw EGLError.last("eglSwapBuffers") }
    }
}

/// The EGL surface current on the calling thread, as a renderer that draws "into whatever is
/// current" sees it: its buffer age and partial-update region. Allocation-free.
public enum EGLCurrentSurface {
    /// The back buffer's age of the surface current on this thread (see
    /// ``EGLWindowSurface/bufferAge``); 0 when none is current, for pbuffers, and on drivers
    /// without `EGL_EXT_buffer_age`.
    public static func bufferAge() -> Int {
        guard EGLDisplayCapabilities.anyTellsBufferAge else { return 0 }
        let display = eglGetCurrentDisplay()
        guard display != nil, let surface = eglGetCurrentSurface(EGL_DRAW),
            EGLDisplayCapabilities.of(display).bufferAge
        else { return 0 }
        var age: EGLint = 0
        guard eglQuerySurface(display, surface, EGL_BUFFER_AGE_EXT, &age) == EGL_TRUE else { return 0 }
        return Int(max(0, age))
    }

    /// Whether the surface current on this thread can tell its back buffer's age at all (a display
    /// with `EGL_EXT_buffer_age` or `EGL_KHR_partial_update`): without, every frame is drawn whole
    /// (e.g. llvmpipe on Wayland in Mesa 22.3, which offers neither).
    public static var tellsBufferAge: Bool {
        let display = eglGetCurrentDisplay()
        guard display != nil, eglGetCurrentSurface(EGL_DRAW) != nil else { return false }
        return EGLDisplayCapabilities.of(display).bufferAge
    }

    /// Declares what this frame draws (`EGL_KHR_partial_update`; pixels, bottom-left origin as
    /// GL's scissor): the driver may then keep the rest of the buffer as it was. Call after
    /// ``bufferAge()`` and before the frame's first drawing. Returns whether the driver took it
    /// (false without the extension: nothing to do).
    @discardableResult
    public static func setDamageRegion(x: Int32, y: Int32, width: Int32, height: Int32) -> Bool {
        let display = eglGetCurrentDisplay()
        guard display != nil, let surface = eglGetCurrentSurface(EGL_DRAW),
            let setDamageRegion = EGLDisplayCapabilities.of(display).setDamageRegion
        else { return false }
        var rect: (EGLint, EGLint, EGLint, EGLint) = (x, y, width, height)
        return withUnsafeMutableBytes(of: &rect) { raw in
            setDamageRegion(display, surface, raw.baseAddress!.assumingMemoryBound(to: EGLint.self), 1)
        } == EGL_TRUE
    }
}
