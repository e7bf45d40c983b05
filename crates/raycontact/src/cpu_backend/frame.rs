//! The CPU backend's frame: every per-frame stage's twin in the GPU frame's order, reusing the
//! frame's vectors, with the BVH update policy applied ([`BvhUpdate`]: rebuild, refit, or
//! refit and measure, rebuilding when the trees degraded), and the wide trees built (each
//! body's with its binary tree) or refitted. The GPU scene's `Auto` measure runs the same code
//! on a mirror of its trees (without normals and wide trees), so both backends decide alike.

use web_time::Instant;

use glam::{Vec3, Vec4};
use rayon::prelude::*;

use super::refit::refit_measured;
use crate::bvh_update::{BvhUpdate, Quality, sah_costs};
use crate::changes::Changes;
use crate::cpu;
use crate::frame::{FrameData, NOT_COUNTED};
use crate::layout::{BodyGpu, BodyState, NONE, Node};
use crate::packing::{Packing, has_moved};
use crate::stats::{BvhAction, BvhStats, Stage};
use crate::tree_build;
use crate::wide_direct::SortedLeaves;
use crate::wide_update::{Building, Motion};

/// What a frame brings up to date, and which bodies moved ([`Changes`]: those whose positions
/// changed since the trees' last update, and whose trees a rebuild must build).
pub(crate) enum Follow<'c> {
    /// The CPU backend: the vertex normals, the binary trees and the wide trees its rays walk;
    /// with `defer`, a rebuild that may leave the moving bodies' trees for when they are read
    /// (`super::deferred`).
    Rays {
        /// The bodies moved and the trees fresh.
        changes: &'c mut Changes,
        /// A detection's update, whose pair list comes next.
        defer: bool,
    },
    /// The GPU scene's `Auto` mirror: the binary trees alone, as the GPU's frame updates them
    /// (it leaves the bodies that did not move, `gpu/kept.rs`, with the same [`Changes`]).
    Trees(&'c mut Changes),
}

