//! The CPU backend's 4-wide BVH: each body's binary tree (the LBVH that the `hierarchy` and
//! `fit` stages build, the GPU's layout) collapsed into nodes of up to four children whose boxes
//! are stored as structure of arrays, so that one SIMD slab test (`glam::Vec4`) tests all four
//! (the traversal is `crate::cpu::closest_hit_wide`), and its triangles copied in leaf order
//! with their corners, so that a leaf test reads one cache line. Not a twin of any kernel: the
//! GPU walks the binary tree. It is built from the fitted binary tree ([`WideBvh::build`]) and
//! follows refits ([`WideBvh::refit`]): every lane remembers the binary node its box comes
//! from.
//!
//! Collapse: a wide node starts from a binary internal node's two children and repeatedly
//! replaces the internal child of largest surface area by its two children, up to four (the
//! usual BVH2 → BVH4 collapse). The children of a wide node are stored next to each other; a
//! lane holds a wide node index, or [`LEAF_BIT`] `|` the index of a [`TriRecord`].
//!
//! A body whose tree is kept (its positions did not change since the tree was made, whether
//! the update is a rebuild or a refit) gets, the first time, a tree collapsed from a
//! binned-SAH binary tree over the same leaves instead ([`crate::sah_tree`]), kept in
//! [`WideTree::sah`] until the body changes again: the same hits (any tree over the same leaves
//! gives the same closest hit), through fewer boxes. A static body
//! ([`Scene::set_static`](crate::Scene::set_static)) gets such a tree whenever its tree is made
//! anew (its first frame, or a frame after it was moved), so that the first frame that keeps it
//! does not pay for the slower build.

use glam::{Vec3, Vec4};
use rayon::prelude::*;

use crate::layout::{BODY_STATIC, BodyState, LEAF_BIT, NONE, Node};
use crate::packing::{Packing, has_moved};
use crate::sah_tree::{half_area, sah_tree};

/// Children of a wide node.
pub const WIDTH: usize = 4;

/// A node of the 4-wide BVH: its children's boxes (structure of arrays: `lo[axis]` holds the
/// four children's minima on that axis) and references. 128 bytes, two cache lines.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideNode {
    /// Box minima of the children, per axis.
    pub lo: [Vec4; 3],
    /// Box maxima of the children, per axis.
    pub hi: [Vec4; 3],
    /// Per child: a wide node index (body-local), or [`LEAF_BIT`] `|` a [`TriRecord`] index;
    /// [`NONE`] past `count`.
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
    /// Sets lane `i` to the box of `n`.
    fn set_box(&mut self, i: usize, n: &Node) {
        for a in 0..3 {
            self.lo[a][i] = n.min[a];
            self.hi[a][i] = n.max[a];
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
    /// The leaves' triangles, in the order the collapse met them.
    pub tris: Vec<TriRecord>,
    /// The binned-SAH binary tree this tree was collapsed from, for a body whose tree is kept
    /// (`raycontact::internals::sah_tree`); empty when it was collapsed from the body's LBVH.
    pub sah: Vec<Node>,
}

/// The wide trees of every packed body (empty: not built, e.g. a frame read back from the GPU,
/// which the traversal then walks through its binary nodes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WideBvh {
    /// One tree per packed body.
    pub trees: Vec<WideTree>,
    /// Builds none: the traversal walks the binary trees, as the GPU kernels do
    /// ([`Scene::set_wide_bvh`](crate::Scene::set_wide_bvh)).
    pub off: bool,
}

/// Nodes of a binary tree of `leaves` leaves (as `crate::frame::used_nodes`).
fn used_nodes(leaves: u32) -> usize {
    (2 * leaves as usize).saturating_sub(1)
}

