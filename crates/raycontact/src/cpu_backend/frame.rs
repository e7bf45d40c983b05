//! The CPU backend's frame: every per-frame stage's twin in the GPU frame's order, reusing the
//! frame's vectors, with the BVH update policy applied ([`BvhUpdate`]: rebuild, refit, or
//! refit and measure, rebuilding when the trees degraded), then the wide trees built or
//! refitted. The GPU scene's `Auto` measure runs the same code on a mirror of its trees
//! (without normals and wide trees), so both backends decide alike.

use web_time::Instant;

use glam::Vec3;
use rayon::prelude::*;

use crate::bvh_update::{BvhUpdate, Quality, sah_costs};
use crate::cpu;
use crate::frame::{FrameData, used_nodes};
use crate::layout::{BodyState, LEAF_BIT, NONE};
use crate::packing::Packing;
use crate::stats::{BvhAction, BvhStats, Stage};
use crate::tree_build;

/// Which bodies' positions changed since their trees were last brought up to date (the wide
/// trees of the others are kept, whatever this frame's update: the same positions give the
/// same leaves, and any tree over them the same hits).
#[derive(Clone, Debug, Default)]
pub(crate) struct Changes {
    /// Per packed body: its positions changed since the last update of the trees (all true
    /// after a new packing).
    pub moved: Vec<bool>,
}

impl Changes {
    /// The trees were brought up to date (rebuilt or refitted).
    fn updated(&mut self) {
        self.moved.iter_mut().for_each(|m| *m = false);
    }
}

/// What a frame asks of the BVHs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TreeWork {
    /// The vertex normals alone: the trees are kept as they are (an iterative pass that needs
    /// no BVH, whose intersection stages read the normals).
    NormalsOnly,
    /// Nothing: the trees, the normals and the body boxes stay the last frame's (an iterative
    /// pass that needs no BVH and no normals: its walk computes its sources' own).
    Untouched,
    /// The trees brought up to date as `policy` says, or rebuilt whatever it says when `force`
    /// (a new packing).
    Update {
        /// The scene's policy.
        policy: BvhUpdate,
        /// Rebuild whatever the policy.
        force: bool,
    },
}

impl FrameData {
    /// Runs every per-frame stage on the CPU, as the GPU frame does (a rebuild), and builds the
    /// wide trees.
    pub fn build(packing: &Packing, positions: &[Vec3]) -> Self {
        let mut f = FrameData::default();
        let work = TreeWork::Update { policy: BvhUpdate::Rebuild, force: true };
        f.update(packing, positions, work, &mut Quality::default(), Some(&mut Changes::default()), |_, _| {});
        f
    }

    /// One frame in place (reusing the vectors): the vertex normals and the wide trees when
    /// `changes` are given (the CPU backend, whose bodies' changes they track; the GPU's `Auto`
    /// mirror needs neither), then the trees as `work` asks, with `quality` the costs at the
    /// last rebuild. Reports each stage's wall time to `time` (a stage may be reported twice:
    /// `Auto`'s refit, then its rebuild).
    pub(crate) fn update(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        work: TreeWork,
        quality: &mut Quality,
        mut changes: Option<&mut Changes>,
        mut time: impl FnMut(Stage, f64),
    ) -> BvhStats {
        let for_rays = changes.is_some();
        let mut clock = Instant::now();
        let mut lap = |s: Stage| {
            let now = Instant::now();
            time(s, (now - clock).as_nanos() as f64);
            clock = now;
        };
        if for_rays && work != TreeWork::Untouched {
            self.compute_normals(packing, positions);
            lap(Stage::Normals);
        }
        let TreeWork::Update { policy, force } = work else {
            return BvhStats { action: BvhAction::Kept, ..BvhStats::default() };
        };
        if force {
            if let Some(c) = changes.as_deref_mut() {
                *c = Changes { moved: vec![true; packing.bodies.len()] };
            }
        }
        let bodies = packing.bodies.len();
        // A refit needs the tree of a rebuild of this packing, measured when the policy watches.
        let refit =
            !force && policy.refits() && self.body_state.len() == bodies && quality.bodies() == bodies;
        let t = packing.params.tri_count as usize;
        self.tri_boxes.resize(t, Default::default());
        if !refit {
            self.body_state.clear();
            self.body_state.resize(bodies, BodyState::default());
        }
        cpu::triangle_bounds(packing, positions, &mut self.tri_boxes, &mut self.body_state);
        lap(Stage::Bounds);
        let mut stats = BvhStats { action: BvhAction::Rebuilt, ..BvhStats::default() };
        if refit {
            cpu::fit(packing, &self.body_state, &self.tri_boxes, &mut self.nodes);
            stats.degenerate_changed = !self.leaves_match(packing);
            stats.degradation = Some(quality.degradation(&sah_costs(packing, &self.body_state, &self.nodes)));
            lap(Stage::Fit);
            let rebuild = match policy {
                BvhUpdate::Auto { max_degradation } => {
                    stats.degenerate_changed || stats.degradation.is_some_and(|d| d > max_degradation)
                }
                _ => false,
            };
            if !rebuild {
                if let Some(c) = changes {
                    self.wide.refit(packing, &self.body_state, &self.nodes, positions, &c.moved);
                    c.updated();
                    lap(Stage::Fit);
                }
                stats.action = BvhAction::Refitted;
                return stats;
            }
        }
        self.rebuild_tree(packing, positions, &mut lap);
        if policy.refits() {
            quality.rebuilt(sah_costs(packing, &self.body_state, &self.nodes));
        }
        stats.degradation = stats.degradation.or(Some(1.0));
        if let Some(c) = changes {
            self.wide.build(packing, &self.body_state, &self.nodes, positions, &c.moved);
            c.updated();
        }
        lap(Stage::Fit);
        stats
    }

