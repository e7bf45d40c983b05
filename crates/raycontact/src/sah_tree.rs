//! A binned-SAH binary tree over the leaves of a body's LBVH, for the CPU backend's bodies whose
//! trees are kept from frame to frame (a static body: no position changed since its tree was
//! last brought up to date), or refitted until the next rebuild (`BvhUpdate::Refit` and
//! `Auto`); and for the GPU backend's bodies at rest (its scene builds the tree on the host and
//! writes it over the body's LBVH: `scene/rest_trees.rs`). The
//! LBVH splits at Morton-code bits, which is cheap enough to run every frame; a tree made for
//! many frames can afford the top-down surface-area heuristic once, and its rays then enter
//! fewer boxes. Not a twin of any kernel: no kernel builds it.
//!
//! The tree has the LBVH's leaves (one triangle each, the same boxes, so the same set of
//! triangles a traversal can hit) and its layout ([`Node`]: `n - 1` internal nodes in
//! depth-first order from the root at 0, then the `n` leaves left to right; a left child's
//! `escape` is its right sibling). So any walk of the binary layout walks it, and
//! [`crate::wide_bvh::WideTree::collapse`] collapses it. A walk finds the same closest hit in
//! any tree over the same leaves (the lowest triangle index wins a tie in `t`).
//!
//! Build: from the root down, each range of leaves is split where the cost `area(L) |L| +
//! area(R) |R|` is least among [`BINS`] - 1 planes per axis, binned by the leaves' box centres
//! (the usual binned SAH); a range whose centres do not spread, or whose best plane leaves a
//! side empty, is halved by count. A range of at most 8 leaves is split by the exact SAH
//! instead, at the best of every split of its leaves ordered by centre on each axis (so one
//! whose centres do not spread is split too, at its cheapest split; `split_small`): its
//! binning would cost as much as a long range's, and most ranges are short (on the two tori of
//! `cargo bench -p raycontact-benches --bench cpu_bvh -- sah-tree`, 25.6k triangles, 9.5 -> 7.8
//! ms a build). A long range is binned on the three axes in one pass, boxes as SIMD lanes, and
//! the centres of its two parts are bounded while it is partitioned, for their own splits
//! (`split_binned`): two passes over a range where there were five (its box, one binning per
//! axis, the partition). The same tree, node for node and bit for bit (checked against the
//! five-pass build on eight meshes, the armadillo among them, 322k nodes); the bench above went
//! from 5.2 / 5.3 to 3.1 / 3.1 ms, the two builds alternated. Deterministic; the two sides of a
//! split are built in parallel when both are large. It runs once per kept body, and at each
//! rebuild under a policy that refits.

use glam::{Vec3, Vec3A};

use crate::layout::{LEAF_BIT, NONE, Node, TriBox};

/// Planes tried per axis are `BINS - 1`.
pub const BINS: usize = 16;

/// A leaf of the tree being built: its box (SIMD lanes) and triangle (body-local).
#[derive(Clone, Copy, Debug)]
struct Leaf {
    min: Vec3A,
    max: Vec3A,
    triangle: u32,
}

impl Leaf {
    /// No leaf (a place no leaf took).
    const NONE: Leaf = Leaf { min: Vec3A::ZERO, max: Vec3A::ZERO, triangle: NONE };

    /// The centre of the leaf's box, by which it is binned and ordered.
    #[inline]
    fn centre(&self) -> Vec3A {
        0.5 * (self.min + self.max)
    }

    /// The leaf as a node of the tree, its escape `escape`.
    fn node(&self, escape: u32) -> Node {
        Node { min: self.min.into(), max: self.max.into(), child: LEAF_BIT | self.triangle, escape }
    }
}

/// A box grown by boxes; empty until the first.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    min: Vec3A,
    max: Vec3A,
}

impl Bounds {
    const EMPTY: Bounds = Bounds { min: Vec3A::INFINITY, max: Vec3A::NEG_INFINITY };

