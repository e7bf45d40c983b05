// The source vertices of the narrow phase: ITEMS vertices per invocation of one directed pair,
// laid out by `pair_tiles` and dispatched indirectly from it. A vertex of body a goes on the
// list, as (directed pair k, body-local vertex), unless it lies outside body b's box grown by
// the pair's reach max(prediction, e_a + e_b) (it cannot have a contact then; not tested for a
// self pair, nor for volumetric -> cloth, whose inward ray may cross a to reach a cloth inside
// it). The narrow phase then runs one invocation per listed vertex: rays only where they can
// find something, in full SIMD groups. Invocation i of a directed pair's workgroups takes the
// source body's vertices i * ITEMS .. (i + 1) * ITEMS in `vertex_order` (the body's ray order, a
// Morton order of its vertices computed when the bodies are packed: `raycontact::ray_order`) and
// lists them in that order, so that neighbouring entries, hence a SIMD group's rays, start near
// each other and walk the same part of the target's tree, whatever the mesh's own vertex order.
// A workgroup (BARRIER_GROUP * ITEMS vertices of one directed pair) reads its directed pair
// once (its first invocation, for all), counts its entries in workgroup memory (one atomic per
// invocation, for all of its entries) and reserves their slots with one atomic on the list's
// counter: the list holds each workgroup's entries as one run, so that the narrow phase's SIMD
// groups mostly see one directed pair, hence one pair case, and the counter takes one atomic
// per workgroup instead of one per vertex. Entries past the capacity are counted, not written.
// On a software adapter (`layout::Tuning`) an invocation takes ITEMS = 16 vertices and a
// workgroup has BARRIER_GROUP = 32 invocations: llvmpipe runs a kernel with barriers as one
// coroutine per SIMD slice of every workgroup, switched at each barrier, so a directed pair of
// up to 512 vertices launches one workgroup, and no workgroup of 256 invocations has a 900-
// vertex body's 57 busy ones wait through three barriers with the others (resting-pile's 510
// directed pairs: 16.5 -> 8.3 ms). A GPU (ITEMS 1, BARRIER_GROUP WG_SIZE) keeps one vertex per
// invocation. An invocation tests each of its vertices once, keeping the outcomes as a bit mask
// (ITEMS <= 32, `layout::Tuning`), then writes only the listed ones where the reservation says:
// no position read twice, and no private array of entries, which a SIMD compiler turns into a
// scalar loop over the lanes. A vertex never listed (most of them where two bodies' boxes barely
// overlap) costs one test; llvmpipe runs every buffer access as a loop over its SIMD lanes, so
// the accesses are the kernel's cost there.
// CPU twin: `raycontact::internals::cpu::ray_sources`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/directed_pair.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read> vertices: array<f32>;
@group(0) @binding(4) var<storage, read> vertex_order: array<u32>;
@group(0) @binding(5) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(6) var<storage, read_write> pairs: PairList;
@group(0) @binding(7) var<storage, read_write> sources: array<vec2<u32>>;

var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;

// The workgroup's directed pair, looked up once by its first invocation for all of them (every
// invocation of a workgroup has the same: the search over `tile_offsets` and the records of both
// bodies need not be read BARRIER_GROUP times). `wg_k` is NONE for a workgroup past the layout;
// `wg_start` is the workgroup's first vertex slot in the source body's ray order, `wg_end` the
// body's vertex count (0 past the layout); `wg_boxed` says whether the vertices are tested
// against body b's box grown by the pair's reach, `wg_lo` .. `wg_hi`.
var<workgroup> wg_k: u32;
var<workgroup> wg_offset: u32;
var<workgroup> wg_start: u32;
var<workgroup> wg_end: u32;
var<workgroup> wg_boxed: u32;
var<workgroup> wg_lo: vec3<f32>;
var<workgroup> wg_hi: vec3<f32>;

fn load_group(w: u32) {
    wg_k = NONE;
    wg_start = 0u;
    wg_end = 0u;
    let d = 2u * min(atomicLoad(&pairs.state.pair_count), params.pair_capacity);
    if d == 0u || w >= tile_offsets[d] {
        return;
    }
    let dp = directed_pair(w, d);
    let body_a = bodies[dp.a];
    let body_b = bodies[dp.b];
    wg_k = dp.k;
    wg_offset = body_a.vertex_offset;
    wg_start = dp.group * BARRIER_GROUP * ITEMS;
    wg_end = body_a.vertex_count;
    let cloth_a = (body_a.flags & BODY_CLOTH) != 0u;
    let cloth_b = (body_b.flags & BODY_CLOTH) != 0u;
    wg_boxed = 0u;
    if dp.a != dp.b && (cloth_a || !cloth_b) {
        let r = reach(dp.pair.prediction, body_a.half_thickness, body_b.half_thickness);
        let sb = body_state[dp.b];
        wg_boxed = 1u;
        wg_lo = body_min(sb) - r;
        wg_hi = body_max(sb) + r;
    }
}

// The packed vertex in slot `slot` of the source body's ray order (a slot below `wg_end`), the
// body's first packed vertex being `offset` (`wg_offset`).
fn slot_vertex(offset: u32, slot: u32) -> u32 {
    return vertex_order[offset + slot];
}

// Whether packed vertex v lies in the box lo .. hi (body b's grown box).
fn in_box(v: u32, lo: vec3<f32>, hi: vec3<f32>) -> bool {
    let p = vec3<f32>(vertices[3u * v], vertices[3u * v + 1u], vertices[3u * v + 2u]);
    return !(any(p < lo) || any(p > hi));
}

@compute @workgroup_size(BARRIER_GROUP)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        load_group(linear_group(wid));
        atomicStore(&wg_count, 0u);
    }
    workgroupBarrier();
    // The workgroup's values, read once into this invocation's own (llvmpipe reads workgroup
    // memory lane by lane each time, and does not hoist those reads out of the loops).
    let offset = wg_offset;
    // This invocation's slots (none past the body's end or the layout): loops to their end, not
    // over ITEMS slots with a test (see the header of radix_scatter.wgsl). Bit i of `mask`: slot
    // first + i is listed.
    let first = min(wg_start + lid * ITEMS, wg_end);
    let end = min(first + ITEMS, wg_end);
    var mask = 0u;
    if wg_boxed == 0u {
        // Every slot is listed: no vertex to read.
        mask = select(0u, 0xffffffffu >> (32u - (end - first)), end > first);
    } else {
        let lo = wg_lo;
        let hi = wg_hi;
        for (var s = first; s < end; s += 1u) {
            if in_box(slot_vertex(offset, s), lo, hi) {
                mask |= 1u << (s - first);
            }
        }
    }
    let count = countOneBits(mask);
    var rank = 0u;
    if count > 0u {
        rank = atomicAdd(&wg_count, count);
    }
    workgroupBarrier();
    if lid == 0u {
        let n = atomicLoad(&wg_count);
        if n > 0u {
            wg_base = atomicAdd(&pairs.state.sources, n);
        }
    }
    workgroupBarrier();
    var slot = wg_base + rank;
    let k = wg_k;
    while mask != 0u {
        let s = first + countTrailingZeros(mask);
        mask &= mask - 1u;
        if slot < params.source_capacity {
            sources[slot] = vec2<u32>(k, slot_vertex(offset, s) - offset);
        }
        slot += 1u;
    }
}
