import DisplayLinkCore
import Logging
import KernelCall
internal import CDRM

/// The connector, CRTC, mode and primary plane a display drives, chosen from what the device
/// offers: the first connected connector, its preferred mode or the one asked for (retimed from
/// a listed mode of that size when the rate is not listed), and a CRTC that can drive it.
struct OutputSelection {
    let connectorID: UInt32
    let connectorName: String
    /// The connector's physical size in millimetres (0 when unknown, as virtual outputs report).
    let physicalSize: (width: UInt32, height: UInt32)
    let crtcID: UInt32
    let mode: DisplayMode
    let modeInfo: drmModeModeInfo
    /// Another listed mode (the preferred one when it is not `mode`): the atomic test commit
    /// tries it to tell a refused mode from a refused buffer.
    let alternativeMode: (info: drmModeModeInfo, name: String)?
    let plane: PrimaryPlane?

    static func choose(device: DRMDevice, request: ModeRequest?) throws(DRMError) -> OutputSelection {
        let fd = device.fd
        let resources: UnsafeMutablePointer<drmModeRes>
        do { resources = try KernelCall.pointer { drmModeGetResources(fd) } } catch {
            throw .kernel(operation: "drmModeGetResources(\(device.path))", errno: error)
        }
        defer { drmModeFreeResources(resources) }
        var chosen: UnsafeMutablePointer<drmModeConnector>?
        for i in 0..<Int(resources.pointee.count_connectors) {
            guard let c = drmModeGetConnector(fd, resources.pointee.connectors[i]) else { continue }
            if c.pointee.connection == DRM_MODE_CONNECTED && c.pointee.count_modes > 0 {
                chosen = c
                break
            }
            drmModeFreeConnector(c)
        }
        guard let connector = chosen else { throw .noConnectedConnector(path: device.path) }
        defer { drmModeFreeConnector(connector) }
        let name = connectorName(connector.pointee)
        let modes = (0..<Int(connector.pointee.count_modes)).map { i in
            (mode: DisplayMode(connector.pointee.modes[i]), info: connector.pointee.modes[i])
        }
        let selected = try request?.select(from: modes.map(\.mode)) ?? (modes.first { $0.mode.isPreferred } ?? modes[0]).mode
        let info = try modeInfo(for: selected, among: modes, request: request, connector: name)
        guard let crtc = findCrtc(fd: fd, resources: resources, connector: connector) else { throw .noCRTC(connector: name) }
        let crtcIndex = (0..<Int(resources.pointee.count_crtcs)).first { resources.pointee.crtcs[$0] == crtc } ?? 0
        let listed = modes.first { $0.mode.isPreferred && $0.mode != selected } ?? modes.first { $0.mode != selected }
        return OutputSelection(
            connectorID: connector.pointee.connector_id, connectorName: name,
            physicalSize: (connector.pointee.mmWidth, connector.pointee.mmHeight), crtcID: crtc,
            mode: selected, modeInfo: info, alternativeMode: listed.map { ($0.info, "\($0.mode)") },
            plane: PrimaryPlane.find(fd: fd, crtcIndex: crtcIndex))
    }

    /// The kernel mode for `selected`: the listed one, or one retimed from the preferred (or
    /// first) progressive mode of that size (an interlaced one's sync timings and flags would
    /// not fit).
    private static func modeInfo(
        for selected: DisplayMode, among modes: [(mode: DisplayMode, info: drmModeModeInfo)],
        request: ModeRequest?, connector: String
    ) throws(DRMError) -> drmModeModeInfo {
        let why = request.map { "chosen for \($0)" } ?? "(the connector's preferred)"
        if let listed = modes.first(where: { $0.mode == selected }) {
            DRMDisplay.log.debug(
                """
                mode \(selected) \(why), listed: exact period \(selected.period.value) ns (htotal \(selected.htotal) · \
                vtotal \(selected.vtotal) / \(selected.clock) kHz) on \(connector)
                """)
            return listed.info
        }
        let sameSize = modes.filter { $0.mode.width == selected.width && $0.mode.height == selected.height && !$0.mode.interlaced }
        guard let baseInfo = (sameSize.first { $0.mode.isPreferred } ?? sameSize.first)?.info else {
            throw .modeNotFound(requested: "\(selected)", available: modes.map { "\($0.mode.width)x\($0.mode.height)" })
        }
        let base = DisplayMode(baseInfo)
        DRMDisplay.log.debug(
            """
            mode \(selected) retimed for \(request.map { "\($0)" } ?? "the request") from the listed \(base) \
            (htotal·vtotal/clock \(base.htotal)·\(base.vtotal)/\(base.clock) kHz → \(selected.htotal)·\(selected.vtotal)/\
            \(selected.clock) kHz): exact period \(selected.period.value) ns on \(connector)
            """)
        return try custom(selected, basedOn: baseInfo)
    }

