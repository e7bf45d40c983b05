//! Twin of `shaders/shared/bvh.wgsl`: the closest hit of a ray through a body's BVH, visiting
//! the nodes in the GPU's order and counting them alike: through the children's own nodes
//! ([`closest_hit`]) or, as the kernel does where the tuning keeps them, through the compact
//! child pairs (the node buffer's last third: [`closest_hit_paired`], [`closest_hit_in`]).

use glam::Vec3;

use super::ray::{box_entry, intersect_triangle, ray_axes, safe_inverse};
use crate::frame::FrameData;
use crate::layout::{
    BODY_FANS, BodyGpu, FAN_VALENCE, LEAF_BIT, NONE, Node, PairGrid, Ray, RayHit, SHORT_STACK, pair_boxes,
};
use crate::packing::Packing;

/// What a leaf test needs: the body, its geometry and the ray.
pub(crate) struct Leaf<'a> {
    /// The packed body.
    pub(crate) body: &'a BodyGpu,
    /// The packed positions.
    pub(crate) positions: &'a [Vec3],
    /// The packed triangles.
    pub(crate) triangles: &'a [u32],
    /// The ray.
    pub(crate) ray: &'a Ray,
    /// The ray's axis permutation ([`ray_axes`]).
    pub(crate) axes: [usize; 3],
    /// Packed vertex whose triangles are skipped ([`NONE`]: none).
    pub(crate) ignore_vertex: u32,
}

impl Leaf<'_> {
    /// Tests body-local triangle `tri` (unless it uses the ignored vertex) and keeps the hit
    /// when it is nearer, or as near with a lower index; shrinks `tmax` to it (`leaf_hit` and
    /// `nearer` in `bvh.wgsl`).
    pub(crate) fn test(&self, tri: u32, best: &mut RayHit, tmax: &mut f32) {
        let g = (self.body.tri_offset + tri) as usize;
        let idx = [self.triangles[3 * g], self.triangles[3 * g + 1], self.triangles[3 * g + 2]];
        if idx.contains(&self.ignore_vertex) {
            return;
        }
        best.triangles_tested += 1;
        let [a, b, c] = idx.map(|i| self.positions[i as usize]);
        let r = self.ray;
        if let Some((t, u, v)) = intersect_triangle(r.origin, r.dir, self.axes, r.tmin, *tmax, a, b, c) {
            if t < best.t || (t == best.t && tri < best.triangle) {
                *best = RayHit { t, triangle: tri, u, v, ..*best };
                *tmax = t;
            }
        }
    }
}

/// Twin of `fan_to_pass` in `bvh.wgsl`: the fan words that a walk through `body` ignoring packed
/// vertex `ignore` reads, of its tree's fan words `fans` ([`fit_fans`](crate::cpu::fit_fans)):
/// all of them where at least [`FAN_VALENCE`] triangles are around that vertex (by the packing's
/// CSR offsets `vertex_tri_offsets`) and the body has [`BODY_FANS`], none otherwise.
pub fn fan_to_pass<'a>(
    body: &BodyGpu,
    vertex_tri_offsets: &[u32],
    ignore: u32,
    fans: &'a [u32],
) -> &'a [u32] {
    let v = ignore as usize;
    match (vertex_tri_offsets.get(v), vertex_tri_offsets.get(v + 1)) {
        (Some(&a), Some(&b)) if ignore != NONE && body.flags & BODY_FANS != 0 && b - a >= FAN_VALENCE => fans,
        _ => &[],
    }
}

/// Twin of `passes_fan` in `bvh.wgsl`: whether a walk that ignores packed vertex `ignore` passes
/// node `n` (body-local): by `fans`, the tree's fan words ([`fit_fans`](crate::cpu::fit_fans),
/// one per internal node; empty: no node is passed), every triangle under it uses that vertex.
#[inline(always)]
pub(crate) fn passes_fan(fans: &[u32], ignore: u32, n: u32) -> bool {
    ignore != NONE && fans.get(n as usize) == Some(&ignore)
}

