// Broad phase: every pair of bodies whose boxes (from this frame's `triangle_bounds`), grown by
// the pair's reach max(prediction, e_i + e_j) (e: a cloth's half-thickness, 0 for a volumetric
// body), overlap, appended to the pair list with the scene's prediction distance; and the
// self-collision pairs (i, i) of the kinds that `params.self_collision` names. One invocation
// per ordered (i, j), i <= j, of the packed bodies (shared/pairs.wgsl); a scene of at most
// BROAD_IN_TILES_BODIES bodies has `pair_tiles` run it instead, in the same dispatch as the
// layout. Pairs past the capacity are counted, not written.
// CPU twin: `raycontact::internals::cpu::broad_phase`.
//!include shared/common.wgsl
//!include shared/contact.wgsl
//!include shared/pairs.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read_write> pairs: PairList;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = linear_group(wid) * WG_SIZE + lid;
    if t < params.body_count * params.body_count {
        broad_pair(t);
    }
}
