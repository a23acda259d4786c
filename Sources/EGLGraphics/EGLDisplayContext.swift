internal import CEGL
import Synchronization

/// Counts the contexts on each EGL display. A platform display is one per native display (all
/// surfaceless contexts share one, as do all windows of one Wayland connection), and
/// `eglTerminate` ends it for every user: it is called only when the last one goes.
enum EGLDisplayUsers {
    private static let counts = Mutex<[UInt: Int]>([:])

    /// `eglInitialize` and counting as one step, so no other thread's terminate falls between.
    static func initialize(_ display: EGLDisplay, _ major: inout EGLint, _ minor: inout EGLint) -> Bool {
        counts.withLock { counts in
            guard eglInitialize(display, &major, &minor) == EGL_TRUE else { return false }
            counts[UInt(bitPattern: display), default: 0] += 1
            return true
        }
    }

    static func remove(_ display: EGLDisplay) {
        counts.withLock { counts in
            let key = UInt(bitPattern: display)
            let left = (counts[key] ?? 1) - 1
            counts[key] = left > 0 ? left : nil
            if left <= 0 { eglTerminate(display) }
        }
    }
}

/// What each initialised EGL display offers that a renderer asks about per frame, looked up by
/// the current display (``EGLCurrentSurface``) without string searches.
struct EGLDisplayCapabilities {
    var bufferAge = false
    var setDamageRegion: PFNEGLSETDAMAGEREGIONKHRPROC?

    private static let known = Mutex<[UInt: EGLDisplayCapabilities]>([:])

    static func of(_ display: EGLDisplay?) -> EGLDisplayCapabilities {
        known.withLock { $0[UInt(bitPattern: display)] } ?? EGLDisplayCapabilities()
    }

    /// Whether any display initialised here tells buffer ages: where none does (llvmpipe on
    /// Wayland in Mesa 22.3), asking which surface is current each frame is needless (two EGL
    /// calls, each a system call in libglvnd).
    static var anyTellsBufferAge: Bool {
        known.withLock { displays in displays.values.contains { $0.bufferAge } }
    }

    static func record(_ display: EGLDisplay, _ capabilities: EGLDisplayCapabilities) {
        known.withLock { $0[UInt(bitPattern: display)] = capabilities }
    }
}

/// An initialised EGL display with a chosen config and a GLES context: what every backend
/// (Wayland window, GBM surface, offscreen tests) renders through.
///
/// Not thread-safe; use it on the thread that renders (the main actor in this project).
public final class EGLDisplayContext {
    public let platform: EGLPlatform
    /// The GLES version of the context: 3 when available, else 2.
    public private(set) var glesMajorVersion: Int32 = 0
    /// Whether `eglSwapBuffersWithDamage{KHR,EXT}` can be used.
    public let supportsSwapWithDamage: Bool
    /// Whether the surfaces tell their buffers' age (`EGL_EXT_buffer_age` or `EGL_KHR_partial_update`):
    /// what a frame must redraw depends on it (see ``EGLWindowSurface/bufferAge``).
    public let supportsBufferAge: Bool
    /// Whether `eglSetDamageRegionKHR` (`EGL_KHR_partial_update`) can be used.
    public let supportsPartialUpdate: Bool
    /// Bits of the config's depth buffer (0: none). The renderer's opaque pass needs one.
    public let depthBits: Int32
    public let vendor: String
    public let extensions: String
    /// The Mesa DRI driver behind the display (`EGL_MESA_query_driver`), e.g. `kms_swrast` for
    /// software rasterisation into dumb buffers, `iris`, `radeonsi`; nil where not reported.
    public let driverName: String?
    /// Whether frames are rasterised by the CPU (Mesa's software drivers).
    public var rendersInSoftware: Bool {
        guard let driverName else { return false }
        return ["kms_swrast", "swrast", "llvmpipe", "softpipe"].contains(driverName)
    }

    let display: EGLDisplay
    let config: EGLConfig
    let context: EGLContext
    let swapWithDamage: PFNEGLSWAPBUFFERSWITHDAMAGEKHRPROC?
    let setDamageRegion: PFNEGLSETDAMAGEREGIONKHRPROC?

