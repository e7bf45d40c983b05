// Lays out `ray_sources` over the pair list: directed pair 2k is (pairs[k].a -> pairs[k].b),
// 2k + 1 the reverse; each gets ceil(source vertices / (BARRIER_GROUP * ITEMS)) workgroups
// (BARRIER_GROUP invocations of ITEMS vertices: `ray_sources`), but the reverse of a
// self-collision pair (a == b), which gets none. One workgroup scans the tile counts into
// `tile_offsets` (D + 1 entries for D directed pairs) and writes the indirect dispatch of
// `ray_sources` over those workgroups. With DETECT_BROAD_IN_TILES (a scene of at most
// BROAD_IN_TILES_BODIES bodies, pairs found on the GPU) the same workgroup first runs the broad
// phase's test over every pair of bodies (shared/pairs.wgsl), so that the broad phase costs no
// dispatch of its own. CPU twin: `raycontact::internals::cpu::pair_tiles` (after
// `broad_phase`).
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/sort.wgsl
//!include shared/tile_offsets.wgsl
//!include shared/pairs.wgsl

// The workgroup of shared/sort.wgsl's scan.
const SCAN_GROUP: u32 = WG_SIZE;

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read_write> pairs: PairList;
@group(0) @binding(4) var<storage, read_write> tile_offsets: array<u32>;
@group(0) @binding(5) var<storage, read_write> dispatch: array<u32>;

fn directed_tiles(k: u32) -> u32 {
    let p = pairs.list[k / 2u];
    var src = p.a;
    if (k & 1u) == 1u {
        if p.a == p.b {
            return 0u;
        }
        src = p.b;
    }
    return (bodies[src].vertex_count + BARRIER_GROUP * ITEMS - 1u) / (BARRIER_GROUP * ITEMS);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    if (params.flags & DETECT_BROAD_IN_TILES) != 0u {
        let n = params.body_count;
        for (var t = lid; t < n * n; t += WG_SIZE) {
            broad_pair(t);
        }
        // The pairs appended by the whole workgroup, visible to it.
        storageBarrier();
    }
    let d = 2u * min(atomicLoad(&pairs.state.pair_count), params.pair_capacity);
    let total = scan_tile_offsets(lid, d);
    if lid == 0u {
        let xy = dispatch_xy(total);
        dispatch[0] = xy.x;
        dispatch[1] = xy.y;
        dispatch[2] = 1u;
    }
}