impl WideTree {
    /// Collapses a fitted binary tree of `leaves` leaves (its used nodes, Karras order) into
    /// this tree, reusing its vectors, and fills the triangle records (the body's triangles at
    /// `tri_offset` in the packed `triangles`, this frame's `positions`).
    pub fn collapse(
        &mut self,
        binary: &[Node],
        leaves: u32,
        tri_offset: u32,
        triangles: &[u32],
        positions: &[Vec3],
    ) {
        self.nodes.clear();
        self.source.clear();
        self.tris.clear();
        self.sah.clear();
        if leaves < 2 {
            return;
        }
        let internal = leaves - 1;
        self.nodes.push(WideNode::default());
        self.source.push([NONE; WIDTH]);
        let mut stack = Vec::with_capacity(64);
        stack.push((0u32, 0usize));
        while let Some((b, w)) = stack.pop() {
            let left = binary[b as usize].child;
            let mut kids = [left, binary[left as usize].escape, NONE, NONE];
            // Half areas of the internal children (-1 for a leaf, which is never opened).
            let area = |c: u32| {
                let n = &binary[c as usize];
                if c < internal { half_area(n.min, n.max) } else { -1.0 }
            };
            let mut areas = [area(kids[0]), area(kids[1]), -1.0, -1.0];
            let mut count = 2;
            while count < WIDTH {
                let mut i = 0;
                for j in 1..count {
                    if areas[j] > areas[i] {
                        i = j;
                    }
                }
                if areas[i] < 0.0 {
                    break;
                }
                let l = binary[kids[i] as usize].child;
                let r = binary[l as usize].escape;
                // Keep the binary left-to-right order of the leaves under the node.
                kids.copy_within(i + 1..count, i + 2);
                areas.copy_within(i + 1..count, i + 2);
                (kids[i], kids[i + 1]) = (l, r);
                (areas[i], areas[i + 1]) = (area(l), area(r));
                count += 1;
            }
            let (mut lo, mut hi) = ([[0.0f32; WIDTH]; 3], [[0.0f32; WIDTH]; 3]);
            let (mut child, mut src, mut leaf_lanes) = ([NONE; WIDTH], [NONE; WIDTH], 0);
            for i in 0..count {
                let k = kids[i];
                let bn = &binary[k as usize];
                for a in 0..3 {
                    lo[a][i] = bn.min[a];
                    hi[a][i] = bn.max[a];
                }
                src[i] = k;
                child[i] = if k < internal {
                    let at = self.nodes.len();
                    self.nodes.push(WideNode::default());
                    self.source.push([NONE; WIDTH]);
                    stack.push((k, at));
                    at as u32
                } else {
                    let at = self.tris.len() as u32;
                    let triangle = bn.child & !LEAF_BIT;
                    let g = 3 * (tri_offset + triangle) as usize;
                    let vertices = [triangles[g], triangles[g + 1], triangles[g + 2]];
                    let corners = vertices.map(|v| positions[v as usize]);
                    self.tris.push(TriRecord { corners, vertices, triangle });
                    leaf_lanes |= 1 << i;
                    LEAF_BIT | at
                };
            }
            self.nodes[w] = WideNode {
                lo: lo.map(Vec4::from_array),
                hi: hi.map(Vec4::from_array),
                child,
                count: count as u32,
                leaves: leaf_lanes,
            };
            self.source[w] = src;
        }
    }

    /// Collapses, as [`Self::collapse`] does the LBVH, a binned-SAH tree over the leaves of the
    /// body's fitted LBVH (`lbvh`, `leaves` leaves), and keeps that tree in [`Self::sah`] (any
    /// tree over the same leaves gives the same closest hit, whatever update made the LBVH):
    /// the tree of a body whose positions did not change since its tree was made, the first
    /// time it is kept, and a static body's new tree at once (its positions are not expected to
    /// change, so the slower build pays off from the next frame, and is not paid in the middle
    /// of the run).
    pub fn collapse_sah(
        &mut self,
        lbvh: &[Node],
        leaves: u32,
        tri_offset: u32,
        triangles: &[u32],
        positions: &[Vec3],
    ) {
        let mut sah = std::mem::take(&mut self.sah);
        sah_tree(lbvh, leaves, &mut sah);
        self.collapse(&sah, leaves, tri_offset, triangles, positions);
        if leaves >= 2 {
            self.sah = sah;
        }
    }

