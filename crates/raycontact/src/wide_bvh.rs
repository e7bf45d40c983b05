//! The CPU backend's 4-wide BVH: each body's binary tree (the LBVH that the `hierarchy` and
//! `fit` stages build, the GPU's layout) collapsed into nodes of up to four children whose boxes
//! are stored as structure of arrays, so that one SIMD slab test (`glam::Vec4`) tests all four
//! (the traversal is `crate::cpu::closest_hit_wide`), and its triangles copied in leaf order
//! with their corners, so that a leaf test reads one cache line. Not a twin of any kernel: the
//! GPU walks the binary tree. It is built from the fitted binary tree ([`WideBvh::build`], or
//! body by body, [`WideTree::build`], as the CPU backend's rebuild does) and
//! follows refits ([`WideBvh::refit`]): every lane remembers the binary node its box comes
//! from.
//!
//! Collapse: a wide node starts from a binary internal node's two children and repeatedly
//! replaces the internal child of largest surface area by its two children, up to four (the
//! usual BVH2 → BVH4 collapse; `crate::wide_collapse`, serially or, for a large body on many
//! cores, in parallel). A lane holds a wide node index, or
//! [`LEAF_BIT`](crate::layout::LEAF_BIT) `|` the index of a [`TriRecord`].
//!
//! A body whose tree is kept while the scene moves on (its positions did not change since the
//! tree was made, while other bodies' did, whether the update is a rebuild or a refit: it rests)
//! gets, the first time, a tree collapsed from a binned-SAH binary tree over the same leaves
//! instead ([`crate::sah_tree`]; not when nothing in the scene moved: [`Motion`]), kept in
//! [`WideTree::sah`] until the body changes again: the same hits (any tree over the same leaves
//! gives the same closest hit), through fewer boxes. A static body
//! ([`Scene::set_static`](crate::Scene::set_static)) gets such a tree whenever its tree is made
//! anew (its first frame, or a frame after it was moved), so that the first frame that keeps it
//! does not pay for the slower build. Under a refitting policy every rebuilt body gets one too.
//! These binned-SAH trees are built in the background by default (`crate::wide_background`):
//! the body walks its LBVH's collapse, or keeps its tree, until the build is done.

use glam::{Mat4, Vec3, Vec3A, Vec4};
use rayon::prelude::*;

use crate::layout::{LEAF_BIT, NONE, Node};
use crate::packing::Packing;
use crate::pending_tree::PendingTree;
use crate::sah_tree::sah_tree;

/// Children of a wide node.
pub const WIDTH: usize = 4;

/// How many records ahead [`WideTree::fill`] asks for a record's vertex indices.
const FILL_AHEAD: usize = 16;

/// How many wide nodes ahead [`WideTree::refit`] asks for the lanes' binary nodes.
const REFIT_AHEAD: usize = 4;

/// A node of the 4-wide BVH: its children's boxes (structure of arrays: `lo[axis]` holds the
/// four children's minima on that axis) and references. 128 bytes, two cache lines.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideNode {
    /// Box minima of the children, per axis.
    pub lo: [Vec4; 3],
    /// Box maxima of the children, per axis.
    pub hi: [Vec4; 3],
    /// Per child: a wide node index (body-local), or [`LEAF_BIT`](crate::layout::LEAF_BIT) `|`
    /// a [`TriRecord`] index; [`NONE`] past `count`.
    pub child: [u32; WIDTH],
    /// Children used (2 to 4; lanes past it are empty).
    pub count: u32,
    /// Bit i set: lane i is a leaf.
    pub leaves: u32,
}

impl Default for WideNode {
    fn default() -> Self {
        WideNode { lo: [Vec4::ZERO; 3], hi: [Vec4::ZERO; 3], child: [NONE; WIDTH], count: 0, leaves: 0 }
    }
}

impl WideNode {
    /// The per-axis rows (`lo` or `hi`) of four lanes' corners (`w` ignored): a 4x4 transpose
    /// in registers, where lane-by-lane stores into the rows would be read back by the node's
    /// wider loads (a load that waits for the narrow stores before it).
    #[inline]
    pub(crate) fn rows(lanes: [Vec4; WIDTH]) -> [Vec4; 3] {
        let t = Mat4::from_cols(lanes[0], lanes[1], lanes[2], lanes[3]).transpose();
        [t.x_axis, t.y_axis, t.z_axis]
    }