    #[inline]
    fn grow(&mut self, min: Vec3A, max: Vec3A) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
    }

    /// Half the surface area (0 for an empty box).
    fn half_area(&self) -> f32 {
        half_area(self.min.into(), self.max.into())
    }

    /// The bounds of the centres of `leaves`.
    fn of_centres(leaves: &[Leaf]) -> Bounds {
        let mut b = Bounds::EMPTY;
        for l in leaves {
            let c = l.centre();
            b.grow(c, c);
        }
        b
    }
}

/// Half the surface area of the box (`min`, `max`), 0 when empty (only compared: the SAH here,
/// the choice of the child to open in [`crate::wide_bvh::WideTree::collapse`], and a refitted
/// wide tree's cost against its collapse's, `crate::wide_refit`).
pub fn half_area(min: Vec3, max: Vec3) -> f32 {
    let d = (max - min).max(Vec3::ZERO);
    d.x * d.y + d.y * d.z + d.z * d.x
}

/// Ranges of at least this many leaves on both sides of a split build their two subtrees in
/// parallel (`rayon::join`); smaller ones are built in one loop.
const PARALLEL_LEAVES: usize = 4096;

/// Builds into `out` (cleared) a binned-SAH tree over the leaves of `lbvh`, a body's used binary
/// nodes with `leaves` leaves in the packed layout (internal nodes first, then the leaves).
/// Leaves `out` empty when `leaves` is 0. The tree depends on the leaves alone (their boxes and
/// triangles), not on their order in `lbvh`: they are taken in triangle order
/// ([`sah_tree_of_boxes`] builds the same tree from the triangles' boxes).
pub fn sah_tree(lbvh: &[Node], leaves: u32, out: &mut Vec<Node>) {
    let n = leaves as usize;
    let internal = n.saturating_sub(1);
    sah_tree_of_leaves(&lbvh[internal..internal + n], out);
}

/// [`sah_tree`] from the LBVH's leaves alone (its last `leaves` used nodes), in any order.
pub(crate) fn sah_tree_of_leaves(lbvh_leaves: &[Node], out: &mut Vec<Node>) {
    // Each leaf at its triangle's place (the leaves' triangles are distinct), then the places
    // of the triangles that are no leaf (degenerate ones) dropped.
    let places = lbvh_leaves.iter().map(|l| (l.child & !LEAF_BIT) as usize + 1).max().unwrap_or(0);
    let mut items = vec![Leaf::NONE; places];
    for l in lbvh_leaves {
        let triangle = l.child & !LEAF_BIT;
        items[triangle as usize] = Leaf { min: l.min.into(), max: l.max.into(), triangle };
    }
    items.retain(|l| l.triangle != NONE);
    build_tree(items, out);
}

/// Builds into `out` (cleared) the binned-SAH tree of [`sah_tree`] over a body's triangles of
/// `boxes` (body-local, in triangle order) that are not degenerate (`flags & 1 == 0`): the
/// leaves of the body's LBVH, whose boxes are their triangles' (`fit`), so the tree that
/// [`sah_tree`] builds from that LBVH. How the GPU backend makes the tree of a body at rest
/// without its LBVH on the host.
pub fn sah_tree_of_boxes(boxes: &[TriBox], out: &mut Vec<Node>) {
    let leaf = |(t, b): (usize, &TriBox)| Leaf { min: b.min.into(), max: b.max.into(), triangle: t as u32 };
    let items = boxes.iter().enumerate().filter(|(_, b)| b.flags & 1 == 0).map(leaf).collect();
    build_tree(items, out);
}

/// Writes into `parents` (cleared) the parent of each node of binary tree `nodes` (body-local
/// indices, [`NONE`] for the root), as `hierarchy` writes them: what `fit` climbs by.
pub fn tree_parents(nodes: &[Node], parents: &mut Vec<u32>) {
    parents.clear();
    parents.resize(nodes.len(), NONE);
    let internal = nodes.len() / 2;
    for (p, node) in nodes[..internal].iter().enumerate() {
        let left = node.child as usize;
        parents[left] = p as u32;
        parents[nodes[left].escape as usize] = p as u32;
    }
}