    /// - Parameters:
    ///   - platform: the native display EGL runs on (a Wayland connection, a GBM device, or none).
    ///   - nativeVisualID: for GBM, the `GBM_FORMAT_*` the config must scan out as.
    ///   - alpha: whether the surface keeps an alpha channel (window surfaces on Wayland do not
    ///     need one: the compositor then treats them as opaque, which is cheaper).
    public init(platform: EGLPlatform, nativeVisualID: Int32? = nil, alpha: Bool = false) throws(EGLError) {
        self.platform = platform
        let platformEnum: EGLenum
        let native: UnsafeMutableRawPointer?
        switch platform {
        case .wayland(let display):
            platformEnum = EGLenum(EGL_PLATFORM_WAYLAND_KHR); native = UnsafeMutableRawPointer(display)
        case .gbm(let device):
            platformEnum = EGLenum(EGL_PLATFORM_GBM_KHR); native = UnsafeMutableRawPointer(device)
        case .surfaceless:
            platformEnum = EGLenum(EGL_PLATFORM_SURFACELESS_MESA); native = nil
        }
        guard let display = eglGetPlatformDisplay(platformEnum, native, nil) else {
            throw EGLError.last(
                "eglGetPlatformDisplay(\(platform))",
                hint: "Is Mesa's EGL installed (apt-get install libegl-mesa0 libgl1-mesa-dri)?")
        }
        var major: EGLint = 0, minor: EGLint = 0
        guard EGLDisplayUsers.initialize(display, &major, &minor) else {
            throw EGLError.last("eglInitialize", hint: "No EGL driver could open this display.")
        }
        guard eglBindAPI(EGLenum(EGL_OPENGL_ES_API)) == EGL_TRUE else {
            EGLDisplayUsers.remove(display)
            throw EGLError.last("eglBindAPI(EGL_OPENGL_ES_API)")
        }
        self.display = display
        let extensions = eglQueryString(display, EGL_EXTENSIONS).map { String(cString: $0) } ?? ""
        self.extensions = extensions
        self.vendor = eglQueryString(display, EGL_VENDOR).map { String(cString: $0) } ?? "unknown"
        if extensions.contains("EGL_MESA_query_driver"),
            let address = eglGetProcAddress("eglGetDisplayDriverName")
        {
            let query = unsafeBitCast(address, to: PFNEGLGETDISPLAYDRIVERNAMEPROC.self)
            driverName = query(display).map { String(cString: $0) }
        } else {
            driverName = nil
        }

        let surfaceBit: EGLint
        switch platform {
        case .surfaceless: surfaceBit = EGL_PBUFFER_BIT
        default: surfaceBit = EGL_WINDOW_BIT
        }
        // A depth buffer when the driver has one for this format (the renderer draws opaque
        // interiors front to back with the depth test), else none.
        // 24 bits tell 4 million instances apart; 16 bits 16,000.
        guard
            let config = [EGLint(24), 16, 0].lazy.compactMap({ depth in
                EGLDisplayContext.chooseConfig(
                    display, surfaceBit: surfaceBit, alpha: alpha, depth: depth,
                    nativeVisualID: nativeVisualID)
            }).first
        else {
            EGLDisplayUsers.remove(display)
            throw EGLError(
                operation: "eglChooseConfig", code: eglGetError(),
                hint: "No RGB888 GLES config" + (nativeVisualID.map { " with native visual \($0)" } ?? ""))
        }
        self.config = config
        var depth: EGLint = 0
        eglGetConfigAttrib(display, config, EGL_DEPTH_SIZE, &depth)
        depthBits = depth

        var context: EGLContext?
        for version: EGLint in [3, 2] {
            let attributes: [EGLint] = [EGL_CONTEXT_MAJOR_VERSION, version, EGL_NONE]
            context = eglCreateContext(display, config, nil, attributes)
            if context != nil {
                glesMajorVersion = version
                break
            }
        }
        guard let context else {
            EGLDisplayUsers.remove(display)
            throw EGLError.last("eglCreateContext (GLES 3 or 2)")
        }
        self.context = context

        let words = extensions.split(separator: " ")
        var proc: UnsafeMutableRawPointer?
        for name in ["eglSwapBuffersWithDamageKHR", "eglSwapBuffersWithDamageEXT"] {
            let ext = name.hasSuffix("KHR") ? "EGL_KHR_swap_buffers_with_damage" : "EGL_EXT_swap_buffers_with_damage"
            if words.contains(Substring(ext)), let p = eglGetProcAddress(name) {
                proc = unsafeBitCast(p, to: UnsafeMutableRawPointer.self)
                break
            }
        }
        swapWithDamage = proc.map { unsafeBitCast($0, to: PFNEGLSWAPBUFFERSWITHDAMAGEKHRPROC.self) }
        supportsSwapWithDamage = swapWithDamage != nil
        supportsPartialUpdate = words.contains("EGL_KHR_partial_update")
        supportsBufferAge = words.contains("EGL_EXT_buffer_age") || supportsPartialUpdate
        if supportsPartialUpdate, let p = eglGetProcAddress("eglSetDamageRegionKHR") {
            setDamageRegion = unsafeBitCast(p, to: PFNEGLSETDAMAGEREGIONKHRPROC.self)
        } else {
            setDamageRegion = nil
        }
        EGLDisplayCapabilities.record(
            display,
            EGLDisplayCapabilities(
                bufferAge: supportsBufferAge,
                setDamageRegion: setDamageRegion))
    }