/// Twin of `closest_hit` in `shaders/shared/bvh.wgsl`: the closest hit through a body's BVH
/// (`nodes`, its used nodes), skipping the triangles that use packed vertex `ignore_vertex`, and
/// passing every node whose triangles all use it (by `fans`, the tree's fan words as
/// [`fan_to_pass`] gives them for that vertex; empty: none, the kernel's `NO_FAN`) as though the
/// ray missed its box, its test still counted: the same hit, since the leaf test skips those
/// triangles anyway. Nearer child first with a short stack of [`SHORT_STACK`] entries, each with
/// the distance at which the ray enters its box: a popped entry is walked into when that
/// distance is still within the hit found so far, what a second test of its box would answer
/// (`closest_hit` in `bvh.wgsl` says why), and its box is not tested again. When the stack is
/// full the farther child is dropped and a final stackless depth-first walk (pruned by the hit
/// found) makes up for it, so no depth of tree can make it miss. Visits nodes in the same order
/// as the GPU's walk through the nodes and counts alike the boxes tested (the root's, then two a
/// step; the walk through the compact child pairs, whose boxes are rounded outwards, is
/// [`closest_hit_paired`]).
pub fn closest_hit(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
    fans: &[u32],
) -> RayHit {
    let leaf = |n: u32| {
        let c = nodes[n as usize].child;
        (c & LEAF_BIT != 0).then_some(c & !LEAF_BIT)
    };
    let children = |n: u32| {
        let left = nodes[n as usize].child;
        let right = nodes[left as usize].escape;
        [left, right].map(|c| (c, nodes[c as usize].min, nodes[c as usize].max))
    };
    let tree = Walked { nodes, root: 0, leaf, children };
    walk_closest(&tree, body, positions, triangles, ray, ignore_vertex, fans)
}

/// Twin of `closest_hit` in `shaders/shared/bvh.wgsl` through the compact child pairs, which
/// both tunings keep (`Tuning::child_pairs`; [`child_pairs`](crate::cpu::child_pairs): `pairs`,
/// one per internal node, in `grid`, as
/// [`FrameData::body_child_pairs`](crate::internals::FrameData::body_child_pairs) and
/// [`FrameData::body_pair_grid`](crate::internals::FrameData::body_pair_grid) give them):
/// [`closest_hit`]'s walk, each step's two boxes decoded from the node's pair, which hold
/// the children's boxes rounded outwards to the grid. The same hit as [`closest_hit`] (a box
/// that holds its child's prunes nothing the child's own box would keep); the nodes visited are
/// the kernel's through the pairs, usually a few more than through the nodes (0.2-0.4 % on the
/// ray tests' meshes).
#[allow(clippy::too_many_arguments)]
pub fn closest_hit_paired(
    body: &BodyGpu,
    nodes: &[Node],
    (pairs, grid): (&[Node], PairGrid),
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
    fans: &[u32],
) -> RayHit {
    // The walk's words: an internal node's index, or LEAF_BIT | triangle.
    let leaf = |w: u32| (w & LEAF_BIT != 0).then_some(w & !LEAF_BIT);
    let children = |w: u32| {
        let p = &pairs[w as usize];
        let [(lmin, lmax), (rmin, rmax)] = pair_boxes(&grid, p);
        [(p.child, lmin, lmax), (p.escape, rmin, rmax)]
    };
    let root = if nodes.first().is_some_and(|r| r.child & LEAF_BIT != 0) { nodes[0].child } else { 0 };
    let tree = Walked { nodes, root, leaf, children };
    walk_closest(&tree, body, positions, triangles, ray, ignore_vertex, fans)
}

/// Twin of `closest_hit` in `shaders/shared/bvh.wgsl` on packed body `b` of `frame`: through
/// its compact child pairs where the frame has them (a GPU frame whose tuning keeps them,
/// [`closest_hit_paired`]), else through its nodes ([`closest_hit`]). The same hit either way.
pub fn closest_hit_in(
    frame: &FrameData,
    packing: &Packing,
    b: usize,
    positions: &[Vec3],
    ray: &Ray,
    ignore_vertex: u32,
    fans: &[u32],
) -> RayHit {
    let (body, nodes, tris) = (&packing.bodies[b], frame.body_nodes(packing, b), &packing.triangles);
    match frame.body_pair_grid(packing, b) {
        Some(grid) => {
            let pairs = (frame.body_child_pairs(packing, b), grid);
            closest_hit_paired(body, nodes, pairs, positions, tris, ray, ignore_vertex, fans)
        }
        None => closest_hit(body, nodes, positions, tris, ray, ignore_vertex, fans),
    }
}

