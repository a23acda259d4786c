import DisplayLinkCore
import EGLGraphics
import GLESRenderer
import DisplayLinkWaylandTesting
import Testing
import WaylandBackend

/// A compositor round trip: returns once the compositor has handled every request sent so far
/// and the events they caused have been dispatched (false only if the connection failed or the
/// hang guard ran out).
@MainActor
func roundtrip(_ connection: WaylandConnection) async -> Bool {
    var done = false
    connection.sync { done = true }
    return await eventually(within: .seconds(60)) { done || connection.error != nil } && done
}

/// The client of these tests: a window on a private compositor with a link that draws a quad
/// moving by deltaTime, and that records every callback and every presentation feedback.
@MainActor
final class PacedClient {
    let connection: WaylandConnection
    let window: WaylandWindow
    let egl: WaylandEGLWindow
    let source: WaylandFrameSource
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    /// When each callback ran.
    var arrivals: [MonotonicInstant] = []
    var feedback: [PresentationFeedback] = []
    var draws = true
    /// Callbacks at the start that draw nothing (a program whose assets are still loading).
    var drawsNothingFirst = 0
    var x = 0.0
    var painter = ScissorPainter()
    var swapError: EGLError?

    /// Connects to `compositor` (`presentation` false: without binding `wp_presentation`) and opens
    /// a `size`×`size` window, or a fullscreen one.
    convenience init(
        on compositor: any PrivateCompositor, presentation: Bool = true, size: Int32 = 250, fullscreen: Bool = false,
        configuration: WaylandFrameSource.Configuration = .init()
    ) throws {
        try self.init(
            connection: WaylandConnection(socket: compositor.socketPath, options: .init(bindPresentationTime: presentation)),
            size: size, fullscreen: fullscreen, configuration: configuration)
    }

    /// A `size`×`size` window (or a fullscreen one) on `connection`, which other clients may share
    /// (several windows of one program).
    init(
        connection: WaylandConnection, size: Int32 = 250, fullscreen: Bool = false,
        configuration: WaylandFrameSource.Configuration = .init()
    ) throws {
        self.connection = connection
        window = try WaylandWindow(
            connection: connection, title: "test", appID: "displaylink.test",
            width: size, height: size, fullscreen: fullscreen)
        egl = try WaylandEGLWindow(window: window)
        source = WaylandFrameSource(window: window, configuration: configuration)
        egl.frameSource = source
    }

    /// Starts the link. `realGap`: a frame after a stall (the compositor was slow for longer than
    /// the stall timeout, as on a loaded host) keeps `delta` equal to the timestamp difference.
    func start(stallPolicy: DisplayLink.StallPolicy = .realGap) {
        let link = DisplayLink(source: source, target: self) { client, link in client.tick(link) }
        link.stallPolicy = stallPolicy
        link.presentationHandler = { [weak self] in self?.feedback.append($0) }
        self.link = link
    }

    /// Starts the link and waits until `condition` holds (`limit` is a hang guard only): returns
    /// whether it held.
    func run(
        within limit: Duration = .seconds(60), stallPolicy: DisplayLink.StallPolicy = .realGap,
        until condition: () -> Bool
    ) async -> Bool {
        start(stallPolicy: stallPolicy)
        return await eventually(within: limit, condition)
    }

    func tick(_ link: DisplayLink) {
        frames.append(link.frame)
        arrivals.append(.now())
        guard frames.count > drawsNothingFirst else { return }
        guard draws || frames.count == drawsNothingFirst + 1 else { return }
        x += 100 * link.deltaTime
        do { try egl.beginFrame() } catch { swapError = error; return }
        let size = egl.width
        painter.begin(width: size, height: egl.height, background: RGBA(0.1, 0.1, 0.15))
        painter.fill(
            x: Int32(x.truncatingRemainder(dividingBy: Double(size - 40))), y: 100, width: 40, height: 40,
            color: RGBA(0.9, 0.3, 0.2))
        do { try egl.swapBuffers() } catch { swapError = error }
    }

    var presentedTimes: [Int64] {
        feedback.compactMap {
            if case .presented(let at, _) = $0.outcome { return at.nanoseconds }
            return nil
        }
    }

