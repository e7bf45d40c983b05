// Per-triangle boxes and the degenerate flag, reduced per workgroup into the body's box.
// One workgroup per tile of TILE triangles of one body (tiles never straddle bodies).
// A triangle is degenerate when |e1 x e2|^2 <= DEGENERATE_SIN2 * |e1|^2 |e2|^2 (zero area up to
// rounding) or when a coordinate is not finite: it keeps a box but stays out of the BVH.
// CPU twin: `raycontact::internals::cpu::triangle_bounds`.
//!include shared/common.wgsl
//!include shared/tiles.wgsl

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read_write> tri_boxes: array<TriBox>;
@group(0) @binding(5) var<storage, read_write> body_state: array<BodyState>;
@group(0) @binding(6) var<uniform> params: FrameParams;

var<workgroup> wg_min: array<atomic<u32>, 3>;
var<workgroup> wg_max: array<atomic<u32>, 3>;

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = tile_of(wid);
    if tile.index == NONE {
        return;
    }
    let bi = tile.body_index;
    let body = tile.body;
    let base = tile.base;
    if lid < 3u {
        atomicStore(&wg_min[lid], 0u);
        atomicStore(&wg_max[lid], 0u);
    }
    workgroupBarrier();
    // Reduced as ordered keys (complemented for the minimum), so that the result is exact.
    var lo_key = vec3<u32>(0u);
    var hi_key = vec3<u32>(0u);
    for (var k = 0u; k < ITEMS; k += 1u) {
        let i = base + k * WG_SIZE + lid;
        if i < body.tri_count {
            let t = body.tri_offset + i;
            let a = position(triangles[3u * t]);
            let b = position(triangles[3u * t + 1u]);
            let c = position(triangles[3u * t + 2u]);
            let bmin = min(min(a, b), c);
            let bmax = max(max(a, b), c);
            let e1 = b - a;
            let e2 = c - a;
            let n = cross(e1, e2);
            let n2 = dot(n, n);
            let l2 = dot(e1, e1) * dot(e2, e2);
            let finite = all(abs(bmin) <= vec3<f32>(3.4028234663852886e38)) && all(abs(bmax) <= vec3<f32>(3.4028234663852886e38));
            var flags = 0u;
            if !(n2 > DEGENERATE_SIN2 * l2) || !finite {
                flags = 1u;
            } else {
                for (var d = 0u; d < 3u; d += 1u) {
                    lo_key[d] = max(lo_key[d], ~float_to_key(bmin[d]));
                    hi_key[d] = max(hi_key[d], float_to_key(bmax[d]));
                }
            }
            tri_boxes[t] = TriBox(bmin, flags, bmax, 0u);
        }
    }
    if hi_key.x != 0u {
        for (var d = 0u; d < 3u; d += 1u) {
            atomicMax(&wg_min[d], lo_key[d]);
            atomicMax(&wg_max[d], hi_key[d]);
        }
    }
    workgroupBarrier();
    if lid < 3u {
        let mk = atomicLoad(&wg_min[lid]);
        let xk = atomicLoad(&wg_max[lid]);
        if xk != 0u {
            atomicMax(&body_state[bi].min_key[lid], mk);
            atomicMax(&body_state[bi].max_key[lid], xk);
        }
    }
}