/// What a frame asks of the BVHs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TreeWork {
    /// The vertex normals alone: the trees are kept as they are (an iterative pass that needs
    /// no BVH, whose intersection stages read the normals).
    NormalsOnly,
    /// Nothing: the trees, the normals and the body boxes stay the last frame's (an iterative
    /// pass that needs no BVH and no normals: its walk computes its sources' own; any frame in
    /// which nothing changed since the last one that brought them up to date).
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
    /// wide trees, and every binary tree (which the backend's rebuild builds when read).
    pub fn build(packing: &Packing, positions: &[Vec3]) -> Self {
        let mut f = FrameData::default();
        let work = TreeWork::Update { policy: BvhUpdate::Rebuild, force: true };
        let follow = Follow::Rays { changes: &mut Changes::default(), defer: false };
        f.update(packing, positions, work, &mut Quality::default(), follow, |_, _| {});
        f.build_unbuilt(packing);
        f
    }

    /// One frame in place (reusing the vectors): the vertex normals and the wide trees when
    /// `follow` asks for them (the CPU backend; the GPU's `Auto` mirror needs neither), then the
    /// trees as `work` asks, with `quality` the costs at the last rebuild, of the bodies that
    /// `follow`'s changes say moved (and for a rebuild, of those whose trees are stale).
    /// Reports each stage's wall time to `time` (a stage may be reported twice: `Auto`'s refit,
    /// then its rebuild).
    pub(crate) fn update(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        work: TreeWork,
        quality: &mut Quality,
        follow: Follow<'_>,
        mut time: impl FnMut(Stage, f64),
    ) -> BvhStats {
        let (for_rays, changes, defer) = match follow {
            Follow::Rays { changes, defer } => (true, changes, defer),
            Follow::Trees(c) => (false, c, false),
        };
        let force = matches!(work, TreeWork::Update { force: true, .. });
        if force || changes.moved.len() != packing.bodies.len() {
            changes.repacked(packing.bodies.len());
        }
        changes.begin();
        // The bodies to bring up to date: those whose positions changed since the trees' last
        // update (`moved`: the others' normals, boxes and refitted trees are what this frame
        // would compute again), and for a rebuild those whose tree is not a rebuild at their
        // positions (`stale`); every body for the twins end to end (the wide trees off).
        let (moved, stale): (&[bool], &[bool]) =
            if for_rays && self.wide.off { (&[], &[]) } else { (&changes.moved, changes.stale()) };
        let mut clock = Instant::now();
        let mut lap = |s: Stage| {
            let now = Instant::now();
            time(s, (now - clock).as_nanos() as f64);
            clock = now;
        };
        // With the normals, the triangle boxes when the trees need them: each triangle's
        // corners read and its cross product computed once for both (but by the twin
        // `triangle_bounds` with the wide trees off: the kernels' twins end to end).
        let boxes_with_faces = for_rays && !self.wide.off && matches!(work, TreeWork::Update { .. });
        let t = packing.params.tri_count as usize;
        if for_rays && work != TreeWork::Untouched {
            self.tri_boxes.resize(t, Default::default());
            self.compute_normals(packing, positions, moved, boxes_with_faces);
            lap(Stage::Normals);
        }
        let TreeWork::Update { policy, .. } = work else {
            return BvhStats { action: BvhAction::Kept, ..BvhStats::default() };
        };
        let bodies = packing.bodies.len();
        // A refit needs the tree of a rebuild of this packing, measured when the policy watches.
        // (Not over a deferred rebuild: its bodies' trees are not of their last positions.)
        let refit = !force
            && policy.refits()
            && self.body_state.len() == bodies
            && quality.bodies() == bodies
            && !self.lag.any_deferred();
        self.tri_boxes.resize(t, Default::default());
        if self.body_state.len() != bodies {
            self.body_state.clear();
            self.body_state.resize(bodies, BodyState::default());
        }
        if force {
            self.lag.behind.clear();
            self.lag.live.clear();
            self.lag.measured.clear();
            self.lag.unbuilt.clear();
            self.lag.deferred.clear();
            self.lag.awaiting_pairs = false;
        }
        let live = &mut self.lag.live;
        live.resize(bodies, NOT_COUNTED);
        if boxes_with_faces {
            // The body boxes of the live triangle boxes that the normals' pass folded (this
            // frame's: it ran with the boxes).
            debug_assert_eq!(self.scratch.folds.len(), bodies, "a fold per body");
            let bodies = self.body_state.iter_mut().zip(live.iter_mut()).zip(&self.scratch.folds);
            for (b, ((state, live), &folded)) in bodies.enumerate() {
                if has_moved(moved, b) {
                    *live = cpu::set_box_keys(folded, state);
                }
            }
        } else if !for_rays {
            // The GPU's mirror: the same boxes, the body boxes folded as the CPU backend's.
            cpu::triangle_boxes(packing, positions, &mut self.tri_boxes, moved);
            cpu::body_bounds(packing, &self.tri_boxes, &mut self.body_state, live, moved);
        } else {
            cpu::triangle_bounds(packing, positions, &mut self.tri_boxes, &mut self.body_state, moved);
            live.iter_mut()
                .enumerate()
                .filter(|(b, _)| has_moved(moved, *b))
                .for_each(|(_, l)| *l = NOT_COUNTED);
        }
        lap(Stage::Bounds);
        if defer
            && policy == BvhUpdate::Rebuild
            && !force
            && boxes_with_faces
            && self.defer_rebuild(packing, stale, &changes.moved)
        {
            // What the build does to the trees is counted when it is done (`super::deferred`).
            return BvhStats { action: BvhAction::Rebuilt, degradation: Some(1.0), ..BvhStats::default() };
        }
        let mut stats = BvhStats { action: BvhAction::Rebuilt, ..BvhStats::default() };
        if refit {
            // Under `Refit` the trees whose wide trees refit on their own are left behind
            // (`super::lag`); those left behind before and not now are fitted first.
            let lagging = self.plan_lag(packing, policy, for_rays);
            self.build_unbuilt(packing);
            self.fit_behind(packing, true);
            // The fit, the degenerate check and the costs in one walk of the trees.
            let fitted = refit_measured(
                packing,
                &self.body_state,
                &self.tri_boxes,
                &mut self.nodes,
                &self.parents,
                (moved, &self.lag.skip),
                &mut self.lag.measured,
            );
            stats.degenerate_changed = !fitted.leaves_match;
            stats.degradation = Some(quality.degradation(&fitted.costs));
            lap(Stage::Fit);
            let rebuild = match policy {
                BvhUpdate::Auto { max_degradation } => {
                    stats.degenerate_changed || stats.degradation.is_some_and(|d| d > max_degradation)
                }
                _ => false,
            };
            if !rebuild {
                if for_rays {
                    self.wide.refit(packing, &self.body_state, &self.nodes, positions, &changes.moved);
                    if lagging {
                        let (degradation, changed) =
                            self.settle_lag(packing, &changes.moved, &fitted, quality);
                        stats.degradation = Some(degradation);
                        stats.degenerate_changed |= changed;
                    }
                    self.wide.count_trees(&mut stats);
                    lap(Stage::Fit);
                }
                changes.refitted();
                stats.action = BvhAction::Refitted;
                return stats;
            }
        }
        // A rebuild reads every tree (`sah_costs`): none left behind, none not built, but for
        // those it writes now.
        for (b, unbuilt) in self.lag.unbuilt.iter_mut().enumerate() {
            *unbuilt &= !has_moved(stale, b);
        }
        self.fit_lagging(packing);
        let wide_moved = for_rays.then_some(&changes.moved[..]);
        self.rebuild_tree(packing, positions, stale, wide_moved, policy.refits(), true, &mut lap);
        // Every deferred body moved since its trees' last update: rebuilt now.
        for (b, deferred) in self.lag.deferred.iter_mut().enumerate() {
            *deferred &= !has_moved(stale, b);
        }
        self.lag.awaiting_pairs = false;
        if policy.refits() {
            quality.rebuilt(sah_costs(packing, &self.body_state, &self.nodes, &self.lag.measured));
        }
        stats.degradation = stats.degradation.or(Some(1.0));
        if for_rays {
            // The wide trees were built with the binary ones (`rebuild_tree`), unless off.
            if self.wide.off {
                self.wide.trees.clear();
            }
            self.wide.count_trees(&mut stats);
        }
        changes.rebuilt();
        lap(Stage::Fit);
        stats
    }

    /// Morton codes, sort, then the hierarchy with its boxes: a new binary tree, for the bodies
    /// that `moved` marks (empty: every body). With the wide trees on, the hierarchy and its
    /// boxes are built in one pass, and with `wide_moved` (the bodies whose positions changed
    /// since the trees' last update: the CPU backend's, not the GPU's `Auto` mirror) each body's
    /// wide tree is built ([`WideTree::build`](crate::wide_bvh::WideTree::build)) right after
    /// its binary tree, in the same task, while that tree is in the core's cache (all reported
    /// as the hierarchy stage), from a binned-SAH tree when the policy `refits` (the trees are
    /// then refitted frame after frame), or, for a moving body whose LBVH would be collapsed
    /// under `Rebuild`, from its sorted keys with no binary tree (`crate::wide_direct`, on
    /// every thread for a large body alone in the build; `lag.unbuilt`, built when read); off,
    /// by the `hierarchy` and `fit` twins, as the kernels build them. With `others`, the wide
    /// trees of the bodies it does not build are brought up to date too (kept, or made anew
    /// from a binned-SAH tree for a body at rest), but for the deferred ones
    /// (`super::deferred`); without, they are left as they are.
    ///
    /// Keys made in the order of the body's last rebuild, then finished by an insertion sort
    /// by (key, triangle) (the same pairs in the same order), did not pay: on the suite's
    /// scenes all but `resting-pile`'s bodies needed 4 to 256 moves a triangle, most of them 16
    /// or more (their motion between frames reorders them), so the insertion gave way to the
    /// radix sort, and reading the corners in Morton order instead of triangle order doubled
    /// the `morton` stage (`mesh-scaling` 641k, `cpu-1`: 7.2–8.6 -> 14.1–15.7 ms, 2 runs
    /// alternated).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rebuild_tree(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        moved: &[bool],
        wide_moved: Option<&[bool]>,
        refits: bool,
        others: bool,
        lap: &mut impl FnMut(Stage),
    ) {
        self.lag.forget(moved);
        let t = packing.params.tri_count as usize;
        self.keys.resize(t, 0);
        self.values.resize(t, 0);
        self.nodes.resize(2 * t, Default::default());
        self.parents.resize(2 * t, NONE);
        // With the live triangles the boxes' pass counted (`lag.live`, of the positions the
        // stale bodies still have): a body without a degenerate triangle reads no flag.
        cpu::morton(
            packing,
            positions,
            &self.tri_boxes,
            &self.lag.live,
            &mut self.body_state,
            &mut self.keys,
            &mut self.values,
            moved,
        );
        lap(Stage::Morton);
        let (kb, vb) = &mut self.scratch.sort;
        cpu::radix_sort_with(&packing.segments, (&mut self.keys, &mut self.values), (kb, vb), moved);
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
            cpu::fit(packing, &self.body_state, &self.tri_boxes, &mut self.nodes, moved);
        } else if let Some(wide_moved) = wide_moved {
            // Links, parents and boxes in one pass, equal to the `hierarchy` and `fit` twins,
            // and each body's wide tree right after its binary one.
            let built = self.wide.prepare(packing.bodies.len());
            let any = Motion::any(wide_moved);
            let motion = |b: usize| Motion::of(built, wide_moved, any, b);
            let alone = self.wide.splits_collapse(packing, &self.body_state, motion, refits);
            let (body_state, background) = (&self.body_state, self.wide.background);
            let how = |b: usize| Building {
                motion: motion(b),
                refitted: refits,
                alone,
                rebuilt: has_moved(moved, b),
                background,
            };
            // The bodies whose wide trees are built from the keys, their LBVHs not built
            // (`crate::wide_direct`); every other body's LBVH is built, then collapsed.
            // Those of the bodies it rebuilds; the others' stay as they are (built, or left
            // unbuilt by a deferred rebuild's earlier build: `super::deferred`).
            let unbuilt = &mut self.lag.unbuilt;
            unbuilt.resize(packing.bodies.len(), false);
            let bodies = self.wide.trees.iter().zip(&packing.bodies).zip(body_state).zip(unbuilt.iter_mut());
            for (b, (((tree, body), state), unbuilt)) in
                bodies.enumerate().filter(|(b, _)| has_moved(moved, *b))
            {
                *unbuilt = tree.built_from_keys(body.flags, state.leaf_count, how(b));
            }
            let (keys, values, tri_boxes) = (&self.keys, &self.values, &self.tri_boxes);
            let (unbuilt, deferred) = (&self.lag.unbuilt, &self.lag.deferred);
            tree_build::build_trees_then(
                packing,
                body_state,
                keys,
                values,
                tri_boxes,
                &mut self.nodes,
                &mut self.parents,
                moved,
                unbuilt,
                &mut self.wide.trees,
                |b, lbvh, tree| {
                    if !has_moved(moved, b) && (!others || deferred.get(b) == Some(&true)) {
                        // Not built now, and left as it is: a deferred body's trees wait, and a
                        // deferred build after the first leaves the others (`super::deferred`).
                        return;
                    }
                    if !unbuilt[b] {
                        tree.build(packing, b, body_state, lbvh, positions, how(b));
                        return;
                    }
                    let first = packing.bodies[b].tri_offset as usize;
                    let range = first..first + body_state[b].leaf_count as usize;
                    let leaves =
                        SortedLeaves { keys: &keys[range.clone()], values: &values[range], tri_boxes };
                    let root =
                        tree.build_from_keys_in_frame(packing, b, body_state, leaves, positions, how(b));
                    if let Some((min, max)) = root {
                        // The root's box, which the wide walks test first; the rest of the LBVH
                        // is built when read (`cpu_backend/lag.rs`).
                        lbvh[0] = Node { min, child: NONE, max, escape: NONE };
                    }
                },
            );
            lap(Stage::Hierarchy);
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
                moved,
            );
            lap(Stage::Hierarchy);
        }
    }

    /// The vertex normals, bit for bit those of [`cpu::vertex_normals`] (the same cross
    /// products and L1 lengths summed in the same order), with each triangle's cross product and
    /// its L1 length computed once (in `faces`, the length as `w`) instead of once per corner;
    /// of the bodies that `moved` marks (empty: every body; the others' are last frame's, from
    /// the same positions). With `boxes`, also the
    /// triangle boxes of [`cpu::triangle_bounds`] (`tri_boxes`, sized by the caller), from the same
    /// corners and cross products ([`cpu::triangle_box_crossed`]), bit for bit, and each moved
    /// body's live boxes folded (`scratch.folds`, keyed into its box by the bounds stage).
    fn compute_normals(&mut self, packing: &Packing, positions: &[Vec3], moved: &[bool], boxes: bool) {
        let mut faces = std::mem::take(&mut self.faces);
        faces.resize(packing.params.tri_count as usize, Vec4::ZERO);
        self.normals.resize(positions.len(), Vec3::ZERO);
        let tris = &packing.triangles;
        let (offsets, incident) = (&packing.vertex_tri_offsets, &packing.vertex_tris);
        let tri_part = |body: &BodyGpu, _| (body.tri_offset as usize, body.tri_count as usize);
        let vertex_part = |body: &BodyGpu, _| (body.vertex_offset as usize, body.vertex_count as usize);
        let tri_boxes = packing.split_per_body(&mut self.tri_boxes, tri_part);
        let folds = &mut self.scratch.folds;
        folds.clear();
        folds.resize(packing.bodies.len(), cpu::NO_BOX);
        let bodies = packing.split_per_body(&mut faces, tri_part).into_par_iter().zip(tri_boxes);
        let bodies = bodies.zip(packing.split_per_body(&mut self.normals, vertex_part));
        let bodies = bodies.zip(folds.par_iter_mut());
        let bodies = bodies.enumerate().filter(|(b, _)| has_moved(moved, *b));
        bodies.for_each(|(b, (((faces, tri_boxes), normals), folded))| {
            let (first_tri, first_vertex) = (packing.bodies[b].tri_offset, packing.bodies[b].vertex_offset);
            let corners = |i: usize| {
                let t = first_tri as usize + i;
                [tris[3 * t], tris[3 * t + 1], tris[3 * t + 2]].map(|v| positions[v as usize])
            };
            if boxes {
                // With each live box folded into the body's box on the way, instead of
                // `cpu::body_bounds` reading the boxes again (20 MB on 641k triangles), in plain
                // loops over chunks (rayon's `fold` over the items was as slow as below).
                const CHUNK: usize = 2048;
                let chunks = faces.par_chunks_mut(CHUNK).zip(tri_boxes.par_chunks_mut(CHUNK)).enumerate();
                let fold = chunks.map(|(c, (faces, boxes))| {
                    // In three locals, not a `Folded` passed through `fold_live` (in
                    // `cpu/triangle_bounds.rs`): that made this pass half as slow again.
                    let (mut lo, mut hi, mut count) = cpu::NO_BOX;
                    for (k, (f, out)) in faces.iter_mut().zip(boxes.iter_mut()).enumerate() {
                        let [a, b, c] = corners(c * CHUNK + k);
                        let cross = (b - a).cross(c - a);
                        *f = cpu::with_length(cross);
                        *out = cpu::triangle_box_crossed(a, b, c, cross);
                        if out.flags & 1 == 0 {
                            (lo, hi, count) = (lo.min(out.min.into()), hi.max(out.max.into()), count + 1);
                        }
                    }
                    (lo, hi, count)
                });
                *folded = fold.reduce(|| cpu::NO_BOX, cpu::union);
            } else {
                faces.par_iter_mut().enumerate().with_min_len(2048).for_each(|(i, f)| {
                    let [a, b, c] = corners(i);
                    *f = cpu::with_length((b - a).cross(c - a));
                });
            }
            let faces = &*faces;
            normals.par_iter_mut().enumerate().with_min_len(2048).for_each(|(i, out)| {
                let v = first_vertex as usize + i;
                // The normal's sum and its scale (`w`) in one four-lane sum.
                let mut sum = Vec4::ZERO;
                for &t in &incident[offsets[v] as usize..offsets[v + 1] as usize] {
                    sum += faces[(t - first_tri) as usize];
                }
                *out = cpu::unit_or_cancelled(sum.truncate(), sum.w);
            });
        });
        self.faces = faces;
    }
}
