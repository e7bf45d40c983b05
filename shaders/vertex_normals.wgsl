// Area-weighted vertex normals: the normalised sum of the unnormalised face normals
// (cross(b - a, c - a)) of the triangles incident to each vertex, in CSR order.
// One thread per vertex of all bodies: reads the positions region of the vertex buffer, writes
// its normals region (shared/vertices.wgsl). CPU twin: `raycontact::internals::cpu::vertex_normals`.
//!include shared/common.wgsl
//!include shared/vertices.wgsl

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read_write> vertices: array<f32>;
@group(0) @binding(2) var<storage, read> triangles: array<u32>;
@group(0) @binding(3) var<storage, read> vertex_tri_offsets: array<u32>;
@group(0) @binding(4) var<storage, read> vertex_tris: array<u32>;

fn position(v: u32) -> vec3<f32> {
    return vertex_in(0u, v);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let v = linear_group(wid) * WG_SIZE + lid;
    if v >= params.vertex_count {
        return;
    }
    var n = vec3<f32>(0.0);
    let end = vertex_tri_offsets[v + 1u];
    for (var k = vertex_tri_offsets[v]; k < end; k += 1u) {
        let t = vertex_tris[k];
        let a = position(triangles[3u * t]);
        let b = position(triangles[3u * t + 1u]);
        let c = position(triangles[3u * t + 2u]);
        n += cross(b - a, c - a);
    }
    let len = length(n);
    if len > 0.0 {
        n = n / len;
    }
    let o = 3u * (VERTEX_NORMALS * params.vertex_count + v);
    vertices[o] = n.x;
    vertices[o + 1u] = n.y;
    vertices[o + 2u] = n.z;
}
