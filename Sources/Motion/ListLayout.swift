/// Supplies a row's content; asked only for rows visible in the frame being drawn.
@MainActor
public protocol ListDataSource: AnyObject {
    /// Called for each row that intersects the viewport in the frame being drawn.
    func prepareRow(_ row: Int)
}

/// A vertical list of fixed-height rows in a viewport.
public struct ListLayout: Sendable, Hashable {
    public var rowCount: Int
    public var rowHeight: Double
    public var viewportHeight: Double

    public init(rowCount: Int, rowHeight: Double, viewportHeight: Double) {
        self.rowCount = max(0, rowCount)
        self.rowHeight = max(1, rowHeight)
        self.viewportHeight = max(0, viewportHeight)
    }

    public var contentHeight: Double { Double(rowCount) * rowHeight }
    /// The largest offset: the last row at the bottom of the viewport.
    public var maxOffset: Double { max(0, contentHeight - viewportHeight) }

    /// The rows that intersect `[offset, offset + viewportHeight)`; empty when there are none.
    public func visibleRows(at offset: Double) -> Range<Int> {
        guard rowCount > 0, viewportHeight > 0 else { return 0..<0 }
        let top = max(0, offset)
        let bottom = offset + viewportHeight
        let first = min(rowCount, Int((top / rowHeight).rounded(.down)))
        let lastExclusive = min(rowCount, Int((bottom / rowHeight).rounded(.up)))
        return first < lastExclusive ? first..<lastExclusive : first..<first
    }

    /// The rows that intersect `[top, bottom)` of the content (`top` clamped to 0); empty when
    /// there are none. `visibleRows(at: o)` is `rows(from: o, to: o + viewportHeight)`.
    public func rows(from top: Double, to bottom: Double) -> Range<Int> {
        guard rowCount > 0, bottom > top else { return 0..<0 }
        let first = min(rowCount, Int((max(0, top) / rowHeight).rounded(.down)))
        let lastExclusive = min(rowCount, Int((bottom / rowHeight).rounded(.up)))
        return first < lastExclusive ? first..<lastExclusive : first..<first
    }

    /// The row's top edge in viewport coordinates at `offset`.
    public func rowTop(_ row: Int, at offset: Double) -> Double { Double(row) * rowHeight - offset }

    /// Asks `dataSource` for exactly the visible rows at `offset`, in order; returns them.
    @MainActor @discardableResult
    public func prepareVisibleRows(at offset: Double, dataSource: ListDataSource) -> Range<Int> {
        let rows = visibleRows(at: offset)
        for row in rows { dataSource.prepareRow(row) }
        return rows
    }
}