    /// Morton codes, sort, then the hierarchy with its boxes: a new binary tree. With the wide
    /// trees on, the hierarchy and its boxes are built in one pass (reported as the hierarchy
    /// stage); off, by the `hierarchy` and `fit` twins, as the kernels build them.
    fn rebuild_tree(&mut self, packing: &Packing, positions: &[Vec3], lap: &mut impl FnMut(Stage)) {
        let t = packing.params.tri_count as usize;
        self.keys.resize(t, 0);
        self.values.resize(t, 0);
        self.nodes.resize(2 * t, Default::default());
        self.parents.resize(2 * t, NONE);
        cpu::morton(
            packing,
            positions,
            &self.tri_boxes,
            &mut self.body_state,
            &mut self.keys,
            &mut self.values,
        );
        lap(Stage::Morton);
        cpu::radix_sort(&packing.segments, &mut self.keys, &mut self.values);
        lap(Stage::Sort);
        if self.wide.off {
            // The kernels' twins end to end (`Scene::set_wide_bvh(false)`).
            cpu::hierarchy(
                packing,
                &self.body_state,
                &self.keys,
                &self.values,
                &mut self.nodes,
                &mut self.parents,
            );
            lap(Stage::Hierarchy);
            cpu::fit(packing, &self.body_state, &self.tri_boxes, &mut self.nodes);
        } else {
            // Links, parents and boxes in one pass, equal to the `hierarchy` and `fit` twins.
            tree_build::build_trees(
                packing,
                &self.body_state,
                &self.keys,
                &self.values,
                &self.tri_boxes,
                &mut self.nodes,
                &mut self.parents,
            );
            lap(Stage::Hierarchy);
        }
    }

    /// Whether every body's tree holds exactly its triangles that are not degenerate now: its
    /// leaves are all non-degenerate and as many as those.
    fn leaves_match(&self, packing: &Packing) -> bool {
        packing.bodies.par_iter().zip(&self.body_state).all(|(body, state)| {
            let boxes =
                &self.tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
            let live = boxes.iter().filter(|b| b.flags & 1 == 0).count();
            let n = state.leaf_count as usize;
            let off = body.node_offset as usize;
            let leaves = &self.nodes[off..off + used_nodes(state.leaf_count)][n.saturating_sub(1)..];
            live == n && leaves.iter().all(|l| boxes[(l.child & !LEAF_BIT) as usize].flags & 1 == 0)
        })
    }

    /// The vertex normals, bit for bit those of [`cpu::vertex_normals`] (the same cross
    /// products summed in the same order), with each triangle's cross product computed once
    /// (in `faces`) instead of once per corner.
    fn compute_normals(&mut self, packing: &Packing, positions: &[Vec3]) {
        let mut faces = std::mem::take(&mut self.faces);
        faces.resize(packing.params.tri_count as usize, Vec3::ZERO);
        let tris = &packing.triangles;
        faces.par_iter_mut().enumerate().with_min_len(2048).for_each(|(t, f)| {
            let [a, b, c] = [tris[3 * t], tris[3 * t + 1], tris[3 * t + 2]].map(|v| positions[v as usize]);
            *f = (b - a).cross(c - a);
        });
        self.normals.resize(positions.len(), Vec3::ZERO);
        let (offsets, incident) = (&packing.vertex_tri_offsets, &packing.vertex_tris);
        self.normals.par_iter_mut().enumerate().with_min_len(2048).for_each(|(v, out)| {
            let mut n = Vec3::ZERO;
            for &t in &incident[offsets[v] as usize..offsets[v + 1] as usize] {
                n += faces[t as usize];
            }
            let len = n.length();
            *out = if len > 0.0 { n / len } else { n };
        });
        self.faces = faces;
    }
}
