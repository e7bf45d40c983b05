//! How a scene's BVHs follow its bodies from frame to frame ([`BvhUpdate`]: rebuilt, refitted,
//! or refitted until their quality degrades), and the quality measure `Auto` watches: each
//! body's SAH cost ([`sah_cost`]) against its cost right after the last rebuild.

use glam::Vec3;
use rayon::prelude::*;

use crate::frame::{TreeMeasure, used_nodes};
use crate::layout::{BodyState, Node};
use crate::packing::Packing;

/// How a scene's BVHs follow its bodies from one frame to the next
/// ([`Scene::set_bvh_update`](crate::Scene::set_bvh_update)), on both backends alike.
///
/// A frame that needs the BVHs (every full pass; an iterative pass whose walks fall back to
/// them) first computes the vertex normals and the triangle and body boxes, then:
///
/// - [`Rebuild`](BvhUpdate::Rebuild) (the default, the papers' choice): Morton codes, sort,
///   hierarchy and fit: a new tree for the new positions.
/// - [`Refit`](BvhUpdate::Refit): the fit alone, on the tree of the last rebuild (no Morton
///   codes, sort or hierarchy): every node's box is recomputed from the new triangle boxes, so
///   the tree stays exact (every query finds what it finds on a rebuilt tree) but can become
///   loose as the bodies deform, and rays then visit more nodes. The tree keeps the leaves of
///   its last rebuild: a triangle that was degenerate then (zero area, kept out of the BVH)
///   stays out, one that became degenerate stays in; with the same degenerate triangles the
///   contacts are those of a rebuild at the same positions. On the CPU backend (its wide
///   trees on, the default) a moving body's rays walk its 4-wide tree, refitted on its own;
///   its binary tree is fitted only before something reads it (an iterative pass, the
///   intersection stages, a ray query or walk,
///   [`Scene::frame_data`](crate::Scene::frame_data)), and the degradation reported is the
///   4-wide tree's ([`BvhStats::degradation`](crate::BvhStats::degradation)).
/// - [`Auto`](BvhUpdate::Auto): refits, measures each body's refitted tree ([`sah_cost`]), and
///   rebuilds in the same frame instead when some body's cost exceeds `max_degradation` times
///   its cost right after the last rebuild, or when some body's set of degenerate triangles is
///   not the one its tree was built with; so its contacts are always those of a rebuild. On
///   the GPU the measure is taken on the host with the CPU twins of the bounds and fit (and,
///   when it rebuilds, of the whole rebuild) before the frame is recorded: host work of the
///   order of the CPU backend's refit (see [`BvhStats::host_ns`](crate::BvhStats::host_ns)).
///
/// The first frame after bodies are added or removed always rebuilds.
///
/// A body whose positions did not change since the trees' last update keeps its normals, boxes
/// and tree (what computing them again would give: under `Rebuild`, a tree that a refit made
/// after the body last moved is rebuilt once), so a still or
/// [static](crate::Scene::set_static) body costs no tree work per frame: the CPU backend's
/// stages leave it out, and on the GPU the frame's kernels skip it (its workgroups still run,
/// and end at once). Such a body's tree becomes, the first frame it is kept while others are
/// updated (a body at rest as the scene moves on) with its tree a rebuild at its positions, the
/// binned-SAH tree over the same leaves, whose rays enter fewer boxes for the same hits: on the
/// CPU backend its wide tree is collapsed from that tree; on the GPU the scene builds the tree
/// on the host and writes it over the body's LBVH
/// ([`BvhStats::rest_trees`](crate::BvhStats::rest_trees)). Moved, it is rebuilt as an LBVH
/// (`Rebuild`) or refitted as it is (`Refit`, `Auto`). The refitting policies also make every
/// rebuilt body's tree a binned-SAH one for the refits that follow (the CPU backend's wide
/// trees, the GPU's binary ones), from a later frame on: built in the background by default
/// ([`Scene::set_background_trees`](crate::Scene::set_background_trees),
/// [`BvhStats::refit_trees`](crate::BvhStats::refit_trees)), as are the trees of bodies at
/// rest; `Auto` measures the LBVHs on both backends.
/// [`FrameStats::bvh`](crate::FrameStats::bvh) reports what each frame did and the measured
/// degradation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum BvhUpdate {
    /// Rebuilt every frame.
    #[default]
    Rebuild,
    /// Refitted every frame (rebuilt only when bodies are added or removed).
    Refit,
    /// Refitted while every body's SAH cost stays within `max_degradation` times its cost at
    /// the last rebuild, else rebuilt.
    Auto {
        /// Largest ratio of a body's SAH cost to its cost right after the last rebuild (> 1).
        max_degradation: f32,
    },
}

impl BvhUpdate {
    /// `Auto`'s default bound on the degradation: a body whose tree costs 1.3 times what it
    /// cost right after its rebuild is rebuilt.
    pub const DEFAULT_MAX_DEGRADATION: f32 = 1.3;

    /// [`BvhUpdate::Auto`] with [`Self::DEFAULT_MAX_DEGRADATION`].
    pub fn auto() -> Self {
        BvhUpdate::Auto { max_degradation: Self::DEFAULT_MAX_DEGRADATION }
    }

    /// Whether the policy refits (and so measures the refitted tree).
    pub(crate) fn refits(self) -> bool {
        !matches!(self, BvhUpdate::Rebuild)
    }
}

