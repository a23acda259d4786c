/// The glyphs rasterised on demand, by face and Unicode scalar: an open-addressing hash table
/// (linear probing) whose storage is made once, at its capacity, so that looking a glyph up and
/// adding one never allocates. At most half its slots are ever used, so a lookup ends at an
/// empty slot after a few probes. Entries are never removed (the atlas never evicts).
struct GlyphTable {
    /// How many glyphs it holds at most.
    let capacity: Int
    /// How many it holds.
    private(set) var count = 0
    /// Slots: a power of two, at least twice the capacity.
    private var keys: ContiguousArray<UInt64>
    private var values: ContiguousArray<GlyphAtlas.Glyph>
    /// No key is this: a face index never reaches 2³² − 1.
    private static let empty = UInt64.max

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        var slots = 2
        while slots < 2 * self.capacity { slots *= 2 }
        keys = ContiguousArray(repeating: GlyphTable.empty, count: slots)
        values = ContiguousArray(
            repeating: GlyphAtlas.Glyph(atlasX: 0, atlasY: 0, width: 0, height: 0, bearingX: 0, bearingY: 0, advance: 0),
            count: slots)
    }

    var slotCount: Int { keys.count }

    static func key(face: Int, scalar: UInt32) -> UInt64 { UInt64(UInt32(truncatingIfNeeded: face)) << 32 | UInt64(scalar) }

    /// The slot a key's probe starts at: Fibonacci hashing (the key times 2⁶⁴/φ, its top bits),
    /// which spreads neighbouring scalars of one script over the table.
    func home(_ key: UInt64) -> Int {
        let bits = UInt64(keys.count.trailingZeroBitCount)
        return Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> (64 - bits))
    }

    func find(face: Int, scalar: UInt32) -> GlyphAtlas.Glyph? {
        let key = GlyphTable.key(face: face, scalar: scalar)
        let mask = keys.count - 1
        var slot = home(key)
        while true {
            let k = keys[slot]
            if k == key { return values[slot] }
            if k == GlyphTable.empty { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Adds (or replaces) a glyph; false when the table is full and the key is new.
    @discardableResult
    mutating func insert(_ glyph: GlyphAtlas.Glyph, face: Int, scalar: UInt32) -> Bool {
        let key = GlyphTable.key(face: face, scalar: scalar)
        let mask = keys.count - 1
        var slot = home(key)
        while keys[slot] != GlyphTable.empty && keys[slot] != key { slot = (slot + 1) & mask }
        if keys[slot] == GlyphTable.empty {
            guard count < capacity else { return false }
            keys[slot] = key
            count += 1
        }
        values[slot] = glyph
        return true
    }

    /// The slot holding a key (nil: absent), for tests of the probing.
    func slot(face: Int, scalar: UInt32) -> Int? {
        let key = GlyphTable.key(face: face, scalar: scalar)
        let mask = keys.count - 1
        var slot = home(key)
        while keys[slot] != GlyphTable.empty {
            if keys[slot] == key { return slot }
            slot = (slot + 1) & mask
        }
        return nil
    }
}
