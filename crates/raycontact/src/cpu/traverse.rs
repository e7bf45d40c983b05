//! The CPU backend's own BVH traversals: not twins of any kernel. They find the same closest
//! hit as [`closest_hit`](super::shared::bvh::closest_hit) (the twin of
//! `shaders/shared/bvh.wgsl`) but walk the tree the CPU's way, so their counters
//! (`nodes_visited`, `triangles_tested`, `fallback`) are their own, not the GPU's:
//!
//! - [`closest_hit_wide`], the CPU backend's: the 4-wide tree of [`crate::wide_bvh`], all four
//!   children's boxes tested by one SIMD slab test, the hit children visited nearest first
//!   (leaves tested at once), an unbounded stack that remembers entry distances;
//! - [`closest_hit_ordered`]: the same walk over the binary tree, two children at a time (the
//!   walk of a frame without a wide tree, e.g. one read back from the GPU).
//!
//! The closest hit with the lowest triangle index on ties does not depend on the walk: every
//! box test is the widened slab test of `box_entry` (`shaders/shared/ray.wgsl`), the same float
//! operations lane by lane, and a node is pruned only when that test rejects it, so each walk
//! tests every triangle the others could find. The CPU backend's ray casts and both tracers of
//! the narrow phase ([`Narrow`]'s BVH trace) use [`closest_hit_wide`].

use glam::{Vec3, Vec4};
use rayon::prelude::*;

use super::shared::bvh::{Leaf, triangle_within};
use super::shared::classify::Narrow;
use super::shared::ray::{box_entry, intersect_triangle, ray_axes, safe_inverse};
use crate::frame::FrameData;
use crate::layout::{BodyGpu, LEAF_BIT, NONE, Node, Ray, RayHit};
use crate::packing::Packing;
use crate::wide_bvh::{TriRecord, WideNode, WideTree};

/// The widening of `box_entry`'s slab test (relative).
const WIDEN: f32 = 2.0e-6;

/// The CPU backend's ray casts: [`raycast`](crate::cpu::raycast)'s results through
/// [`closest_hit_wide`] (through [`closest_hit_ordered`] when the frame has no wide tree).
pub fn raycast_ordered(
    packing: &Packing,
    frame: &FrameData,
    positions: &[Vec3],
    b: usize,
    rays: &[Ray],
) -> Vec<RayHit> {
    let body = &packing.bodies[b];
    let nodes = frame.body_nodes(packing, b);
    let wide = frame.body_wide(b);
    rays.par_iter()
        .with_min_len(64)
        .map(|r| match wide {
            Some(w) => closest_hit_wide(body, nodes, w, positions, &packing.triangles, r, NONE),
            None => closest_hit_ordered(body, nodes, positions, &packing.triangles, r, NONE),
        })
        .collect()
}

/// Whether some triangle of `tree` that does not use packed vertex `ignore` comes within
/// distance `r` of `p` (`true` for a tree not built: unsure): the binary tree's
/// [`other_near`](super::shared::bvh::other_near) on the 4-wide tree, on the records' corners
/// (the same floats), the leaves walked those whose box grown by `r` holds `p`
/// ([`WideTree::leaf_near_with`]). Stops at the first such triangle.
///
/// A cloth's self pair asks it of every vertex. A hash grid of the body's records in place of
/// the tree (each record in the cells its box covers, a question looking in the cells of its
/// box grown by `r`, each candidate's box beside it and each candidate tested once, so the
/// same answers: the GPU's counts of sources turned away on `eight-sheets`) was slower: on the
/// folded sheet of `cargo bench -p raycontact-benches --bench cpu_bvh -- near` (8,192
/// triangles, 4,225 questions) 0.57 ms to build and 2.2 ms to answer against the tree's 1.05;
/// on `eight-sheets` a question met about 38 candidates in 3.8 cells where the tree's walk
/// reaches 7.6 leaves, and `cpu-1`'s ray stage took 45–64 ms against 35–47 (`raycontact-bench
/// --cpu --no-parry --scene eight-sheets --implementations cpu-1 --frames 16`, 4 runs
/// alternated, 2-core VM).
///
/// A question on that sheet walks 12.8 wide nodes and reaches 9.1 leaves, 5.8 of them the
/// vertex's own triangles; on `eight-sheets`' sheets about as many, 12.9 and 7.9 (another
/// sheet's question, [`WideTree::has_leaf_near`], 2.5 and 0.3; counted in a scratch build):
/// the benchmark asks what the scene asks, so the question's higher cost there (about 400 ns
/// against 250) comes from elsewhere, most likely the cache after the rays' walks (not
/// measured). Nor do questions share their walks for less: up to 32 consecutive vertices asked
/// in one walk (a node read once, each question testing the lanes its own walk would test, so
/// the same answers) took 1.12–1.42 ms in packets of 8, 16 or 32 against 1.10–1.47 one at a
/// time (3 runs of a scratch version of the benchmark): a question costs its lane tests and
/// leaf checks, not the reading of nodes.
pub fn other_near_wide(tree: &WideTree, p: Vec3, r: f32, ignore: u32) -> bool {
    tree.leaf_near_with(p, r, |i| {
        let rec = &tree.tris[i];
        !rec.vertices.contains(&ignore) && triangle_within(p, r, rec.corners)
    })
}

