internal import CDRM
import Glibc
import KernelCall
import SystemPackage

/// The primary plane of a CRTC and what it can scan out (needs `DRM_CLIENT_CAP_UNIVERSAL_PLANES`,
/// which `DRM_CLIENT_CAP_ATOMIC` implies).
struct PrimaryPlane {
    var id: UInt32
    var formats: PlaneFormats

    /// The primary plane that can drive the CRTC at `crtcIndex` (its bit in `possible_crtcs`).
    static func find(fd: Int32, crtcIndex: Int) -> PrimaryPlane? {
        guard let planes = drmModeGetPlaneResources(fd) else { return nil }
        defer { drmModeFreePlaneResources(planes) }
        for i in 0..<Int(planes.pointee.count_planes) {
            guard let plane = drmModeGetPlane(fd, planes.pointee.planes[i]) else { continue }
            defer { drmModeFreePlane(plane) }
            guard plane.pointee.possible_crtcs & (1 << UInt32(crtcIndex)) != 0 else { continue }
            let id = plane.pointee.plane_id
            var isPrimary = false
            var inFormats: PlaneFormats?
            forEachProperty(fd: fd, object: id, type: UInt32(DRM_MODE_OBJECT_PLANE)) { name, value in
                if name == "type" { isPrimary = value == UInt64(DRM_PLANE_TYPE_PRIMARY) }
                if name == "IN_FORMATS", value != 0, let blob = drmModeGetPropertyBlob(fd, UInt32(truncatingIfNeeded: value)) {
                    let bytes = Array(UnsafeRawBufferPointer(start: blob.pointee.data, count: Int(blob.pointee.length)))
                    inFormats = PlaneFormats(inFormatsBlob: bytes)
                    drmModeFreePropertyBlob(blob)
                }
            }
            guard isPrimary else { continue }
            let plain = (0..<Int(plane.pointee.count_formats)).map { plane.pointee.formats[$0] }
            return PrimaryPlane(id: id, formats: inFormats ?? PlaneFormats(formats: plain))
        }
        return nil
    }
}

