//! The CPU backend's build of every body's binary BVH from its sorted keys, in one pass: the
//! Karras radix tree built from the root down near the root (each node's split found by a
//! binary search over its range's keys, its two subtrees built in parallel, each node's links
//! and parent written on the way down and its box on the way back up), and each subtree of
//! fewer than `PARALLEL_LEAVES` leaves bottom-up in leaf order (`Body::linear`: each leaf
//! climbs while it closes a node, with a stack of the left children waiting for their
//! siblings, and no search). The result is, node for node and bit for bit, what the kernels'
//! twins give, [`cpu::hierarchy`](crate::cpu::hierarchy) then [`cpu::fit`](crate::cpu::fit):
//! the radix tree of a sorted key sequence (ties broken by index) is unique, the links and
//! parents follow from it, and each box is the same minimum and maximum of its children's
//! boxes taken in the same order. The twins find each internal node's range and split from
//! the node alone (one invocation per node, as the GPU must), collect the child links to write
//! the parents in a second pass, and walk the tree a second time for the boxes; here each range
//! and split is known from the parent's near the root and from the leaves' order below, each
//! node is written once, and a large range's two subtrees are built in parallel.
//! `tests/tests/twins/tree_build.rs` checks the equality.
//! [`build_trees_then`] hands each body's tree, as soon as it is built, to the caller's next
//! step in the same task (the CPU backend collapses it into its wide tree there, reading the
//! nodes it just wrote from the core's cache instead of from memory once every body is built).
//!
//! Boxes travel up the recursion as `Vec3A` (16 bytes, one aligned store and load) rather than
//! `Vec3`: a returned `Vec3` pair is stored in 12-byte pieces and read back in 16-byte ones, a
//! load that must wait for the stores to reach the cache. With that and a split search without
//! a branch, `cargo bench -p raycontact-benches --bench cpu_bvh -- update-rebuild` (a rebuild
//! frame's normals and trees, 25.6k triangles on one thread) went from 2.00–2.10 to 1.91–1.92 ms.
//! Below `PARALLEL_LEAVES` that search was a chain of dependent loads at every node, about a
//! third of the build's samples; without it (`Body::linear`) the same bench, both bodies moved
//! every iteration, 2.09–2.23 -> 1.97–2.05 ms, and `raycontact-bench --cpu --no-parry
//! --implementations cpu-1`'s hierarchy stage (3 runs alternated, the wide collapse included):
//! `mesh-scaling` 641k 46.5–47.9 -> 41.5–41.9 ms, the armadillo pair 5.34–5.76 -> 4.08–4.19,
//! `tori-scaling` 64 6.44–6.88 -> 5.71–6.62; each split's common prefix computed once (and
//! carried on the stack with its left child) then took 641k to 38.7–39.5 ms (41.0–41.3 before)
//! and the bench to 1.93–2.00 ms (2.07–2.15).
//!
//! The node layout (Karras 2012): the internal node of range `[f, l]` is node `f` when it is a
//! right child or the root, node `l` when it is a left child; leaf `j` is node `n - 1 + j`; a
//! node's escape is its right sibling (a left child) or its parent's escape (a right child).

use glam::Vec3A;
use rayon::prelude::*;

use crate::frame::body_trees;
use crate::layout::{BodyGpu, BodyState, LEAF_BIT, NONE, Node, TriBox};
use crate::packing::{Packing, has_moved};

/// Ranges of at least this many leaves build their two subtrees in parallel (a join costs more
/// than building a few thousand nodes); smaller ones are built bottom-up (`Body::linear`).
const PARALLEL_LEAVES: usize = 8192;

/// How many leaves ahead a leaf's triangle box is asked for.
const LEAF_AHEAD: usize = 16;

/// Builds the binary tree of every packed body (`nodes` and `parents` in the packed layout):
/// links, parents and boxes, from the body's sorted `keys` and `values` (global triangles) and
/// the triangles' boxes. Equal to [`cpu::hierarchy`](crate::cpu::hierarchy) followed by
/// [`cpu::fit`](crate::cpu::fit). Only the bodies that `moved` marks (`has_moved`: an empty
/// `moved` is every body).
#[allow(clippy::too_many_arguments)]
pub fn build_trees(
    packing: &Packing,
    body_state: &[BodyState],
    keys: &[u32],
    values: &[u32],
    tri_boxes: &[TriBox],
    nodes: &mut [Node],
    parents: &mut [u32],
    moved: &[bool],
) {
    let mut none = vec![(); packing.bodies.len()];
    build_trees_then(
        packing,
        body_state,
        keys,
        values,
        tri_boxes,
        nodes,
        parents,
        moved,
        &[],
        &mut none,
        |_, _, _| {},
    );
}

