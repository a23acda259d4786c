import DRMBackend
import DisplayLinkCore
import DisplayLinkWaylandTesting
import Foundation
import SystemPackage
import Testing

/// A flip event rewritten before the display reads it (the kernel cannot be made to send one).
enum FlipEventFault: String, CaseIterable, Sendable, CustomStringConvertible {
    case sequenceBack, zeroTime, unknownCRTC
    var description: String { rawValue }

    func apply(to report: inout FlipEventReport) {
        switch self {
        case .sequenceBack: report.sequence &-= 1000
        case .zeroTime: report.time = .zero
        case .unknownCRTC: report.crtcID = (report.crtcID ?? 0) &+ 1000
        }
    }
}

/// The KMS faults, each on a link that draws every frame, made once it has run ``faultAt``
/// callbacks. What holds at any speed is asserted; how the link went on is printed.
@MainActor
enum KMSFaults {
    static let faultAt = 20
    /// Callbacks after the fault that show the link going on.
    static let after = 30
    static let mode = "640x480"

    /// What a fault hook saw: the refresh the fault hit, and how often it was applied.
    final class Record {
        var refresh: UInt64?
        var applied = 0
        var error: DRMError?
    }

    static func makeClient() throws -> (FlipClient, Record) {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: mode), kmsAPI: .atomic))
        let record = Record()
        client.display.onError = { record.error = $0 }
        return (client, record)
    }

    /// Runs until `after` callbacks past the fault, or an error (hang guard: 180 s).
    static func runPastFault(_ client: FlipClient, _ record: Record) async {
        client.start()
        _ = await eventually(within: .seconds(180)) {
            client.frames.count >= faultAt + after && record.applied > 0 || client.failure != nil || record.error != nil
        }
    }

    /// The longest wall-clock time between two callbacks from the fault's on (the callback before
    /// it to the last), in ms.
    static func longestGapFromFault(_ client: FlipClient) -> Double {
        let times = client.callbackTimes.dropFirst(faultAt - 1)
        return zip(times, times.dropFirst()).map { ($1 - $0).seconds * 1000 }.max() ?? 0
    }

    /// What holds for every frame whatever the kernel sent: timestamps, sequences and targets
    /// never go back, a delta is the timestamp difference or 0, and a timestamp stamped as hardware
    /// is a vblank time the kernel reported (timer pacing: every frame says so). After a sequence
    /// that went back the link keeps counting its own sequence, so times are matched by time alone.
    static func expectTimeline(_ client: FlipClient, sourceLocation: SourceLocation = #_sourceLocation) {
        let frames = client.frames, kernel = Set(client.display.recentKernelVblanks.map(\.time))
        let timer = client.display.pacing == .timer
        for (i, f) in frames.enumerated() {
            if timer {
                #expect(f.provenance == .timerFallback, "frame \(i): \(f.provenance)", sourceLocation: sourceLocation)
            } else if f.provenance == .hardwareVBlank {
                #expect(kernel.contains(f.timestamp), "frame \(i): \(f.timestamp) not a reported vblank", sourceLocation: sourceLocation)
            } else {
                #expect(f.provenance == .frameCallbackEstimate, "frame \(i): \(f.provenance)", sourceLocation: sourceLocation)
            }
            guard i >= 1 else { continue }
            let a = frames[i - 1]
            #expect(f.timestamp >= a.timestamp, "frame \(i): timestamp went back", sourceLocation: sourceLocation)
            #expect(f.sequence >= a.sequence, "frame \(i): sequence went back", sourceLocation: sourceLocation)
            #expect(f.targetTimestamp >= a.targetTimestamp, "frame \(i): target went back", sourceLocation: sourceLocation)
            #expect(
                f.delta == .zero || f.delta == f.timestamp - a.timestamp, "frame \(i): delta \(f.delta)", sourceLocation: sourceLocation)
        }
    }

    /// Shuts the display down and expects the CRTC to show what it showed before.
    static func expectRestored(
        _ client: FlipClient, _ watcher: CRTCWatcher, before: UInt32?, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        client.link?.invalidate()
        client.display.shutDown()
        #expect(watcher.state?.buffer == before, "CRTC not restored", sourceLocation: sourceLocation)
    }

    static func badFlipEvent(_ fault: FlipEventFault) async throws {
        let watcher = try #require(CRTCWatcher())
        let before = watcher.state?.buffer
        let (client, record) = try makeClient()
        client.display.faultHooks.flipEvent = { [unowned client] report in
            guard record.applied == 0, client.frames.count >= faultAt else { return }
            fault.apply(to: &report)
            record.applied += 1
            record.refresh = client.display.dispatcher.nextRefreshIndex
        }
        await runPastFault(client, record)
        #expect(record.applied == 1)
        #expect(client.failure == nil && record.error == nil, "\(String(describing: client.failure ?? record.error))")
        #expect(client.frames.count >= faultAt + after, "callbacks stopped after the fault: \(client.frames.count)")
        expectTimeline(client)
        let bad = client.frames.first { $0.refreshIndex == record.refresh }
        if let bad, client.display.pacing == .vblank {
            switch fault {
            case .zeroTime: #expect(bad.provenance == .frameCallbackEstimate, "a zero time stamped \(bad.provenance)")
            case .sequenceBack: #expect(bad.provenance == .hardwareVBlank, "its time is the kernel's: \(bad.provenance)")
            case .unknownCRTC: #expect(bad.provenance == .hardwareVBlank, "its own CRTC's vblank: \(bad.provenance)")
            }
        }
        print(
            """
            [kms-fault] \(fault) on \(vmDisplay) (\(client.display.pacing)): \(client.frames.count) callbacks, fault at refresh \
            \(record.refresh.map(String.init) ?? "none"); its frame: \(bad.map { "\($0.provenance), delta \($0.delta.value) ns" } ?? "none"); \
            longest gap from the fault \(longestGapFromFault(client)) ms
            """)
        expectRestored(client, watcher, before: before)
    }

    /// `EBUSY` from the flip: on vkms the kernel's own (a nonblocking commit of the frame on screen,
    /// without an event, keeps the CRTC busy until its vblank, and the display's flip right after it
    /// is refused; when a vblank falls between the two, the next frame tries again); on a driver
    /// whose commits complete at once, a refusal made up without committing.
    static func busyFlip() async throws {
        let watcher = try #require(CRTCWatcher())
        let before = watcher.state?.buffer
        let (client, record) = try makeClient()
        let kernelRefuses = client.display.pacing == .vblank
        client.display.faultHooks.flipCommit = { [unowned client] fb, commit in
            guard record.applied == 0, client.frames.count >= faultAt else { return commit(fb, true) }
            record.refresh = client.frames.last?.refreshIndex
            var refusal: Errno? = .resourceBusy
            if kernelRefuses {
                if let shown = watcher.state?.buffer { _ = commit(shown, false) }
                refusal = commit(fb, true)
            }
            if refusal == .resourceBusy { record.applied += 1 }
            return refusal
        }
        await runPastFault(client, record)
        #expect(record.applied == 1, "the flip was never refused as busy")
        #expect(client.display.flipsRefusedAsBusy == 1)
        #expect(client.failure == nil && record.error == nil, "\(String(describing: client.failure ?? record.error))")
        #expect(client.frames.count >= faultAt + after, "callbacks stopped after the refusal: \(client.frames.count)")
        if let refused = record.refresh {
            #expect(client.discarded.contains(refused), "the refused frame is not reported discarded")
            #expect(client.presented.keys.contains { $0 > refused }, "no frame shown after the refusal")
        }
        expectTimeline(client)
        print(
            """
            [kms-fault] EBUSY (\(kernelRefuses ? "the kernel's" : "made up")) on \(vmDisplay): \(client.frames.count) callbacks, \
            refresh \(record.refresh.map(String.init) ?? "none") discarded, \(client.presented.count) presented; longest gap from the fault \
            \(longestGapFromFault(client)) ms
            """)
        expectRestored(client, watcher, before: before)
    }

    /// `EINVAL` from the kernel: the flip committed with `FB_ID` 0 on a plane that keeps its CRTC.
    static func invalidFlip() async throws {
        let watcher = try #require(CRTCWatcher())
        let before = watcher.state?.buffer
        let (client, record) = try makeClient()
        client.display.faultHooks.flipCommit = { [unowned client] fb, commit in
            guard record.applied == 0, client.frames.count >= faultAt else { return commit(fb, true) }
            record.applied += 1
            return commit(0, true)
        }
        await runPastFault(client, record)
        let callbacks = client.frames.count
        let error = try #require(record.error, "no error after EINVAL")
        guard case .kernel(_, let code) = error else {
            Issue.record("not a kernel error: \(error)")
            return
        }
        #expect(code == .invalidArgument)
        #expect(client.display.error == error)
        #expect(client.link?.isValid == false, "the link goes on after the display failed")
        #expect(error.description.contains("kmsAPI") && !error.description.contains("--"), "\(error.description)")
        expectTimeline(client)
        print("[kms-fault] EINVAL on \(vmDisplay): \(callbacks) callbacks, then \(error)")
        expectRestored(client, watcher, before: before)
    }

    /// The device goes away under the link: its driver unbound through sysfs, bound again after.
    static func deviceUnbound(_ device: UnbindableDevice) async throws {
        let made = try makeClient()
        var client: FlipClient? = made.0
        let record = made.1
        client?.start()
        _ = await eventually(within: .seconds(180)) { (client?.frames.count ?? 0) >= faultAt }
        let unbound = MonotonicInstant.now()
        try #require(device.write(to: "unbind"), "unbinding \(device.name) from \(device.driver) failed: errno \(errno)")
        let failed = await eventually(within: .seconds(120)) { record.error != nil || client?.failure != nil }
        #expect(failed, "no error after the device went away: \(client?.frames.count ?? 0) callbacks")
        let error = record.error
        #expect(error != nil, "the display did not fail: \(String(describing: client?.failure))")
        #expect(client?.link?.isValid == false, "the link goes on after the device went away")
        let afterUnbind = client?.callbackTimes.filter { $0 > unbound }.count ?? 0
        print(
            """
            [kms-fault] \(device.driver) unbound (\(vmDisplay)): \(client?.frames.count ?? 0) callbacks, \(afterUnbind) after the unbind, \
            error after \((MonotonicInstant.now() - unbound).seconds * 1000) ms at most: \(error.map(String.init(describing:)) ?? "none")
            """)
        if let error { #expect(error.description.contains("devicePath") || error.description.contains("Options"), "\(error)") }
        client?.display.shutDown()
        client = nil
        // The device is freed once its last descriptor is closed (on the main queue, after the
        // shutdown): then the driver, bound again, makes it card0 again.
        #expect(await eventually(within: .seconds(60)) { !UnbindableDevice.descriptorsOpen() })
        // Bound again, so that the suites after this one have a device.
        #expect(device.write(to: "bind"), "binding \(device.name) to \(device.driver) again failed: errno \(errno)")
        #expect(
            await eventually(within: .seconds(60)) { FileManager.default.fileExists(atPath: "/dev/dri/card0") },
            "no card0 after binding again")
    }
}

