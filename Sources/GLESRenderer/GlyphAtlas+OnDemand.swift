/// Rasterising a glyph when text first needs it: FreeType renders it, the packer finds it a place
/// (the bitmap growing when full), and the table remembers it, also when it is the replacement.
extension GlyphAtlas {
    /// Rasterises `scalar` for face `face` and remembers it; the replacement when the font has no
    /// glyph for it, FreeType fails, or there is no room (then, with a full table, not remembered:
    /// every later lookup finds the table full again, without FreeType).
    func rasterise(_ scalar: UInt32, face: Int) -> Glyph {
        guard table.count < table.capacity else { return replacements[face] }
        let index = rasterizer.glyphIndex(scalar)
        let glyph = index == 0 ? replacements[face] : rasteriseIndex(index, pixelSize: faces[face].pixelSize) ?? replacements[face]
        table.insert(glyph, face: face, scalar: scalar)
        return glyph
    }

    /// Renders the font's glyph `index` at `pixelSize` into a free place of the bitmap (growing it
    /// when full); nil when FreeType fails or it fits nowhere.
    func rasteriseIndex(_ index: UInt32, pixelSize: Int32) -> Glyph? {
        rasterisedGlyphs += 1
        let placed: Glyph?? = rasterizer.render(index: index, pixelSize: pixelSize) { bitmap in
            guard let origin = packer.place(width: bitmap.width, height: bitmap.height) ?? growAndPlace(bitmap) else { return nil }
            return copy(bitmap, to: origin)
        }
        return placed ?? nil
    }

    /// Doubles the bitmap's height (up to ``maximumHeight``) and places `bitmap` in the new rows.
    private func growAndPlace(_ bitmap: FontRasterizer.Bitmap) -> (x: Int32, y: Int32)? {
        while height < maximumHeight {
            let grown = min(maximumHeight, height * 2)
            pixels.append(contentsOf: repeatElement(0, count: Int(width) * Int(grown - height)))
            height = grown
            packer.grow(toHeight: grown)
            if let origin = packer.place(width: bitmap.width, height: bitmap.height) { return origin }
        }
        return nil
    }

    /// Copies `bitmap`'s coverage to `origin` in the bitmap; returns the glyph there.
    func copy(_ bitmap: FontRasterizer.Bitmap, to origin: (x: Int32, y: Int32)) -> Glyph {
        GlyphAtlas.copy(bitmap, to: origin, into: &pixels, width: width)
    }

    /// Copies `bitmap`'s coverage to `origin` in `pixels`, rows `width` wide; returns the glyph there.
    static func copy(
        _ bitmap: FontRasterizer.Bitmap, to origin: (x: Int32, y: Int32), into pixels: inout [UInt8], width: Int32
    ) -> Glyph {
        let w = Int(bitmap.width)
        pixels.withUnsafeMutableBufferPointer { destination in
            for row in 0..<bitmap.height {
                guard let source = bitmap.row(row) else { break }
                let start = Int(origin.y + row) * Int(width) + Int(origin.x)
                for column in 0..<w { destination[start + column] = source[column] }
            }
        }
        return Glyph(
            atlasX: origin.x, atlasY: origin.y, width: bitmap.width, height: bitmap.height,
            bearingX: bitmap.bearingX, bearingY: bitmap.bearingY, advance: bitmap.advance)
    }
}
