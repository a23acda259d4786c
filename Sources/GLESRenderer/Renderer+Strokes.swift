internal import CGLES

/// Strokes (``Stroke``): lines and polylines, one instance per segment, all of a layer's strokes
/// in one draw call after its rectangles and images and before its glyphs.
///
/// Each segment is one quad (a triangle strip of the unit quad on GLES 3, two triangles on
/// GLES 2) that the vertex shader builds from the segment, its neighbours and its ends' kinds:
/// - A join where the turn is moderate ends both segments' quads on the bisector, at the same
///   two vertices (the offset lines' intersections, widened 1 px for the antialiased edge). The
///   rasteriser draws every pixel of that shared edge once, so a translucent stroke is not
///   blended twice at its joins. The fragment shader covers a round join by the distance to the
///   segment clamped to its ends (the outer arc), a miter join by the distance to its line (the
///   tip, where the offset lines meet).
/// - A join that turns too sharply for that (its quads' offset would pass 8 half widths, or the
///   inner corner would retreat past half of either segment) is drawn round, each segment
///   extended straight by half the width plus 1 px: its two segments overlap there, and a
///   translucent stroke is blended twice in that overlap (hairpin turns only). A miter join whose
///   tip would pass the miter limit is drawn round (on the bisector when it can).
///   Along a smooth curve the second case means a radius of curvature under half the width
///   plus 1 px: there a translucent stroke darkens where its segments overlap.
/// - A cap extends the quad by half the width plus 1 px (round) or 1 px (butt, whose end fades
///   over the half pixel either side of the end, as a rectangle's edge).
/// Coverage is `clamp(0.5 - d)` of the signed distance `d` to the ink, as the rectangles'.
///
/// A layer's changed strokes are uploaded whole (`glBufferData`, 64 bytes a segment), not from
/// the first changed segment on: a driver gives the new data new storage, where writing part of
/// a buffer that the previous frame's draw still reads (llvmpipe rasterises it on other threads)
/// would wait for that draw. Strokes are not counted in the overdraw that decides the opaque
/// pass, and they hide nothing from it.
extension Renderer {
    static let strokeFloats = Stroke.instanceFloats
    /// The stroke instance layout (see ``Stroke/instanceFloats``): the previous point and p0, p1
    /// and the next point, the colour, and half width, end kinds and miter limit.
    static let strokeAttributes: [(GLuint, GLint, Int)] = [(5, 4, 0), (6, 4, 4), (2, 4, 8), (7, 4, 12)]

    /// Adds `stroke` (points) to a layer: its segments are copied, scaled to pixels, after the
    /// layer's other strokes. A stroke wholly outside the viewport or the layer's clip is dropped.
    public func addStroke(_ layer: LayerID, _ stroke: Stroke) {
        guard stroke.segmentCount > 0, stroke.width > 0,
            let first = beginStroke(layer, stroke.pointBounds, halfWidth: stroke.width * 0.5, miterFactor: stroke.miterFactor)
        else { return }
        // Copied whole (no reallocation once the layer's array has grown), then scaled in place.
        layers[layer].strokes.append(contentsOf: stroke.instances)
        scaleStrokes(layer, from: first)
    }

    /// A straight line from `from` to `to` (points), encoded straight into the layer (nothing
    /// allocated once the layer's array has grown).
    public func addLine(_ layer: LayerID, from: Point, to: Point, width: Float, color: RGBA, cap: Stroke.Cap = .butt) {
        guard width > 0, from != to else { return }
        var b = Bounds()
        b.add(from.x, from.y, 0, 0)
        b.add(to.x, to.y, 0, 0)
        guard let first = beginStroke(layer, b, halfWidth: width * 0.5, miterFactor: 1) else { return }
        let kind: Stroke.EndKind = cap == .round ? .roundCap : .buttCap
        Stroke.appendInstance(
            previous: from, from: from, to: to, next: to, color: color, halfWidth: width * 0.5, startKind: kind, endKind: kind,
            miterLimit: 4, to: &layers[layer].strokes)
        scaleStrokes(layer, from: first)
    }

    /// Where segments about to be added to a layer start in its stroke array, after adding their
    /// bounds (points `b`, padded by how far their ink reaches) to the layer's; nil when they are
    /// wholly outside the viewport or the layer's clip (not added).
    private func beginStroke(_ layer: LayerID, _ b: Bounds, halfWidth: Float, miterFactor: Float) -> Int? {
        guard !b.isEmpty else { return nil }
        let s = scale
        // The ink reaches half the width and half a pixel from the points (a miter's tip that
        // many times as far), so 1 px on top keeps the antialiased edge inside.
        let pad = (halfWidth * s + 1) * miterFactor
        let x = b.minX * s - pad, y = b.minY * s - pad
        let w = (b.maxX - b.minX) * s + 2 * pad, h = (b.maxY - b.minY) * s + 2 * pad
        guard isVisible(layer, x, y, w, h) else { return nil }
        layers[layer].bounds.add(x, y, w, h)
        return layers[layer].strokes.count
    }

    /// Scales the segments from float `first` on from points to pixels, in place: their eight
    /// coordinates and half width.
    private func scaleStrokes(_ layer: LayerID, from first: Int) {
        let s = scale
        guard s != 1 else { return }
        layers[layer].strokes.withUnsafeMutableBufferPointer { floats in
            var k = first
            while k < floats.count {
                for j in 0..<8 { floats[k + j] *= s }
                floats[k + 12] *= s
                k += Stroke.instanceFloats
            }
        }
    }

    /// Number of stroke segments in a layer this frame.
    public func strokeSegmentCount(_ layer: LayerID) -> Int { layers[layer].strokes.count / Renderer.strokeFloats }

