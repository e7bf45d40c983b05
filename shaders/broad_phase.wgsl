// Broad phase: every pair of bodies whose boxes (from this frame's `triangle_bounds`), grown by
// the pair's reach max(prediction, e_i + e_j) (e: a cloth's half-thickness, 0 for a volumetric
// body), overlap, appended to the pair list with the scene's prediction distance; and the
// self-collision pairs (i, i) of the kinds that `params.self_collision` names. One invocation
// per ordered (i, j), i <= j, of the packed bodies. Pairs past the capacity are counted, not
// written. CPU twin: `raycontact::internals::cpu::broad_phase`.
//!include shared/common.wgsl
//!include shared/contact.wgsl

@group(0) @binding(0) var<uniform> params: DetectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> body_state: array<BodyStateRead>;
@group(0) @binding(3) var<storage, read_write> pairs: PairList;

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = linear_group(wid) * WG_SIZE + lid;
    let n = params.body_count;
    if t >= n * n {
        return;
    }
    let i = t / n;
    let j = t % n;
    if i > j {
        return;
    }
    let si = body_state[i];
    let sj = body_state[j];
    if si.leaf_count == 0u || sj.leaf_count == 0u {
        return;
    }
    var keep = false;
    if i == j {
        var wanted = SELF_VOLUMETRIC;
        if (bodies[i].flags & BODY_CLOTH) != 0u {
            wanted = SELF_CLOTH;
        }
        keep = (params.self_collision & wanted) != 0u;
    } else {
        let r = reach(params.prediction, bodies[i].half_thickness, bodies[j].half_thickness);
        keep = all(body_min(si) - r <= body_max(sj)) && all(body_min(sj) - r <= body_max(si));
    }
    if keep {
        let k = atomicAdd(&pairs.state.pair_count, 1u);
        if k < params.pair_capacity {
            pairs.list[k] = BodyPair(i, j, params.prediction, 0u);
        }
    }
}
