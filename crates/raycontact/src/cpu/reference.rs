//! Test references, not twins of any kernel: what the tests and benchmarks compare the BVH
//! queries with. Nothing in the library calls them.

use glam::Vec3;

use super::shared::common::tri_vertices;
use super::shared::ray::{intersect_triangle, ray_axes};
use crate::layout::{BodyGpu, LEAF_BIT, NONE, Node, Ray, RayHit};

/// Brute-force closest hit of a ray against triangles `first..first + count` of the packed
/// triangles (body-local indices in the result): the reference for the BVH.
pub fn raycast_brute_force(
    positions: &[Vec3],
    triangles: &[u32],
    first: u32,
    count: u32,
    ray: &Ray,
) -> RayHit {
    let mut best = RayHit::MISS;
    let axes = ray_axes(ray.dir);
    for tri in 0..count {
        let (a, b, c) = tri_vertices(positions, triangles, (first + tri) as usize);
        best.triangles_tested += 1;
        if let Some((t, u, v)) = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, ray.tmax, a, b, c) {
            if t < best.t || (t == best.t && tri < best.triangle) {
                best = RayHit { t, triangle: tri, u, v, ..best };
            }
        }
    }
    best
}

/// Per node of a body's binary tree (`nodes`, its used nodes, body-local), two packed vertices
/// that every triangle under the node uses ([`NONE`] where fewer do, and at a leaf, whose test
/// skips the ignored vertex's triangle itself). A walk that ignores vertex `v` may pass a node
/// whose pair holds `v`: each of its triangles would be skipped at its leaf
/// ([`closest_hit_skipping`](crate::cpu::closest_hit_skipping)).
/// Under a vertex of many triangles (a cone's apex, a cylinder's cap centre) the boxes of all of
/// them hold a ray's origin there, so a walk from it enters every one: what the benchmark
/// measures against this. Two triangles share at most two vertices unless they are the same
/// three, so an internal node keeps all it has, but for such duplicates.
pub fn fan_vertices(body: &BodyGpu, nodes: &[Node], triangles: &[u32]) -> Vec<[u32; 2]> {
    let mut sets = vec![[NONE; 3]; nodes.len()];
    // Post-order from the root: a node after its two children.
    let mut stack = if nodes.is_empty() { Vec::new() } else { vec![(0u32, false)] };
    while let Some((n, children_done)) = stack.pop() {
        let nd = &nodes[n as usize];
        if nd.child & LEAF_BIT != 0 {
            let g = 3 * (body.tri_offset + (nd.child & !LEAF_BIT)) as usize;
            sets[n as usize] = [triangles[g], triangles[g + 1], triangles[g + 2]];
            continue;
        }
        let (left, right) = (nd.child, nodes[nd.child as usize].escape);
        if !children_done {
            stack.extend([(n, true), (right, false), (left, false)]);
            continue;
        }
        let (a, b) = (sets[left as usize], sets[right as usize]);
        let mut both = [NONE; 3];
        let mut k = 0;
        for v in a {
            if v != NONE && b.contains(&v) && !both[..k].contains(&v) {
                both[k] = v;
                k += 1;
            }
        }
        sets[n as usize] = both;
    }
    let leaf = |n: usize| nodes[n].child & LEAF_BIT != 0;
    sets.iter().enumerate().map(|(n, s)| if leaf(n) { [NONE; 2] } else { [s[0], s[1]] }).collect()
}
