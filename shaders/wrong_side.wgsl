// Global intersection analysis, the wrong side (Baraff, Witkin and Kass 2003), one invocation per
// stored crossing of edge (p -> q) of body S through triangle T of body O, from the vertices next
// to it along the edge (FIRST: p, LAST: q) and the side of T each is on (FORWARD: p behind T):
// - O volumetric (and not S): the vertex next to the crossing behind T is inside O, and so is its
//   region: the region's root records O (atomicMax of ~O: the lowest such body).
// - O cloth (S a cloth, the same cloth, or a volumetric body): when both ends are next to the
//   crossing and in different regions, the region of smaller area is on the wrong side (the one
//   behind T on a tie), as Baraff et al. choose for cloth: it went through O. (A volumetric S's
//   wrong side is informative: its vertices inside nothing get no untangling contact.)
// The crossing also records which of its ends is on the wrong side (CROSSING_WRONG_A / _B), for
// its edge contact. CPU twin: `raycontact::internals::cpu::wrong_side`.
//!include shared/common.wgsl
//!include shared/intersect.wgsl

@group(0) @binding(0) var<uniform> params: IntersectParams;
@group(0) @binding(1) var<storage, read> bodies: array<BodyGpu>;
@group(0) @binding(2) var<storage, read> edges: array<Edge>;
@group(0) @binding(3) var<storage, read> state: IntersectStateRead;
@group(0) @binding(4) var<storage, read_write> crossings: array<Crossing>;
@group(0) @binding(5) var<storage, read_write> regions: array<Region>;

fn root(v: u32) -> u32 {
    return decode_parent(atomicLoad(&regions[v].parent), v);
}

fn area(r: u32) -> vec2<u32> {
    return vec2<u32>(atomicLoad(&regions[r].area_hi), atomicLoad(&regions[r].area_lo));
}

fn less(x: vec2<u32>, y: vec2<u32>) -> bool {
    return x.x < y.x || (x.x == y.x && x.y < y.y);
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = linear_group(wid) * WG_SIZE + lid;
    if i >= min(state.crossings, params.crossing_capacity) {
        return;
    }
    let c = crossings[i];
    let s = c.source_body;
    let o = c.target_body;
    let e = edges[bodies[s].edge_offset + c.edge];
    let forward = (c.flags & CROSSING_FORWARD) != 0u;
    let a_next = (c.flags & CROSSING_FIRST) != 0u;
    let b_next = (c.flags & CROSSING_LAST) != 0u;
    // The ends behind and in front of T, and whether each is next to the crossing.
    var back = e.b;
    var front = e.a;
    var back_next = b_next;
    var front_next = a_next;
    if forward {
        back = e.a;
        front = e.b;
        back_next = a_next;
        front_next = b_next;
    }
    let cloth_o = (bodies[o].flags & BODY_CLOTH) != 0u;
    var wrong = NONE;
    if !cloth_o && s != o {
        if back_next {
            wrong = back;
        }
    } else if cloth_o && back_next && front_next {
        let rb = root(back);
        let rf = root(front);
        if rb != rf {
            wrong = back;
            if less(area(rf), area(rb)) {
                wrong = front;
            }
        }
    }
    if wrong == NONE {
        return;
    }
    atomicMax(&regions[root(wrong)].other, ~o);
    var flags = c.flags;
    if wrong == e.a {
        flags |= CROSSING_WRONG_A;
    } else {
        flags |= CROSSING_WRONG_B;
    }
    crossings[i].flags = flags;
}
