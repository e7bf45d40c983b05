//! Twin of `shaders/crossings.wgsl`: every crossing of each listed edge with the other body.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::ray::{hit_box, intersect_triangle, ray_axes, safe_inverse};
use crate::frame::FrameData;
use crate::layout::{
    CROSSING_FIRST, CROSSING_FORWARD, CROSSING_LAST, CROSSING_PARALLEL_SIN2, CrossingGpu, LEAF_BIT,
    MAX_EDGE_HITS, NONE,
};
use crate::packing::Packing;

/// One crossing of an edge: t, body-local triangle, barycentrics, whether the edge runs from
/// the triangle's back to its front.
#[derive(Clone, Copy, Debug)]
struct Hit {
    t: f32,
    tri: u32,
    u: f32,
    v: f32,
    forward: bool,
}

/// Every crossing of segment `p + t d`, `t` in [0, 1], with packed body `b` (its BVH walked
/// depth-first through the escape links, as the kernel does), the triangles using `ignore`'s
/// vertices and those whose plane the segment (all but) lies in skipped; one per distinct `t`
/// (the lowest triangle), sorted by `t`.
fn edge_hits(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    b: usize,
    p: Vec3,
    d: Vec3,
    ignore: [u32; 2],
) -> Vec<Hit> {
    let body = &packing.bodies[b];
    let nodes = frame.body_nodes(packing, b);
    let (axes, inv) = (ray_axes(d), safe_inverse(d));
    let mut hits: Vec<Hit> = Vec::new();
    let mut node = if nodes.is_empty() { NONE } else { 0 };
    while node != NONE {
        let nd = &nodes[node as usize];
        if !hit_box(p, d, inv, 0.0, 1.0, nd.min, nd.max) {
            node = nd.escape;
            continue;
        }
        if nd.child & LEAF_BIT == 0 {
            node = nd.child;
            continue;
        }
        node = nd.escape;
        let tri = nd.child & !LEAF_BIT;
        let g = (body.tri_offset + tri) as usize;
        let idx = [packing.triangles[3 * g], packing.triangles[3 * g + 1], packing.triangles[3 * g + 2]];
        if idx.iter().any(|i| ignore.contains(i)) {
            continue;
        }
        let [va, vb, vc] = idx.map(|i| positions[i as usize]);
        let n = (vb - va).cross(vc - va);
        let dn = d.dot(n);
        if dn * dn <= CROSSING_PARALLEL_SIN2 * d.dot(d) * n.dot(n) {
            continue;
        }
        if let Some((t, u, v)) = intersect_triangle(p, d, axes, 0.0, 1.0, va, vb, vc) {
            let forward = dn > 0.0;
            match hits.iter_mut().find(|h| h.t == t) {
                Some(h) if tri < h.tri => *h = Hit { t, tri, u, v, forward },
                Some(_) => {}
                None => hits.push(Hit { t, tri, u, v, forward }),
            }
        }
    }
    hits.sort_by(|x, y| x.t.total_cmp(&y.t));
    hits
}

/// Twin of `crossings.wgsl`: the crossings of the listed edges ([`edge_sources`](super::edge_sources)),
/// in list order and along each edge by `t` (the GPU appends them in any order), with their
/// flags (`CROSSING_FIRST`, `_LAST`, `_FORWARD`) and `inside_t`; and the number of edges with
/// more than [`MAX_EDGE_HITS`] crossings (traced more than once by the kernel).
pub fn crossings(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    list: &[[u32; 4]],
) -> (Vec<CrossingGpu>, u32) {
    let per_edge: Vec<(Vec<CrossingGpu>, bool)> = list
        .par_iter()
        .with_min_len(64)
        .map(|&[k, a, b, local]| {
            let edge = packing.edges[(packing.bodies[a as usize].edge_offset + local) as usize];
            let p = positions[edge.a as usize];
            let d = positions[edge.b as usize] - p;
            let ignore = if a == b { [edge.a, edge.b] } else { [NONE, NONE] };
            let hits = edge_hits(packing, frame, positions, b as usize, p, d, ignore);
            let n = hits.len();
            let out = hits
                .iter()
                .enumerate()
                .map(|(j, h)| {
                    let mut flags = 0;
                    let mut inside = 0.0;
                    if j == 0 {
                        flags |= CROSSING_FIRST;
                    } else {
                        inside = hits[j - 1].t;
                    }
                    if j + 1 == n {
                        flags |= CROSSING_LAST;
                    }
                    if h.forward {
                        flags |= CROSSING_FORWARD;
                    } else {
                        inside = hits.get(j + 1).map_or(1.0, |x| x.t.min(1.0));
                    }
                    CrossingGpu {
                        source_body: a,
                        target_body: b,
                        edge: local,
                        triangle: h.tri,
                        point: p + h.t * d,
                        t: h.t,
                        u: h.u,
                        v: h.v,
                        inside_t: inside,
                        flags,
                        pair: k,
                        ..Default::default()
                    }
                })
                .collect();
            (out, n > MAX_EDGE_HITS as usize)
        })
        .collect();
    let multi = per_edge.iter().filter(|(_, m)| *m).count() as u32;
    (per_edge.into_iter().flat_map(|(c, _)| c).collect(), multi)
}
