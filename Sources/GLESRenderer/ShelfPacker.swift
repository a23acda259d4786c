/// Places glyph bitmaps in a bitmap of fixed width: left to right along a shelf, and a new shelf
/// below the tallest bitmap of the last one when a bitmap no longer fits beside; one empty pixel
/// between bitmaps and along the edges, so that sampling at a bitmap's edge never reads its
/// neighbour. Bitmaps are never moved, so a place once given stays valid, also after
/// ``grow(toHeight:)``.
///
/// Everything placed since a moment lies in the rows from that moment's ``shelfTop`` down to
/// ``usedBottom``: what the atlas's texture needs uploaded again is one band of rows.
struct ShelfPacker: Equatable {
    private(set) var width: Int32
    private(set) var height: Int32
    /// Where the next bitmap on the current shelf goes.
    private(set) var penX: Int32 = 1
    /// The current shelf's top row.
    private(set) var shelfTop: Int32 = 1
    /// The tallest bitmap on the current shelf.
    private(set) var shelfHeight: Int32 = 0
    /// Bitmaps placed so far (empty ones too).
    private(set) var placed = 0

    init(width: Int32, height: Int32) {
        self.width = width
        self.height = height
    }

    /// The first row below everything placed.
    var usedBottom: Int32 { shelfTop + shelfHeight }

    /// The top-left corner for a bitmap of `width` × `height`, or nil when it fits nowhere (then
    /// nothing changes). An empty bitmap takes a place too (and one pixel of the shelf).
    mutating func place(width w: Int32, height h: Int32) -> (x: Int32, y: Int32)? {
        guard w >= 0, h >= 0, w + 2 <= width else { return nil }
        var x = penX, y = shelfTop, tallest = shelfHeight
        if x + w + 1 > width {
            x = 1
            y += shelfHeight + 1
            tallest = 0
        }
        guard y + h + 1 <= height else { return nil }
        penX = x + w + 1
        shelfTop = y
        shelfHeight = max(tallest, h)
        placed += 1
        return (x, y)
    }

    /// More rows at the bottom (a taller bitmap); the places given stay as they are.
    mutating func grow(toHeight newHeight: Int32) {
        height = max(height, newHeight)
    }
}