    /// Whether some leaf's box, grown by `r` on every side, holds `p` (`true` for a tree not
    /// built: unsure). Where it says no, no triangle of the tree comes within distance `r` of
    /// `p`. Stops at the first such leaf; walks only the nodes whose grown box holds `p`.
    pub fn has_leaf_near(&self, p: Vec3, r: f32) -> bool {
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
            if lanes & n.leaves != 0 {
                return true;
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
        self.nodes.par_iter_mut().zip(self.source.par_iter()).with_min_len(256).for_each(|(n, src)| {
            for (i, &s) in src[..n.count as usize].iter().enumerate() {
                n.set_box(i, &binary[s as usize]);
            }
        });
    }

    /// Copies the triangles' corners and vertices (body `tri_offset`, packed `triangles`,
    /// this frame's `positions`) into the records.
    pub fn fill(&mut self, tri_offset: u32, triangles: &[u32], positions: &[Vec3]) {
        self.tris.par_iter_mut().with_min_len(1024).for_each(|r| {
            let g = 3 * (tri_offset + r.triangle) as usize;
            r.vertices = [triangles[g], triangles[g + 1], triangles[g + 2]];
            r.corners = r.vertices.map(|v| positions[v as usize]);
        });
    }
}

impl WideBvh {
    /// Collapses every body's fitted binary tree (`nodes` in the packed layout) and fills its
    /// triangle records from `positions`, in parallel over the bodies, but for the bodies that
    /// `moved` marks false (their positions did not change since their tree was made; a body
    /// past its end counts as moved), when every body has a tree: those are kept, collapsed the
    /// first time from a binned-SAH tree ([`WideTree::collapse_sah`]), as is a static body's new
    /// tree.
    pub fn build(
        &mut self,
        packing: &Packing,
        body_state: &[BodyState],
        nodes: &[Node],
        positions: &[Vec3],
        moved: &[bool],
    ) {
        if self.off {
            self.trees.clear();
            return;
        }
        let built = self.trees.len() == packing.bodies.len();
        self.trees.resize_with(packing.bodies.len(), WideTree::default);
        self.trees.par_iter_mut().enumerate().for_each(|(b, tree)| {
            let (body, leaves) = (&packing.bodies[b], body_state[b].leaf_count);
            let lbvh = &nodes[body.node_offset as usize..][..used_nodes(leaves)];
            let (tris, at) = (&packing.triangles, body.tri_offset);
            let still = built && !has_moved(moved, b);
            if still && !tree.sah.is_empty() {
                // Kept as it is.
            } else if still || body.flags & BODY_STATIC != 0 {
                tree.collapse_sah(lbvh, leaves, at, tris, positions);
            } else {
                tree.collapse(lbvh, leaves, at, tris, positions);
            }
        });
    }

    /// Brings every body's wide tree (built by [`Self::build`]) to the refitted binary trees:
    /// the boxes and this frame's corners copied into the lanes, on the same topology; but the
    /// bodies that `moved` marks false are kept (as [`Self::build`] keeps them), and a tree collapsed from a
    /// binned-SAH tree whose body moved is collapsed from the body's refitted LBVH again (its
    /// lanes name the SAH tree's nodes).
    pub fn refit(
        &mut self,
        packing: &Packing,
        body_state: &[BodyState],
        nodes: &[Node],
        positions: &[Vec3],
        moved: &[bool],
    ) {
        if self.off || self.trees.len() != packing.bodies.len() {
            // Off, or no trees to refit (e.g. just turned on): built from the refitted binary
            // trees instead.
            return self.build(packing, body_state, nodes, positions, &[]);
        }
        self.trees.par_iter_mut().enumerate().for_each(|(b, tree)| {
            let (body, leaves) = (&packing.bodies[b], body_state[b].leaf_count);
            let lbvh = &nodes[body.node_offset as usize..][..used_nodes(leaves)];
            let (tris, at) = (&packing.triangles, body.tri_offset);
            let still = !has_moved(moved, b);
            if still && !tree.sah.is_empty() {
                // Kept as it is.
            } else if still || body.flags & BODY_STATIC != 0 {
                tree.collapse_sah(lbvh, leaves, at, tris, positions);
            } else if !tree.sah.is_empty() {
                tree.collapse(lbvh, leaves, at, tris, positions);
            } else {
                tree.refit(lbvh);
                tree.fill(at, tris, positions);
            }
        });
    }

    /// The wide tree of packed body `b`, when built.
    pub fn tree(&self, b: usize) -> Option<&WideTree> {
        self.trees.get(b)
    }
}