/// The tree over `items` (in the order that fixes it) into `out`.
fn build_tree(mut items: Vec<Leaf>, out: &mut Vec<Node>) {
    out.clear();
    let n = items.len();
    if n == 0 {
        return;
    }
    let internal = n - 1;
    let centres = Bounds::of_centres(&items);
    out.resize(2 * n - 1, Node::default());
    let (inner, outer) = out.split_at_mut(internal);
    build(&mut items, Part { inner, outer, at: 0, leaf_at: internal as u32 }, NONE, centres);
}

/// Where a subtree over a range of `k` leaves goes: its `k - 1` internal nodes (`inner`, the
/// subtree's root first, node index `at`) and its `k` leaves (`outer`, node index `leaf_at`
/// onwards). The left subtree of a split after `s` leaves takes `inner[1..s]` and
/// `outer[..s]`, the right one `inner[s..]` and `outer[s..]`: depth-first order.
struct Part<'a> {
    inner: &'a mut [Node],
    outer: &'a mut [Node],
    at: u32,
    leaf_at: u32,
}

/// The node index of the root of a subtree of `k` leaves whose internal nodes start at `at` and
/// leaves at `leaf_at`.
fn root(k: usize, at: u32, leaf_at: u32) -> u32 {
    if k == 1 { leaf_at } else { at }
}

/// Builds the subtree over `items` (as many as `part.outer`, their centres within `centres`)
/// into `part`, its root's escape `escape`: the two halves of a split in parallel when both are
/// large, else in one loop.
fn build(items: &mut [Leaf], part: Part<'_>, escape: u32, centres: Bounds) {
    let k = items.len();
    if k == 1 {
        part.outer[0] = items[0].node(escape);
        return;
    }
    let cut = split(items, centres);
    let split = cut.at;
    if split < PARALLEL_LEAVES || k - split < PARALLEL_LEAVES {
        return build_serial(items, part, escape, cut);
    }
    let Part { inner, outer, at, leaf_at } = part;
    let left = root(split, at + 1, leaf_at);
    let right = root(k - split, at + split as u32, leaf_at + split as u32);
    let (node, inner) = inner.split_first_mut().expect("a range of two leaves or more has a root");
    *node = Node { min: cut.bounds.min.into(), max: cut.bounds.max.into(), child: left, escape };
    let (inner_l, inner_r) = inner.split_at_mut(split - 1);
    let (outer_l, outer_r) = outer.split_at_mut(split);
    let (items_l, items_r) = items.split_at_mut(split);
    rayon::join(
        || build(items_l, Part { inner: inner_l, outer: outer_l, at: at + 1, leaf_at }, right, cut.left),
        || {
            let part = Part {
                inner: inner_r,
                outer: outer_r,
                at: at + split as u32,
                leaf_at: leaf_at + split as u32,
            };
            build(items_r, part, escape, cut.right)
        },
    );
}

/// A range of leaves still to place, relative to the part being built: `items[start..end]`
/// (their centres within `centres`) becomes internal node `at` of the part (relative) when it
/// holds two leaves or more.
struct Task {
    start: usize,
    end: usize,
    at: usize,
    escape: u32,
    centres: Bounds,
}

