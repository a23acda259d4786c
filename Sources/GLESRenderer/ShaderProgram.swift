internal import CGLES

/// Why GL said no.
public struct GLError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { "GLES: " + message }
}

/// A linked program with its attribute and uniform locations looked up once.
struct ShaderProgram {
    let program: GLuint
    /// The locations of `u_viewport` and `u_depth`, which every vertex shader of ``Shaders`` has
    /// (``Shaders/vertexHeader(_:)``).
    let viewport: GLint
    let depth: GLint
    /// The locations of `u_linear` and `u_translation`: the layer's transform (``vertexHeader(_:)``).
    let linear: GLint
    let translation: GLint

    /// One of ``Shaders``' pairs in `dialect`, its attributes at ``Shaders/attributes``' locations.
    init(_ dialect: Shaders.Dialect, vertex: (Shaders.Dialect) -> String, fragment: (Shaders.Dialect) -> String) throws(GLError) {
        try self.init(vertex: vertex(dialect), fragment: fragment(dialect), attributes: Shaders.attributes)
    }

    init(vertex: String, fragment: String, attributes: [String]) throws(GLError) {
        let vs = try ShaderProgram.compile(GLenum(GL_VERTEX_SHADER), vertex)
        let fs = try ShaderProgram.compile(GLenum(GL_FRAGMENT_SHADER), fragment)
        program = glCreateProgram()
        glAttachShader(program, vs)
        glAttachShader(program, fs)
        // Fixed attribute locations in the order given, so every program shares the layout.
        for (index, name) in attributes.enumerated() { glBindAttribLocation(program, GLuint(index), name) }
        glLinkProgram(program)
        glDeleteShader(vs)
        glDeleteShader(fs)
        try ShaderProgram.checkStatus(program, isProgram: true)
        viewport = glGetUniformLocation(program, "u_viewport")
        depth = glGetUniformLocation(program, "u_depth")
        linear = glGetUniformLocation(program, "u_linear")
        translation = glGetUniformLocation(program, "u_translation")
    }

    func uniform(_ name: String) -> GLint { glGetUniformLocation(program, name) }

    /// Uses the program for a viewport of `viewport` pixels, `depth` (the draw's first
    /// instance's index, the clip-space step between instances; see ``Shaders/vertexHeader(_:)``)
    /// and `transform` (pixels to pixels: the layer's, scaled to pixels).
    @inline(__always)
    func use(viewport size: (Float, Float), depth: (Float, Float), transform: Transform2D = .identity) {
        glUseProgram(program)
        glUniform2f(viewport, size.0, size.1)
        glUniform2f(self.depth, depth.0, depth.1)
        glUniform4f(linear, transform.a, transform.b, transform.c, transform.d)
        glUniform2f(translation, transform.tx, transform.ty)
    }

    private static func compile(_ kind: GLenum, _ source: String) throws(GLError) -> GLuint {
        let shader = glCreateShader(kind)
        source.withCString { pointer in
            var p: UnsafePointer<GLchar>? = pointer
            glShaderSource(shader, 1, &p, nil)
        }
        glCompileShader(shader)
        try ShaderProgram.checkStatus(shader, isProgram: false)
        return shader
    }

    /// Throws the object's log, after deleting it, when its link (a program) or compile (a
    /// shader) failed.
    private static func checkStatus(_ object: GLuint, isProgram: Bool) throws(GLError) {
        var ok: GLint = 0
        if isProgram {
            glGetProgramiv(object, GLenum(GL_LINK_STATUS), &ok)
        } else {
            glGetShaderiv(object, GLenum(GL_COMPILE_STATUS), &ok)
        }
        guard ok == 0 else { return }
        let log = ShaderProgram.log(object, isProgram: isProgram)
        if isProgram { glDeleteProgram(object) } else { glDeleteShader(object) }
        throw GLError(message: "shader \(isProgram ? "link" : "compile") failed: \(log)")
    }