/// A tree as [`walk_closest`] walks it: by handles (a node's index, or a child pair's word),
/// from `root`'s; `leaf` gives a handle's triangle when it is a leaf, `children` an internal
/// one's two children (left, right) with their handles and boxes; the nodes themselves for the
/// root's box and the stackless walk. A handle is also the index of the node's fan word.
struct Walked<'a, L, C> {
    nodes: &'a [Node],
    root: u32,
    leaf: L,
    children: C,
}

/// [`closest_hit`]'s walk over `tree` (the kernel's, with its child pairs or without).
fn walk_closest<L, C>(
    tree: &Walked<'_, L, C>,
    body: &BodyGpu,
    positions: &[Vec3],
    triangles: &[u32],
    ray: &Ray,
    ignore_vertex: u32,
    fans: &[u32],
) -> RayHit
where
    L: Fn(u32) -> Option<u32>,
    C: Fn(u32) -> [(u32, Vec3, Vec3); 2],
{
    let mut best = RayHit::MISS;
    let nodes = tree.nodes;
    if nodes.is_empty() {
        return best;
    }
    let axes = ray_axes(ray.dir);
    let inv = safe_inverse(ray.dir);
    let mut tmax = ray.tmax;
    let leaf = Leaf { body, positions, triangles, ray, axes, ignore_vertex };
    let entry = |(n, min, max): (u32, Vec3, Vec3), tmax: f32| {
        if passes_fan(fans, ignore_vertex, n) {
            None
        } else {
            box_entry(ray.origin, ray.dir, inv, ray.tmin, tmax, min, max)
        }
    };
    // The stacked handles, each with where the ray enters its box.
    let mut stack = [(0u32, 0f32); SHORT_STACK as usize];
    let mut sp = 0usize;
    let mut lost = false;
    best.nodes_visited += 1;
    let mut node = if entry((0, nodes[0].min, nodes[0].max), tmax).is_some() { tree.root } else { NONE };
    loop {
        if node == NONE {
            while sp > 0 {
                sp -= 1;
                let (c, at) = stack[sp];
                if at <= tmax {
                    node = c;
                    break;
                }
            }
            if node == NONE {
                break;
            }
        }
        if let Some(tri) = (tree.leaf)(node) {
            leaf.test(tri, &mut best, &mut tmax);
            node = NONE;
            continue;
        }
        let [l, r] = (tree.children)(node);
        best.nodes_visited += 2;
        let (left, right) = (l.0, r.0);
        node = match (entry(l, tmax), entry(r, tmax)) {
            (Some(a), Some(b)) => {
                let (near, far) = if b < a { (right, (left, a)) } else { (left, (right, b)) };
                if sp < stack.len() {
                    stack[sp] = far;
                    sp += 1;
                } else {
                    lost = true;
                }
                near
            }
            (Some(_), None) => left,
            (None, Some(_)) => right,
            (None, None) => NONE,
        };
    }
    if lost {
        stackless_hit(nodes, &leaf, inv, &mut best, &mut tmax, fans);
    }
    best
}

/// Twin of `stackless_hit` in `bvh.wgsl` (the line walk's), and of the part of `closest_hit`'s
/// loop there that walks on through `next_leaf_passing` once the stack walk has ended with
/// entries lost (the same nodes, tests and counts): the walk that makes up for the entries a
/// full short stack dropped, the whole tree once more depth first through the escape links,
/// pruned by the hit found so far (`best`, with `tmax` the ray's bound shrunk to it); flags the
/// hit as a fallback. `inv` is `safe_inverse` of the leaf's ray's direction; the nodes of the
/// ignored vertex's fan are passed as missed ([`passes_fan`], `fans` empty: none).
pub(crate) fn stackless_hit(
    nodes: &[Node],
    leaf: &Leaf<'_>,
    inv: Vec3,
    best: &mut RayHit,
    tmax: &mut f32,
    fans: &[u32],
) {
    let ray = leaf.ray;
    best.fallback = 1;
    let mut node = 0u32;
    while node != NONE {
        let nd = &nodes[node as usize];
        best.nodes_visited += 1;
        if !passes_fan(fans, leaf.ignore_vertex, node)
            && box_entry(ray.origin, ray.dir, inv, ray.tmin, *tmax, nd.min, nd.max).is_some()
        {
            if nd.child & LEAF_BIT != 0 {
                leaf.test(nd.child & !LEAF_BIT, best, tmax);
                node = nd.escape;
            } else {
                node = nd.child;
            }
        } else {
            node = nd.escape;
        }
    }
}