/// Half the surface area of a node's box.
pub(crate) fn half_area(n: &Node) -> f64 {
    let d = (n.max - n.min).max(Vec3::ZERO).as_dvec3();
    d.x * d.y + d.y * d.z + d.z * d.x
}

/// Trees of at least this many nodes sum their areas depth first ([`sah_cost`]); smaller ones in
/// node order, one sequential sum (what rayon's parallel sum with a minimum of 4096 nodes a part
/// always did with them: it splits only lengths of at least twice that).
pub(crate) const DEPTH_FIRST_NODES: usize = 8192;

/// Subtrees are summed or fitted in parallel down to this depth only (a join costs more than
/// summing or fitting a few thousand nodes), as `cpu::fit` fits them.
pub(crate) const PARALLEL_DEPTH: u32 = 8;

/// The SAH cost of a binary tree (a body's used nodes in Karras' layout: its internal nodes, root
/// first, then its leaves; a node's children are its `child` and that child's `escape`): the
/// sum over its nodes of their box's surface area over the root's, internal nodes and leaves
/// alike (a box test and a triangle test each cost 1): the expected number of box and triangle
/// tests of a ray that crosses the root's box, with every box it crosses entered. A tree with a
/// flat root box (zero area) costs its node count. 0 for an empty tree.
///
/// The sum is taken in a fixed order, so the cost is a function of the boxes alone: node by node
/// for a tree of fewer than 8192 nodes, else depth first (each internal node's subtree as its
/// left subtree's sum plus its right subtree's, plus its own area), the order in which the CPU
/// backend's refit (`cpu_backend::refit`) adds them up as it fits the boxes.
pub fn sah_cost(nodes: &[Node]) -> f64 {
    let sum = if nodes.len() < DEPTH_FIRST_NODES {
        nodes.iter().map(half_area).sum()
    } else {
        let (internal, leaves) = nodes.split_at(nodes.len() / 2);
        subtree_area(internal, leaves, 0, 0)
    };
    cost(nodes, sum)
}

/// The cost of tree `nodes` whose areas sum to `sum` (as [`sah_cost`] adds them).
pub(crate) fn cost(nodes: &[Node], sum: f64) -> f64 {
    let Some(root) = nodes.first() else { return 0.0 };
    let root_area = half_area(root);
    if root_area <= 0.0 {
        return nodes.len() as f64;
    }
    sum / root_area
}

/// The sum of the areas of the subtree of internal node `k`, depth first (as [`sah_cost`] says):
/// the same sum however the subtrees are shared out among threads.
fn subtree_area(internal: &[Node], leaves: &[Node], k: usize, depth: u32) -> f64 {
    let n_internal = internal.len();
    let left = internal[k].child as usize;
    let right =
        if left >= n_internal { leaves[left - n_internal].escape } else { internal[left].escape } as usize;
    let side = |c: usize| {
        if c >= n_internal {
            half_area(&leaves[c - n_internal])
        } else {
            subtree_area(internal, leaves, c, depth + 1)
        }
    };
    let (l, r) = if depth < PARALLEL_DEPTH {
        rayon::join(|| side(left), || side(right))
    } else {
        (side(left), side(right))
    };
    l + r + half_area(&internal[k])
}

/// Each packed body's [`sah_cost`] (`nodes` in the packed layout): the cost in `known` where it
/// holds the body's measure (a tree unchanged since it was measured), else summed.
pub(crate) fn sah_costs(
    packing: &Packing,
    body_state: &[BodyState],
    nodes: &[Node],
    known: &[Option<TreeMeasure>],
) -> Vec<f64> {
    packing
        .bodies
        .par_iter()
        .zip(body_state)
        .enumerate()
        .map(|(b, (body, state))| match known.get(b) {
            Some(&Some((cost, _))) => cost,
            _ => {
                let off = body.node_offset as usize;
                sah_cost(&nodes[off..off + used_nodes(state.leaf_count)])
            }
        })
        .collect()
}

/// The costs `Auto` compares against: each body's [`sah_cost`] right after the last rebuild.
#[derive(Clone, Debug, Default)]
pub(crate) struct Quality {
    at_rebuild: Vec<f64>,
}

impl Quality {
    /// Bodies measured at the last rebuild (0 before the first measured one).
    pub fn bodies(&self) -> usize {
        self.at_rebuild.len()
    }

    /// A rebuild: its costs become the reference.
    pub fn rebuilt(&mut self, costs: Vec<f64>) {
        self.at_rebuild = costs;
    }

    /// The largest ratio of a body's cost now to its cost at the last rebuild (1 for a body
    /// whose tree cost nothing then, and for a scene without bodies).
    pub fn degradation(&self, costs: &[f64]) -> f32 {
        worst((0..costs.len()).map(|b| self.ratio(b, costs[b])))
    }

    /// Packed body `b`'s ratio of its cost `now` to its cost at the last rebuild (1 when its tree
    /// cost nothing then).
    pub fn ratio(&self, b: usize, now: f64) -> f64 {
        ratio(now, self.at_rebuild.get(b).copied().unwrap_or(0.0))
    }
}

/// The ratio of a cost `now` to the cost `then` (1 when `then` is not above 0).
pub(crate) fn ratio(now: f64, then: f64) -> f64 {
    if then > 0.0 { now / then } else { 1.0 }
}

/// The largest of the bodies' `ratios` (1 for none), as a degradation.
pub(crate) fn worst(ratios: impl Iterator<Item = f64>) -> f32 {
    ratios.reduce(f64::max).unwrap_or(1.0) as f32
}
