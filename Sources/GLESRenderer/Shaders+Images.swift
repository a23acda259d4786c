/// The image shaders: a texture (premultiplied RGBA) over a rectangle, cropped by texture
/// coordinates, multiplied by a tint whose alpha is the opacity.
extension Shaders {
    /// `a_rect`: the rectangle (pixels), `a_color`: the tint (straight alpha), `a_uv`: the source
    /// rectangle in texture coordinates (u v width height, 0…1).
    static func imageVertex(_ dialect: Dialect) -> String {
        rectInstanceHeader(dialect) + """
            IN vec4 a_uv;
            // One texel of the image (1/width, 1/height).
            uniform vec2 u_texel;
            OUT vec2 v_uv;
            FLAT_OUT vec4 v_tint;
            FLAT_OUT vec4 v_crop;
            void main() {
                vec2 p = corner_position();
                v_uv = a_uv.xy + a_corner * a_uv.zw;
                // Sampling stays half a texel inside the source rectangle, so that filtering
                // never blends in the texels around a crop (a sprite sheet's neighbours).
                vec2 centre = a_uv.xy + a_uv.zw * 0.5;
                v_crop = vec4(min(a_uv.xy + u_texel * 0.5, centre), max(a_uv.xy + a_uv.zw - u_texel * 0.5, centre));
                v_tint = vec4(a_color.rgb * a_color.a, a_color.a);
                gl_Position = clip_position(p, instance_depth(INSTANCE_INDEX));
            }
            """
    }

    static func imageFragment(_ dialect: Dialect) -> String {
        fragmentHeader(dialect) + """
            uniform sampler2D u_image;
            IN vec2 v_uv;
            FLAT_IN vec4 v_tint;
            FLAT_IN vec4 v_crop;
            void main() {
                FRAG_COLOR = TEXTURE(u_image, clamp(v_uv, v_crop.xy, v_crop.zw)) * v_tint;
            }
            """
    }
}
