//! The CPU backend's walk of a line: the closest hits of a ray and of its opposite ray (the same
//! origin, the direction negated) through one walk of the 4-wide tree. Not a twin of any kernel:
//! the kernel casts the two rays one after the other; this finds the same two hits.
//!
//! The classification casts a cloth vertex's inward and outward rays along its normal, on the
//! same body with the same bounds (cloth → cloth, a cloth's self pair, cloth → volumetric).
//! Both rays enter the boxes around their common origin, and a cloth's rays mostly miss (on the
//! bench's `eight-sheets`, 97 % of the self pairs' rays): a miss walks every box on its way out
//! of the tree, so the two walks share most of their nodes. One walk reads each node and
//! triangle record once for both.
//!
//! Exactness: the slab test of the opposite ray is the slab test of the ray negated. With
//! `inv' = -inv` (`safe_inverse` is odd on every axis that is not parallel, and a parallel
//! axis's slab is decided by the origin alone), each axis's `t0' = -t0` and `t1' = -t1`, so
//! `min(t0', t1') = -max(t0, t1)` as the SSE `min` and `max` give them (the second operand on a
//! NaN), and over the axes the opposite ray's entry is `-tf` and its exit `-tn`; widening is
//! symmetric under round-to-nearest (`-tf - |tf| w = -(tf + |tf| w)`). So each ray's box tests
//! are bit for bit those of its own walk, its triangles are tested by its own
//! `intersect_triangle`, and a node is pruned for a ray only when its own test, with its own
//! current `tmax`, rejects it: each ray gets the closest hit of its own walk (with the lowest
//! index on ties, whatever the order). The counters add up to the walk's: each ray's root test
//! and triangles tested, and the lanes of every wide node visited once, counted to the first
//! ray when it took part in the node, else to its opposite.

use glam::{Vec3, Vec4};

use super::shared::bvh_line::closest_hits_line_binary;
use super::shared::classify::Narrow;
use super::shared::ray::{box_entry, ray_axes, safe_inverse};
use super::traverse::{
    WideHit, WideRay, WideStack, clip, closest_hit_ordered, prefetch_leaves, record_test, within,
};
use crate::layout::{BodyGpu, LEAF_BIT, NONE, Node, Ray, RayHit};
use crate::wide_bvh::WideTree;

/// A pending node of the line's walk: its index and each ray's entry distance (NaN: the ray
/// does not enter it).
type Entry = (u32, [f32; 2]);

/// The rays of `e` that still enter its node before their best hit (bit k: `rays[k]`).
#[inline(always)]
fn active(e: &Entry, tmax: &[f32; 2]) -> u32 {
    u32::from(within(e.1[0], tmax[0])) | (u32::from(within(e.1[1], tmax[1])) << 1)
}

/// The closest hits of `rays[0]` and `rays[1]` (the same origin, opposite directions) through
/// `tree` (the 4-wide BVH of a body whose binary nodes are `nodes`), skipping the triangles of
/// packed vertex `ignore_vertex`: what [`closest_hit_wide`](super::closest_hit_wide) returns for
/// each, found in one walk that visits the children nearest to either ray first.
/// `nodes_visited` counts the binary root for each ray, and the lanes of each wide node once:
/// for `rays[0]` when it took part in the node, else for `rays[1]` (so the two add up to the
/// walk's boxes tested).
pub fn closest_hits_line(
    body: &BodyGpu,
    nodes: &[Node],
    tree: &WideTree,
    positions: &[Vec3],
    triangles: &[u32],
    rays: [&Ray; 2],
    ignore_vertex: u32,
) -> [RayHit; 2] {
    closest_hits_line_counted::<false>(body, nodes, tree, positions, triangles, rays, ignore_vertex)
        .map(|h| h.hit)
}

