//! [`FrameData`]: everything one frame builds, in the packed layout: what the GPU frame leaves
//! in its buffers (read back by [`crate::Scene::frame_data`]) and what the CPU backend builds
//! (`FrameData::build`, in `crate::cpu_backend`), which adds its wide trees.

use glam::{Vec3, Vec3A, Vec4};

use crate::layout::{BodyGpu, BodyState, Node, PairGrid, TriBox};
use crate::packing::Packing;
use crate::wide_bvh::{WideBvh, WideTree};

/// Everything one frame builds: the outputs of every per-frame kernel, in the GPU's layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameData {
    /// Unit vertex normals of all packed vertices (zero for a vertex with no area around it, or
    /// whose faces' normals cancel: [`NORMAL_CANCELLED`](crate::layout::NORMAL_CANCELLED)).
    pub normals: Vec<Vec3>,
    /// Box and degenerate flag of each packed triangle.
    pub tri_boxes: Vec<TriBox>,
    /// Box, leaf count and degenerate count of each packed body.
    pub body_state: Vec<BodyState>,
    /// Sorted Morton keys, per body segment.
    pub keys: Vec<u32>,
    /// Packed triangle index of each sorted key.
    pub values: Vec<u32>,
    /// BVH nodes: body `b` owns `2 * tri_count` slots from `node_offset`, of which the first
    /// `2 * leaf_count - 1` are used.
    pub nodes: Vec<Node>,
    /// The GPU's compact child pairs (the node buffer's last third, [`Node`]'s doc): body `b`'s
    /// internal node `p` has its pair at `tri_offset + p`, and the pairs' grid is in its last
    /// pair node, `tri_offset + tri_count - 1` ([`Self::body_child_pairs`],
    /// [`Self::body_pair_grid`]). Empty in a GPU frame whose tuning keeps none
    /// ([`Tuning::child_pairs`](crate::layout::Tuning::child_pairs)) and in a frame of the CPU
    /// backend, whose walks go through its wide trees ([`child_pairs`](crate::cpu::child_pairs)
    /// gives them from `nodes` in a grid).
    pub child_pairs: Vec<Node>,
    /// Parent of each node (body-local), [`NONE`](crate::layout::NONE) for a root.
    pub parents: Vec<u32>,
    /// The trees' fan words ([`TRIANGLE_WORDS`](crate::layout::TRIANGLE_WORDS)): body `b`'s
    /// internal node `p` at `tri_offset + p`, as `fit` writes them in the triangle buffer for
    /// the bodies with [`BODY_FANS`](crate::layout::BODY_FANS) (empty in a GPU frame whose
    /// tuning passes no fan, [`Tuning::fan_walks`](crate::layout::Tuning::fan_walks), and in a
    /// frame of the CPU backend, whose walks go through its wide trees:
    /// [`fit_fans`](crate::cpu::fit_fans) gives them).
    pub fans: Vec<u32>,
    /// `cross(b - a, c - a)` of each packed triangle, with its L1 length as `w`, as the CPU
    /// backend computes the normals from them (empty in a frame read back from the GPU).
    pub faces: Vec<Vec4>,
    /// Per packed body, whether its binary tree (`nodes`, `parents`, `fans`) is the binned-SAH
    /// tree of its leaves ([`sah_tree`](crate::internals::sah_tree::sah_tree)) that the GPU scene
    /// writes over the LBVH of a body at rest, or under a refitting policy of a rebuilt body
    /// ([`BvhStats`](crate::BvhStats)'s `rest_trees`, `refit_trees`), or that tree refitted
    /// since, rather than an LBVH (empty in a frame of the CPU backend, whose
    /// binary trees are LBVHs: its wide trees are collapsed from such a tree instead).
    pub sah_trees: Vec<bool>,
    /// The CPU backend's 4-wide trees, collapsed from `nodes` (each body's right after its
    /// binary tree is built) and refitted with them (empty in a frame read back from the GPU:
    /// its rays walk `nodes`).
    pub wide: WideBvh,
    /// The CPU backend's scratch memory, kept from frame to frame.
    pub scratch: FrameScratch,
    /// The binary trees the CPU backend's `Refit` frames left behind.
    pub(crate) lag: LbvhLag,
}