/// [`build`] in one loop, the root's range already split by `first`.
fn build_serial(items: &mut [Leaf], part: Part<'_>, escape: u32, first: Split) {
    let Part { inner, outer, at: at0, leaf_at } = part;
    // Node index of a relative internal node or leaf.
    let index =
        |start: usize, end: usize, at: usize| root(end - start, at0 + at as u32, leaf_at + start as u32);
    let mut tasks = Vec::with_capacity(64);
    let mut first = Some(first);
    tasks.push(Task { start: 0, end: items.len(), at: 0, escape, centres: Bounds::EMPTY });
    while let Some(Task { start, end, at, escape, centres }) = tasks.pop() {
        if end - start == 1 {
            outer[start] = items[start].node(escape);
            continue;
        }
        let cut = match first.take() {
            Some(done) => done,
            None => split(&mut items[start..end], centres),
        };
        let mid = start + cut.at;
        // The left child right after this node, the right one after the left subtree's
        // `cut.at - 1` internal nodes.
        let left = index(start, mid, at + 1);
        let right = index(mid, end, at + cut.at);
        let bounds = cut.bounds;
        inner[at] = Node { min: bounds.min.into(), max: bounds.max.into(), child: left, escape };
        tasks.push(Task { start: mid, end, at: at + cut.at, escape, centres: cut.right });
        tasks.push(Task { start, end: mid, at: at + 1, escape: right, centres: cut.left });
    }
}

/// Ranges of at most this many leaves are split by [`split_small`].
const SMALL: usize = 8;

/// How a range of leaves was split: its box, the length of its left part (the range reordered
/// into the two parts), and the bounds of each part's centres (left empty where the parts are
/// small enough that [`split_small`] splits them, which does not read them).
struct Split {
    bounds: Bounds,
    at: usize,
    left: Bounds,
    right: Bounds,
}

/// Splits `range` (two leaves or more, their centres within `centres`): by [`split_small`] when
/// it holds at most [`SMALL`] leaves, else by the binned SAH ([`split_binned`]).
fn split(range: &mut [Leaf], centres: Bounds) -> Split {
    if range.len() <= SMALL {
        let (bounds, at) = split_small(range);
        return Split { bounds, at, left: Bounds::EMPTY, right: Bounds::EMPTY };
    }
    split_binned(range, centres)
}