/// The device behind card0 and its driver, when the driver can be unbound through sysfs (a PCI
/// device such as bochs-display; vkms on Linux 6.1 is a platform device bound to no driver, and its
/// module cannot be removed while the device is open).
struct UnbindableDevice: Sendable {
    let name: String
    let driver: String
    let driverDirectory: String

    static let card0: UnbindableDevice? = {
        guard let device = realpath("/sys/class/drm/card0/device"), let driver = realpath("/sys/class/drm/card0/device/driver") else {
            return nil
        }
        return UnbindableDevice(
            name: (device as NSString).lastPathComponent, driver: (driver as NSString).lastPathComponent, driverDirectory: driver)
    }()

    private static func realpath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Writes the device's name to the driver's `bind` or `unbind`.
    func write(to file: String) -> Bool {
        let fd = open("\(driverDirectory)/\(file)", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return name.withCString { Glibc.write(fd, $0, strlen($0)) } == name.utf8.count
    }

    /// Whether this process still has a DRM device open.
    static func descriptorsOpen() -> Bool {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix("/dev/dri/") == true
        }
    }
}

extension VKMSTests {
    /// On vkms: vblank pacing; in the VKMS suite, so never at the same time as its tests (one master).
    @MainActor
    @Suite("KMS faults on vkms: bad flip events, EBUSY and EINVAL from the flip")
    struct KMSFaultTests {
        @Test(
            "a bad flip event: callbacks go on, the timeline never goes back, the bad time not stamped as hardware",
            arguments: FlipEventFault.allCases)
        func badFlipEvent(_ fault: FlipEventFault) async throws { try await KMSFaults.badFlipEvent(fault) }

