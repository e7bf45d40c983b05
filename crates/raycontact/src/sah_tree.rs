//! A binned-SAH binary tree over the leaves of a body's LBVH, for the CPU backend's bodies whose
//! trees are kept from frame to frame (a static body: no position changed since its tree was
//! last brought up to date), or refitted until the next rebuild (`BvhUpdate::Refit` and
//! `Auto`). The LBVH splits at Morton-code bits, which is cheap enough to run every frame; a
//! tree made for many frames can afford the top-down surface-area heuristic once, and its rays
//! then enter fewer boxes. Not a twin of any kernel: the GPU keeps walking its LBVH.
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
//! ms a build). Deterministic; the two sides of a split are built in parallel when both are
//! large. It runs once per kept body, and at each rebuild under a policy that refits.

use glam::Vec3;

use crate::layout::{LEAF_BIT, NONE, Node};

/// Planes tried per axis are `BINS - 1`.
pub const BINS: usize = 16;

/// A leaf of the tree being built: its box, centre and triangle (body-local).
#[derive(Clone, Copy, Debug)]
struct Leaf {
    min: Vec3,
    max: Vec3,
    centre: Vec3,
    triangle: u32,
}

/// A box grown by boxes; empty until the first.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    min: Vec3,
    max: Vec3,
}

impl Bounds {
    const EMPTY: Bounds = Bounds { min: Vec3::INFINITY, max: Vec3::NEG_INFINITY };

    fn grow(&mut self, min: Vec3, max: Vec3) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
    }

    /// Half the surface area (0 for an empty box).
    fn half_area(&self) -> f32 {
        half_area(self.min, self.max)
    }
}

/// Half the surface area of the box (`min`, `max`), 0 when empty (only compared: the SAH here,
/// and the choice of the child to open in [`crate::wide_bvh::WideTree::collapse`]).
pub fn half_area(min: Vec3, max: Vec3) -> f32 {
    let d = (max - min).max(Vec3::ZERO);
    d.x * d.y + d.y * d.z + d.z * d.x
}

/// Ranges of at least this many leaves on both sides of a split build their two subtrees in
/// parallel (`rayon::join`); smaller ones are built in one loop.
const PARALLEL_LEAVES: usize = 4096;

