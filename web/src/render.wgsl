// The demo page's renderer: lit, double-sided triangle meshes (raycontact-web's render.rs).

struct Camera {
    view_proj: mat4x4<f32>,
    // Direction towards the light (xyz).
    light: vec4<f32>,
    // x: the exponent applied to the colour (1 / 2.2 on a non-sRGB surface, else 1).
    params: vec4<f32>,
}

struct Material {
    front: vec4<f32>,
    back: vec4<f32>,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(1) @binding(0) var<uniform> material: Material;

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
}

@vertex
fn vs(@location(0) position: vec3<f32>, @location(1) normal: vec3<f32>) -> VertexOut {
    var out: VertexOut;
    out.clip = camera.view_proj * vec4<f32>(position, 1.0);
    out.normal = normal;
    return out;
}

@fragment
fn fs(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = in.normal;
    let len = length(n);
    n = select(vec3<f32>(0.0, 1.0, 0.0), n / len, len > 1e-12);
    var base = material.front.rgb;
    if !front {
        n = -n;
        base = material.back.rgb;
    }
    let diffuse = max(dot(n, normalize(camera.light.xyz)), 0.0);
    let sky = 0.5 + 0.5 * n.y;
    let c = base * (0.3 * sky + 0.8 * diffuse);
    return vec4<f32>(pow(c, vec3<f32>(camera.params.x)), 1.0);
}