    private static func log(_ object: GLuint, isProgram: Bool) -> String {
        var length: GLint = 0
        if isProgram {
            glGetProgramiv(object, GLenum(GL_INFO_LOG_LENGTH), &length)
        } else {
            glGetShaderiv(object, GLenum(GL_INFO_LOG_LENGTH), &length)
        }
        guard length > 1 else { return "(no log)" }
        var buffer = [GLchar](repeating: 0, count: Int(length))
        if isProgram { glGetProgramInfoLog(object, length, nil, &buffer) } else { glGetShaderInfoLog(object, length, nil, &buffer) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The renderer's shaders, written once for both GLSL dialects:
/// - GLSL ES 3.00 on GLES 3 contexts: values constant across a rectangle or glyph are `flat`, so
///   the rasteriser does not interpolate them per pixel (software rasterisers such as llvmpipe
///   spend much of a small primitive's time interpolating); only the rectangle-local position and
///   texture coordinates are interpolated.
/// - GLSL ES 1.00 on GLES 2 (no `flat`): the same values, interpolated (and so the same pixels).
///
/// `IN`, `OUT`, `FLAT_IN`, `FLAT_OUT`, `FRAG_COLOR` and `TEXTURE` stand for each dialect's words.
enum Shaders {
    enum Dialect {
        case es100, es300
    }

    /// The dialect's words, the viewport uniform and `clip_position` (pixels, top-left origin,
    /// to clip space), shared by both vertex shaders.
    static func vertexHeader(_ dialect: Dialect) -> String {
        let words =
            switch dialect {
            case .es300:
                "#version 300 es\n#define IN in\n#define OUT out\n#define FLAT_OUT flat out\n"
                    + "#define INSTANCE_INDEX float(gl_InstanceID)\n"
            case .es100: "#define IN attribute\n#define OUT varying\n#define FLAT_OUT varying\n#define INSTANCE_INDEX 0.0\n"
            }
        return words + """
            uniform vec2 u_viewport;
            // x: the index of the draw's first instance in the frame's drawing order, y: the clip-space
            // depth step between instances (0: no depth test). Later instances are nearer. Every
            // value is an exact float (integers and powers of two), so an instance gets the same
            // depth in every pass.
            uniform vec2 u_depth;
            // The layer's transform in pixels (Transform2D's a b c d, then tx ty): what is drawn
            // is laid out untransformed and moved here, so shading (antialiasing, texture
            // coordinates) stays in the layer's own pixels.
            uniform vec4 u_linear;
            uniform vec2 u_translation;
            float instance_depth(float index) {
                return u_depth.y > 0.0 ? 1.0 - (u_depth.x + index + 1.0) * u_depth.y : 0.0;
            }
            vec4 clip_position(vec2 p, float z) {
                vec2 q = vec2(u_linear.x * p.x + u_linear.z * p.y, u_linear.y * p.x + u_linear.w * p.y) + u_translation;
                return vec4(q.x / u_viewport.x * 2.0 - 1.0, 1.0 - q.y / u_viewport.y * 2.0, z, 1.0);
            }

            """
    }

    static func fragmentHeader(_ dialect: Dialect) -> String {
        switch dialect {
        case .es300:
            "#version 300 es\nprecision highp float;\n#define IN in\n#define FLAT_IN flat in\n"
                + "out vec4 fragColor;\n#define FRAG_COLOR fragColor\n#define TEXTURE texture\n"
        case .es100:
            "#ifdef GL_FRAGMENT_PRECISION_HIGH\nprecision highp float;\n#else\nprecision mediump float;\n#endif\n"
                + "#define IN varying\n#define FLAT_IN varying\n#define FRAG_COLOR gl_FragColor\n#define TEXTURE texture2D\n"
        }
    }

    /// The inputs of an instanced rectangle (a corner of the unit quad, the rectangle in pixels,
    /// its colour) and `corner_position`, that corner in pixels: what the rectangle, opaque and
    /// glyph vertex shaders start from, after ``vertexHeader(_:)``.
    static func rectInstanceHeader(_ dialect: Dialect) -> String {
        vertexHeader(dialect) + """
            IN vec2 a_corner;
            IN vec4 a_rect;
            IN vec4 a_color;
            vec2 corner_position() {
                return a_rect.xy + a_corner * a_rect.zw;
            }

            """
    }

    static func rectVertex(_ dialect: Dialect) -> String {
        rectInstanceHeader(dialect) + """
            IN float a_radius;
            OUT vec2 v_local;
            FLAT_OUT vec4 v_color;
            FLAT_OUT vec3 v_shape;  // xy: half size less the corner radius, z: corner radius
            void main() {
                vec2 p = corner_position();
                vec2 half_size = a_rect.zw * 0.5;
                float r = min(a_radius, min(half_size.x, half_size.y));
                v_local = p - (a_rect.xy + half_size);
                v_shape = vec3(half_size - vec2(r), r);
                v_color = a_color;
                gl_Position = clip_position(p, instance_depth(INSTANCE_INDEX));
            }
            """
    }

    /// The opaque pass: the inside of an opaque rectangle (where its coverage is exactly 1, laid
    /// out by the renderer), one flat colour, no blending. `a_rect`: the inside, `a_color`: rgb
    /// and the rectangle's index in its layer.
    static func opaqueVertex(_ dialect: Dialect) -> String {
        rectInstanceHeader(dialect) + """
            FLAT_OUT vec4 v_color;
            void main() {
                vec2 p = corner_position();
                v_color = vec4(a_color.rgb, 1.0);
                gl_Position = clip_position(p, instance_depth(a_color.a));
            }
            """
    }

    static func opaqueFragment(_ dialect: Dialect) -> String {
        fragmentHeader(dialect) + """
            FLAT_IN vec4 v_color;
            void main() {
                FRAG_COLOR = v_color;
            }
            """
    }

    static func rectFragment(_ dialect: Dialect) -> String {
        fragmentHeader(dialect) + """
            IN vec2 v_local;
            FLAT_IN vec4 v_color;
            FLAT_IN vec3 v_shape;
            void main() {
                vec2 q = abs(v_local) - v_shape.xy;
                float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - v_shape.z;
                float a = v_color.a * clamp(0.5 - d, 0.0, 1.0);
                FRAG_COLOR = vec4(v_color.rgb * a, a);
            }
            """
    }

    /// A cached layer's texture (premultiplied, the viewport's size) over `u_rect` (pixels).
    static func compositeVertex(_ dialect: Dialect) -> String {
        vertexHeader(dialect) + """
            IN vec2 a_corner;
            uniform vec4 u_rect;
            OUT vec2 v_uv;
            void main() {
                vec2 p = u_rect.xy + a_corner * u_rect.zw;
                // The texture's rows start at the bottom, as the framebuffer's.
                v_uv = vec2(p.x / u_viewport.x, 1.0 - p.y / u_viewport.y);
                gl_Position = clip_position(p, instance_depth(INSTANCE_INDEX));
            }
            """
    }

    static func compositeFragment(_ dialect: Dialect) -> String {
        fragmentHeader(dialect) + """
            uniform sampler2D u_layer;
            IN vec2 v_uv;
            void main() {
                FRAG_COLOR = TEXTURE(u_layer, v_uv);
            }
            """
    }

    static func glyphVertex(_ dialect: Dialect) -> String {
        rectInstanceHeader(dialect) + """
            IN vec4 a_uv;
            uniform vec2 u_atlas_size;
            OUT vec2 v_uv;
            FLAT_OUT vec4 v_color;
            void main() {
                vec2 p = corner_position();
                v_uv = (a_uv.xy + a_corner * a_uv.zw) / u_atlas_size;
                v_color = a_color;
                gl_Position = clip_position(p, instance_depth(INSTANCE_INDEX));
            }
            """
    }

    static func glyphFragment(_ dialect: Dialect) -> String {
        fragmentHeader(dialect) + """
            uniform sampler2D u_atlas;
            IN vec2 v_uv;
            FLAT_IN vec4 v_color;
            void main() {
                float a = v_color.a * TEXTURE(u_atlas, v_uv).a;
                FRAG_COLOR = vec4(v_color.rgb * a, a);
            }
            """
    }

    static let attributes = [
        "a_corner", "a_rect", "a_color", "a_radius", "a_uv",
        // Strokes (Renderer+Strokes.swift).
        "a_stroke_start", "a_stroke_end", "a_stroke"
    ]
}
