// Lays out `edge_sources` over the pair list, as `pair_tiles` does for the vertices: directed
// pair 2k is (pairs[k].a -> pairs[k].b), 2k + 1 the reverse; each gets ceil(edges of its source
// body / WG_SIZE) workgroups, but the reverse of a self pair and a volumetric self pair, which
// get none (crossings of a body with itself are traced for cloth only). One workgroup scans the
// counts into `tile_offsets` (D + 1 entries for D directed pairs), writes the indirect dispatch
// of `edge_sources` (args[0..3]) and copies the pair count into the intersection state.
// CPU twin: `raycontact::internals::cpu::edge_tiles`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/sort.wgsl
//!include shared/tile_offsets.wgsl
//!include shared/intersect.wgsl

// The workgroup of shared/sort.wgsl's scan.
const SCAN_GROUP: u32 = WG_SIZE;

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> pairs: PairListRead;
@group(0) @binding(3) var<storage, read_write> state: IntersectState;
@group(0) @binding(4) var<storage, read_write> tile_offsets: array<u32>;
@group(0) @binding(5) var<storage, read_write> args: array<u32, 12>;

fn directed_tiles(k: u32) -> u32 {
    let p = pairs.list[k / 2u];
    var src = p.a;
    if p.a == p.b && ((k & 1u) == 1u || (bodies[src].flags & BODY_CLOTH) == 0u) {
        return 0u;
    }
    if (k & 1u) == 1u {
        src = p.b;
    }
    return (bodies[src].edge_count + WG_SIZE - 1u) / WG_SIZE;
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    let d = 2u * min(pairs.state.pair_count, params.pair_capacity);
    let total = scan_tile_offsets(lid, d);
    if lid == 0u {
        let xy = dispatch_xy(total);
        args[0] = xy.x;
        args[1] = xy.y;
        args[2] = 1u;
        args[3] = total;
        atomicStore(&state.pairs, d / 2u);
    }
}