/// A ray's constants for the 4-wide slab test, computed once per ray.
pub(super) struct WideRay {
    /// The origin, each axis splat.
    o: [Vec4; 3],
    /// `safe_inverse` of the direction, each axis splat.
    inv: [Vec4; 3],
    pub(super) tmin: Vec4,
    /// Axes the ray is parallel to (`|d| < 1e-30`): their slab is decided by the origin alone.
    parallel: [bool; 3],
    any_parallel: bool,
}

impl WideRay {
    pub(super) fn new(ray: &Ray, inv: Vec3) -> Self {
        let parallel = ray.dir.abs().cmplt(Vec3::splat(1.0e-30));
        let parallel = [parallel.test(0), parallel.test(1), parallel.test(2)];
        WideRay {
            o: [0, 1, 2].map(|a| Vec4::splat(ray.origin[a])),
            inv: [0, 1, 2].map(|a| Vec4::splat(inv[a])),
            tmin: Vec4::splat(ray.tmin),
            parallel,
            any_parallel: parallel.contains(&true),
        }
    }

    /// The slab test of the four children of `n` before widening and clipping: the lanes a
    /// parallel axis leaves possible, and per lane the largest entry and smallest exit over the
    /// axes (`box_entry`'s `tn` and `tf`). The same float operations as `box_entry`, lane by
    /// lane, with its NaN cases made explicit.
    #[inline(always)]
    fn slab(&self, n: &WideNode) -> (u32, Vec4, Vec4) {
        let mut near = [Vec4::ZERO; 3];
        let mut far = [Vec4::ZERO; 3];
        for a in 0..3 {
            let t0 = (n.lo[a] - self.o[a]) * self.inv[a];
            let t1 = (n.hi[a] - self.o[a]) * self.inv[a];
            near[a] = t0.min(t1);
            far[a] = t0.max(t1);
        }
        let mut lanes = (1u32 << n.count) - 1;
        if self.any_parallel {
            for a in (0..3).filter(|&a| self.parallel[a]) {
                near[a] = Vec4::splat(-3.0e38);
                far[a] = Vec4::splat(3.0e38);
                lanes &= (self.o[a].cmpge(n.lo[a]) & self.o[a].cmple(n.hi[a])).bitmask();
            }
        }
        (lanes, near[0].max(near[1].max(near[2])), far[0].min(far[1].min(far[2])))
    }

    /// [`Self::slab`] widened as `box_entry` widens it: the lanes, the entries `tn - |tn| w`
    /// and the exits `tf + |tf| w`, before clipping.
    #[inline(always)]
    pub(super) fn widened(&self, n: &WideNode) -> (u32, Vec4, Vec4) {
        let (lanes, tn, tf) = self.slab(n);
        (lanes, tn - tn.abs() * WIDEN, tf + tf.abs() * WIDEN)
    }

    /// `box_entry` of the four children of `n` at once: the mask of the children hit (bit i:
    /// lane i) and their entry distances (an entry that is NaN is `tmin`, an exit that is NaN
    /// is `tmax`, as `f32::max` and `f32::min` give them).
    #[inline(always)]
    fn test(&self, n: &WideNode, tmax: f32) -> (u32, Vec4) {
        let (lanes, e, x) = self.widened(n);
        let (mask, enter) = clip(e, x, self.tmin, tmax);
        (mask & lanes, enter)
    }
}

/// The widened entries `e` and exits `x` of four boxes clipped to `[tmin, tmax]` (`box_entry`'s
/// last step, lane by lane): the lanes whose entry is not past their exit, and the entries.
#[inline(always)]
pub(super) fn clip(e: Vec4, x: Vec4, tmin: Vec4, tmax: f32) -> (u32, Vec4) {
    let enter = Vec4::select(e.cmpge(tmin), e, tmin);
    let tmax4 = Vec4::splat(tmax);
    let exit = Vec4::select(x.cmple(tmax4), x, tmax4);
    (enter.cmple(exit).bitmask(), enter)
}