/// Calls `body` with each property's name and current value of a KMS object.
func forEachProperty(fd: Int32, object: UInt32, type: UInt32, _ body: (String, UInt64) -> Void) {
    guard let properties = drmModeObjectGetProperties(fd, object, type) else { return }
    defer { drmModeFreeObjectProperties(properties) }
    for i in 0..<Int(properties.pointee.count_props) {
        guard let property = drmModeGetProperty(fd, properties.pointee.props[i]) else { continue }
        let name = withUnsafeBytes(of: property.pointee.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        drmModeFreeProperty(property)
        body(name, properties.pointee.prop_values[i])
    }
}

/// The property ids of a KMS object, by name.
func propertyIDs(fd: Int32, object: UInt32, type: UInt32) -> [String: UInt32] {
    var ids: [String: UInt32] = [:]
    guard let properties = drmModeObjectGetProperties(fd, object, type) else { return ids }
    defer { drmModeFreeObjectProperties(properties) }
    for i in 0..<Int(properties.pointee.count_props) {
        guard let property = drmModeGetProperty(fd, properties.pointee.props[i]) else { continue }
        let name = withUnsafeBytes(of: property.pointee.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        ids[name] = property.pointee.prop_id
        drmModeFreeProperty(property)
    }
    return ids
}

/// Atomic modesetting: the mode set as one `ALLOW_MODESET` commit (connector → CRTC, the mode
/// blob, the primary plane with the framebuffer), validated first by a `TEST_ONLY` commit; page
/// flips as `NONBLOCK | PAGE_FLIP_EVENT` commits of the plane's `FB_ID` (issued with caller-owned
/// arrays: no allocation per flip); the restore as one commit of what was there before.
final class AtomicKMS: KMSOutput {
    let target: KMSTarget
    let plane: PrimaryPlane
    let width: UInt32, height: UInt32
    /// A listed mode to try when the test commit is refused (to tell whether the mode is the cause).
    let alternativeMode: (info: drmModeModeInfo, name: String)?
    private var modeBlob: UInt32 = 0
    private let connectorCrtc: UInt32
    private let crtcMode: UInt32, crtcActive: UInt32
    private let planeFB: UInt32, planeCrtc: UInt32
    private let planeSrc: (x: UInt32, y: UInt32, w: UInt32, h: UInt32)
    private let planeDst: (x: UInt32, y: UInt32, w: UInt32, h: UInt32)
    /// The flip commit's arrays: one object (the plane), two properties (FB_ID, CRTC_ID).
    private let flipObjects = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
    private let flipCounts = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
    private let flipProps = UnsafeMutablePointer<UInt32>.allocate(capacity: 2)
    private let flipValues = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)

    var api: KMSAPI { .atomic }

    /// Needs `DRM_CLIENT_CAP_ATOMIC` set on `fd`. Throws naming a property the driver lacks.
    init(_ target: KMSTarget, plane: PrimaryPlane, alternativeMode: (info: drmModeModeInfo, name: String)?) throws(DRMError) {
        self.target = target
        let (fd, crtcID, connectorID, modeInfo) = (target.fd, target.crtcID, target.connectorID, target.modeInfo)
        self.plane = plane
        self.alternativeMode = alternativeMode
        width = UInt32(modeInfo.hdisplay)
        height = UInt32(modeInfo.vdisplay)
        let connector = propertyIDs(fd: fd, object: connectorID, type: UInt32(DRM_MODE_OBJECT_CONNECTOR))
        let crtc = propertyIDs(fd: fd, object: crtcID, type: UInt32(DRM_MODE_OBJECT_CRTC))
        let planeIDs = propertyIDs(fd: fd, object: plane.id, type: UInt32(DRM_MODE_OBJECT_PLANE))
        func id(_ table: [String: UInt32], _ name: String, _ object: String) throws(DRMError) -> UInt32 {
            guard let id = table[name] else {
                throw .atomicRefused(property: name, object: object, detail: "the driver does not offer this property", errno: nil)
            }
            return id
        }
        connectorCrtc = try id(connector, "CRTC_ID", "connector \(connectorID)")
        crtcMode = try id(crtc, "MODE_ID", "CRTC \(crtcID)")
        crtcActive = try id(crtc, "ACTIVE", "CRTC \(crtcID)")
        let p = "plane \(plane.id)"
        planeFB = try id(planeIDs, "FB_ID", p)
        planeCrtc = try id(planeIDs, "CRTC_ID", p)
        planeSrc = (try id(planeIDs, "SRC_X", p), try id(planeIDs, "SRC_Y", p), try id(planeIDs, "SRC_W", p), try id(planeIDs, "SRC_H", p))
        planeDst = (
            try id(planeIDs, "CRTC_X", p), try id(planeIDs, "CRTC_Y", p), try id(planeIDs, "CRTC_W", p), try id(planeIDs, "CRTC_H", p)
        )
        var info = modeInfo
        var blob: UInt32 = 0
        if let code = KernelCall.status({ drmModeCreatePropertyBlob(fd, &info, MemoryLayout<drmModeModeInfo>.size, &blob) }) {
            release()
            throw .atomicRefused(
                property: "MODE_ID", object: "CRTC \(crtcID)", detail: "the mode blob for \(modeName) could not be created", errno: code)
        }
        modeBlob = blob
        flipObjects[0] = plane.id
        flipCounts[0] = 2
        flipProps[0] = planeFB
        flipProps[1] = planeCrtc
        flipValues[1] = UInt64(crtcID)
    }

    deinit { release() }

    /// A request setting the mode `blob` with `fb` on the whole screen.
    private func modeSetRequest(fb: UInt32, blob: UInt32) -> OpaquePointer? {
        guard let request = drmModeAtomicAlloc() else { return nil }
        _ = drmModeAtomicAddProperty(request, connectorID, connectorCrtc, UInt64(crtcID))
        _ = drmModeAtomicAddProperty(request, crtcID, crtcMode, UInt64(blob))
        _ = drmModeAtomicAddProperty(request, crtcID, crtcActive, 1)
        let values: [(UInt32, UInt64)] = [
            (planeFB, UInt64(fb)), (planeCrtc, UInt64(crtcID)),
            (planeSrc.x, 0), (planeSrc.y, 0), (planeSrc.w, UInt64(width) << 16), (planeSrc.h, UInt64(height) << 16),
            (planeDst.x, 0), (planeDst.y, 0), (planeDst.w, UInt64(width)), (planeDst.h, UInt64(height))
        ]
        for (property, value) in values { _ = drmModeAtomicAddProperty(request, plane.id, property, value) }
        return request
    }

    private func commit(fb: UInt32, blob: UInt32, flags: Int32) -> Errno? {
        guard let request = modeSetRequest(fb: fb, blob: blob) else { return .noMemory }
        defer { drmModeAtomicFree(request) }
        return KernelCall.status { drmModeAtomicCommit(fd, request, UInt32(flags), nil) }
    }

    func validate(fb: UInt32, format: UInt32, modifier: UInt64) throws(DRMError) {
        guard plane.formats.supports(format: format, modifier: modifier) else {
            throw .atomicRefused(
                property: "FB_ID", object: "plane \(plane.id)",
                detail: "format \(PlaneFormats.name(format)) with modifier \(PlaneFormats.modifierName(modifier)) is not offered "
                    + "(\(plane.formats.fromInFormats ? "IN_FORMATS" : "formats"): \(plane.formats))", errno: nil)
        }
        let flags = DRM_MODE_ATOMIC_TEST_ONLY | DRM_MODE_ATOMIC_ALLOW_MODESET
        guard let code = commit(fb: fb, blob: modeBlob, flags: flags) else { return }
        // Which part was refused: with another listed mode the same commit passes → the mode.
        if let other = alternativeMode {
            var info = other.info
            var blob: UInt32 = 0
            if drmModeCreatePropertyBlob(fd, &info, MemoryLayout<drmModeModeInfo>.size, &blob) == 0 {
                defer { drmModeDestroyPropertyBlob(fd, blob) }
                if commit(fb: fb, blob: blob, flags: flags) == nil {
                    throw .atomicRefused(
                        property: "MODE_ID", object: "CRTC \(crtcID)",
                        detail: "the mode \(modeName) is refused (the listed \(other.name) passes the same test)", errno: code)
                }
            }
        }
        throw .atomicRefused(
            property: "FB_ID", object: "plane \(plane.id)",
            detail: "the framebuffer (\(PlaneFormats.name(format)), \(PlaneFormats.modifierName(modifier)), \(width)x\(height) at 0,0) "
                + "with the mode \(modeName) is refused", errno: code)
    }

    func setMode(fb: UInt32) throws(DRMError) {
        if let code = commit(fb: fb, blob: modeBlob, flags: DRM_MODE_ATOMIC_ALLOW_MODESET) {
            throw .kernel(operation: "drmModeAtomicCommit(ALLOW_MODESET, \(modeName))", errno: code)
        }
    }

    func flip(fb: UInt32, event: Bool, userData: UnsafeMutableRawPointer) -> Errno? {
        flipValues[0] = UInt64(fb)
        var request = drm_mode_atomic()
        request.flags = UInt32(DRM_MODE_ATOMIC_NONBLOCK | (event ? DRM_MODE_PAGE_FLIP_EVENT : 0))
        request.count_objs = 1
        request.objs_ptr = UInt64(UInt(bitPattern: flipObjects))
        request.count_props_ptr = UInt64(UInt(bitPattern: flipCounts))
        request.props_ptr = UInt64(UInt(bitPattern: flipProps))
        request.prop_values_ptr = UInt64(UInt(bitPattern: flipValues))
        request.user_data = UInt64(UInt(bitPattern: userData))
        return KernelCall.status { cdrm_atomic_commit(fd, &request) }
    }

    func restore(_ saved: drmModeCrtc) -> String {
        guard let request = drmModeAtomicAlloc() else { return LegacyKMS.restore(fd: fd, connectorID: connectorID, saved) }
        defer { drmModeAtomicFree(request) }
        var blob: UInt32 = 0
        var what: String
        if saved.mode_valid != 0 && saved.buffer_id != 0 {
            var mode = saved.mode
            guard drmModeCreatePropertyBlob(fd, &mode, MemoryLayout<drmModeModeInfo>.size, &blob) == 0 else {
                return LegacyKMS.restore(fd: fd, connectorID: connectorID, saved)
            }
            _ = drmModeAtomicAddProperty(request, connectorID, connectorCrtc, UInt64(crtcID))
            _ = drmModeAtomicAddProperty(request, crtcID, crtcMode, UInt64(blob))
            _ = drmModeAtomicAddProperty(request, crtcID, crtcActive, 1)
            let w = UInt64(saved.mode.hdisplay), h = UInt64(saved.mode.vdisplay)
            let values: [(UInt32, UInt64)] = [
                (planeFB, UInt64(saved.buffer_id)), (planeCrtc, UInt64(crtcID)),
                (planeSrc.x, UInt64(saved.x) << 16), (planeSrc.y, UInt64(saved.y) << 16), (planeSrc.w, w << 16), (planeSrc.h, h << 16),
                (planeDst.x, 0), (planeDst.y, 0), (planeDst.w, w), (planeDst.h, h)
            ]
            for (property, value) in values { _ = drmModeAtomicAddProperty(request, plane.id, property, value) }
            what = "framebuffer \(saved.buffer_id) \(saved.mode.hdisplay)x\(saved.mode.vdisplay)"
        } else {
            _ = drmModeAtomicAddProperty(request, connectorID, connectorCrtc, 0)
            _ = drmModeAtomicAddProperty(request, crtcID, crtcMode, 0)
            _ = drmModeAtomicAddProperty(request, crtcID, crtcActive, 0)
            _ = drmModeAtomicAddProperty(request, plane.id, planeFB, 0)
            _ = drmModeAtomicAddProperty(request, plane.id, planeCrtc, 0)
            what = "off (nothing was on it before)"
        }
        let refusal = KernelCall.status { drmModeAtomicCommit(fd, request, UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), nil) }
        if blob != 0 { drmModeDestroyPropertyBlob(fd, blob) }
        guard let refusal else { return "CRTC \(saved.crtc_id) restored (atomic) to \(what)" }
        return "atomic restore to \(what) refused (\(refusal)); " + LegacyKMS.restore(fd: fd, connectorID: connectorID, saved)
    }

    private var released = false

    func release() {
        guard !released else { return }
        released = true
        if modeBlob != 0 { drmModeDestroyPropertyBlob(fd, modeBlob) }
        modeBlob = 0
        flipObjects.deallocate()
        flipCounts.deallocate()
        flipProps.deallocate()
        flipValues.deallocate()
    }
}
