//! Twin of `shaders/raycast.wgsl`: closest hits of a batch of rays through a body's BVH
//! ([`closest_hit`], the twin of `shaders/shared/bvh.wgsl`).

use glam::Vec3;
use rayon::prelude::*;

use super::shared::bvh::closest_hit;
use crate::frame::FrameData;
use crate::layout::{BodyGpu, NONE, Node, Ray, RayHit};
use crate::packing::Packing;

/// Twin of `raycast.wgsl` for one ray: closest hit through the stackless BVH of a body (its used
/// nodes `nodes`, body-local), counting nodes visited and triangles tested.
pub fn raycast_one(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
) -> RayHit {
    closest_hit(body, nodes, positions, triangles, ray, NONE)
}

/// Twin of `raycast.wgsl`: closest hits of a batch of rays against packed body `b`.
pub fn raycast(
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
        .map(|r| raycast_one(body, nodes, positions, &packing.triangles, r))
        .collect()
}