/// The leaf test of `Leaf::test` (`shaders/shared/bvh.wgsl`'s `leaf_hit` and `nearer`) on a
/// triangle record: skipped when it uses the ignored vertex, kept when nearer, or as near with a
/// lower index; `tmax` shrinks to it, and `face` becomes the kept triangle's unnormalised normal
/// `cross(b - a, c - a)` from the record's corners (those of the positions: the same floats).
#[inline(always)]
pub(super) fn record_test(
    r: &TriRecord,
    ray: &Ray,
    axes: [usize; 3],
    ignore: u32,
    best: &mut RayHit,
    tmax: &mut f32,
    face: &mut Vec3,
) {
    if r.vertices.contains(&ignore) {
        return;
    }
    best.triangles_tested += 1;
    let [a, b, c] = r.corners;
    if let Some((t, u, v)) = intersect_triangle(ray.origin, ray.dir, axes, ray.tmin, *tmax, a, b, c) {
        if t < best.t || (t == best.t && r.triangle < best.triangle) {
            *best = RayHit { t, triangle: r.triangle, u, v, ..*best };
            *tmax = t;
            *face = (b - a).cross(c - a);
        }
    }
}

/// Asks for the triangle records of `n`'s leaf lanes, hit or not, as soon as the node is read:
/// their cache misses then overlap the node's slab test instead of following it. Measured on
/// `raycontact-bench --cpu --scene cloth-layers,files` (`cpu-1`'s ray stage, 5 runs alternated
/// with the build without it): cloth-layers 62.1-70.5 -> 59.0-62.2 ms, the armadillo pair
/// unchanged (29.5-33.3 -> 30.4-32.7). Asking for the inner children's nodes too, once the
/// slab test has chosen them, gained nothing more (medians 66.5 -> 65.5 and 33.9 -> 32.9 ms
/// over 6 runs, within the runs' spread).
#[inline(always)]
pub(super) fn prefetch_leaves(tree: &WideTree, n: &WideNode) {
    let mut leaves = n.leaves;
    while leaves != 0 {
        let i = leaves.trailing_zeros() as usize;
        leaves &= leaves - 1;
        crate::prefetch::prefetch(&tree.tris, (n.child[i] & !LEAF_BIT) as usize);
    }
}

/// Whether a subtree entered at `t` may still hold a hit as near as `tmax` (the ordered walks'
/// pruning of a popped entry).
#[inline(always)]
pub(super) fn within(t: f32, tmax: f32) -> bool {
    t <= tmax + tmax.abs() * WIDEN
}

/// A walk's stack of entries (a wide node and its entry distances): 64 entries inline, then on
/// the heap.
pub(super) struct WideStack<E: Copy> {
    inline: [E; 64],
    len: usize,
    spill: Vec<E>,
}

