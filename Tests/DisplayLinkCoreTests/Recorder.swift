import DisplayLinkCore

/// A link target that records every frame it is given.
@MainActor
final class Recorder {
    var frames: [DisplayFrame] = []
    /// Called after each frame is recorded, with the recorder itself, so that the closure needs no
    /// reference to it: the recorder keeps the closure, and a closure that kept the recorder would leak both.
    var onFrame: ((Recorder, DisplayLink) -> Void)?

    func record(_ link: DisplayLink) {
        frames.append(link.frame)
        onFrame?(self, link)
    }

    var deltas: [Int64] { frames.map(\.delta.value) }
    var sequences: [UInt64] { frames.map(\.sequence) }
    var timestamps: [Int64] { frames.map(\.timestamp.nanoseconds) }
}

extension DisplayLink {
    /// A link on `source` that records into `recorder`.
    static func recording(_ source: some FrameSource, into recorder: Recorder) -> DisplayLink {
        DisplayLink(source: source, target: recorder) { recorder, link in recorder.record(link) }
    }
}

let hz60 = Nanoseconds(periodOfHertz: 60)  // 16_666_667 ns
let hz144 = Nanoseconds(periodOfHertz: 144)  // 6_944_444 ns
