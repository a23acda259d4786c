import DisplayLinkCore
internal import CDisplayLinkABI

/// ``DisplayFrame`` as the header's `dl_frame`.
enum CFrames {
    static func make(_ frame: DisplayFrame) -> dl_frame {
        var value = dl_frame()
        value.timestamp_ns = frame.timestamp.nanoseconds
        value.target_timestamp_ns = frame.targetTimestamp.nanoseconds
        value.duration_ns = frame.duration.value
        value.delta_ns = frame.delta.value
        value.sequence = frame.sequence
        value.missed_frames = Int32(clamping: frame.missedFrames)
        value.provenance = provenance(frame.provenance)
        value.refresh_index = frame.refreshIndex
        value.frame_interval = Int32(clamping: frame.frameInterval)
        if let deadline = frame.deadline {
            value.deadline_ns = deadline.time.nanoseconds
            value.deadline_provenance =
                switch deadline.provenance {
                case .sufficient: Int32(DL_DEADLINE_SUFFICIENT.rawValue)
                case .bracketed: Int32(DL_DEADLINE_BRACKETED.rawValue)
                case .prior: Int32(DL_DEADLINE_PRIOR.rawValue)
                }
        } else {
            value.deadline_ns = 0
            value.deadline_provenance = Int32(DL_DEADLINE_NONE.rawValue)
        }
        value.render_estimate_ns = frame.renderEstimate?.value ?? -1
        return value
    }

    static func provenance(_ provenance: TimestampProvenance) -> Int32 {
        switch provenance {
        case .hardwareVBlank: Int32(DL_PROVENANCE_HARDWARE_VBLANK.rawValue)
        case .presentationFeedback: Int32(DL_PROVENANCE_PRESENTATION_FEEDBACK.rawValue)
        case .frameCallbackEstimate: Int32(DL_PROVENANCE_ESTIMATE.rawValue)
        case .timerFallback: Int32(DL_PROVENANCE_TIMER_FALLBACK.rawValue)
        }
    }
}
