//! Twin of `shaders/crossing_links.wgsl`: the contour's links between the two ends of each
//! intersection segment, and the crossed edges marked.

use std::collections::HashMap;

use super::shared::intersect::edge_side;
use crate::layout::{BodyGpu, ContourGpu, CrossingGpu, EdgeGpu, NONE};

/// The key of half-incidence `h` (the kernel's `half_key`): (undirected pair, lower packed
/// triangle, higher packed triangle), or `None` when the edge has no triangle on that side.
pub fn half_key(
    bodies: &[BodyGpu],
    edges: &[EdgeGpu],
    crossings: &[CrossingGpu],
    h: u32,
) -> Option<[u32; 3]> {
    let c = &crossings[(h / 2) as usize];
    let sb = &bodies[c.source_body as usize];
    let ts = edge_side(&edges[(sb.edge_offset + c.edge) as usize], h & 1);
    if ts == NONE {
        return None;
    }
    let (gs, gt) = (sb.tri_offset + ts, bodies[c.target_body as usize].tri_offset + c.triangle);
    Some([c.pair / 2, gs.min(gt), gs.max(gt)])
}

/// Twin of `crossing_links.wgsl`: the contour states of the crossings with their links (each
/// segment's first two ends in half-incidence order linked to each other, plus one; a third
/// end of a degenerate segment stays unlinked, as the kernel leaves it when it arrives last)
/// and the crossed edges' marks (1 per packed edge crossed).
pub fn crossing_links(
    bodies: &[BodyGpu],
    edges: &[EdgeGpu],
    crossings: &[CrossingGpu],
) -> (Vec<ContourGpu>, Vec<u32>) {
    let mut contour = vec![ContourGpu::default(); crossings.len()];
    let mut marks = vec![0u32; edges.len()];
    let mut open: HashMap<[u32; 3], u32> = HashMap::new();
    for (i, c) in crossings.iter().enumerate() {
        marks[(bodies[c.source_body as usize].edge_offset + c.edge) as usize] = 1;
        for side in 0..2 {
            let h = 2 * i as u32 + side;
            let Some(key) = half_key(bodies, edges, crossings, h) else { continue };
            match open.remove(&key) {
                Some(h2) => {
                    contour[(h2 / 2) as usize].links[(h2 & 1) as usize] = h + 1;
                    contour[i].links[side as usize] = h2 + 1;
                }
                None => {
                    open.insert(key, h);
                }
            }
        }
    }
    (contour, marks)
}
