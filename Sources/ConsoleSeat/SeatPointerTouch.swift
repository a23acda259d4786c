import DisplayLinkCore
import SurfaceInput

/// The console's pointers and touchscreens as a surface sees them: libinput's values (read from
/// its events by ``SeatInput``) in, `InputEvent`s out. On a console nothing draws a cursor or
/// places one: the pointer is a position kept here, moved by relative devices (mice, touchpads)
/// and set by absolute ones, always on the output (from its top left corner to its last point).
///
/// - libinput has no pointer frames: each of its pointer events is complete, so each ends with a
///   ``PointerEvent/frame``, as compositors send them.
/// - Wheels count clicks in 120ths (`v120`, high-resolution wheels send parts of one): a click is
///   a step once whole; the parts left over carry on in the same direction.
/// - Times are libinput's microseconds on `CLOCK_MONOTONIC` (`InputTime.Source.precise`).
///
/// Pure value type: no C, no clock reads, no allocation.
struct SeatPointerTouch {
    /// The output's size in points; positions stay within it.
    private(set) var width: Double
    private(set) var height: Double
    /// Where the pointer is (it starts at the output's centre).
    private(set) var position: SurfacePoint
    /// Touch points down now (libinput's seat slots).
    private(set) var touchesDown = 0
    /// 120ths of a wheel click not yet a whole step, per axis (vertical, horizontal).
    private var wheelParts = (vertical: 0, horizontal: 0)

    init(width: Double, height: Double) {
        self.width = max(1, width)
        self.height = max(1, height)
        position = SurfacePoint(x: self.width / 2, y: self.height / 2)
    }

    /// The output changed size: the pointer stays where it is if that is still on it.
    mutating func resize(width: Double, height: Double) {
        self.width = max(1, width)
        self.height = max(1, height)
        position = clamped(position.x, position.y)
    }

    /// The instant libinput's microseconds (`CLOCK_MONOTONIC`) name.
    static func time(microseconds: UInt64) -> InputTime {
        let (nanoseconds, overflow) = Int64(clamping: microseconds).multipliedReportingOverflow(by: 1000)
        return InputTime(time: MonotonicInstant(nanoseconds: overflow ? Int64.max : nanoseconds), source: .precise)
    }

    // MARK: Pointer

    /// A relative device moved by (`dx`, `dy`) points (libinput's accelerated motion).
    mutating func moved(dx: Double, dy: Double, microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        guard dx.isFinite, dy.isFinite else { return }
        position = clamped(position.x + dx, position.y + dy)
        pointer(.moved(position), microseconds, emit)
    }

    /// An absolute device put the pointer at (`x`, `y`), already scaled to the output's points.
    mutating func moved(toX x: Double, y: Double, microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        guard x.isFinite, y.isFinite else { return }
        position = clamped(x, y)
        pointer(.moved(position), microseconds, emit)
    }

    func button(_ code: UInt32, isPressed: Bool, microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        pointer(.button(PointerButton(rawValue: code), isPressed: isPressed), microseconds, emit)
    }

    /// One scroll event of libinput: for each axis it has, `points` (its scroll value) and, from
    /// a wheel, `v120` (nil from fingers and continuous devices: those count no steps).
    mutating func scrolled(
        vertical: (points: Double, v120: Double?)?, horizontal: (points: Double, v120: Double?)?,
        microseconds: UInt64, _ emit: (InputEvent) -> Void
    ) {
        let time = Self.time(microseconds: microseconds)
        var any = false
        if let vertical, vertical.points.isFinite {
            let steps = vertical.v120.map { wheelSteps(&wheelParts.vertical, $0) }
            emit(InputEvent(time: time, kind: .pointer(.scrolled(axis: .vertical, points: vertical.points, steps: steps))))
            any = true
        }
        if let horizontal, horizontal.points.isFinite {
            let steps = horizontal.v120.map { wheelSteps(&wheelParts.horizontal, $0) }
            emit(InputEvent(time: time, kind: .pointer(.scrolled(axis: .horizontal, points: horizontal.points, steps: steps))))
            any = true
        }
        if any { emit(InputEvent(time: time, kind: .pointer(.frame))) }
    }

    /// The whole clicks in `parts` plus `v120` (toward zero); the rest stays in `parts`. A turn
    /// the other way starts afresh.
    private func wheelSteps(_ parts: inout Int, _ v120: Double) -> Int {
        guard v120.isFinite else { return 0 }
        let value = Int(max(-1_000_000, min(1_000_000, v120.rounded())))
        if (parts > 0 && value < 0) || (parts < 0 && value > 0) { parts = 0 }
        parts += value
        let steps = parts / 120
        parts -= steps * 120
        return steps
    }

    private func pointer(_ event: PointerEvent, _ microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        let time = Self.time(microseconds: microseconds)
        emit(InputEvent(time: time, kind: .pointer(event)))
        emit(InputEvent(time: time, kind: .pointer(.frame)))
    }

    private func clamped(_ x: Double, _ y: Double) -> SurfacePoint {
        SurfacePoint(x: min(max(x, 0), width - 1), y: min(max(y, 0), height - 1))
    }

    // MARK: Touch

    /// Finger `slot` (libinput's seat slot) touched at (`x`, `y`), scaled to the output's points.
    mutating func touchDown(slot: Int32, x: Double, y: Double, microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        touchesDown += 1
        let at = clamped(x.isFinite ? x : 0, y.isFinite ? y : 0)
        emit(InputEvent(time: Self.time(microseconds: microseconds), kind: .touch(.down(id: slot, at: at))))
    }

    func touchMoved(slot: Int32, x: Double, y: Double, microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        guard x.isFinite, y.isFinite else { return }
        emit(InputEvent(time: Self.time(microseconds: microseconds), kind: .touch(.moved(id: slot, to: clamped(x, y)))))
    }

    mutating func touchUp(slot: Int32, microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        touchesDown = max(0, touchesDown - 1)
        emit(InputEvent(time: Self.time(microseconds: microseconds), kind: .touch(.up(id: slot))))
    }

    mutating func touchCancelled(microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        touchesDown = 0
        emit(InputEvent(time: Self.time(microseconds: microseconds), kind: .touch(.cancelled)))
    }

    func touchFrame(microseconds: UInt64, _ emit: (InputEvent) -> Void) {
        emit(InputEvent(time: Self.time(microseconds: microseconds), kind: .touch(.frame)))
    }

    // MARK: The session

    /// The session went away (another VT is in front) at `time`: the pointer leaves and touches
    /// still down are cancelled (their devices are closed now; nothing more comes from them).
    mutating func sessionLeft(at time: InputTime, _ emit: (InputEvent) -> Void) {
        emit(InputEvent(time: time, kind: .pointer(.left)))
        emit(InputEvent(time: time, kind: .pointer(.frame)))
        if touchesDown > 0 {
            touchesDown = 0
            emit(InputEvent(time: time, kind: .touch(.cancelled)))
        }
        wheelParts = (0, 0)
    }

    /// The session came back at `time`: the pointer is on the output again where it was.
    func sessionReturned(at time: InputTime, _ emit: (InputEvent) -> Void) {
        emit(InputEvent(time: time, kind: .pointer(.entered(position))))
        emit(InputEvent(time: time, kind: .pointer(.frame)))
    }
}
