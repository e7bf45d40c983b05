//! Twin of `shaders/shared/walk.wgsl`: the walk of one ray over the triangle adjacency
//! ([`crate::walk`] describes it), with the same float operations in the same order, so that
//! the triangle, the outcome and the steps equal the GPU's.

use glam::Vec3;

use super::common::tri_vertices;
use super::ray::{hit_sheared, ray_axes, shear};
use crate::layout::{
    BOUNDARY, BodyGpu, MAX_WALK_STEPS, NON_MANIFOLD, NONE, Ray, WALK_BOUNDARY, WALK_HISTORY, WALK_HIT,
    WALK_LOOP, WALK_NO_START, WALK_PARALLEL, WALK_RANGE, WALK_STEPS, WalkHit,
};

/// The walk of one ray over packed body `body` (twin of `walk_ray` in
/// `shaders/shared/walk.wgsl`): from body-local triangle `start` ([`NONE`]: no start), at most
/// `max_steps` edges (clamped to [`MAX_WALK_STEPS`]). `adjacency` and `triangles` are the
/// packed scene's ([`Packing::adjacency`](crate::packing::Packing::adjacency),
/// [`Packing::triangles`](crate::packing::Packing::triangles)): the two regions of the kernels'
/// one triangle buffer ([`TRIANGLE_REGIONS`](crate::layout::TRIANGLE_REGIONS)), taken here as
/// separate slices. Never consults the BVH: [`WalkHit::bvh`] is 0. With the walk's result, the
/// hit triangle's unnormalised normal `cross(b - a, c - a)` (zero without a hit) from the corners
/// its test read (the kernel's walk returns none): what the classification would compute from
/// the positions, the same floats, without reading them again
/// ([`Traced::face`](super::classify::Traced::face)).
pub fn walk_ray(
    body: &BodyGpu,
    adjacency: &[u32],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    start: u32,
    max_steps: u32,
) -> (WalkHit, Vec3) {
    let mut out = WalkHit {
        t: f32::INFINITY,
        triangle: NONE,
        u: 0.0,
        v: 0.0,
        outcome: WALK_NO_START,
        steps: 0,
        last: NONE,
        bvh: 0,
    };
    if start >= body.tri_count {
        return (out, Vec3::ZERO);
    }
    let max_steps = max_steps.min(MAX_WALK_STEPS);
    let axes = ray_axes(ray.dir);
    let mut history = [NONE; WALK_HISTORY as usize];
    let mut head = 0usize;
    let mut tri = start;
    loop {
        history[head] = tri;
        head = (head + 1) % WALK_HISTORY as usize;
        out.last = tri;
        let g = (body.tri_offset + tri) as usize;
        let (a, b, c) = tri_vertices(positions, triangles, g);
        // The edge functions (U, V, W) of the watertight test (`Sheared::uvw`): the
        // barycentric weights of a, b, c where the ray's line crosses the triangle's plane,
        // scaled by U + V + W (of either sign). U is negative beyond edge 0 (b, c), V beyond
        // edge 1 (c, a), W beyond edge 2 (a, b).
        let sheared = shear(ray.origin, ray.dir, axes, a, b, c);
        let e = sheared.uvw;
        let outside = (e[0] < 0.0 || e[1] < 0.0 || e[2] < 0.0) && (e[0] > 0.0 || e[1] > 0.0 || e[2] > 0.0);
        let det = e[0] + e[1] + e[2];
        if !outside {
            match hit_sheared(&sheared, ray.tmin, ray.tmax) {
                Some((t, u, v)) => {
                    out = WalkHit { t, triangle: tri, u, v, outcome: WALK_HIT, ..out };
                    return (out, (b - a).cross(c - a));
                }
                None => out.outcome = if det == 0.0 { WALK_PARALLEL } else { WALK_RANGE },
            }
            return (out, Vec3::ZERO);
        }
        if det == 0.0 {
            out.outcome = WALK_PARALLEL;
            return (out, Vec3::ZERO);
        }
        // A barycentric weight is negative where its edge function has the determinant's
        // opposite sign. Algorithm 2's order: u (edge 1), v (edge 2), 1 - u - v (edge 0).
        let s = if det < 0.0 { [-e[0], -e[1], -e[2]] } else { e };
        let edge = if s[1] < 0.0 {
            1
        } else if s[2] < 0.0 {
            2
        } else {
            0
        };
        let next = adjacency[3 * g + edge];
        if next == BOUNDARY || next == NON_MANIFOLD {
            out.outcome = WALK_BOUNDARY;
            return (out, Vec3::ZERO);
        }
        if history.contains(&next) {
            out.outcome = WALK_LOOP;
            return (out, Vec3::ZERO);
        }
        if out.steps >= max_steps {
            out.outcome = WALK_STEPS;
            return (out, Vec3::ZERO);
        }
        out.steps += 1;
        tri = next;
    }
}