/// Builds into `out` (cleared) a binned-SAH tree over the leaves of `lbvh`, a body's used binary
/// nodes with `leaves` leaves in the packed layout (internal nodes first, then the leaves).
/// Leaves `out` empty when `leaves` is 0.
pub fn sah_tree(lbvh: &[Node], leaves: u32, out: &mut Vec<Node>) {
    out.clear();
    let n = leaves as usize;
    if n == 0 {
        return;
    }
    let internal = n - 1;
    let mut items: Vec<Leaf> = lbvh[internal..internal + n]
        .iter()
        .map(|l| Leaf {
            min: l.min,
            max: l.max,
            centre: 0.5 * (l.min + l.max),
            triangle: l.child & !LEAF_BIT,
        })
        .collect();
    out.resize(2 * n - 1, Node::default());
    let (inner, outer) = out.split_at_mut(internal);
    build(&mut items, Part { inner, outer, at: 0, leaf_at: internal as u32 }, NONE);
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

/// Builds the subtree over `items` (as many as `part.outer`) into `part`, its root's escape
/// `escape`: the two halves of a split in parallel when both are large, else in one loop.
fn build(items: &mut [Leaf], part: Part<'_>, escape: u32) {
    let k = items.len();
    if k == 1 {
        let l = &items[0];
        part.outer[0] = Node { min: l.min, max: l.max, child: LEAF_BIT | l.triangle, escape };
        return;
    }
    let (bounds, split) = split(items);
    if split < PARALLEL_LEAVES || k - split < PARALLEL_LEAVES {
        return build_serial(items, part, escape, bounds, split);
    }
    let Part { inner, outer, at, leaf_at } = part;
    let left = root(split, at + 1, leaf_at);
    let right = root(k - split, at + split as u32, leaf_at + split as u32);
    let (node, inner) = inner.split_first_mut().expect("a range of two leaves or more has a root");
    *node = Node { min: bounds.min, max: bounds.max, child: left, escape };
    let (inner_l, inner_r) = inner.split_at_mut(split - 1);
    let (outer_l, outer_r) = outer.split_at_mut(split);
    let (items_l, items_r) = items.split_at_mut(split);
    rayon::join(
        || build(items_l, Part { inner: inner_l, outer: outer_l, at: at + 1, leaf_at }, right),
        || {
            let part = Part {
                inner: inner_r,
                outer: outer_r,
                at: at + split as u32,
                leaf_at: leaf_at + split as u32,
            };
            build(items_r, part, escape)
        },
    );
}

/// A range of leaves still to place, relative to the part being built: `items[start..end]`
/// becomes internal node `at` of the part (relative) when it holds two leaves or more.
struct Task {
    start: usize,
    end: usize,
    at: usize,
    escape: u32,
}

/// [`build`] in one loop, the root's range already split after `first_split` leaves (its box
/// `bounds`).
fn build_serial(items: &mut [Leaf], part: Part<'_>, escape: u32, bounds: Bounds, first_split: usize) {
    let Part { inner, outer, at: at0, leaf_at } = part;
    // Node index of a relative internal node or leaf.
    let index =
        |start: usize, end: usize, at: usize| root(end - start, at0 + at as u32, leaf_at + start as u32);
    let mut tasks = Vec::with_capacity(64);
    let mut first = Some((bounds, first_split));
    tasks.push(Task { start: 0, end: items.len(), at: 0, escape });
    while let Some(Task { start, end, at, escape }) = tasks.pop() {
        if end - start == 1 {
            let l = &items[start];
            outer[start] = Node { min: l.min, max: l.max, child: LEAF_BIT | l.triangle, escape };
            continue;
        }
        let (bounds, s) = match first.take() {
            Some(done) => done,
            None => split(&mut items[start..end]),
        };
        let mid = start + s;
        // The left child right after this node, the right one after the left subtree's
        // `s - 1` internal nodes.
        let left = index(start, mid, at + 1);
        let right = index(mid, end, at + s);
        inner[at] = Node { min: bounds.min, max: bounds.max, child: left, escape };
        tasks.push(Task { start: mid, end, at: at + s, escape });
        tasks.push(Task { start, end: mid, at: at + 1, escape: right });
    }
}

/// Ranges of at most this many leaves are split by [`split_small`].
const SMALL: usize = 8;

/// The box of `range` (two leaves or more), and the length of its left part once reordered by
/// [`partition`] ([`split_small`] for a range of at most [`SMALL`] leaves).
fn split(range: &mut [Leaf]) -> (Bounds, usize) {
    if range.len() <= SMALL {
        return split_small(range);
    }
    let mut bounds = Bounds::EMPTY;
    let mut centres = Bounds::EMPTY;
    for l in range.iter() {
        bounds.grow(l.min, l.max);
        centres.grow(l.centre, l.centre);
    }
    (bounds, partition(range, centres))
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
    for l in range.iter() {
        bounds.grow(l.min, l.max);
    }
    // (cost, axis, split, order): the range's leaves on `axis` in `order`, the first `split` left.
    let mut best: Option<(f32, usize, usize, [u8; SMALL])> = None;
    for axis in 0..3 {
        let mut order = [0u8; SMALL];
        for i in 0..k {
            // Insertion: stable, so equal centres keep the range's order.
            let c = range[i].centre[axis];
            let mut j = i;
            while j > 0 && range[order[j - 1] as usize].centre[axis] > c {
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

/// The bin of a leaf on `axis`, whose centres start at `min` and span `BINS / scale`.
fn bin(l: &Leaf, axis: usize, min: f32, scale: f32) -> usize {
    (((l.centre[axis] - min) * scale) as usize).min(BINS - 1)
}

/// Reorders `range` (two leaves or more, their centres within `centres`) into a left and a
/// right part by the binned SAH, and returns the left part's length (1 to `range.len() - 1`).
fn partition(range: &mut [Leaf], centres: Bounds) -> usize {
    let extent = centres.max - centres.min;
    // (cost, axis, plane): the leaves of bins 0..=plane go left.
    let mut best: Option<(f32, usize, usize)> = None;
    for axis in 0..3 {
        // Centres that do not spread on this axis (or a NaN extent): no plane.
        if extent[axis].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            continue;
        }
        let scale = BINS as f32 / extent[axis];
        let mut boxes = [Bounds::EMPTY; BINS];
        let mut counts = [0usize; BINS];
        for l in range.iter() {
            let b = bin(l, axis, centres.min[axis], scale);
            boxes[b].grow(l.min, l.max);
            counts[b] += 1;
        }
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
        return range.len() / 2;
    };
    let scale = BINS as f32 / extent[axis];
    let mut left = 0;
    for i in 0..range.len() {
        if bin(&range[i], axis, centres.min[axis], scale) <= plane {
            range.swap(i, left);
            left += 1;
        }
    }
    left
}