    /// Draws layer `i`'s strokes in one call; `first`: the depth index of its first segment.
    func drawStrokes(layer i: Int, first: Int, depthStep: Float) {
        let data = layers[i].strokes
        let count = data.count / Renderer.strokeFloats
        guard count > 0 else { layers[i].strokesStale = false; return }
        strokeProgram.use(
            viewport: (Float(width), Float(height)), depth: (Float(first), depthStep), transform: layers[i].drawTransform)
        draw(
            data: data, count: count, floats: Renderer.strokeFloats, buffer: layers[i].strokeBuffer,
            upload: layers[i].strokesStale, attributes: Renderer.strokeAttributes)
        layers[i].strokesStale = false
    }
}

extension Shaders {
    /// A stroke segment's quad (see `Renderer+Strokes.swift`). End kinds as ``Stroke/EndKind``:
    /// 0 butt cap, 1 round cap, 2 round join, 3 miter join. To the fragment shader: the position
    /// along and across the segment from p0 (pixels), and how each end is covered (0 butt,
    /// 1 round, 2 miter).
    static func strokeVertex(_ dialect: Dialect) -> String {
        vertexHeader(dialect) + """
            IN vec2 a_corner;
            IN vec4 a_stroke_start;  // the previous point, p0
            IN vec4 a_stroke_end;    // p1, the next point
            IN vec4 a_color;
            IN vec4 a_stroke;        // half width, start kind, end kind, miter limit
            OUT vec2 v_local;
            FLAT_OUT vec4 v_color;
            FLAT_OUT vec4 v_shape;   // half width, length, start's and end's coverage kind
            // A join at p between a→p and p→b, whose quads' edges lie `reach` from the centre
            // line: xy the offset of their shared vertex on the left side (the right one is its
            // negation), z 1 when the quads meet on the bisector (0: each is extended straight),
            // w whether a miter's tip fits within `limit` half widths. Both segments call it with
            // the same arguments in the same order, so they compute the same vertices.
            vec4 join_offset(vec2 a, vec2 p, vec2 b, float reach, float limit) {
                vec2 da = normalize(p - a), db = normalize(b - p);
                vec2 na = vec2(-da.y, da.x), nb = vec2(-db.y, db.x);
                float c = dot(da, db);
                float cos_half = sqrt(max(0.5 + 0.5 * c, 0.0));
                float retreat = reach * sqrt(max(1.0 - c, 0.0) / max(1.0 + c, 1e-6));
                if (cos_half * 8.0 < 1.0 || retreat > 0.5 * min(length(p - a), length(b - p))) {
                    return vec4(0.0);
                }
                vec2 m = normalize(na + nb);
                return vec4(m * (reach / dot(m, na)), 1.0, cos_half * limit >= 1.0 ? 1.0 : 0.0);
            }
            // How an end of `kind` is covered, with its join's `j`.
            float coverage_kind(float kind, vec4 j) {
                if (kind < 0.5) return 0.0;
                return kind > 2.5 && j.z > 0.5 && j.w > 0.5 ? 2.0 : 1.0;
            }
            void main() {
                vec2 prev = a_stroke_start.xy, p0 = a_stroke_start.zw;
                vec2 p1 = a_stroke_end.xy, next = a_stroke_end.zw;
                float half_width = a_stroke.x;
                float reach = half_width + 1.0;
                vec2 d = normalize(p1 - p0);
                vec2 n = vec2(-d.y, d.x);
                vec4 start_join = a_stroke.y > 1.5 ? join_offset(prev, p0, p1, reach, a_stroke.w) : vec4(0.0);
                vec4 end_join = a_stroke.z > 1.5 ? join_offset(p0, p1, next, reach, a_stroke.w) : vec4(0.0);
                bool at_end = a_corner.x > 0.5;
                float kind = at_end ? a_stroke.z : a_stroke.y;
                vec4 j = at_end ? end_join : start_join;
                float side = a_corner.y * 2.0 - 1.0;
                vec2 p;
                if (j.z > 0.5) {
                    p = (at_end ? p1 : p0) + side * j.xy;
                } else {
                    // A cap, or a join drawn overlapping: straight on, 1 px for a butt cap's edge.
                    float extend = kind < 0.5 ? 1.0 : reach;
                    p = at_end ? p1 + d * extend : p0 - d * extend;
                    p += side * reach * n;
                }
                v_local = vec2(dot(p - p0, d), dot(p - p0, n));
                v_color = a_color;
                v_shape = vec4(half_width, length(p1 - p0), coverage_kind(a_stroke.y, start_join),
                               coverage_kind(a_stroke.z, end_join));
                gl_Position = clip_position(p, instance_depth(INSTANCE_INDEX));
            }
            """
    }

    static func strokeFragment(_ dialect: Dialect) -> String {
        fragmentHeader(dialect) + """
            IN vec2 v_local;
            FLAT_IN vec4 v_color;
            FLAT_IN vec4 v_shape;
            void main() {
                float half_width = v_shape.x;
                bool at_start = v_local.x < 0.5 * v_shape.y;
                // How far past the nearer end (negative: before it), and how that end is covered.
                float e = at_start ? -v_local.x : v_local.x - v_shape.y;
                float kind = at_start ? v_shape.z : v_shape.w;
                float across = abs(v_local.y) - half_width;
                float d;
                if (kind < 0.5) {
                    // Butt: a rectangle's corner.
                    vec2 q = vec2(e, across);
                    d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0);
                } else if (kind < 1.5) {
                    d = length(vec2(max(e, 0.0), v_local.y)) - half_width;
                } else {
                    d = across;
                }
                float a = v_color.a * clamp(0.5 - d, 0.0, 1.0);
                FRAG_COLOR = vec4(v_color.rgb * a, a);
            }
            """
    }
}
