// The rebuild's per-triangle pass, fused: each triangle's box and degenerate flag (as
// `triangle_bounds` computes them, shared/triangles.wgsl), its 30-bit Morton code, the body's
// leaf and degenerate counts, and the first radix-sort pass's digit counts of this tile.
// Morton codes are those of the centroids in a cube whose side is the power of two at or above
// the largest extent of the body's box (finished by `vertex_normals`, the dispatch before), so
// that the scale is exact and the CPU twin reproduces every code bit for bit. Degenerate
// triangles get DEGENERATE_KEY and sort last. A body of at most SHORT_KEY_TILES tiles is
// sorted by the top 23 bits of its codes (`>> SHORT_KEY_SHIFT`), its degenerate triangles by
// SHORT_DEGENERATE_KEY: keys of `layout::SHORT_KEY_BITS` bits, which a frame whose bodies all
// have them sorts in `layout::SHORT_SORT_PASSES` passes instead of SORT_PASSES; a body of at
// most TINY_KEY_TRIANGLES triangles by the top 15 (`>> TINY_KEY_SHIFT`, TINY_DEGENERATE_KEY:
// `layout::TINY_KEY_BITS`, in `layout::TINY_SORT_PASSES` passes where every body has them).
// The sort's values are the packed triangle indices, which its first pass takes from the
// elements' positions (SORT_IDENTITY_VALUES): none are written here.
// ITEMS triangles per invocation of one body (shared/tiles.wgsl).
// CPU twin: `raycontact::internals::cpu::morton` (codes and counts) with
// `raycontact::internals::cpu::triangle_bounds` (boxes), and the radix sort's counts.
//!include shared/common.wgsl
//!include shared/tiles.wgsl
//!include shared/triangles.wgsl
//!include shared/sort.wgsl

// The workgroup of shared/sort.wgsl's scan.
const SCAN_GROUP: u32 = WG_SIZE;

@group(0) @binding(0) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(1) var<storage, read> tile_body: array<u32>;
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
@group(0) @binding(3) var<storage, read> triangles: array<u32>;
@group(0) @binding(4) var<storage, read_write> tri_boxes: array<TriBox>;
@group(0) @binding(5) var<storage, read_write> body_state: array<BodyState>;
@group(0) @binding(6) var<storage, read_write> keys: array<u32>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> params: FrameParams;

var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_degenerate: atomic<u32>;
var<workgroup> wg_digits: array<atomic<u32>, RADIX_BUCKETS>;

fn position(v: u32) -> vec3<f32> {
    return vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
}

// Spreads the low 10 bits of x so that there are two zero bits between each.
fn expand_bits(v: u32) -> u32 {
    var x = v & 0x3ffu;
    x = (x | (x << 16u)) & 0x030000ffu;
    x = (x | (x << 8u)) & 0x0300f00fu;
    x = (x | (x << 4u)) & 0x030c30c3u;
    x = (x | (x << 2u)) & 0x09249249u;
    return x;
}

// 1024 / s / 3, where s is the smallest power of two >= extent (exact but for the / 3).
fn quantisation_scale(extent: f32) -> f32 {
    let bits = bitcast<u32>(extent);
    var e = i32((bits >> 23u) & 0xffu);
    if (bits & 0x7fffffu) != 0u {
        e += 1;
    }
    // 2^(10 - (e - 127)) has biased exponent 10 - (e - 127) + 127 = 264 - e.
    let se = clamp(264 - e, 1, 254);
    return bitcast<f32>(u32(se) << 23u) * ONE_THIRD;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = tile_of(wid);
    if tile.index == NONE {
        return;
    }
    let bi = tile.body_index;
    let body = tile.body;
    if lid == 0u {
        atomicStore(&wg_count, 0u);
        atomicStore(&wg_degenerate, 0u);
    }
    if lid < RADIX_BUCKETS {
        atomicStore(&wg_digits[lid], 0u);
    }
    workgroupBarrier();
    let s = BodyStateRead(
        array<u32, 3>(atomicLoad(&body_state[bi].min_key[0]), atomicLoad(&body_state[bi].min_key[1]), atomicLoad(&body_state[bi].min_key[2])),
        0u,
        array<u32, 3>(atomicLoad(&body_state[bi].max_key[0]), atomicLoad(&body_state[bi].max_key[1]), atomicLoad(&body_state[bi].max_key[2])),
        0u,
    );
    let lo = body_min(s);
    let ext = body_max(s) - lo;
    let scale = quantisation_scale(max(max(ext.x, ext.y), ext.z));
    // The body's keys by its size (`layout::key_form`): tiny, short or whole codes.
    var key_shift = 0u;
    var degenerate_key = DEGENERATE_KEY;
    if body.tri_count <= TINY_KEY_TRIANGLES {
        key_shift = TINY_KEY_SHIFT;
        degenerate_key = TINY_DEGENERATE_KEY;
    } else if body.tile_count <= SHORT_KEY_TILES {
        key_shift = SHORT_KEY_SHIFT;
        degenerate_key = SHORT_DEGENERATE_KEY;
    }
    var valid = 0u;
    var degenerate = 0u;
    for (var k = 0u; k < tile_items(tile, lid, body.tri_count); k += 1u) {
        let i = tile.base + k * WG_SIZE + lid;
        let t = body.tri_offset + i;
        let a = position(triangles[3u * t]);
        let b = position(triangles[3u * t + 1u]);
        let c = position(triangles[3u * t + 2u]);
        let tb = triangle_box(a, b, c);
        tri_boxes[t] = tb;
        var key = degenerate_key;
        if (tb.flags & 1u) == 0u {
            let rel = ((a - lo) + (b - lo)) + (c - lo);
            let q = min(rel * scale, vec3<f32>(1023.0));
            let qi = vec3<u32>(max(q, vec3<f32>(0.0)));
            key = ((expand_bits(qi.x) << 2u) | (expand_bits(qi.y) << 1u) | expand_bits(qi.z)) >> key_shift;
            valid += 1u;
        } else {
            degenerate += 1u;
        }
        keys[t] = key;
        atomicAdd(&wg_digits[key & (RADIX_BUCKETS - 1u)], 1u);
    }
    if valid > 0u {
        atomicAdd(&wg_count, valid);
    }
    if degenerate > 0u {
        atomicAdd(&wg_degenerate, degenerate);
    }
    workgroupBarrier();
    if lid < RADIX_BUCKETS {
        // The first pass's counts of this tile (block 0 of the counts; several workgroups of a
        // tile add theirs).
        let c = atomicLoad(&wg_digits[lid]);
        if c > 0u {
            let seg = SortSegment(body.tri_offset, body.tri_count, body.tile_offset, body.tile_count);
            atomicAdd(&counters[counter_index(seg, lid, tile.index - body.tile_offset)], c);
        }
    }
    if lid == 0u {
        let c = atomicLoad(&wg_count);
        if c > 0u {
            atomicAdd(&body_state[bi].leaf_count, c);
        }
        let d = atomicLoad(&wg_degenerate);
        if d > 0u {
            atomicAdd(&body_state[bi].degenerate_count, d);
        }
    }
}
