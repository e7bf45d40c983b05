// The examples' offscreen renderer: triangles with depth, lit by a key light from the camera's
// upper left, a fill light and a sky/ground ambient term; two-sided (a cloth's back faces are
// lit through their flipped normal). A vertex with a zero normal is shaded flat, from the
// triangle's screen-space derivatives.

struct Frame {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    key: vec4<f32>,
    fill: vec4<f32>,
    up: vec4<f32>,
}

@group(0) @binding(0) var<uniform> frame: Frame;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec3<f32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec3<f32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    var out: VertexOut;
    out.clip = frame.view_proj * vec4<f32>(v.position, 1.0);
    out.world = v.position;
    out.normal = v.normal;
    out.color = v.color;
    return out;
}

@fragment
fn fs_main(f: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = f.normal;
    if dot(n, n) < 0.25 {
        n = cross(dpdx(f.world), dpdy(f.world));
        // Screen-space derivatives give the normal facing the camera's way up to sign.
        if dot(n, frame.eye.xyz - f.world) < 0.0 {
            n = -n;
        }
    } else if !front {
        n = -n;
    }
    n = normalize(n);
    let to_eye = normalize(frame.eye.xyz - f.world);
    let key = max(dot(n, frame.key.xyz), 0.0);
    let fill = max(dot(n, frame.fill.xyz), 0.0);
    let sky = 0.5 + 0.5 * dot(n, frame.up.xyz);
    let half_key = normalize(frame.key.xyz + to_eye);
    let spec = pow(max(dot(n, half_key), 0.0), 40.0) * 0.15;
    let light = 0.62 * key + 0.18 * fill + 0.22 * sky;
    return vec4<f32>(f.color * light + vec3<f32>(spec), 1.0);
}
