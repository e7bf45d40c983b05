//! Twin of `shaders/shared/bvh_line.wgsl`: the closest hits of a ray and of its opposite ray
//! (the same origin and bounds, the direction negated) through one walk of a body's BVH,
//! visiting the nodes in the GPU's order and counting them alike.

use glam::Vec3;

use super::bvh::{Leaf, passes_fan, stackless_hit};
use super::ray::{ray_axes, safe_inverse};
use crate::layout::{BodyGpu, LEAF_BIT, NONE, Node, Ray, RayHit, SHORT_STACK};

/// What [`enter_both`] found of a box: the rays that enter it (bit 0: the ray, bit 1: its
/// opposite), the smaller entry of those that do, and each one's entry (read only where its
/// bit is set).
#[derive(Clone, Copy)]
struct Entered {
    rays: u32,
    at: f32,
    t: [f32; 2],
}

/// Twin of `enter_both`: which of the two rays (bit 0: the ray of origin `o`, direction `d`,
/// inverse `inv`; bit 1: its opposite; only those of `act`) enter the box of `nd` before their
/// bounds `tmax`, the smaller entry of those that do and each one's entry, from one slab
/// computation (the WGSL says why the opposite ray's test is its own `box_entry`).
#[inline(always)]
fn enter_both(ray: &Ray, inv: Vec3, act: u32, tmax: [f32; 2], nd: &Node) -> Entered {
    let (o, lo, hi) = (ray.origin, nd.min, nd.max);
    let parallel = ray.dir.abs().cmplt(Vec3::splat(1.0e-30));
    let inside = o.cmpge(lo) & o.cmple(hi);
    let none = Entered { rays: 0, at: f32::INFINITY, t: [0.0; 2] };
    if (parallel & !inside).any() {
        return none;
    }
    let t0 = (lo - o) * inv;
    let t1 = (hi - o) * inv;
    let near = Vec3::select(parallel, Vec3::splat(-3.0e38), t0.min(t1));
    let far = Vec3::select(parallel, Vec3::splat(3.0e38), t0.max(t1));
    let (tn, tf) = (near.max_element(), far.min_element());
    let low = tn - tn.abs() * 2.0e-6;
    let high = tf + tf.abs() * 2.0e-6;
    let front = low.max(ray.tmin);
    let back = (-high).max(ray.tmin);
    let mut e = Entered { t: [front, back], ..none };
    if act & 1 != 0 && front <= high.min(tmax[0]) {
        (e.rays, e.at) = (1, front);
    }
    if act & 2 != 0 && back <= (-low).min(tmax[1]) {
        (e.rays, e.at) = (e.rays | 2, e.at.min(back));
    }
    e
}

/// Twin of `closest_hits_line` in `shaders/shared/bvh_line.wgsl`: [`closest_hit`]'s
/// hits of `ray` and of its opposite ray, in that order, through one walk of the body's BVH
/// (`nodes`), skipping the triangles that use packed vertex `ignore_vertex` and passing every
/// node whose triangles all use it (the tree's `fans`) as though neither ray entered its box, its
/// test still counted. A stacked node keeps the rays that entered its box and where; popped, it
/// is walked into by those whose entry is still within their hit, its box not tested again.
/// The boxes tested (the root's, two a step) are counted once for both, in the first
/// hit's `nodes_visited`; each ray's stackless walk (after a full stack) in its own.
///
/// [`closest_hit`]: super::bvh::closest_hit
pub fn closest_hits_line_binary(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
    fans: &[u32],
) -> [RayHit; 2] {
    let mut best = [RayHit::MISS; 2];
    if nodes.is_empty() {
        return best;
    }
    let back = Ray { dir: -ray.dir, ..*ray };
    let rays = [ray, &back];
    let leaves =
        rays.map(|r| Leaf { body, positions, triangles, ray: r, axes: ray_axes(r.dir), ignore_vertex });
    let inv = rays.map(|r| safe_inverse(r.dir));
    let mut tmax = [ray.tmax, back.tmax];
    // The stacked nodes, each with the rays that entered its box and where.
    let mut stack = [(0u32, Entered { rays: 0, at: 0.0, t: [0.0; 2] }); SHORT_STACK as usize];
    let mut sp = 0usize;
    let mut lost = false;
    best[0].nodes_visited += 1;
    let enter = |act: u32, tmax: [f32; 2], n: u32| {
        if passes_fan(fans, ignore_vertex, n) {
            Entered { rays: 0, at: f32::INFINITY, t: [0.0; 2] }
        } else {
            enter_both(ray, inv[0], act, tmax, &nodes[n as usize])
        }
    };
    let mut act = enter(3, tmax, 0).rays;
    let mut node = if act != 0 { 0 } else { NONE };
    loop {
        if node == NONE {
            while sp > 0 {
                sp -= 1;
                let (c, e) = stack[sp];
                act = e.rays & (u32::from(e.t[0] <= tmax[0]) | (u32::from(e.t[1] <= tmax[1]) << 1));
                if act != 0 {
                    node = c;
                    break;
                }
            }
            if node == NONE {
                break;
            }
        }
        let nd = &nodes[node as usize];
        if nd.child & LEAF_BIT != 0 {
            let tri = nd.child & !LEAF_BIT;
            for k in 0..2 {
                if act >> k & 1 != 0 {
                    leaves[k].test(tri, &mut best[k], &mut tmax[k]);
                }
            }
            node = NONE;
            continue;
        }
        let left = nd.child;
        let right = nodes[left as usize].escape;
        best[0].nodes_visited += 2;
        let el = enter(act, tmax, left);
        let er = enter(act, tmax, right);
        (node, act) = match (el.rays != 0, er.rays != 0) {
            (true, true) => {
                let (near, far, a) =
                    if er.at < el.at { (right, (left, el), er.rays) } else { (left, (right, er), el.rays) };
                if sp < stack.len() {
                    stack[sp] = far;
                    sp += 1;
                } else {
                    lost = true;
                }
                (near, a)
            }
            (true, false) => (left, el.rays),
            (false, true) => (right, er.rays),
            (false, false) => (NONE, 0),
        };
    }
    if lost {
        for k in 0..2 {
            stackless_hit(nodes, &leaves[k], inv[k], &mut best[k], &mut tmax[k], fans);
        }
    }
    best
}