    /// The feedback of the frames presented.
    var presentedFeedback: [PresentationFeedback] {
        feedback.filter { if case .presented = $0.outcome { true } else { false } }
    }

    /// How many frames with a commit target were presented.
    var timedPresentedCount: Int { presentedFeedback.filter { $0.commitTarget != nil }.count }

    /// Once the link is paused (a paused link still hears about frames it drew), waits until
    /// everything outstanding has landed: no frame callback and no feedback outstanding, no start
    /// pending, and a round trip after that.
    func drain(sourceLocation: SourceLocation = #_sourceLocation) async {
        let drained = await eventually {
            !source.hasOutstandingFrameRequest && source.outstandingFeedbackCount == 0 && !source.isStartPending
        }
        #expect(
            drained, "outstanding: callback \(source.hasOutstandingFrameRequest), feedback \(source.outstandingFeedbackCount)",
            sourceLocation: sourceLocation)
        #expect(await roundtrip(connection), sourceLocation: sourceLocation)
    }

    /// Checks that no presented timed frame was presented more than `slack` before its commit
    /// target; returns how many were checked.
    func expectCommitTargetsKept(slack: Nanoseconds = .zero, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        var checked = 0
        for feedback in presentedFeedback {
            guard case .presented(let at, _) = feedback.outcome, let target = feedback.commitTarget else { continue }
            #expect(
                at.nanoseconds >= target.nanoseconds - slack.value,
                "frame \(feedback.refreshIndex) presented \(target.nanoseconds - at.nanoseconds) ns before its commit target",
                sourceLocation: sourceLocation)
            checked += 1
        }
        return checked
    }

    /// Checks that each frame stamped from presentation feedback carries, exactly, a presentation
    /// time the compositor reported, and that there is such a frame; with `othersEstimated`, that
    /// every other frame (start-up, feedback not yet in) says it is an estimate.
    func expectStampedByPresentations(othersEstimated: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        let presented = Set(presentedTimes)
        for frame in frames where frame.provenance == .presentationFeedback {
            #expect(presented.contains(frame.timestamp.nanoseconds), "frame \(frame.refreshIndex)", sourceLocation: sourceLocation)
        }
        if othersEstimated {
            #expect(
                frames.allSatisfy { $0.provenance == .presentationFeedback || $0.provenance == .frameCallbackEstimate },
                "\(Set(frames.map(\.provenance)))", sourceLocation: sourceLocation)
        }
        #expect(frames.contains { $0.provenance == .presentationFeedback }, sourceLocation: sourceLocation)
    }

    /// Checks the frames' timeline: the first delta zero, each later one exactly the timestamp
    /// difference, or zero after a stall (the link's default stall policy: on a loaded host a
    /// window moved to another monitor went 0.9 s without a frame event); timestamps and
    /// sequences only move forward (and refresh indices by one when `consecutive`); targets lie
    /// after timestamps.
    func expectTimelineInOrder(consecutive: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(frames.first?.delta == .zero, sourceLocation: sourceLocation)
        for i in frames.indices.dropFirst() {
            let difference = frames[i].timestamp - frames[i - 1].timestamp
            // A stall is the stall timeout without a frame event *read*: a starved process can
            // stall with presentation times close together, so any zero delta may follow one (the
            // link's own tests pin the rule down on virtual time).
            #expect(
                frames[i].delta == difference || frames[i].delta == .zero,
                "frame \(i): delta \(frames[i].delta), difference \(difference)", sourceLocation: sourceLocation)
            #expect(frames[i].timestamp > frames[i - 1].timestamp, "frame \(i)", sourceLocation: sourceLocation)
            #expect(frames[i].sequence > frames[i - 1].sequence, "frame \(i)", sourceLocation: sourceLocation)
            if consecutive {
                #expect(frames[i].refreshIndex == frames[i - 1].refreshIndex + 1, "frame \(i)", sourceLocation: sourceLocation)
            }
        }
        #expect(frames.allSatisfy { $0.targetTimestamp > $0.timestamp && $0.missedFrames >= 0 }, sourceLocation: sourceLocation)
    }
}

/// Records, with every callback, how many output changes the source had seen by then.
final class ChangeLog {
    var changesAtFrame: [Int] = []
}