/// Twin of `other_near` in `bvh.wgsl` without its triangle test (`test_triangles` false, as
/// `narrow_phase.wgsl` asks it of another body): whether some leaf box of a body's tree (`nodes`,
/// its used nodes), grown by `r` on every side, holds `p`. Where it does not, no triangle of the
/// body comes within distance `r` of `p`.
pub fn leaf_near(nodes: &[Node], p: Vec3, r: f32) -> bool {
    leaf_near_with(nodes, p, r, |_| true)
}

/// Twin of `other_near` in `bvh.wgsl` with its triangle test: whether some triangle of a body's
/// tree (`nodes`, its used nodes) that does not use packed vertex `ignore` comes within distance
/// `r` of `p` ([`triangle_within`]), walking the leaves whose box, grown by `r`, holds `p`. Where
/// it says no, a self pair's rays from the vertex at `p` find nothing within `r` (the triangles
/// they skip are those of `ignore`).
pub fn other_near(
    body: &BodyGpu,
    nodes: &[Node],
    positions: &[Vec3],
    triangles: &[u32],
    p: Vec3,
    r: f32,
    ignore: u32,
) -> bool {
    leaf_near_with(nodes, p, r, |tri| other_triangle_within(body, positions, triangles, tri, p, r, ignore))
}

/// Whether body-local triangle `tri` of `body` does not use packed vertex `ignore` and comes
/// within distance `r` of `p` ([`triangle_within`]): the test of each leaf [`other_near`] walks
/// to, and of any tracer that asks the same of a tree of its own (the benchmark's parry3d peer).
pub fn other_triangle_within(
    body: &BodyGpu,
    positions: &[Vec3],
    triangles: &[u32],
    tri: u32,
    p: Vec3,
    r: f32,
    ignore: u32,
) -> bool {
    let g = (body.tri_offset + tri) as usize;
    let idx = [triangles[3 * g], triangles[3 * g + 1], triangles[3 * g + 2]];
    !idx.contains(&ignore) && triangle_within(p, r, idx.map(|i| positions[i as usize]))
}

/// Whether some leaf of a body's tree whose box, grown by `r` on every side, holds `p` passes
/// `accept` (given its body-local triangle), depth first through the escape links; stops at the
/// first. The walk of [`leaf_near`] (every leaf passes) and [`other_near`].
fn leaf_near_with(nodes: &[Node], p: Vec3, r: f32, mut accept: impl FnMut(u32) -> bool) -> bool {
    let grow = Vec3::splat(r);
    let mut node = if nodes.is_empty() { NONE } else { 0 };
    while node != NONE {
        let nd = &nodes[node as usize];
        if (nd.min - grow).cmple(p).all() && p.cmple(nd.max + grow).all() {
            if nd.child & LEAF_BIT == 0 {
                node = nd.child;
                continue;
            }
            if accept(nd.child & !LEAF_BIT) {
                return true;
            }
        }
        node = nd.escape;
    }
    false
}

/// Twin of `triangle_within` in `bvh.wgsl`: whether triangle `[a, b, c]` comes within distance
/// `r` of `p`: the squared distance from `p` to the triangle at most `r * r`, computed as the
/// kernel computes it without a branch: `p`'s squared distance to the triangle's plane where `p`
/// projects inside the triangle (on the inner side of each edge), else the least of its squared
/// distances to the three edges. A triangle of zero area (NaN here), which no ray hits either
/// (`intersect_triangle` rejects it), is never within.
pub fn triangle_within(p: Vec3, r: f32, [a, b, c]: [Vec3; 3]) -> bool {
    let n = (b - a).cross(c - a);
    let s = (p - a).dot(n);
    let inside = (b - a).cross(p - a).dot(n) >= 0.0
        && (c - b).cross(p - b).dot(n) >= 0.0
        && (a - c).cross(p - c).dot(n) >= 0.0;
    let edges = edge_distance2(p, a, b).min(edge_distance2(p, b, c).min(edge_distance2(p, c, a)));
    let d2 = if inside { s * s / n.dot(n) } else { edges };
    d2 <= r * r
}

/// Twin of `edge_distance2` in `bvh.wgsl`: the squared distance from `p` to the segment from `a`
/// to `b` (`a != b`).
fn edge_distance2(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let e = b - a;
    let t = ((p - a).dot(e) / e.dot(e)).clamp(0.0, 1.0);
    (a + t * e - p).length_squared()
}
