// The vertex buffer: three regions of 3 × vertex_count floats (x y z per packed vertex), the
// positions (region 0), the previous frame's positions (VERTEX_PREVIOUS) and the vertex normals
// (VERTEX_NORMALS); `layout::VERTEX_REGIONS`. One storage buffer, so that a kernel that reads all
// three binds one. A kernel that includes this declares `vertices: array<f32>` and a uniform
// `params` with the packing's `vertex_count`.

// Region `region` of packed vertex v.
fn vertex_in(region: u32, v: u32) -> vec3<f32> {
    let o = 3u * (region * params.vertex_count + v);
    return vec3<f32>(vertices[o], vertices[o + 1u], vertices[o + 2u]);
}
