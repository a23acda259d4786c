internal import CGLES

/// Why GL said no.
public struct GLError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { "GLES: " + message }
}

/// A linked program with its attribute and uniform locations looked up once.
struct ShaderProgram {
    let program: GLuint

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
        var ok: GLint = 0
        glGetProgramiv(program, GLenum(GL_LINK_STATUS), &ok)
        guard ok != 0 else {
            let log = ShaderProgram.log(program, isProgram: true)
            glDeleteProgram(program)
            throw GLError(message: "shader link failed: \(log)")
        }
    }

    func uniform(_ name: String) -> GLint { glGetUniformLocation(program, name) }

    private static func compile(_ kind: GLenum, _ source: String) throws(GLError) -> GLuint {
        let shader = glCreateShader(kind)
        source.withCString { pointer in
            var p: UnsafePointer<GLchar>? = pointer
            glShaderSource(shader, 1, &p, nil)
        }
        glCompileShader(shader)
        var ok: GLint = 0
        glGetShaderiv(shader, GLenum(GL_COMPILE_STATUS), &ok)
        guard ok != 0 else {
            let log = ShaderProgram.log(shader, isProgram: false)
            glDeleteShader(shader)
            throw GLError(message: "shader compile failed: \(log)")
        }
        return shader
    }

    private static func log(_ object: GLuint, isProgram: Bool) -> String {
        var length: GLint = 0
        if isProgram { glGetProgramiv(object, GLenum(GL_INFO_LOG_LENGTH), &length) }
        else { glGetShaderiv(object, GLenum(GL_INFO_LOG_LENGTH), &length) }
        guard length > 1 else { return "(no log)" }
        var buffer = [GLchar](repeating: 0, count: Int(length))
        if isProgram { glGetProgramInfoLog(object, length, nil, &buffer) }
        else { glGetShaderInfoLog(object, length, nil, &buffer) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// GLSL ES 1.00 sources, valid on GLES 2 and 3 contexts alike (instancing is API state).
enum Shaders {
    static let precision = """
        #ifdef GL_FRAGMENT_PRECISION_HIGH
        precision highp float;
        #else
        precision mediump float;
        #endif

        """

    static let rectVertex = """
        attribute vec2 a_corner;
        attribute vec4 a_rect;
        attribute vec4 a_color;
        attribute float a_radius;
        uniform vec2 u_viewport;
        varying vec2 v_local;
        varying vec2 v_half;
        varying vec4 v_color;
        varying float v_radius;
        void main() {
            vec2 p = a_rect.xy + a_corner * a_rect.zw;
            v_half = a_rect.zw * 0.5;
            v_local = p - (a_rect.xy + v_half);
            v_color = a_color;
            v_radius = a_radius;
            gl_Position = vec4(p.x / u_viewport.x * 2.0 - 1.0, 1.0 - p.y / u_viewport.y * 2.0, 0.0, 1.0);
        }
        """

    static let rectFragment = precision + """
        varying vec2 v_local;
        varying vec2 v_half;
        varying vec4 v_color;
        varying float v_radius;
        void main() {
            float r = min(v_radius, min(v_half.x, v_half.y));
            vec2 q = abs(v_local) - (v_half - vec2(r));
            float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - r;
            float a = v_color.a * clamp(0.5 - d, 0.0, 1.0);
            gl_FragColor = vec4(v_color.rgb * a, a);
        }
        """

    static let glyphVertex = """
        attribute vec2 a_corner;
        attribute vec4 a_rect;
        attribute vec4 a_color;
        attribute vec4 a_uv;
        uniform vec2 u_viewport;
        uniform vec2 u_atlas_size;
        varying vec2 v_uv;
        varying vec4 v_color;
        void main() {
            vec2 p = a_rect.xy + a_corner * a_rect.zw;
            v_uv = (a_uv.xy + a_corner * a_uv.zw) / u_atlas_size;
            v_color = a_color;
            gl_Position = vec4(p.x / u_viewport.x * 2.0 - 1.0, 1.0 - p.y / u_viewport.y * 2.0, 0.0, 1.0);
        }
        """

    static let glyphFragment = precision + """
        uniform sampler2D u_atlas;
        varying vec2 v_uv;
        varying vec4 v_color;
        void main() {
            float a = v_color.a * texture2D(u_atlas, v_uv).a;
            gl_FragColor = vec4(v_color.rgb * a, a);
        }
        """

    static let attributes = ["a_corner", "a_rect", "a_color", "a_radius", "a_uv"]
}

/// GLSL ES 3.00 sources for GLES 3 contexts: the same pictures, but values that are constant
/// across a rectangle or glyph are `flat`, so the rasteriser does not interpolate them per pixel.
/// Software rasterisers (llvmpipe) spend much of a small primitive's time interpolating; here only
/// the rectangle-local position and texture coordinates are interpolated.
enum Shaders300 {
    static let header = """
        #version 300 es
        precision highp float;

        """

    static let rectVertex = header + """
        in vec2 a_corner;
        in vec4 a_rect;
        in vec4 a_color;
        in float a_radius;
        uniform vec2 u_viewport;
        out vec2 v_local;
        flat out vec4 v_color;
        flat out vec3 v_shape;  // xy: half size less the corner radius, z: corner radius
        void main() {
            vec2 p = a_rect.xy + a_corner * a_rect.zw;
            vec2 half_size = a_rect.zw * 0.5;
            float r = min(a_radius, min(half_size.x, half_size.y));
            v_local = p - (a_rect.xy + half_size);
            v_shape = vec3(half_size - vec2(r), r);
            v_color = a_color;
            gl_Position = vec4(p.x / u_viewport.x * 2.0 - 1.0, 1.0 - p.y / u_viewport.y * 2.0, 0.0, 1.0);
        }
        """

    static let rectFragment = header + """
        in vec2 v_local;
        flat in vec4 v_color;
        flat in vec3 v_shape;
        out vec4 fragColor;
        void main() {
            vec2 q = abs(v_local) - v_shape.xy;
            float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - v_shape.z;
            float a = v_color.a * clamp(0.5 - d, 0.0, 1.0);
            fragColor = vec4(v_color.rgb * a, a);
        }
        """

    static let glyphVertex = header + """
        in vec2 a_corner;
        in vec4 a_rect;
        in vec4 a_color;
        in vec4 a_uv;
        uniform vec2 u_viewport;
        uniform vec2 u_atlas_size;
        out vec2 v_uv;
        flat out vec4 v_color;
        void main() {
            vec2 p = a_rect.xy + a_corner * a_rect.zw;
            v_uv = (a_uv.xy + a_corner * a_uv.zw) / u_atlas_size;
            v_color = a_color;
            gl_Position = vec4(p.x / u_viewport.x * 2.0 - 1.0, 1.0 - p.y / u_viewport.y * 2.0, 0.0, 1.0);
        }
        """

    static let glyphFragment = header + """
        uniform sampler2D u_atlas;
        in vec2 v_uv;
        flat in vec4 v_color;
        out vec4 fragColor;
        void main() {
            float a = v_color.a * texture(u_atlas, v_uv).a;
            fragColor = vec4(v_color.rgb * a, a);
        }
        """
}