/// Which bodies' binary trees ([`FrameData::nodes`]) the CPU backend's `Refit` frames left
/// behind (`crate::cpu_backend::lag` says when): such a tree's root box is up to date (the
/// wide walks test it first), its other boxes are those of an earlier frame until the backend
/// fits them, before anything else reads them. And the live (non-degenerate) triangles of each
/// body, as the backend counted them with its body boxes, and what its refits last measured of
/// each tree. Not part of the frame's value (equal to any other).
#[derive(Clone, Default)]
pub(crate) struct LbvhLag {
    /// Per packed body, whether its binary tree is behind (empty: none is).
    pub behind: Vec<bool>,
    /// Per packed body, its live triangles when its boxes were last computed with the
    /// triangles' cross products ([`NOT_COUNTED`]: computed otherwise).
    pub live: Vec<u32>,
    /// Per packed body, whether this frame leaves its binary tree behind (empty: none).
    pub skip: Vec<bool>,
    /// Per packed body, whether its last rebuild built no binary tree (its wide tree was built
    /// from the keys, `crate::wide_direct`; empty: none): built from that rebuild's keys when
    /// something reads it, as a tree behind is fitted.
    pub unbuilt: Vec<bool>,
    /// Per packed body, whether a rebuild left its keys and trees (binary and wide) to be made
    /// when something reads them (empty: none): a detection's update, before its pair list,
    /// leaves the moving bodies' rebuilds for when the list is known, and builds the trees of
    /// the bodies in a pair (`cpu_backend/deferred.rs`); a body in none is built by the next
    /// reader, or rebuilt by a later frame. Its normals, boxes and leaf counts are this frame's.
    pub deferred: Vec<bool>,
    /// This frame's update deferred its rebuild, and the detection has not built its pairs'
    /// bodies yet: that build also does what the rebuild did for the other bodies (their wide
    /// trees kept, or made anew from a binned-SAH tree for a body at rest).
    pub awaiting_pairs: bool,
    /// The bodies whose trees are being fitted (scratch).
    pub fit: Vec<bool>,
    /// Per packed body, what the backend's refit last measured of its binary tree (its
    /// [`sah_cost`](crate::bvh_update::sah_cost) and whether its leaves are exactly its live
    /// triangles: `cpu_backend::refit`), kept while neither the tree nor the body's triangle
    /// boxes changed since; `None` (or no entry): to measure. Whatever writes a body's tree
    /// forgets its measure ([`Self::forget`]), so a body that does not move (a static body's,
    /// a resting one's) is measured once, not in every refitting frame.
    pub measured: Vec<Option<TreeMeasure>>,
}

/// What the CPU backend's refit measures of a body's binary tree ([`LbvhLag::measured`]): its
/// [`sah_cost`](crate::bvh_update::sah_cost), and whether its leaves are exactly the body's live
/// (non-degenerate) triangles.
pub(crate) type TreeMeasure = (f64, bool);

/// [`LbvhLag::live`] of a body whose triangles were not counted.
pub(crate) const NOT_COUNTED: u32 = u32::MAX;

impl LbvhLag {
    /// Whether some body's binary tree is behind or not built.
    pub fn any_behind(&self) -> bool {
        self.behind.contains(&true) || self.unbuilt.contains(&true)
    }

    /// Forgets the measures of the packed bodies that `written` marks (`has_moved`: an empty
    /// `written` is every body), whose trees are about to be written.
    pub fn forget(&mut self, written: &[bool]) {
        if written.is_empty() {
            self.measured.clear();
        }
        for (m, &w) in self.measured.iter_mut().zip(written) {
            if w {
                *m = None;
            }
        }
    }
}

not_part_of_value!(LbvhLag);

/// The CPU backend's scratch memory for a frame's stages, kept from frame to frame so that a
/// frame allocates none: not part of the frame's value (equal to any other, cloned and printed
/// empty).
#[derive(Default)]
pub struct FrameScratch {
    /// The radix sort's second buffers of keys and values.
    pub(crate) sort: (Vec<u32>, Vec<u32>),
    /// Per packed body, its live triangle boxes folded by the CPU backend's normals pass: the
    /// minimum and maximum of their floats and their count (`Folded` in
    /// `cpu/triangle_bounds.rs`, keyed by `cpu::set_box_keys`).
    pub(crate) folds: Vec<(Vec3A, Vec3A, u32)>,
    /// Per packed body, whether a deferred rebuild builds it now (`cpu_backend/deferred.rs`).
    pub(crate) building: Vec<bool>,
}