/// [`closest_hits_line`] with each hit triangle's face, as
/// [`closest_hit_wide_counted`](super::closest_hit_wide_counted) gives it, and with `COUNT` the
/// wide nodes the walk fetched (for both rays, each node once: in the first [`WideHit`], 0 in
/// the second).
#[inline(always)]
pub fn closest_hits_line_counted<const COUNT: bool>(
    body: &BodyGpu,
    nodes: &[Node],
    tree: &WideTree,
    positions: &[Vec3],
    triangles: &[u32],
    rays: [&Ray; 2],
    ignore_vertex: u32,
) -> [WideHit; 2] {
    debug_assert!(rays[0].origin == rays[1].origin && rays[0].dir == -rays[1].dir);
    if tree.nodes.is_empty() {
        return rays.map(|r| WideHit {
            hit: closest_hit_ordered(body, nodes, positions, triangles, r, ignore_vertex),
            face: None,
            fetched: 0,
        });
    }
    let mut fetched = 0u32;
    let mut best = [RayHit::MISS; 2];
    let mut face = [Vec3::ZERO; 2];
    let done = |best: [RayHit; 2], face: [Vec3; 2], fetched| {
        [0, 1].map(|k| WideHit {
            hit: best[k],
            face: (best[k].triangle != NONE).then_some(face[k]),
            fetched: if k == 0 { fetched } else { 0 },
        })
    };
    let mut tmax = [rays[0].tmax, rays[1].tmax];
    let root = &nodes[0];
    let mut start = [f32::NAN; 2];
    for k in 0..2 {
        let r = rays[k];
        best[k].nodes_visited += 1;
        if box_entry(r.origin, r.dir, safe_inverse(r.dir), r.tmin, r.tmax, root.min, root.max).is_some() {
            start[k] = r.tmin;
        }
    }
    let wray = WideRay::new(rays[0], safe_inverse(rays[0].dir));
    let tmin1 = Vec4::splat(rays[1].tmin);
    let axes = rays.map(|r| ray_axes(r.dir));
    let mut stack = WideStack::new((0u32, [0f32; 2]));
    let mut here: Entry = (0, start);
    let mut live = active(&here, &tmax);
    if live == 0 {
        return done(best, face, fetched);
    }
    loop {
        let n = &tree.nodes[here.0 as usize];
        prefetch_leaves(tree, n);
        let (lanes, e, x) = wray.widened(n);
        // The ray's test, and the opposite ray's: its entries are -x, its exits -e.
        let (m0, t0) = clip(e, x, wray.tmin, tmax[0]);
        let (m1, t1) = clip(-x, -e, tmin1, tmax[1]);
        let m = [if live & 1 != 0 { m0 & lanes } else { 0 }, if live & 2 != 0 { m1 & lanes } else { 0 }];
        // The node's lanes are counted once: to the ray if it takes part, else its opposite.
        best[if live & 1 != 0 { 0 } else { 1 }].nodes_visited += n.count;
        if COUNT {
            fetched += 1;
        }
        let t = [t0.to_array(), t1.to_array()];
        // The leaves first (each hit shrinks its ray's tmax), then the nearest inner child,
        // the others on the stack, farthest first.
        let mut leaves = (m[0] | m[1]) & n.leaves;
        while leaves != 0 {
            let i = leaves.trailing_zeros() as usize;
            leaves &= leaves - 1;
            let r = &tree.tris[(n.child[i] & !LEAF_BIT) as usize];
            for k in 0..2 {
                if m[k] >> i & 1 != 0 && within(t[k][i], tmax[k]) {
                    record_test(r, rays[k], axes[k], ignore_vertex, &mut best[k], &mut tmax[k], &mut face[k]);
                }
            }
        }
        let mut order = [(0u32, [0f32; 2], 0f32); 4];
        let mut count = 0;
        let mut bits = (m[0] | m[1]) & !n.leaves;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            // Written out, not `[0, 1].map(..)`: the compiler left that closure a call per child.
            let enters = |k: usize| m[k] >> i & 1 != 0 && within(t[k][i], tmax[k]);
            let at = [if enters(0) { t[0][i] } else { f32::NAN }, if enters(1) { t[1][i] } else { f32::NAN }];
            // The nearer of the two entries (`min` skips a NaN); both NaN: neither ray enters.
            let key = at[0].min(at[1]);
            if key.is_nan() {
                continue;
            }
            let mut j = count;
            while j > 0 && order[j - 1].2 > key {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = (n.child[i], at, key);
            count += 1;
        }
        if count > 0 {
            for &(c, at, _) in order[1..count].iter().rev() {
                stack.push((c, at));
            }
            here = (order[0].0, order[0].1);
            live = active(&here, &tmax);
            continue;
        }
        loop {
            match stack.pop() {
                Some(e) => {
                    live = active(&e, &tmax);
                    if live != 0 {
                        here = e;
                        break;
                    }
                }
                None => return done(best, face, fetched),
            }
        }
    }
}

impl Narrow<'_> {
    /// The closest hits of `ray` and of its opposite ray (the same origin and bounds, `-dir`)
    /// on packed body `b`, skipping the triangles of packed vertex `ignore`: [`Self::bvh_hit`]
    /// of each, through one walk of the frame's wide tree ([`closest_hits_line`]), or of its
    /// binary one as the kernel walks it ([`closest_hits_line_binary`], passing no fan: the same
    /// hits), when it has none.
    /// With each hit triangle's face when the wide walk computed it ([`WideHit::face`]).
    pub(crate) fn bvh_hits_line(&self, b: usize, ray: &Ray, ignore: u32) -> [(RayHit, Option<Vec3>); 2] {
        let back = Ray { dir: -ray.dir, ..*ray };
        match self.frame.body_wide(b) {
            Some(w) => {
                let body = &self.packing.bodies[b];
                let nodes = self.frame.lbvh_for_wide_walk(self.packing, b);
                let (positions, triangles) = (self.positions, &self.packing.triangles);
                let rays = [ray, &back];
                closest_hits_line_counted::<false>(body, nodes, w, positions, triangles, rays, ignore)
                    .map(|h| (h.hit, h.face))
            }
            None => {
                let body = &self.packing.bodies[b];
                let nodes = self.frame.body_nodes(self.packing, b);
                closest_hits_line_binary(
                    body,
                    nodes,
                    self.positions,
                    &self.packing.triangles,
                    ray,
                    ignore,
                    &[],
                )
                .map(|h| (h, None))
            }
        }
    }
}
