//! Twin of `shaders/contour_walk.wgsl`: the contour's loops, walked from their starts.

use super::shared::intersect::{crossing_key, degree};
use crate::layout::{
    BodyGpu, CROSSING_FIRST, CROSSING_FORWARD, CROSSING_LAST, ContourGpu, CrossingGpu, EdgeGpu, LOOP_CLOSED,
    LoopGpu, NONE, RegionGpu, decode_parent,
};

/// (front region, back region) of crossing `c` when both ends of its edge are next to it (the
/// kernel's `sides`).
fn sides(bodies: &[BodyGpu], edges: &[EdgeGpu], c: &CrossingGpu, regions: &[RegionGpu]) -> Option<[u32; 2]> {
    if c.flags & (CROSSING_FIRST | CROSSING_LAST) != CROSSING_FIRST | CROSSING_LAST {
        return None;
    }
    let e = &edges[(bodies[c.source_body as usize].edge_offset + c.edge) as usize];
    let root = |v: u32| decode_parent(regions[v as usize].parent, v);
    Some(if c.flags & CROSSING_FORWARD != 0 { [root(e.b), root(e.a)] } else { [root(e.a), root(e.b)] })
}

/// Twin of `contour_walk.wgsl`: one record per loop, in order of its start's slot (the GPU
/// appends them in any order), each crossing's `loop_id` (plus one) and `rank` set.
pub fn contour_walk(
    bodies: &[BodyGpu],
    edges: &[EdgeGpu],
    crossings: &[CrossingGpu],
    contour: &mut [ContourGpu],
    regions: &[RegionGpu],
) -> Vec<LoopGpu> {
    let stored = crossings.len() as u32;
    let mut loops = Vec::new();
    for i in 0..crossings.len() {
        let r = decode_parent(contour[i].parent, i as u32) as usize;
        let (hi, lo) = crossing_key(&crossings[i], degree(&contour[i]));
        if hi != !contour[r].key_hi || lo != !contour[r].key_lo {
            continue;
        }
        let index = loops.len() as u32;
        let start = &crossings[i];
        let self_pair = start.source_body == start.target_body;
        let mut side = if contour[i].links[0] == 0 { 1 } else { 0 };
        let (mut regions_a, mut regions_b) = ([NONE; 2], [NONE; 2]);
        let (mut at, mut count, mut total, mut flags) = (i, 0u32, 0.0f32, 0);
        loop {
            contour[at].loop_id = index + 1;
            contour[at].rank = count;
            count += 1;
            let here = &crossings[at];
            if let Some(s) = sides(bodies, edges, here, regions) {
                let reverse = here.pair & 1 == 1;
                if !reverse && regions_a[0] == NONE {
                    regions_a = s;
                } else if regions_b[0] == NONE && (reverse || (self_pair && s != regions_a)) {
                    regions_b = s;
                }
            }
            let l = contour[at].links[side];
            if l == 0 {
                break;
            }
            let next = ((l - 1) / 2) as usize;
            total += here.point.distance(crossings[next].point);
            if next == i {
                flags = LOOP_CLOSED;
                break;
            }
            if count >= stored {
                break;
            }
            side = (1 - ((l - 1) & 1)) as usize;
            at = next;
        }
        loops.push(LoopGpu {
            pair: start.pair / 2,
            start: i as u32,
            count,
            flags,
            length: total,
            regions_a,
            regions_b,
            ..Default::default()
        });
    }
    loops
}
