import DRMBackend
import Testing

@Suite("DRM quirks")
struct DRMQuirksTests {
    @Test("each quirk has a name and a consequence; a set prints its names in table order, or none")
    func names() {
        #expect(DRMQuirks().description == "none")
        #expect(DRMQuirks().explained == "none")
        let two: DRMQuirks = [.softwareRendering, .noVblankEvents]
        #expect(two.description == "no-vblank-events, software-rendering")
        #expect(
            two.explained
                == "no-vblank-events: refreshes paced by a timer at the mode's period; software-rendering: scan-out buffers kept mapped")
        #expect(Set(DRMQuirks.table.map(\.name)).count == DRMQuirks.table.count)
        #expect(DRMQuirks.table.allSatisfy { !$0.consequence.isEmpty })
        let all = DRMQuirks.table.reduce(into: DRMQuirks()) { $0.insert($1.quirk) }
        #expect(all.description.split(separator: ",").count == DRMQuirks.table.count)
    }
}