/// [`build_trees`], with `then(b, tree, extra)` called for every packed body `b` (whether
/// `moved` marks it or not) once its tree is built: its used nodes (body-local) and its item of
/// `extra` (one per body: a `Vec<()>` of them for none). Each body's build and `then` run in the
/// same task, one after the other, so `then` reads a tree that is still in the core's cache.
/// The bodies that `skip` marks (empty: none) are not built: `then` gets their nodes as they
/// were (the CPU backend builds their wide trees from the keys instead, `crate::wide_direct`).
#[allow(clippy::too_many_arguments)]
pub fn build_trees_then<T: Send>(
    packing: &Packing,
    body_state: &[BodyState],
    keys: &[u32],
    values: &[u32],
    tri_boxes: &[TriBox],
    nodes: &mut [Node],
    parents: &mut [u32],
    moved: &[bool],
    skip: &[bool],
    extra: &mut [T],
    then: impl Fn(usize, &mut [Node], &mut T) + Sync,
) {
    assert_eq!(extra.len(), packing.bodies.len(), "an item of `extra` per body");
    let trees = body_trees(packing, body_state, nodes, parents);
    let bodies = packing.bodies.par_iter().zip(body_state).zip(trees).zip(extra).enumerate();
    bodies.for_each(|(b, (((body, state), (tree, up)), x))| {
        if has_moved(moved, b) && skip.get(b) != Some(&true) {
            build_body(body, state.leaf_count, keys, values, tri_boxes, tree, up);
        }
        then(b, tree, x);
    });
}

/// The tree of one packed body of `leaf_count` leaves (its used nodes `tree` and their
/// `parents`, body-local), from its sorted keys and values among the packed `keys` and `values`.
fn build_body(
    body: &BodyGpu,
    leaf_count: u32,
    keys: &[u32],
    values: &[u32],
    tri_boxes: &[TriBox],
    tree: &mut [Node],
    up: &mut [u32],
) {
    let n = leaf_count as usize;
    if n == 0 {
        return;
    }
    let range = body.tri_offset as usize..body.tri_offset as usize + n;
    let body_tree =
        Body { keys: &keys[range.clone()], values: &values[range], tri_boxes, tri_offset: body.tri_offset };
    let (inner, leaves) = tree.split_at_mut(n - 1);
    let (inner_up, leaves_up) = up.split_at_mut(n - 1);
    let window = Window { base: 0, inner, inner_up, leaves, leaves_up };
    let root = Place { escape: NONE, parent: NONE };
    if n == 1 {
        body_tree.leaf(window, 0, root);
    } else {
        body_tree.subtree(window, 0, n - 1, 0, root);
    }
}

/// One body's sorted keys (its leaves only), their triangles and the triangles' boxes.
struct Body<'a> {
    /// The sorted keys of the body's leaves.
    keys: &'a [u32],
    /// Per leaf, its global triangle.
    values: &'a [u32],
    /// Every packed triangle's box.
    tri_boxes: &'a [TriBox],
    /// The body's first packed triangle.
    tri_offset: u32,
}

/// The part of a tree's arrays that a subtree writes: the internal nodes (and their parents)
/// from node `base`, the leaves (and theirs) from leaf `base`. The internal nodes of the subtree
/// of range `[f, l]` are nodes within `[f, l]`, so two sibling subtrees write disjoint windows.
struct Window<'a> {
    /// First internal node and first leaf of the window.
    base: usize,
    /// Internal nodes `base..`.
    inner: &'a mut [Node],
    /// Their parents.
    inner_up: &'a mut [u32],
    /// Leaves `base..`.
    leaves: &'a mut [Node],
    /// Their parents.
    leaves_up: &'a mut [u32],
}

impl Window<'_> {
    /// Sets the parent of node `node` (a leaf from `n - 1` on, `n` the body's leaves).
    #[inline]
    fn set_parent(&mut self, n: usize, node: usize, parent: u32) {
        if node >= n - 1 {
            self.leaves_up[node - (n - 1) - self.base] = parent;
        } else {
            self.inner_up[node - self.base] = parent;
        }
    }

    /// The windows of the left subtree (nodes and leaves before `at`) and of the right one,
    /// borrowed from this one.
    fn split(&mut self, at: usize) -> (Window<'_>, Window<'_>) {
        let k = at - self.base;
        let (inner_l, inner_r) = self.inner.split_at_mut(k.min(self.inner.len()));
        let (inner_up_l, inner_up_r) = self.inner_up.split_at_mut(k.min(self.inner_up.len()));
        let (leaves_l, leaves_r) = self.leaves.split_at_mut(k);
        let (leaves_up_l, leaves_up_r) = self.leaves_up.split_at_mut(k);
        (
            Window {
                base: self.base,
                inner: inner_l,
                inner_up: inner_up_l,
                leaves: leaves_l,
                leaves_up: leaves_up_l,
            },
            Window {
                base: at,
                inner: inner_r,
                inner_up: inner_up_r,
                leaves: leaves_r,
                leaves_up: leaves_up_r,
            },
        )
    }
}

