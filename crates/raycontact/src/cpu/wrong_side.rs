//! Twin of `shaders/wrong_side.wgsl`: the regions on the wrong side of another body.

use crate::layout::{
    BODY_CLOTH, BodyGpu, CROSSING_FIRST, CROSSING_FORWARD, CROSSING_LAST, CROSSING_WRONG_A, CROSSING_WRONG_B,
    CrossingGpu, EdgeGpu, RegionGpu, decode_parent,
};

/// The vertex of crossing `c`'s edge `e` that `wrong_side.wgsl` puts on the wrong side of the
/// crossing's target body, if any: for a volumetric target, the end behind the triangle when it
/// is next to the crossing (it is inside); for a cloth target, when both ends are next to the
/// crossing and in different regions, the end in the region of smaller area (the one behind on
/// a tie).
pub fn wrong_end(bodies: &[BodyGpu], e: &EdgeGpu, c: &CrossingGpu, regions: &[RegionGpu]) -> Option<u32> {
    let forward = c.flags & CROSSING_FORWARD != 0;
    let (a_next, b_next) = (c.flags & CROSSING_FIRST != 0, c.flags & CROSSING_LAST != 0);
    let (back, front, back_next, front_next) =
        if forward { (e.a, e.b, a_next, b_next) } else { (e.b, e.a, b_next, a_next) };
    let cloth_o = bodies[c.target_body as usize].flags & BODY_CLOTH != 0;
    let root = |v: u32| decode_parent(regions[v as usize].parent, v);
    if !cloth_o && c.source_body != c.target_body {
        return back_next.then_some(back);
    }
    if cloth_o && back_next && front_next {
        let (rb, rf) = (root(back), root(front));
        if rb != rf {
            let area = |r: u32| regions[r as usize].area_steps();
            return Some(if area(rf) < area(rb) { front } else { back });
        }
    }
    None
}

/// Twin of `wrong_side.wgsl`: for every crossing with a [`wrong_end`], that end's region root
/// records the target body (the lowest one, as `!body`) and the crossing its
/// `CROSSING_WRONG_A` / `_B` flag.
pub fn wrong_side(
    bodies: &[BodyGpu],
    edges: &[EdgeGpu],
    crossings: &mut [CrossingGpu],
    regions: &mut [RegionGpu],
) {
    for c in crossings.iter_mut() {
        let e = &edges[(bodies[c.source_body as usize].edge_offset + c.edge) as usize];
        let Some(w) = wrong_end(bodies, e, c, regions) else { continue };
        let r = decode_parent(regions[w as usize].parent, w) as usize;
        regions[r].other = regions[r].other.max(!c.target_body);
        c.flags |= if w == e.a { CROSSING_WRONG_A } else { CROSSING_WRONG_B };
    }
}