    /// Sets lane `i` to the box of `n`.
    fn set_box(&mut self, i: usize, n: &Node) {
        self.set_lane(i, n.min, n.max);
    }

    /// Sets lane `i` to the box (`min`, `max`).
    pub(crate) fn set_lane(&mut self, i: usize, min: Vec3, max: Vec3) {
        for a in 0..3 {
            self.lo[a][i] = min[a];
            self.hi[a][i] = max[a];
        }
    }
}

/// A leaf's triangle as the ray test reads it: its corners (this frame's positions), its packed
/// vertices (for the ignored vertex) and its body-local index. One cache line.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TriRecord {
    /// The corners.
    pub corners: [Vec3; 3],
    /// The packed vertices of the corners.
    pub vertices: [u32; 3],
    /// The body-local triangle.
    pub triangle: u32,
}

impl TriRecord {
    /// Sets the corners to `positions` at the record's vertices (a refit: the same triangle,
    /// moved), and returns them as loaded, for a caller that needs them next (read back from the
    /// record, the loads would wait for the stores just made).
    #[inline]
    pub(crate) fn move_to(&mut self, positions: &[Vec3]) -> [Vec3A; 3] {
        let corners = self.vertices.map(|v| Vec3A::from(positions[v as usize]));
        self.corners = corners.map(Vec3::from);
        corners
    }
}

/// One body's wide tree: nodes (root 0), per lane the binary node (body-local) whose box it
/// holds, and the leaves' triangles. Empty for a body of fewer than two leaves (its binary root
/// is walked directly).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WideTree {
    /// The wide nodes, root first.
    pub nodes: Vec<WideNode>,
    /// Per wide node and lane, the binary node its box comes from ([`NONE`] for an empty lane):
    /// of [`Self::sah`] when that is not empty, else of the body's LBVH.
    pub source: Vec<[u32; WIDTH]>,
    /// The leaves' triangles: in the order the collapse met them, or for a tree collapsed from
    /// a binned-SAH tree in the order of the wide nodes and lanes that hold them.
    pub tris: Vec<TriRecord>,
    /// The binned-SAH binary tree this tree was collapsed from, for a body whose tree is kept
    /// or refitted (`raycontact::internals::sah_tree`), with the boxes of the collapse (a refit,
    /// [`Self::refit_sah`], refits the lanes, not this tree); empty when it was collapsed from
    /// the body's LBVH.
    pub sah: Vec<Node>,
    /// How [`Self::refit_sah`] splits its refit (empty but for a large tree collapsed from a
    /// binned-SAH tree).
    pub refit_plan: RefitPlan,
    /// For a tree collapsed from a binned-SAH tree, its SAH cost over its lanes (`lane_cost` in
    /// `crate::wide_refit`) when it was collapsed (0 for one collapsed from an LBVH).
    pub collapse_cost: f64,
    /// Its cost after its last refit ([`Self::refit_sah`]), or its collapse.
    pub cost: f64,
    /// The parallel collapse's scratch memory, kept between frames.
    pub scratch: CollapseScratch,
    /// The binned-SAH tree being built for it in the background (`crate::wide_background`).
    pub(crate) pending: PendingTree<WideTree>,
}

/// What a collapse reads of one body: its fitted binary tree (`binary`, its used nodes, of
/// `leaves` leaves: internal nodes first), and for the triangle records its first packed
/// triangle `tri_offset` in the packed `triangles` and this frame's packed `positions`.
#[derive(Clone, Copy, Debug)]
pub struct BodyTree<'a> {
    /// The binary tree's used nodes (body-local indices).
    pub binary: &'a [Node],
    /// Its leaves.
    pub leaves: u32,
    /// The body's first packed triangle.
    pub tri_offset: u32,
    /// The packed triangles' vertices (three per triangle).
    pub triangles: &'a [u32],
    /// This frame's packed positions.
    pub positions: &'a [Vec3],
}

