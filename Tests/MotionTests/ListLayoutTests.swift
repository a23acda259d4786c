import DisplayLinkCore
import DisplayLinkTesting
import Motion
import Testing

@MainActor
final class RecordingDataSource: ListDataSource {
    var requested: [Int] = []
    func prepareRow(_ row: Int) { requested.append(row) }
}

@MainActor
@Suite("List layout")
struct ListLayoutTests {
    @Test("visible rows at exact offsets")
    func visibleRows() {
        let layout = ListLayout(rowCount: 1000, rowHeight: 40, viewportHeight: 200)
        #expect(layout.visibleRows(at: 0) == 0..<5)
        #expect(layout.visibleRows(at: 20) == 0..<6)
        #expect(layout.visibleRows(at: 40) == 1..<6)
        #expect(layout.visibleRows(at: layout.maxOffset) == 995..<1000)
        #expect(layout.maxOffset == 39_800)
        #expect(ListLayout(rowCount: 0, rowHeight: 40, viewportHeight: 200).visibleRows(at: 0).isEmpty)
    }

    @Test("rows in a content range: the union of two windows, visibleRows its special case")
    func rowsInRange() {
        let layout = ListLayout(rowCount: 1000, rowHeight: 40, viewportHeight: 200)
        // A window snapped down to whole pixels and the exact one: the rows of either.
        #expect(layout.rows(from: 39, to: 39.5 + 200) == 0..<6)
        #expect(layout.rows(from: 40, to: 40.25 + 200) == 1..<7)
        #expect(layout.rows(from: -5, to: 10) == 0..<1)
        #expect(layout.rows(from: 39_990, to: 40_100) == 999..<1000)
        #expect(layout.rows(from: 10, to: 10).isEmpty)
        for offset in stride(from: 0.0, through: layout.maxOffset, by: 13.7) {
            #expect(layout.rows(from: offset, to: offset + 200) == layout.visibleRows(at: offset))
        }
    }

    @Test("during an eased scroll, rows requested each frame are exactly the rows visible at that frame's offset")
    func rowsRequestedPerFrame() {
        let layout = ListLayout(rowCount: 1000, rowHeight: 40, viewportHeight: 480)
        let source = MockFrameSource(refreshRate: 60)
        let dataSource = RecordingDataSource()
        final class Scroller {
            var scroll = EasedScroll()
            var perFrame: [(offset: Double, requested: [Int])] = []
        }
        let scroller = Scroller()
        scroller.scroll.scroll(to: layout.maxOffset, duration: 1.0, curve: .easeInOut)
        let link = DisplayLink(source: source, target: scroller) { s, link in
            let offset = s.scroll.update(link.frame)
            dataSource.requested.removeAll()
            layout.prepareVisibleRows(at: offset, dataSource: dataSource)
            s.perFrame.append((offset, dataSource.requested))
        }
        source.vsync(70)
        var everRequested = Set<Int>()
        for (offset, requested) in scroller.perFrame {
            #expect(requested == Array(layout.visibleRows(at: offset)))
            everRequested.formUnion(requested)
        }
        // Rows in the middle of the list were really asked for during the scroll.
        #expect(everRequested.contains(500))
        #expect(everRequested.count > 300)
        #expect(scroller.perFrame.last?.requested == Array(988..<1000))
        link.invalidate()
    }
}
