// Per-triangle boxes and the degenerate flag (shared/triangles.wgsl), for a refit: a rebuild
// computes them in `morton`, and the bodies' boxes come from `vertex_normals`.
// A triangle is degenerate when |e1 x e2|^2 <= DEGENERATE_SIN2 * |e1|^2 |e2|^2 (zero area up to
// rounding) or when a coordinate is not finite: it keeps a box but stays out of the BVH.
// ITEMS triangles per invocation of one body (shared/tiles.wgsl).
// CPU twin: `raycontact::internals::cpu::triangle_bounds` (its triangle boxes).
//!include shared/common.wgsl
//!include shared/tiles.wgsl
//!include shared/triangles.wgsl

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read_write> tri_boxes: array<TriBox>;
@group(0) @binding(5) var<uniform> params: FrameParams;

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = tile_of(wid);
    if tile.index == NONE {
        return;
    }
    let body = tile.body;
    for (var k = 0u; k < tile_items(tile, lid, body.tri_count); k += 1u) {
        let i = tile.base + k * WG_SIZE + lid;
        let t = body.tri_offset + i;
        let a = position(triangles[3u * t]);
        let b = position(triangles[3u * t + 1u]);
        let c = position(triangles[3u * t + 2u]);
        tri_boxes[t] = triangle_box(a, b, c);
    }
}