impl<'a> BodyTree<'a> {
    /// Packed body `b`'s tree `binary` of `leaves` leaves, with its triangles and `positions`.
    pub fn new(
        packing: &'a Packing,
        b: usize,
        binary: &'a [Node],
        leaves: u32,
        positions: &'a [Vec3],
    ) -> Self {
        let tri_offset = packing.bodies[b].tri_offset;
        BodyTree { binary, leaves, tri_offset, triangles: &packing.triangles, positions }
    }

    /// Makes `r` the record of body-local triangle `triangle`: its corners and packed
    /// vertices, each field written in place (a record built apart and copied in is read back
    /// before its stores have reached memory, a stall a record).
    #[inline]
    pub fn write_record(&self, r: &mut TriRecord, triangle: u32) {
        let g = 3 * (self.tri_offset + triangle) as usize;
        for k in 0..3 {
            let v = self.triangles[g + k];
            r.vertices[k] = v;
            r.corners[k] = self.positions[v as usize];
        }
        r.triangle = triangle;
    }
}

/// How [`WideTree::refit_sah`] splits a tree (`crate::wide_refit` says why it can):
/// independent ranges of descendants, and the nodes above them. Empty for a tree refitted
/// serially.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RefitPlan {
    /// Per task (the descendants of one node), in node order: its first node, the node after
    /// its last, its first record and the record after its last.
    pub tasks: Vec<[u32; 4]>,
    /// The nodes in no task (those above the tasks' nodes, and those nodes), last first.
    pub top: Vec<u32>,
}

impl RefitPlan {
    /// Whether the plan splits its tree's refit (it has tasks).
    pub fn splits(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// Empties the plan (its memory kept): a tree refitted serially.
    pub(crate) fn clear(&mut self) {
        self.tasks.clear();
        self.top.clear();
    }
}

/// The scratch memory of the collapses, kept between frames: the serial collapse's stack
/// (`WideTree::collapse`), and for the parallel collapse (`WideTree::collapse_lbvh_parallel`)
/// per binary internal node, whether a wide node is rooted there and the binary
/// nodes of its lanes, and the compaction's ranks (`used` and `rank` also hold the refit
/// plan's per-node counts while [`WideTree::collapse_sah`] makes it). Not part of the tree's
/// value (equal to any other, printed empty).
#[derive(Clone, Default)]
pub struct CollapseScratch {
    pub(crate) used: Vec<u32>,
    pub(crate) lanes: Vec<[u32; WIDTH]>,
    pub(crate) rank: Vec<u32>,
    pub(crate) blocks: Vec<u32>,
    /// The records while [`WideTree::collapse_sah`] renumbers them (`crate::wide_refit`).
    pub(crate) tris: Vec<TriRecord>,
    /// The serial collapse's pending (binary node, wide node) pairs.
    pub(crate) stack: Vec<(u32, usize)>,
    /// The serial collapse's leaves in the order it meets them: their body-local triangles,
    /// the records' triangles ([`WideTree::fill`]).
    pub(crate) leaf_tris: Vec<u32>,
    /// The parts of the parallel build from the sorted keys (`crate::wide_direct`); more than
    /// a build uses are kept for a later one.
    pub(crate) parts: Vec<KeyPart>,
}

/// A part of the parallel build of a tree from a body's sorted keys (`crate::wide_direct`),
/// kept between frames: its leaves `first..=last` (the left child of its parent in the LBVH
/// where `left`), its wide nodes built apart (numbered from 0) with their lanes' binary nodes,
/// its box, and where its nodes start in the tree.
#[derive(Clone, Default)]
pub(crate) struct KeyPart {
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) left: bool,
    pub(crate) nodes: Vec<WideNode>,
    pub(crate) source: Vec<[u32; WIDTH]>,
    pub(crate) bounds: (Vec3A, Vec3A),
    pub(crate) base: u32,
}

not_part_of_value!(CollapseScratch);