    static func hasConnectedConnector(fd: Int32) -> Bool {
        guard let resources = drmModeGetResources(fd) else { return false }
        defer { drmModeFreeResources(resources) }
        for i in 0..<Int(resources.pointee.count_connectors) {
            guard let c = drmModeGetConnector(fd, resources.pointee.connectors[i]) else { continue }
            let connected = c.pointee.connection == DRM_MODE_CONNECTED
            drmModeFreeConnector(c)
            if connected { return true }
        }
        return false
    }

    static func connectorName(_ c: drmModeConnector) -> String {
        let type: String
        switch c.connector_type {
        case UInt32(DRM_MODE_CONNECTOR_VIRTUAL): type = "Virtual"
        case UInt32(DRM_MODE_CONNECTOR_HDMIA): type = "HDMI-A"
        case UInt32(DRM_MODE_CONNECTOR_DisplayPort): type = "DP"
        case UInt32(DRM_MODE_CONNECTOR_eDP): type = "eDP"
        case UInt32(DRM_MODE_CONNECTOR_VGA): type = "VGA"
        case UInt32(DRM_MODE_CONNECTOR_DVII), UInt32(DRM_MODE_CONNECTOR_DVID): type = "DVI"
        case UInt32(DRM_MODE_CONNECTOR_LVDS): type = "LVDS"
        default: type = "Connector\(c.connector_type)"
        }
        return "\(type)-\(c.connector_type_id)"
    }

    static func findCrtc(
        fd: Int32, resources: UnsafeMutablePointer<drmModeRes>,
        connector: UnsafeMutablePointer<drmModeConnector>
    ) -> UInt32? {
        if let encoder = drmModeGetEncoder(fd, connector.pointee.encoder_id) {
            defer { drmModeFreeEncoder(encoder) }
            if encoder.pointee.crtc_id != 0 { return encoder.pointee.crtc_id }
        }
        for e in 0..<Int(connector.pointee.count_encoders) {
            guard let encoder = drmModeGetEncoder(fd, connector.pointee.encoders[e]) else { continue }
            defer { drmModeFreeEncoder(encoder) }
            for c in 0..<Int(resources.pointee.count_crtcs) where encoder.pointee.possible_crtcs & (1 << UInt32(c)) != 0 {
                return resources.pointee.crtcs[c]
            }
        }
        return nil
    }

    /// A kernel mode struct with the timings of `mode`, stretching `base`'s vertical blanking.
    static func custom(_ mode: DisplayMode, basedOn base: drmModeModeInfo) throws(DRMError) -> drmModeModeInfo {
        guard let clock = UInt32(exactly: mode.clock), let htotal = UInt16(exactly: mode.htotal),
            let vtotal = UInt16(exactly: mode.vtotal), let vrefresh = UInt32(exactly: mode.vrefresh), vtotal >= base.vtotal
        else {
            throw .graphics(
                "The mode \(mode) cannot be made from the listed \(mode.width)x\(mode.height) mode: its timings "
                    + "(htotal \(mode.htotal), vtotal \(mode.vtotal), clock \(mode.clock) kHz) do not fit a kernel mode. "
                    + "Choose another rate (mode in DisplaySurface.Options or DRMDisplay.Options).")
        }
        var info = base
        info.clock = clock
        info.htotal = htotal
        let extra = vtotal - base.vtotal
        info.vtotal = vtotal
        info.vsync_start = base.vsync_start &+ extra
        info.vsync_end = base.vsync_end &+ extra
        info.vrefresh = vrefresh
        info.type = UInt32(DRM_MODE_TYPE_USERDEF)
        let name = Array("\(mode.width)x\(mode.height)@\(mode.vrefresh)".utf8.prefix(31)) + [0]
        withUnsafeMutableBytes(of: &info.name) { raw in
            for (i, b) in name.enumerated() { raw[i] = b }
        }
        return info
    }
}

extension DisplayMode {
    init(_ info: drmModeModeInfo) {
        self.init(
            width: Int(info.hdisplay), height: Int(info.vdisplay), htotal: Int(info.htotal), vtotal: Int(info.vtotal),
            clock: Int(info.clock), interlaced: info.flags & UInt32(DRM_MODE_FLAG_INTERLACE) != 0,
            doubleScan: info.flags & UInt32(DRM_MODE_FLAG_DBLSCAN) != 0, vrefresh: Int(info.vrefresh),
            isPreferred: info.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0)
    }
}
