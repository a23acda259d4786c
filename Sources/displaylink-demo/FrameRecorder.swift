import DisplayLinkCore
import Scenes

/// One callback's record for the report.
struct FrameRecord {
    var frame: DisplayFrame
    var presented: MonotonicInstant?
    var discarded = false
    /// The compositor reported a time implausibly far from the report's arrival
    /// (``PresentationFeedback/isTimePlausible``): the frame was shown, its time is unknown.
    var presentedAtImplausibleTime = false
    /// The presentation flags' names the compositor reported (nil: not reported).
    var presentationFlags: PresentationFlags?
    /// The time the frame's commit asked not to be presented before (nil: none asked).
    var commitTarget: MonotonicInstant?
    var cpuTime: Double
    /// When the callback began, when its drawing was encoded (before the swap) and when the
    /// frame was handed to the display (after the swap and flip or commit).
    var callbackAt: MonotonicInstant
    var encodedAt: MonotonicInstant
    var submittedAt: MonotonicInstant
    var scroll: ScrollSample?
    /// The newest input event (``InputRecord/sequence``) the frame was drawn with (follow scene;
    /// nil: none yet, or a scene that does not follow input).
    var inputSequence: Int? = nil
}

/// Collects frame records (capacity reserved up front, so recording does not allocate per frame)
/// and matches presentation feedback to them.
struct FrameRecorder {
    private(set) var records: [FrameRecord] = []
    private(set) var discardedCount = 0
    /// Frames reported presented at an implausible time, left out of the timing figures.
    private(set) var implausibleCount = 0

    init(expectedFrames: Int) {
        records.reserveCapacity(max(16, expectedFrames + 8))
    }

    mutating func append(_ record: FrameRecord) {
        records.append(record)
    }

    mutating func apply(_ feedback: PresentationFeedback) {
        // Records are in refresh order: binary search by refresh index.
        var low = 0, high = records.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let index = records[mid].frame.refreshIndex
            if index == feedback.refreshIndex {
                switch feedback.outcome {
                case .presented(_, _) where !feedback.isTimePlausible:
                    records[mid].presentedAtImplausibleTime = true
                    implausibleCount += 1
                case .presented(let at, _): records[mid].presented = at
                case .discarded: records[mid].discarded = true; discardedCount += 1
                }
                records[mid].presentationFlags = feedback.flags
                records[mid].commitTarget = feedback.commitTarget
                return
            }
            if index < feedback.refreshIndex { low = mid + 1 } else { high = mid - 1 }
        }
    }

    /// Frames whose fate is still unknown.
    var outstanding: Int {
        records.reduce(0) { $0 + ($1.presented == nil && !$1.discarded && !$1.presentedAtImplausibleTime ? 1 : 0) }
    }
}
