import Glibc
import SystemPackage
import DRMBackend
import Testing

/// `IN_FORMATS` blobs read byte by byte (no device needed), and the atomic errors' wording.
@Suite("Plane formats from IN_FORMATS, and atomic errors")
struct PlaneFormatsTests {
    static let xr24: UInt32 = 0x3432_5258, ar24: UInt32 = 0x3432_5241, rg16: UInt32 = 0x3631_4752

    /// A `drm_format_modifier_blob`: header, formats, then 24-byte modifier entries.
    func blob(formats: [UInt32], modifiers: [(mask: UInt64, offset: UInt32, modifier: UInt64)]) -> [UInt8] {
        var bytes: [UInt8] = []
        func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (i * 8))) } }
        func u64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (i * 8))) } }
        let formatsOffset: UInt32 = 24
        let modifiersOffset = formatsOffset + UInt32(formats.count * 4)
        u32(1); u32(0); u32(UInt32(formats.count)); u32(formatsOffset); u32(UInt32(modifiers.count)); u32(modifiersOffset)
        formats.forEach(u32)
        for m in modifiers { u64(m.mask); u32(m.offset); u32(0); u64(m.modifier) }
        return bytes
    }

    @Test("formats with their modifiers: linear for all, a tiled one for the first two only")
    func parses() throws {
        let tiled: UInt64 = 0x0100_0000_0000_0001
        let formats = try #require(
            PlaneFormats(
                inFormatsBlob: blob(
                    formats: [Self.xr24, Self.ar24, Self.rg16],
                    modifiers: [(0b111, 0, PlaneFormats.linear), (0b011, 0, tiled)])))
        #expect(formats.fromInFormats)
        #expect(formats.modifiers[Self.xr24] == [PlaneFormats.linear, tiled])
        #expect(formats.modifiers[Self.rg16] == [PlaneFormats.linear])
        #expect(formats.supports(format: Self.xr24, modifier: tiled))
        #expect(!formats.supports(format: Self.rg16, modifier: tiled))
        #expect(formats.supports(format: Self.rg16, modifier: PlaneFormats.invalidModifier))  // implicit: the driver's choice
        #expect(!formats.supports(format: 0x3231_564E, modifier: PlaneFormats.linear))  // NV12 not listed
        #expect(formats.description == "XR24(linear,0x100000000000001) AR24(linear,0x100000000000001) RG16(linear)")
    }

    @Test("a modifier entry's offset shifts its mask; bits past the format list are ignored")
    func offsets() throws {
        let formats = try #require(PlaneFormats(inFormatsBlob: blob(formats: [Self.xr24, Self.ar24], modifiers: [(0b1111, 1, 7)])))
        #expect(formats.modifiers[Self.ar24] == [7])
        #expect(formats.modifiers[Self.xr24] == [PlaneFormats.invalidModifier])  // no entry: implicit only
    }

    @Test("malformed blobs are refused, never read past their end")
    func malformed() {
        let good = blob(formats: [Self.xr24], modifiers: [(1, 0, 0)])
        #expect(PlaneFormats(inFormatsBlob: []) == nil)
        #expect(PlaneFormats(inFormatsBlob: Array(good.prefix(30))) == nil)
        var badCount = good
        badCount[8] = 200  // count_formats beyond the blob
        #expect(PlaneFormats(inFormatsBlob: badCount) == nil)
        var badVersion = good
        badVersion[0] = 0
        #expect(PlaneFormats(inFormatsBlob: badVersion) == nil)
        for cut in 0..<good.count { _ = PlaneFormats(inFormatsBlob: Array(good.prefix(cut))) }
    }

    @Test("atomic errors name the property, its object and the library option to change")
    func errors() {
        let refused = DRMError.atomicRefused(
            property: "MODE_ID", object: "CRTC 37", detail: "the mode 640x480@144 is refused", errno: Errno(rawValue: 22))
        #expect(refused.description.contains("MODE_ID of CRTC 37"))
        #expect(refused.description.contains("errno 22"))
        #expect(refused.description.contains("kmsAPI = .legacy") && refused.description.contains("DisplaySurface.Options"))
        #expect(
            DRMError.atomicUnavailable(path: "/dev/dri/card0", driver: "simpledrm").description.contains(
                "kmsAPI = .legacy in DisplaySurface.Options or DRMDisplay.Options"))
    }

    @Test("a kernel refusal says what errno means; a refused mode set or page flip names the options to change; a device gone says so")
    func kernelErrors() {
        #expect(
            DRMError.kernel(operation: "drmModeSetCrtc(640x480@144.0)", errno: Errno(rawValue: EINVAL)).description
                == "drmModeSetCrtc(640x480@144.0) failed: Invalid argument (errno 22). The driver refused to show this mode: "
                + "choose another (mode in DisplaySurface.Options or DRMDisplay.Options), or the other KMS API (kmsAPI there).")
        #expect(
            DRMError.kernel(operation: "drmModePageFlip", errno: Errno(rawValue: EINVAL)).description
                == "drmModePageFlip failed: Invalid argument (errno 22). The driver refused a page flip of a frame it had accepted "
                + "before: close the display and open it again, or use the other KMS API (kmsAPI in DisplaySurface.Options or "
                + "DRMDisplay.Options).")
        #expect(
            DRMError.kernel(operation: "drmModeAtomicCommit(NONBLOCK | PAGE_FLIP_EVENT)", errno: Errno(rawValue: ENODEV)).description
                .contains("The DRM device is gone"))
        #expect(
            DRMError.kernel(operation: "drmCrtcQueueSequence", errno: Errno(rawValue: EBUSY)).description
                == "drmCrtcQueueSequence failed: Device or resource busy (errno 16).")
        #expect(
            DRMError.kernel(operation: "drmModeAtomicCommit(ALLOW_MODESET, 640x480@60.0)", errno: Errno(rawValue: ENOSPC)).description
                .contains("mode in DisplaySurface.Options"))
    }
}