/// Where a subtree hangs: the node after it in depth-first order and its parent.
#[derive(Clone, Copy)]
struct Place {
    escape: u32,
    parent: u32,
}

/// Common prefix length of sorted keys `i` and `j` of one body, ties broken by index (as the
/// twin's `delta`).
#[inline]
pub(crate) fn delta(keys: &[u32], i: usize, j: usize) -> u32 {
    let (a, b) = (keys[i], keys[j]);
    if a == b { 32 + (i as u32 ^ j as u32).leading_zeros() } else { (a ^ b).leading_zeros() }
}

/// The last leaf of the left child of range `[f, l]` (`f < l`) of one body's sorted `keys`:
/// the largest `g < l` whose key shares more leading bits with key `f` than key `l` does (that
/// prefix only shrinks as `g` grows, since the keys are sorted).
///
/// With the ties broken by index, the keys are the 64-bit `key << 32 | index`, strictly
/// increasing: all those of `[f, l]` share key `f`'s first `d = delta(f, l)` bits, so key
/// `g` shares more than `d` with key `f` exactly when its bit `63 - d` is key `f`'s, 0. The
/// search tests that bit, without a branch.
#[inline]
pub(crate) fn split(keys: &[u32], f: usize, l: usize) -> usize {
    let bit = 63 - delta(keys, f, l);
    // Bit `bit` of key `base` is 0 and of key `base + n` is 1 throughout.
    let (mut base, mut n) = (f, l - f);
    while n > 1 {
        let half = n / 2;
        let mid = base + half;
        let key = u64::from(keys[mid]) << 32 | mid as u64;
        // `base + half` when the bit is 0: a mask, not a branch that mispredicts half the time.
        base += half * (1 - (key >> bit & 1) as usize);
        n -= half;
    }
    base
}