impl<E: Copy> WideStack<E> {
    /// An empty stack (`fill` fills the unused inline slots).
    #[inline(always)]
    pub(super) fn new(fill: E) -> Self {
        WideStack { inline: [fill; 64], len: 0, spill: Vec::new() }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, e: E) {
        if self.len < self.inline.len() && self.spill.is_empty() {
            self.inline[self.len] = e;
            self.len += 1;
        } else {
            self.spill.push(e);
        }
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<E> {
        if let Some(e) = self.spill.pop() {
            return Some(e);
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.inline[self.len])
    }
}

/// The closest hit through `tree` (the 4-wide BVH of a body whose binary nodes are `nodes`),
/// skipping the triangles of packed vertex `ignore_vertex`:
/// [`closest_hit`](super::shared::bvh::closest_hit)'s result, walked four children at a time. `nodes_visited` counts
/// the boxes tested (the binary root, then every lane of every wide node visited).
pub fn closest_hit_wide(
    body: &BodyGpu,
    nodes: &[Node],
    tree: &WideTree,
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
) -> RayHit {
    closest_hit_wide_counted::<false>(body, nodes, tree, positions, triangles, ray, ignore_vertex).hit
}

/// A wide walk's result: the closest hit, the hit triangle's face and the wide nodes fetched.
#[derive(Clone, Copy, Debug)]
pub struct WideHit {
    /// The closest hit, as [`closest_hit_wide`] returns it.
    pub hit: RayHit,
    /// The hit triangle's unnormalised normal `cross(b - a, c - a)`, computed from its record's
    /// corners (this frame's positions, so the floats the narrow phase would compute from
    /// them): `None` on a miss, or when the walk was the binary one (no wide tree).
    pub face: Option<Vec3>,
    /// With `COUNT`, the wide nodes fetched (what the walk's memory traffic is counted in: a
    /// wide node is [`WideNode`]'s 128 bytes whatever lanes it uses; the benchmark's bytes per
    /// ray), else 0; 0 too when the tree is empty (the binary walk's nodes are in the hit's
    /// `nodes_visited`).
    pub fetched: u32,
}

/// [`closest_hit_wide`] with the hit triangle's face and, with `COUNT`, the wide nodes fetched
/// ([`WideHit`]).
#[inline(always)]
pub fn closest_hit_wide_counted<const COUNT: bool>(
    body: &BodyGpu,
    nodes: &[Node],
    tree: &WideTree,
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
) -> WideHit {
    if tree.nodes.is_empty() {
        let hit = closest_hit_ordered(body, nodes, positions, triangles, ray, ignore_vertex);
        return WideHit { hit, face: None, fetched: 0 };
    }
    let mut best = RayHit::MISS;
    let mut face = Vec3::ZERO;
    let mut fetched = 0u32;
    let done = |hit: RayHit, face: Vec3, fetched| WideHit {
        hit,
        face: (hit.triangle != NONE).then_some(face),
        fetched,
    };
    let inv = safe_inverse(ray.dir);
    best.nodes_visited += 1;
    let root = &nodes[0];
    if box_entry(ray.origin, ray.dir, inv, ray.tmin, ray.tmax, root.min, root.max).is_none() {
        return done(best, face, fetched);
    }
    let wray = WideRay::new(ray, inv);
    let axes = ray_axes(ray.dir);
    let mut tmax = ray.tmax;
    let mut stack = WideStack::new((0u32, 0f32));
    let mut node = 0u32;
    loop {
        let n = &tree.nodes[node as usize];
        prefetch_leaves(tree, n);
        let (mask, enter) = wray.test(n, tmax);
        best.nodes_visited += n.count;
        if COUNT {
            fetched += 1;
        }
        let t = enter.to_array();
        // The leaves hit first (each shrinks tmax), then the nearest inner child, the others
        // on the stack, farthest first.
        let mut leaves = mask & n.leaves;
        while leaves != 0 {
            let i = leaves.trailing_zeros() as usize;
            leaves &= leaves - 1;
            if within(t[i], tmax) {
                let r = &tree.tris[(n.child[i] & !LEAF_BIT) as usize];
                record_test(r, ray, axes, ignore_vertex, &mut best, &mut tmax, &mut face);
            }
        }
        let inner = mask & !n.leaves;
        let next = match inner.count_ones() {
            0 => None,
            1 => {
                let i = inner.trailing_zeros() as usize;
                within(t[i], tmax).then_some(n.child[i])
            }
            2 => {
                let i = inner.trailing_zeros() as usize;
                let j = (inner & (inner - 1)).trailing_zeros() as usize;
                let (near, far) = if t[j] < t[i] { (j, i) } else { (i, j) };
                if within(t[near], tmax) {
                    stack.push((n.child[far], t[far]));
                    Some(n.child[near])
                } else {
                    None
                }
            }
            _ => {
                let mut order = [(0u32, 0f32); 4];
                let mut k = 0;
                let mut bits = inner;
                while bits != 0 {
                    let i = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let mut j = k;
                    while j > 0 && order[j - 1].1 > t[i] {
                        order[j] = order[j - 1];
                        j -= 1;
                    }
                    order[j] = (n.child[i], t[i]);
                    k += 1;
                }
                if within(order[0].1, tmax) {
                    for &e in order[1..k].iter().rev() {
                        stack.push(e);
                    }
                    Some(order[0].0)
                } else {
                    None
                }
            }
        };
        if let Some(c) = next {
            node = c;
            continue;
        }
        loop {
            match stack.pop() {
                Some((c, tc)) if within(tc, tmax) => {
                    node = c;
                    break;
                }
                Some(_) => continue,
                None => return done(best, face, fetched),
            }
        }
    }
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
    /// packed vertex `ignore`: both tracers' BVH trace, through the frame's wide tree
    /// ([`closest_hit_wide`]), or its binary one ([`closest_hit_ordered`]) when it has none.
    /// With the hit triangle's face when the wide walk computed it ([`WideHit::face`]).
    pub(crate) fn bvh_hit(&self, b: usize, ray: &Ray, ignore: u32) -> (RayHit, Option<Vec3>) {
        let body = &self.packing.bodies[b];
        let (positions, triangles) = (self.positions, &self.packing.triangles);
        match self.frame.body_wide(b) {
            Some(w) => {
                let nodes = self.frame.lbvh_for_wide_walk(self.packing, b);
                let h = closest_hit_wide_counted::<false>(body, nodes, w, positions, triangles, ray, ignore);
                (h.hit, h.face)
            }
            None => {
                let nodes = self.frame.body_nodes(self.packing, b);
                (closest_hit_ordered(body, nodes, positions, triangles, ray, ignore), None)
            }
        }
    }
}
