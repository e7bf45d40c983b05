//! Twin of `shaders/shared/targets.wgsl`: the bodies of a ray query, and the stackless
//! depth-first walk of one body's BVH that the any-hit and all-hits queries share.

use glam::Vec3;

use super::common::tri_vertices;
use super::ray::{hit_box, intersect_triangle, ray_axes, safe_inverse};
use crate::frame::FrameData;
use crate::layout::{BodyGpu, LEAF_BIT, NONE, Node, QueryTarget, Ray};
use crate::packing::Packing;

/// The [`QueryTarget`] records of packed bodies `targets`, as the host writes them for the
/// query kernels.
pub fn query_targets(packing: &Packing, targets: &[u32]) -> Vec<QueryTarget> {
    targets.iter().map(|&b| QueryTarget { body: packing.bodies[b as usize], index: b, pad: 0 }).collect()
}

/// `next_node` of `targets.wgsl`: the node after `nd` in the stackless walk (`entered`: the ray
/// segment enters its box).
pub(crate) fn next_node(nd: &Node, entered: bool) -> u32 {
    if entered && nd.child & LEAF_BIT == 0 { nd.child } else { nd.escape }
}

/// What a ray query reads of the scene: the packing, the frame's BVHs and the positions.
#[derive(Clone, Copy, Debug)]
pub struct QueryScene<'a> {
    /// The packed bodies and triangles.
    pub packing: &'a Packing,
    /// The frame's BVHs.
    pub frame: &'a FrameData,
    /// The packed positions the frame was built from.
    pub positions: &'a [Vec3],
}

/// Nodes visited and triangles tested by one walk.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WalkCost {
    pub nodes: u32,
    pub triangles: u32,
}

impl QueryScene<'_> {
    /// Walks packed body `b`'s BVH stackless over the ray's segment `[tmin, tmax]`, in the
    /// kernels' order, calling `hit(triangle, t, u, v)` for every triangle the ray hits (as
    /// `leaf_hit` in `bvh.wgsl` tests it); stops when `hit` returns true.
    pub(crate) fn walk(
        &self,
        b: u32,
        ray: &Ray,
        mut hit: impl FnMut(u32, f32, f32, f32) -> bool,
    ) -> WalkCost {
        let mut cost = WalkCost::default();
        let nodes = self.frame.body_nodes(self.packing, b as usize);
        if nodes.is_empty() {
            return cost;
        }
        let body: &BodyGpu = &self.packing.bodies[b as usize];
        let axes = ray_axes(ray.dir);
        let inv = safe_inverse(ray.dir);
        let mut node = 0u32;
        while node != NONE {
            let nd = &nodes[node as usize];
            cost.nodes += 1;
            let entered = hit_box(ray.origin, ray.dir, inv, ray.tmin, ray.tmax, nd.min, nd.max);
            if entered && nd.child & LEAF_BIT != 0 {
                let tri = nd.child & !LEAF_BIT;
                let (a, bb, c) =
                    tri_vertices(self.positions, &self.packing.triangles, (body.tri_offset + tri) as usize);
                cost.triangles += 1;
                let found = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, ray.tmax, a, bb, c);
                if found.is_some_and(|(t, u, v)| hit(tri, t, u, v)) {
                    return cost;
                }
            }
            node = next_node(nd, entered);
        }
        cost
    }
}