impl Body<'_> {
    /// [`delta`] of this body's keys.
    #[inline]
    fn delta(&self, i: usize, j: usize) -> u32 {
        delta(self.keys, i, j)
    }

    /// [`split`] of this body's keys.
    fn split(&self, f: usize, l: usize) -> usize {
        split(self.keys, f, l)
    }

    /// A leaf's node: its triangle (body-local) and box; the box returned.
    fn leaf(&self, w: Window, j: usize, at: Place) -> (Vec3A, Vec3A) {
        // The leaves come in order: ask for the box of the one LEAF_AHEAD later.
        if let Some(&ahead) = self.values.get(j + LEAF_AHEAD) {
            crate::prefetch::prefetch(self.tri_boxes, ahead as usize);
        }
        let t = self.values[j];
        let b = self.tri_boxes[t as usize];
        w.leaves[j - w.base] =
            Node { min: b.min, child: LEAF_BIT | (t - self.tri_offset), max: b.max, escape: at.escape };
        w.leaves_up[j - w.base] = at.parent;
        (b.min.into(), b.max.into())
    }

    /// Builds the subtree of range `[f, l]` (`f < l`), internal node `me`, into its window;
    /// returns its box.
    fn subtree(&self, mut w: Window, f: usize, l: usize, me: usize, at: Place) -> (Vec3A, Vec3A) {
        if l - f + 1 < PARALLEL_LEAVES {
            return self.linear(&mut w, f, l, me, at);
        }
        let n = self.keys.len();
        let g = self.split(f, l);
        let here = Place { escape: NONE, parent: me as u32 };
        let left = if g == f { n - 1 + g } else { g };
        let right = if g + 1 == l { n + g } else { g + 1 };
        let (lb, rb) = {
            let (lw, rw) = w.split(g + 1);
            let go_left = |lw: Window| {
                let at = Place { escape: right as u32, ..here };
                if g == f { self.leaf(lw, f, at) } else { self.subtree(lw, f, g, left, at) }
            };
            let go_right = |rw: Window| {
                let at = Place { escape: at.escape, ..here };
                if g + 1 == l { self.leaf(rw, l, at) } else { self.subtree(rw, g + 1, l, right, at) }
            };
            rayon::join(|| go_left(lw), || go_right(rw))
        };
        // `+ 0.0` turns -0 into +0 and leaves every other value as it is (as the twin's fit).
        let (min, max) = (lb.0.min(rb.0) + Vec3A::ZERO, lb.1.max(rb.1) + Vec3A::ZERO);
        w.inner[me - w.base] =
            Node { min: min.into(), child: left as u32, max: max.into(), escape: at.escape };
        w.inner_up[me - w.base] = at.parent;
        (min, max)
    }

    /// Builds the subtree of range `[f0, l0]` (`f0 < l0`), internal node `me`, into its window,
    /// bottom-up in one pass over its leaves without a split search (Apetrei 2014's
    /// agglomeration, run in leaf order with a stack); returns its box. Each leaf starts a
    /// subtree that climbs while it is a right child: a subtree of range `[f, l]` is its
    /// parent's left child when the split after it (between `l` and `l + 1`) has a longer
    /// common prefix than the split before it (between `f - 1` and `f`), else its right child.
    /// A left child waits on the stack for its sibling, which is built next and pops it; their
    /// parent spans both. The same tree as the top-down search's, node for node: the parent of a
    /// range is the smallest range around it, which ends at whichever neighbouring split is the
    /// lower of the two (no two splits next to one range have the same prefix length: the bit
    /// that splits a range changes once in it). Each node is written once its index is known
    /// (its last leaf when a left child, its first when a right one); its parent's index is
    /// written into its own parent link when the parent's is known, and its box is the same
    /// minimum and maximum of the same children in the same order.
    fn linear(&self, w: &mut Window, f0: usize, l0: usize, me: usize, at: Place) -> (Vec3A, Vec3A) {
        let n = self.keys.len();
        // The left children waiting for their right siblings: first leaf, box, index, and the
        // common prefix of the split after them. One per ancestor of the node being built, and
        // a tree of keys (with the index, 64 bits) has at most 64 levels of internal nodes.
        let mut stack = [(0usize, Vec3A::ZERO, Vec3A::ZERO, 0u32, 0u32); 65];
        let mut depth = 0;
        let mut root_box = (Vec3A::ZERO, Vec3A::ZERO);
        // The common prefix of the split after leaf `j` (between `j` and `j + 1`), each computed
        // once: every subtree climbing from leaf `j` ends there.
        let mut after = self.delta(f0, f0 + 1);
        for j in f0..=l0 {
            // The leaf is written here as `leaf` writes it, not through a helper shared with
            // it: called once the escape below is known, such a helper asks for the box ahead
            // later, and `update-rebuild` measured 4-7 % slower.
            if let Some(&ahead) = self.values.get(j + LEAF_AHEAD) {
                crate::prefetch::prefetch(self.tri_boxes, ahead as usize);
            }
            // The split after the next leaf, and what a node ending at leaf `j` escapes to: the
            // right child of the split after `j` (the next subtree a walk enters), a leaf when
            // the next split is higher in the tree (a shorter common prefix) or there is none.
            let next = if j < l0 && j + 2 < n { self.delta(j + 1, j + 2) } else { 0 };
            let escape = if j == l0 {
                at.escape
            } else if j + 2 == n || next < after {
                (n + j) as u32
            } else {
                (j + 1) as u32
            };
            let t = self.values[j];
            let b = self.tri_boxes[t as usize];
            w.leaves[j - w.base] =
                Node { min: b.min, child: LEAF_BIT | (t - self.tri_offset), max: b.max, escape };
            // The subtree climbing: its first leaf, box and children (none for the leaf).
            let (mut f, mut min, mut max) = (j, Vec3A::from(b.min), Vec3A::from(b.max));
            let mut children = None;
            loop {
                let root = f == f0 && j == l0;
                // Its left neighbour, on the stack's top, ends at leaf `f - 1`: the split before
                // it is the one after that neighbour.
                let left_child = !root && (f == f0 || (j < l0 && after > stack[depth - 1].4));
                let index = match children {
                    None => n - 1 + j,
                    Some(_) if root => me,
                    Some(_) if left_child => j,
                    Some(_) => f,
                };
                if let Some((left, right)) = children {
                    w.inner[index - w.base] = Node { min: min.into(), child: left, max: max.into(), escape };
                    w.set_parent(n, left as usize, index as u32);
                    w.set_parent(n, right as usize, index as u32);
                }
                if root {
                    w.inner_up[me - w.base] = at.parent;
                    root_box = (min, max);
                    break;
                }
                if left_child {
                    stack[depth] = (f, min, max, index as u32, after);
                    depth += 1;
                    break;
                }
                depth -= 1;
                let (lf, lmin, lmax, left, _) = stack[depth];
                // `+ 0.0` turns -0 into +0 and leaves every other value as it is (as the twin's fit).
                (f, min, max) = (lf, lmin.min(min) + Vec3A::ZERO, lmax.max(max) + Vec3A::ZERO);
                children = Some((left, index as u32));
            }
            after = next;
        }
        // The last leaf's climb ends at the root.
        root_box
    }
}
