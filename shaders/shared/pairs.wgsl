// The broad phase's test of one ordered pair of packed bodies, shared by `broad_phase` (one
// invocation per pair) and `pair_tiles` (which runs it in its one workgroup for a scene of few
// bodies, DETECT_BROAD_IN_TILES). The kernel that includes this (after shared/common.wgsl and
// shared/contact.wgsl) declares `params`, `bodies`, `body_state` and `pairs`.
// CPU twin: `raycontact::internals::cpu::broad_phase`.

// Appends pair (i, j) for t = i * body_count + j, i <= j, when its boxes grown by the pair's
// reach overlap, or when it is a self pair of a kind `params.self_collision` names; never a
// pair of two static bodies (BODY_STATIC), a self pair of one included. Pairs past the capacity
// are counted, not written.
fn broad_pair(t: u32) {
    let n = params.body_count;
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
    if (bodies[i].flags & bodies[j].flags & BODY_STATIC) != 0u {
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