        @Test("the kernel's EBUSY from a flip: that frame discarded, callbacks go on, later frames shown; the CRTC restored")
        func busyFlip() async throws { try await KMSFaults.busyFlip() }

        @Test("the kernel's EINVAL from a flip: a DRMError naming kmsAPI, the link invalidated; the CRTC restored")
        func invalidFlip() async throws { try await KMSFaults.invalidFlip() }
    }
}

extension NoVblankTests {
    /// On a driver without vblank events (bochs): timer pacing; its PCI device can be unbound.
    @MainActor
    @Suite("KMS faults on a driver without vblank events: bad flip events, EBUSY, EINVAL, the device unbound")
    struct KMSFaultTests {
        @Test("a bad flip event: the timer's callbacks go on, the timeline never goes back", arguments: FlipEventFault.allCases)
        func badFlipEvent(_ fault: FlipEventFault) async throws { try await KMSFaults.badFlipEvent(fault) }

        @Test("EBUSY from a flip: that frame discarded, the timer's callbacks go on, later frames shown; the CRTC restored")
        func busyFlip() async throws { try await KMSFaults.busyFlip() }

        @Test("the kernel's EINVAL from a flip: a DRMError naming kmsAPI, the link invalidated; the CRTC restored")
        func invalidFlip() async throws { try await KMSFaults.invalidFlip() }

        @Test(
            "the device's driver unbound under the link: a DRMError, the link invalidated, shutdown without a crash; bound again after",
            .enabled(if: UnbindableDevice.card0 != nil, "card0's driver cannot be unbound"))
        func deviceUnbound() async throws { try await KMSFaults.deviceUnbound(try #require(UnbindableDevice.card0)) }
    }
}
