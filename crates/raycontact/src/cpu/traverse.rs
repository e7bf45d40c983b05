//! The CPU backend's own BVH traversal: not a twin of any kernel. It finds the same closest hit
//! as [`closest_hit`](super::shared::bvh::closest_hit) (the twin of `shaders/shared/bvh.wgsl`)
//! but walks the tree the CPU's way (an unbounded stack that remembers entry distances), so its
//! counters (`nodes_visited`, `triangles_tested`, `fallback`) are its own, not the GPU's. The
//! CPU backend's ray casts and both tracers of the narrow phase ([`Narrow`]'s BVH trace) use
//! it.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::bvh::Leaf;
use super::shared::classify::Narrow;
use super::shared::ray::{box_entry, ray_axes, safe_inverse};
use crate::frame::FrameData;
use crate::layout::{BodyGpu, LEAF_BIT, NONE, Node, Ray, RayHit};
use crate::packing::Packing;

/// The CPU backend's ray casts: [`raycast`](crate::cpu::raycast)'s results through
/// [`closest_hit_ordered`].
pub fn raycast_ordered(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    b: usize,
    rays: &[Ray],
) -> Vec<RayHit> {
    let body = &packing.bodies[b];
    let nodes = frame.body_nodes(packing, b);
    rays.par_iter()
        .with_min_len(64)
        .map(|r| closest_hit_ordered(body, nodes, positions, &packing.triangles, r, NONE))
        .collect()
}

/// [`closest_hit`](super::shared::bvh::closest_hit)'s result, walked the CPU's way: nearer
/// child first with an unbounded stack (64 entries inline, then on the heap) that remembers
/// each entry distance, so popped subtrees are pruned without reading their nodes again. The
/// CPU backend's ray queries use it; `nodes_visited` counts its own walk.
pub fn closest_hit_ordered(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
) -> RayHit {
    let mut best = RayHit::MISS;
    if nodes.is_empty() {
        return best;
    }
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    let mut tmax = ray.tmax;
    let mut stack = [0u32; 64];
    let mut sp = 0usize;
    let mut spill: Vec<(u32, f32)> = Vec::new();
    let mut stack_t = [0f32; 64];
    best.nodes_visited += 1;
    let root = &nodes[0];
    let mut next = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, root.min, root.max).map(|_| 0u32);
    loop {
        let node = match next.take() {
            Some(n) => n,
            None => {
                // Pop the next node still nearer than the best hit.
                let popped = if let Some((n, t)) = spill.pop() {
                    Some((n, t))
                } else if sp > 0 {
                    sp -= 1;
                    Some((stack[sp], stack_t[sp]))
                } else {
                    None
                };
                match popped {
                    Some((n, t)) if t <= tmax + tmax.abs() * 2.0e-6 => n,
                    Some(_) => continue,
                    None => break,
                }
            }
        };
        let nd = &nodes[node as usize];
        if nd.child & LEAF_BIT != 0 {
            let leaf = Leaf { body, positions, triangles, ray, axes, ignore_vertex };
            leaf.test(nd.child & !LEAF_BIT, &mut best, &mut tmax);
            continue;
        }
        let left = nd.child;
        let right = nodes[left as usize].escape;
        best.nodes_visited += 2;
        let (l, r) = (&nodes[left as usize], &nodes[right as usize]);
        let tl = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, l.min, l.max);
        let tr = box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, r.min, r.max);
        let (near, far) = match (tl, tr) {
            (Some(a), Some(b)) if b < a => ((right, b), Some((left, a))),
            (Some(a), Some(b)) => ((left, a), Some((right, b))),
            (Some(a), None) => ((left, a), None),
            (None, Some(b)) => ((right, b), None),
            (None, None) => continue,
        };
        if let Some((f, t)) = far {
            if sp < stack.len() && spill.is_empty() {
                stack[sp] = f;
                stack_t[sp] = t;
                sp += 1;
            } else {
                spill.push((f, t));
            }
        }
        next = Some(near.0);
    }
    best
}

impl Narrow<'_> {
    /// The closest hit of `ray` on packed body `b` through its BVH, skipping the triangles of
    /// packed vertex `ignore`: both tracers' BVH trace, [`closest_hit_ordered`]'s way.
    pub(crate) fn bvh_hit(&self, b: usize, ray: &Ray, ignore: u32) -> RayHit {
        let body = &self.packing.bodies[b];
        let nodes = self.frame.body_nodes(self.packing, b);
        closest_hit_ordered(body, nodes, self.positions, &self.packing.triangles, ray, ignore)
    }
}