/// The wide trees of every packed body (empty: not built, e.g. a frame read back from the GPU,
/// which the traversal then walks through its binary nodes). Two compare equal when their trees
/// and `off` are (how their trees are built is no part of them).
#[derive(Clone, Debug, Default)]
pub struct WideBvh {
    /// One tree per packed body.
    pub trees: Vec<WideTree>,
    /// Builds none: the traversal walks the binary trees, as the GPU kernels do
    /// ([`Scene::set_wide_bvh`](crate::Scene::set_wide_bvh)).
    pub off: bool,
    /// The CPU backend's frames build the binned-SAH trees in the background
    /// ([`Scene::set_background_trees`](crate::Scene::set_background_trees),
    /// `crate::wide_background`); [`Self::build`] never does.
    pub background: bool,
}

/// Nodes of a binary tree of `leaves` leaves (as `crate::frame::used_nodes`).
pub(crate) fn used_nodes(leaves: u32) -> usize {
    (2 * leaves as usize).saturating_sub(1)
}

impl PartialEq for WideBvh {
    fn eq(&self, other: &Self) -> bool {
        self.trees == other.trees && self.off == other.off
    }
}

impl WideTree {
    /// Collapses, as [`Self::collapse`] does the LBVH, a binned-SAH tree over the leaves of the
    /// body's fitted LBVH (`body.binary`), and keeps that tree in [`Self::sah`] (any
    /// tree over the same leaves gives the same closest hit, whatever update made the LBVH):
    /// the tree of a body whose positions did not change since its tree was made, the first
    /// time it is kept, and a static body's new tree at once (its positions are not expected to
    /// change, so the slower build pays off from the next frame, and is not paid in the middle
    /// of the run). Its records are then numbered in the order of the wide nodes and lanes that
    /// hold them, the order in which [`Self::refit_sah`] reads them, and a large tree gets the
    /// [`RefitPlan`] of its parallel refits (`crate::wide_refit`).
    pub fn collapse_sah(&mut self, body: BodyTree<'_>) {
        let mut sah = std::mem::take(&mut self.sah);
        sah_tree(body.binary, body.leaves, &mut sah);
        self.collapse_sah_tree(sah, body);
    }

    /// [`Self::collapse_sah`] with the binned-SAH tree `sah` over the body's leaves already
    /// built (`body.binary` is not read).
    pub(crate) fn collapse_sah_tree(&mut self, sah: Vec<Node>, body: BodyTree<'_>) {
        let leaves = body.leaves;
        self.collapse(BodyTree { binary: &sah, ..body });
        self.prepare_refit();
        self.cost = self.lane_cost();
        self.collapse_cost = self.cost;
        if leaves >= 2 {
            self.sah = sah;
        }
    }

    /// Whether some leaf's box, grown by `r` on every side, holds `p` (`true` for a tree not
    /// built: unsure). Where it says no, no triangle of the tree comes within distance `r` of
    /// `p`. Stops at the first such leaf; walks only the nodes whose grown box holds `p`.
    pub fn has_leaf_near(&self, p: Vec3, r: f32) -> bool {
        self.leaf_near_with(p, r, |_| true)
    }

    /// Whether some leaf whose box, grown by `r` on every side, holds `p` passes `accept` (given
    /// its record's index; `true` for a tree not built: unsure). Stops at the first; walks only
    /// the nodes whose grown box holds `p` ([`Self::has_leaf_near`]: every leaf passes;
    /// [`other_near_wide`](crate::cpu::other_near_wide): a triangle without a given vertex
    /// within `r`).
    pub fn leaf_near_with(&self, p: Vec3, r: f32, mut accept: impl FnMut(usize) -> bool) -> bool {
        if self.nodes.is_empty() {
            return true;
        }
        let at = [Vec4::splat(p.x), Vec4::splat(p.y), Vec4::splat(p.z)];
        let grow = Vec4::splat(r);
        // Pending nodes: at most 3 a level on a path, so 64 is far more than any tree of 2^32
        // leaves needs; when full, unsure.
        let (mut stack, mut len) = ([0u32; 64], 1usize);
        while len > 0 {
            len -= 1;
            let n = &self.nodes[stack[len] as usize];
            let holds = |a: usize| (n.lo[a] - grow).cmple(at[a]) & at[a].cmple(n.hi[a] + grow);
            let mut lanes = (holds(0) & holds(1) & holds(2)).bitmask() & ((1 << n.count) - 1);
            let mut leaves = lanes & n.leaves;
            while leaves != 0 {
                if accept((n.child[leaves.trailing_zeros() as usize] & !LEAF_BIT) as usize) {
                    return true;
                }
                leaves &= leaves - 1;
            }
            lanes &= !n.leaves;
            while lanes != 0 {
                if len == stack.len() {
                    return true;
                }
                stack[len] = n.child[lanes.trailing_zeros() as usize];
                len += 1;
                lanes &= lanes - 1;
            }
        }
        false
    }