/// [`split`] of a range of two to [`SMALL`] leaves by the exact SAH: on each axis the leaves
/// ordered by their centres (ties kept in range order), every split between two of them tried,
/// and the range reordered by the axis and split of least cost `area(L) |L| + area(R) |R|` (the
/// first axis, then the first split, of equal ones). A range's binning costs the same whatever
/// its length (three axes of [`BINS`] bins set up and swept), which is most of the build where
/// the ranges are short, and that is most ranges.
fn split_small(range: &mut [Leaf]) -> (Bounds, usize) {
    let k = range.len();
    let mut bounds = Bounds::EMPTY;
    let mut centres = [Vec3A::ZERO; SMALL];
    for (l, c) in range.iter().zip(&mut centres) {
        bounds.grow(l.min, l.max);
        *c = l.centre();
    }
    // (cost, axis, split, order): the range's leaves on `axis` in `order`, the first `split` left.
    let mut best: Option<(f32, usize, usize, [u8; SMALL])> = None;
    for axis in 0..3 {
        let key = centres.map(|c| c[axis]);
        let mut order = [0u8; SMALL];
        for i in 0..k {
            // Insertion: stable, so equal centres keep the range's order.
            let c = key[i];
            let mut j = i;
            while j > 0 && key[order[j - 1] as usize] > c {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = i as u8;
        }
        let mut right = [0.0f32; SMALL];
        let mut acc = Bounds::EMPTY;
        for s in (1..k).rev() {
            let l = &range[order[s] as usize];
            acc.grow(l.min, l.max);
            right[s] = acc.half_area() * (k - s) as f32;
        }
        let mut acc = Bounds::EMPTY;
        for s in 1..k {
            let l = &range[order[s - 1] as usize];
            acc.grow(l.min, l.max);
            let cost = acc.half_area() * s as f32 + right[s];
            if best.is_none_or(|(c, ..)| cost < c) {
                best = Some((cost, axis, s, order));
            }
        }
    }
    let Some((_, _, s, order)) = best else {
        // NaN costs everywhere: halved by count.
        return (bounds, k / 2);
    };
    let mut sorted = [range[0]; SMALL];
    for (i, &o) in order[..k].iter().enumerate() {
        sorted[i] = range[o as usize];
    }
    range.copy_from_slice(&sorted[..k]);
    (bounds, s)
}

/// The bin of a centre coordinate `c` on an axis whose centres start at `min` and span
/// `BINS / scale`.
#[inline]
fn bin(c: f32, min: f32, scale: f32) -> usize {
    // As `min(f as usize, BINS - 1)` (NaN to 0), clamped as a float first.
    ((c - min) * scale).clamp(0.0, (BINS - 1) as f32) as i32 as usize
}

/// [`split`] of a range of more than [`SMALL`] leaves (their centres within `centres`) by the
/// binned SAH: one pass bins every leaf on the three axes at once (boxes as SIMD lanes), the
/// bins give the range's box and the costs of the planes, and a second pass reorders the range
/// into the two parts of the best plane and bounds each part's centres for the next split. A
/// range whose centres do not spread, or whose costs are all NaN, is halved by count.
fn split_binned(range: &mut [Leaf], centres: Bounds) -> Split {
    let extent = centres.max - centres.min;
    // Per lane the scalar `BINS / extent` (an axis that does not spread is never chosen).
    let scale = Vec3A::splat(BINS as f32) / extent;
    let mut boxes = [[Bounds::EMPTY; BINS]; 3];
    let mut counts = [[0usize; BINS]; 3];
    // `min(f as usize, BINS - 1)` per lane (NaN to 0), clamped as floats first so that the
    // conversion has no range to check.
    let last = Vec3A::splat((BINS - 1) as f32);
    for l in range.iter() {
        let f = ((l.centre() - centres.min) * scale).max(Vec3A::ZERO).min(last);
        for axis in 0..3 {
            let b = f[axis] as i32 as usize;
            boxes[axis][b].grow(l.min, l.max);
            counts[axis][b] += 1;
        }
    }
    // Every leaf is in one bin of each axis: the range's box is the union of an axis's bins.
    let mut bounds = Bounds::EMPTY;
    for b in &boxes[0] {
        bounds.grow(b.min, b.max);
    }
    // (cost, axis, plane): the leaves of bins 0..=plane go left.
    let mut best: Option<(f32, usize, usize)> = None;
    for axis in 0..3 {
        // Centres that do not spread on this axis (or a NaN extent): no plane.
        if extent[axis].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            continue;
        }
        let (boxes, counts) = (&boxes[axis], &counts[axis]);
        // Right-hand areas and counts of the planes, swept from the right.
        let mut right_area = [0.0f32; BINS];
        let (mut acc, mut count) = (Bounds::EMPTY, 0);
        for p in (1..BINS).rev() {
            acc.grow(boxes[p].min, boxes[p].max);
            count += counts[p];
            right_area[p - 1] = acc.half_area() * count as f32;
        }
        let (mut acc, mut count) = (Bounds::EMPTY, 0);
        for p in 0..BINS - 1 {
            acc.grow(boxes[p].min, boxes[p].max);
            count += counts[p];
            if count == 0 || count == range.len() {
                continue;
            }
            let cost = acc.half_area() * count as f32 + right_area[p];
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, axis, p));
            }
        }
    }
    let Some((_, axis, plane)) = best else {
        let at = range.len() / 2;
        let (left, right) = range.split_at(at);
        return Split { bounds, at, left: Bounds::of_centres(left), right: Bounds::of_centres(right) };
    };
    let (min, scale) = (centres.min[axis], scale[axis]);
    let (mut left, mut right) = (Bounds::EMPTY, Bounds::EMPTY);
    let mut at = 0;
    for i in 0..range.len() {
        let c = range[i].centre();
        if bin(c[axis], min, scale) <= plane {
            range.swap(i, at);
            at += 1;
            left.grow(c, c);
        } else {
            right.grow(c, c);
        }
    }
    Split { bounds, at, left, right }
}
