import DisplayLinkCore
import DisplaySurface
import DisplayLinkWaylandTesting
import GLESRenderer
import OffscreenBackend
import Testing

extension SurfaceClient {
    /// Runs the link (a red square on blue each frame, frame 3 read back) for at least `count`
    /// callbacks, then stops it; false after 30 s or a failure.
    func run(frames count: Int) async -> Bool {
        start()
        defer { link?.invalidate() }
        return await eventually { frames.count >= count || failure != nil } && failure == nil
    }
}

@MainActor
@Suite("DisplaySurface offscreen on virtual time", .serialized)
struct OffscreenSurfaceTests {
    func options(width: Int32 = 64, height: Int32 = 48, rate: VirtualRefreshRate, start: Int64 = 1_000_000_000) -> DisplaySurface.Options {
        var options = DisplaySurface.Options(width: width, height: height, backend: .offscreen)
        options.offscreen = .init(refreshRate: rate, startTime: MonotonicInstant(nanoseconds: start))
        return options
    }

    @Test("timestamps are the exact virtual times, delta and duration the period, feedback the target; readPixels has the colour")
    func exactVirtualTimes() async throws {
        let surface = try DisplaySurface(options: options(rate: .hertz(50)))  // 20 ms exactly
        #expect(surface.backend == .offscreen && surface.isFullscreen)
        #expect(surface.width == 64 && surface.height == 48 && surface.glesMajorVersion >= 2)
        #expect(surface.environment.first { $0.key == "presentation_clock" }?.value == .string("virtual"))
        var warmUps = 0
        try surface.prepare { warmUps += 1 }
        #expect(warmUps == 2)
        let client = SurfaceClient(surface)
        #expect(await client.run(frames: 12))
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        let period = Nanoseconds(20_000_000)
        for (n, frame) in client.frames.enumerated() {
            #expect(frame.timestamp == MonotonicInstant(nanoseconds: 1_000_000_000) + period * n)
            #expect(frame.targetTimestamp == frame.timestamp + period)
            #expect(frame.duration == period && frame.missedFrames == 0 && frame.refreshIndex == UInt64(n))
            #expect(frame.delta == (n == 0 ? .zero : period))
        }
        // Each presented frame is reported shown at its target, one refresh later.
        #expect(client.feedback.count >= 10)
        for report in client.feedback {
            #expect(
                report.outcome
                    == .presented(
                        at: client.frames[Int(report.refreshIndex)].targetTimestamp,
                        sequence: report.refreshIndex + 1))
        }
        let pixels = try #require(client.pixels)
        #expect(pixels.count == 64 * 48 * 4)
        #expect(Array(pixels[0..<4]) == [255, 0, 0, 255], "the red square at the top left")
        let last = pixels.count - 4
        #expect(Array(pixels[last..<last + 4]) == [0, 0, 255, 255], "blue elsewhere")
        surface.close()
    }

    @Test("60 Hz: refresh n at start + ⌊n × 10⁹/60⌋ ns, never drifting; 30 Hz lands on every other one")
    func fractionalPeriod() async throws {
        let surface = try DisplaySurface(options: options(rate: .hertz(60), start: 0))
        let client = SurfaceClient(surface)
        #expect(await client.run(frames: 61))
        surface.close()
        let times = client.frames.prefix(61).map(\.timestamp.nanoseconds)
        #expect(times == (0..<61).map { Int64($0) * 1_000_000_000 / 60 })
        #expect(times.last == 1_000_000_000)
        #expect(client.frames.dropFirst().allSatisfy { $0.delta.value == 16_666_666 || $0.delta.value == 16_666_667 })
        #expect(client.frames.allSatisfy { $0.duration == Nanoseconds(16_666_667) })
        let thirty = VirtualRefreshRate.hertz(30)
        #expect((0..<30).allSatisfy { thirty.offset(ofRefresh: UInt64($0)).value == times[2 * $0] })
        #expect(VirtualRefreshRate.hertz(50) == .period(Nanoseconds(20_000_000)))
        #expect(VirtualRefreshRate.hertz(60_000, per: 1001).offset(ofRefresh: 60_000) == Nanoseconds(1_001_000_000_000))
        #expect(VirtualRefreshRate.hertz(60).offset(ofRefresh: .max) == Nanoseconds(.max))
        #expect(
            [VirtualRefreshRate.hertz(60), .hertz(60_000, per: 1001), .period(Nanoseconds(16_666_667))].map(\.description)
                == ["60 Hz", "60000/1001 Hz", "16666667 ns period"])
    }

    @Test("close is idempotent: links invalidated, calls fail with .closed, the environment kept")
    func closeIsIdempotent() async throws {
        let surface = try DisplaySurface(options: options(rate: .hertz(120)))
        var closed = 0
        surface.addCloseHandler { closed += 1 }
        let client = SurfaceClient(surface)
        client.start()
        #expect(await eventually { client.frames.count >= 3 })
        let refreshes = surface.environment.first { $0.key == "refreshes" }
        surface.close()
        surface.close()
        #expect(surface.isClosed && closed == 1)
        #expect(client.link?.isValid == false)
        #expect(surface.environment.first { $0.key == "refreshes" } != nil)
        #expect(refreshes != nil)
        #expect(throws: DisplaySurfaceError.closed) { try surface.beginFrame() }
        #expect(throws: DisplaySurfaceError.closed) { try surface.readPixels() }
        surface.releaseContext()  // harmless
        let count = client.frames.count
        // A negative check: no refresh may come after the close, at any speed.
        try await Task.sleep(for: .milliseconds(50))
        #expect(client.frames.count == count, "no refresh after close")
    }

    @Test("bad options fail typed, naming the option to change")
    func typedErrors() throws {
        for (options, option) in [
            (options(width: 0, rate: .hertz(60)), "DisplaySurface.Options.width"),
            (options(rate: .hertz(0)), "DisplaySurface.Options.offscreen.refreshRate")
        ] {
            do {
                _ = try DisplaySurface(options: options)
                Issue.record("opened with \(option) invalid")
            } catch {
                guard case .backend(let failure) = error, failure.backend == "offscreen",
                    let offscreen = failure.error as? OffscreenError
                else {
                    Issue.record("unexpected error: \(error)")
                    continue
                }
                #expect(error.description.contains(option), "\(offscreen)")
            }
        }
    }
}