    /// Copies the boxes of the refitted binary tree into the lanes (the topology is kept).
    pub fn refit(&mut self, binary: &[Node]) {
        let source = &self.source;
        self.nodes.par_chunks_mut(256).enumerate().for_each(|(c, nodes)| {
            for (k, n) in nodes.iter_mut().enumerate() {
                let at = 256 * c + k;
                // Ask for the lanes' binary nodes of the wide node REFIT_AHEAD later.
                for &s in source.get(at + REFIT_AHEAD).into_iter().flatten() {
                    if s != NONE {
                        crate::prefetch::prefetch(binary, s as usize);
                    }
                }
                for (i, &s) in source[at][..n.count as usize].iter().enumerate() {
                    n.set_box(i, &binary[s as usize]);
                }
            }
        });
    }

    /// Writes the records of the triangles `order` names (body-local, in record order): each
    /// record whole, its triangle, vertices and corners (of `body`'s triangles and positions),
    /// once. The serial collapse only lists the triangles ([`CollapseScratch`]'s `leaf_tris`):
    /// a record it pushed half-written and this pass completed was two writes of memory the
    /// core did not hold, the first in the collapse's walk, whose next node waited behind it.
    pub fn fill(&mut self, body: BodyTree<'_>, order: &[u32]) {
        self.tris.resize(order.len(), TriRecord::default());
        self.tris.par_chunks_mut(1024).zip(order.par_chunks(1024)).for_each(|(chunk, order)| {
            for (i, r) in chunk.iter_mut().enumerate() {
                // Ask for the vertex indices of the record FILL_AHEAD later, and for the corners
                // of the one half as far ahead (its indices asked for before).
                if let Some(&t) = order.get(i + FILL_AHEAD) {
                    crate::prefetch::prefetch(body.triangles, 3 * (body.tri_offset + t) as usize);
                }
                if let Some(&t) = order.get(i + FILL_AHEAD / 2) {
                    let g = 3 * (body.tri_offset + t) as usize;
                    for v in &body.triangles[g..g + 3] {
                        crate::prefetch::prefetch(body.positions, *v as usize);
                    }
                }
                body.write_record(r, order[i]);
            }
        });
    }

    /// Copies this frame's corners into the records, from the vertices they hold (a refit's
    /// records: the same triangles as at the collapse, only moved). Reads the records in order
    /// and `positions` at their vertices, not the packed triangles as [`Self::fill`] does:
    /// `cpu-refit`'s `fit` stage, 3 runs alternated with the build that called `fill`,
    /// `mesh-scaling` 159k triangles 4.43 / 4.66 / 4.57 -> 4.25 / 4.33 / 4.23 ms, 641k
    /// 17.50 / 17.85 / 18.02 -> 16.82 / 16.67 / 16.79 ms.
    pub fn refill(&mut self, positions: &[Vec3]) {
        self.tris.par_chunks_mut(1024).for_each(|chunk| {
            for i in 0..chunk.len() {
                // Ask for the corners of the record FILL_AHEAD / 2 later.
                if let Some(r) = chunk.get(i + FILL_AHEAD / 2) {
                    for &v in &r.vertices {
                        crate::prefetch::prefetch(positions, v as usize);
                    }
                }
                chunk[i].move_to(positions);
            }
        });
    }
}

impl WideBvh {
    /// The wide tree of packed body `b`, when built.
    pub fn tree(&self, b: usize) -> Option<&WideTree> {
        self.trees.get(b)
    }
}