impl Clone for FrameScratch {
    fn clone(&self) -> Self {
        FrameScratch::default()
    }
}

not_part_of_value!(FrameScratch);

impl FrameData {
    /// The used nodes of packed body `b`: `2 * leaf_count - 1` of them (none when the body has
    /// no leaf).
    pub fn body_nodes(&self, packing: &Packing, b: usize) -> &[Node] {
        debug_assert!(self.lag.behind.get(b) != Some(&true), "body {b}'s binary tree is behind");
        debug_assert!(self.lag.unbuilt.get(b) != Some(&true), "body {b}'s binary tree is not built");
        debug_assert!(self.lag.deferred.get(b) != Some(&true), "body {b}'s rebuild is deferred");
        self.lbvh_for_wide_walk(packing, b)
    }

    /// [`Self::body_nodes`] for the CPU backend's wide walks, which read only the root's box,
    /// up to date in a tree left behind (`LbvhLag`), unless the wide tree is empty.
    pub(crate) fn lbvh_for_wide_walk(&self, packing: &Packing, b: usize) -> &[Node] {
        let off = packing.bodies[b].node_offset as usize;
        &self.nodes[off..off + used_nodes(self.body_state[b].leaf_count)]
    }

    /// The fan words of packed body `b`'s internal nodes (`leaf_count - 1` of them; none in a
    /// frame without fan words, [`Self::fans`]; a GPU frame's words of a body without
    /// [`BODY_FANS`](crate::layout::BODY_FANS) are whatever the buffer held).
    pub fn body_fans(&self, packing: &Packing, b: usize) -> &[u32] {
        let off = packing.bodies[b].tri_offset as usize;
        let internal = used_nodes(self.body_state[b].leaf_count) / 2;
        self.fans.get(off..off + internal).unwrap_or(&[])
    }

    /// The wide tree of packed body `b`, when this frame has one for every body.
    pub fn body_wide(&self, b: usize) -> Option<&WideTree> {
        debug_assert!(self.lag.deferred.get(b) != Some(&true), "body {b}'s rebuild is deferred");
        (self.wide.trees.len() == self.body_state.len()).then(|| self.wide.tree(b)).flatten()
    }

    /// The used compact child pairs of packed body `b` (one node per internal node), empty in a
    /// frame without them ([`Self::child_pairs`]).
    pub fn body_child_pairs(&self, packing: &Packing, b: usize) -> &[Node] {
        let off = packing.bodies[b].tri_offset as usize;
        let pairs = (self.body_state[b].leaf_count as usize).saturating_sub(1);
        self.child_pairs.get(off..off + pairs).unwrap_or(&[])
    }

    /// The grid of packed body `b`'s compact child pairs, stored in its last pair node
    /// ([`PairGrid::node`]), in a frame with child pairs
    /// ([`Self::child_pairs`]).
    pub fn body_pair_grid(&self, packing: &Packing, b: usize) -> Option<PairGrid> {
        let body = &packing.bodies[b];
        let last = (body.tri_offset + body.tri_count).checked_sub(1)?;
        self.child_pairs.get(last as usize).map(PairGrid::of_node)
    }

    /// The used parent links of packed body `b`, as [`Self::body_nodes`].
    pub fn body_parents(&self, packing: &Packing, b: usize) -> &[u32] {
        let off = packing.bodies[b].node_offset as usize;
        &self.parents[off..off + used_nodes(self.body_state[b].leaf_count)]
    }
}

/// Nodes of a tree with `leaves` leaves.
pub fn used_nodes(leaves: u32) -> usize {
    (2 * leaves as usize).saturating_sub(1)
}

/// Each packed body's used nodes and their parents, in packing order, apart from each other so
/// that the bodies' trees can be built in parallel.
pub(crate) fn body_trees<'a>(
    packing: &Packing,
    body_state: &[BodyState],
    nodes: &'a mut [Node],
    parents: &'a mut [u32],
) -> Vec<(&'a mut [Node], &'a mut [u32])> {
    let part = |body: &BodyGpu, b: usize| (body.node_offset as usize, used_nodes(body_state[b].leaf_count));
    let trees = packing.split_per_body(nodes, part);
    trees.into_iter().zip(packing.split_per_body(parents, part)).collect()
}