    /// Whether ``terminate()`` ran.
    public private(set) var isTerminated = false

    /// Destroys the context and, with the display's last user, terminates the EGL display, now
    /// rather than when the object goes: for an owner that must free what the display was made
    /// on (a GBM device, a file descriptor) right after it, whoever still holds this object.
    /// Destroy the context's surfaces first. Idempotent; afterwards nothing can be made current.
    public func terminate() {
        guard !isTerminated else { return }
        isTerminated = true
        eglMakeCurrent(display, nil, nil, nil)
        eglDestroyContext(display, context)
        EGLDisplayUsers.remove(display)
    }

    deinit {
        terminate()
    }

    /// Makes the context current with no surface (surfaceless rendering into FBOs).
    public func makeCurrentWithoutSurface() throws(EGLError) {
        guard !isTerminated else {
            throw EGLError(operation: "eglMakeCurrent(no surface)", code: 0, hint: "The EGL display was terminated.")
        }
        guard eglMakeCurrent(display, nil, nil, context) == EGL_TRUE else {
            throw EGLError.last("eglMakeCurrent(no surface)", hint: "EGL_KHR_surfaceless_context is needed")
        }
    }

    private static func chooseConfig(
        _ display: EGLDisplay, surfaceBit: EGLint, alpha: Bool, depth: EGLint,
        nativeVisualID: Int32?
    ) -> EGLConfig? {
        let attributes: [EGLint] = [
            EGL_SURFACE_TYPE, surfaceBit,
            EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, alpha ? 8 : 0,
            EGL_DEPTH_SIZE, depth,
            EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
            EGL_NONE
        ]
        var count: EGLint = 0
        guard eglChooseConfig(display, attributes, nil, 0, &count) == EGL_TRUE, count > 0 else { return nil }
        var configs = [EGLConfig?](repeating: nil, count: Int(count))
        guard eglChooseConfig(display, attributes, &configs, count, &count) == EGL_TRUE else { return nil }
        for case let config? in configs.prefix(Int(count)) {
            var value: EGLint = 0
            if let visual = nativeVisualID {
                eglGetConfigAttrib(display, config, EGL_NATIVE_VISUAL_ID, &value)
                if value != visual { continue }
            }
            // Prefer exact 8-bit channels (no 10-bit configs) and the alpha asked for.
            eglGetConfigAttrib(display, config, EGL_RED_SIZE, &value)
            guard value == 8 else { continue }
            eglGetConfigAttrib(display, config, EGL_ALPHA_SIZE, &value)
            guard (value > 0) == alpha else { continue }
            return config
        }
        // Only a config that has what was asked for (EGL also lists ones with more).
        return nativeVisualID == nil && depth == 0 ? configs.first ?? nil : nil
    }
}
