#version 450
// A unit square turned by `angle` (radians) and scaled to the window's aspect, one colour per
// corner: six vertices from gl_VertexIndex, no vertex buffer.
layout(push_constant) uniform Push {
    vec2 scale;
    float angle;
} push;
layout(location = 0) out vec3 color;

const vec2 corners[6] = vec2[](
    vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
    vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

void main() {
    vec2 corner = corners[gl_VertexIndex];
    float c = cos(push.angle);
    float s = sin(push.angle);
    vec2 p = 0.5 * vec2(c * corner.x - s * corner.y, s * corner.x + c * corner.y);
    gl_Position = vec4(p * push.scale, 0.0, 1.0);
    color = vec3(0.5 + 0.5 * corner, 0.8);
}
