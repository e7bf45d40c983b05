//! The binned-SAH trees a GPU scene builds on the host for its bodies, where a tree serves many
//! frames (as the CPU backend's wide trees are collapsed from such trees, [`Making::Sah`]):
//!
//! - A body at rest: a body that a frame's update keeps while it rebuilds or refits others,
//!   and whose tree is an LBVH rebuilt at its positions (they did not change since, and no
//!   refit made its tree: `gpu/kept.rs`), has that LBVH replaced by the binned-SAH tree over
//!   the same leaves ([`sah_tree_of_boxes`]), built on the host from its positions and written
//!   before a frame is submitted ([`GpuScene::write_rest_tree`]): by default built in the
//!   background and written by the first frame after it is done in which the body still rests,
//!   dropped if it is rebuilt first (under `Rebuild`, if it moves first); else built and
//!   written in the frame that finds it at rest
//!   ([`Scene::set_background_trees`]). A tree per rest, however long the rest.
//! - Under a refitting policy ([`BvhUpdate::Refit`], `Auto`), every body a rebuild rebuilds: its
//!   tree, built from the positions of that frame, is written over the LBVH and refitted from then
//!   on as the body moves (`fit` climbs the parents written with it): by default built in the
//!   background and written by the first frame after it is done that refits the body (its `fit`
//!   makes the tree's boxes the body's: a refit keeps the leaves), keeps it while refitting others
//!   (its boxes refitted on the host first, as `fit` would: `fit_host_tree`) or in which it rests
//!   (its positions those of the build), the LBVH, refitted, serving until then; dropped if the
//!   body is rebuilt first; else built in the frame that rebuilds the body, and written before the
//!   next frame's commands ([`GpuScene::defer_tree`]). So an `Auto` rebuild frame does not carry
//!   the builds: with two tori of 90k triangles each, one twisting until `Auto` rebuilds (a scratch
//!   program on lavapipe, 4 runs of each, alternated), the rebuild frame's host time
//!   (`FrameStats::bvh.host_ns`) went from 31.6-66.2 ms with the trees built in the frame to
//!   13.8-23.7 ms, the rest of it `Auto`'s mirror rebuilding its LBVHs (`scene/bvh.rs`); the trees
//!   were written by the next frame. On lavapipe, whose GPU work shares the 2 cores with the build,
//!   the frame itself was no shorter: 116.5-204.3 ms with the builds in it, 138.7-214.1 with them
//!   in the background.
//!
//! The closest hit does not depend on the tree, so the contacts are the same; the rays enter
//! fewer boxes. Moved, a body is rebuilt as an LBVH under `Rebuild`, refitted as it is under a
//! refitting policy. `Auto`'s measure stays that of the LBVHs its mirror keeps (`scene/bvh.rs`),
//! as the CPU backend measures its binary trees, not the wide ones it walks.
//!
//! The leaves are those of the body's LBVH without reading it back: its non-degenerate
//! triangles (those of the rebuild that made the LBVH, at these positions), each with the box
//! that `triangle_bounds` and `morton` give it (the twin's [`cpu::triangle_box`], bit for bit
//! the kernels', as `tests/tests/gpu/bvh.rs` checks every frame), and the tree depends on the
//! leaves alone.
//!
//! On lavapipe (3 alternated runs each of `raycontact-bench --no-parry --implementations gpu`
//! before and after), the armadillo pair (`--files armadillo.off armadillo.off --translate-b
//! 22.88,0,0`, body A still) went from 87.0-88.6 to 81.8-83.5 ms a frame (72.7 -> 64.1 nodes per
//! ray), `eight-sheets` (three static bodies) from 103.6-104.5 to 96.0-97.1 ms. Under `Refit`
//! with every rebuilt body's tree (`--implementations gpu-refit`, 2 alternated runs each of the
//! last build without rest trees and this one): `cloth-layers` 133.7-134.5 -> 108.3-109.3 ms
//! (rays 119.1-119.8 -> 94.9-95.5), `eight-sheets` 97.5-99.5 -> 82.7-83.9, the armadillo pair
//! 77.1-77.5 -> 68.6-69.6, `resting-pile` 26.4-26.5 -> 23.9-24.5.
//!
//! [`Making::Sah`]: crate::wide_update::Making
//! [`BvhUpdate::Refit`]: crate::BvhUpdate::Refit

use glam::Vec3;
use rayon::prelude::*;
use web_time::Instant;

use super::Scene;
use crate::backend::Engine;
use crate::cpu::{self, fit_fans};
use crate::gpu::{BuiltTree, GpuScene, HostTree};
use crate::layout::{BodyGpu, LEAF_BIT, Node, TriBox};
use crate::sah_tree::{sah_tree_of_boxes, tree_parents};
use crate::stats::FrameStats;

impl Scene {
    /// Writes the binned-SAH tree of every body newly at rest in the GPU frame just recorded,
    /// and under a refitting policy makes those of the bodies it rebuilds for the next frame
    /// ([`GpuScene::defer_tree`]), each set built in parallel over its bodies; or, built in the
    /// background ([`Scene::set_background_trees`]), starts them all, and writes those started
    /// in earlier frames that are done, for the bodies that the frame refits, keeps while it
    /// refits others (refitted on the host first) or in which they rest (`gpu/kept.rs`). The
    /// trees written and the host time go to `stats.bvh`. GPU scenes only.
    pub(super) fn write_rest_trees(&mut self, stats: &mut FrameStats) {
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("a GPU scene") };
        // Newly at rest before the finished builds are taken: a body whose tree this frame
        // writes is not newly at rest (its tree is being built until the write marks it).
        let rest = g.newly_at_rest();
        let built = g.built_trees();
        let rebuilt = if self.bvh_update.refits() { g.rebuilt_bodies() } else { Vec::new() };
        if built.is_empty() && rest.is_empty() && rebuilt.is_empty() {
            return;
        }
        let start = Instant::now();
        let (slots, packing) = (&self.slots, &self.packing);
        let data = |b: usize| {
            &slots[packing.ids[b].index as usize].body.as_ref().expect("packed bodies are live").data
        };
        let body_triangles = |b: usize| {
            let body = &packing.bodies[b];
            let first = 3 * body.tri_offset as usize;
            &packing.triangles[first..first + 3 * body.tri_count as usize]
        };
        // (The GPU scene stays out of the tasks: on the web it is not `Sync`.)
        let build = |g: &GpuScene, bodies: &[usize]| -> Vec<HostTree> {
            let with_fans: Vec<bool> = bodies.iter().map(|&b| g.has_fans(packing.bodies[b].flags)).collect();
            let build_one = |(&b, &with_fans): (&usize, &bool)| {
                host_tree(&packing.bodies[b], body_triangles(b), &data(b).positions, with_fans)
            };
            bodies.par_iter().zip(&with_fans).map(build_one).collect()
        };
        let (mut written, mut late) = (0, 0);
        for BuiltTree { body: b, tree: (mut tree, parents, fans), refit, host_fit } in built {
            if host_fit {
                fit_host_tree(
                    &mut tree,
                    body_triangles(b),
                    &data(b).positions,
                    packing.bodies[b].vertex_offset,
                );
            }
            g.write_rest_tree(b, &packing.bodies[b], (&tree, &parents, &fans), stats);
            if refit {
                late += 1;
            } else {
                written += 1;
            }
        }
        // In the background, each build on copies of the body's triangles and positions (one
        // that finds too many builds waiting for the trees' thread, `tree_thread::
        // MAX_WAITING_BUILDS`, waits in its body and is handed over by a later frame).
        let start_builds = |g: &mut GpuScene, bodies: &[usize], refit: bool| {
            for &b in bodies {
                let (body, with_fans) = (packing.bodies[b], g.has_fans(packing.bodies[b].flags));
                let (triangles, positions) = (body_triangles(b).to_vec(), data(b).positions.clone());
                let build = move || host_tree(&body, &triangles, &positions, with_fans);
                g.building(b, build, refit);
            }
        };
        if g.background_trees() {
            start_builds(g, &rest, false);
            start_builds(g, &rebuilt, true);
        } else {
            for (&b, (tree, parents, fans)) in rest.iter().zip(&build(g, &rest)) {
                g.write_rest_tree(b, &packing.bodies[b], (tree, parents, fans), stats);
                written += 1;
            }
            for (&b, tree) in rebuilt.iter().zip(build(g, &rebuilt)) {
                g.defer_tree(b, &packing.bodies[b], tree);
            }
        }
        stats.bvh.rest_trees = written;
        stats.bvh.refit_trees = rebuilt.len() as u32;
        stats.bvh.refit_trees_written = late;
        let ns = start.elapsed().as_nanos() as f64;
        stats.bvh.host_ns = Some(stats.bvh.host_ns.unwrap_or(0.0) + ns);
    }

    /// Builds the binned-SAH tree of each body newly at rest, and under a refitting policy
    /// ([`BvhUpdate::Refit`](crate::BvhUpdate::Refit), `Auto`) of each body a rebuild rebuilds, in
    /// the background (the default, but on the web), or in the frame that finds it at rest (or
    /// rebuilds it). In the background that frame copies the body's triangles and positions and
    /// starts the build on a thread of its own (one for every scene: the builds take one core, none
    /// from the frame's parallel steps; on Linux at the lowest priority of normal threads, nice
    /// 19, so that a build runs where the frames leave a core idle); the first frame after it is
    /// done in which the body still
    /// rests (kept while other bodies' trees are updated) writes the tree, or under a refitting
    /// policy also one that refits the body, or keeps it while refitting others (the tree refitted
    /// on the host first); a body rebuilt before then drops it (under `Rebuild`, one that moves).
    /// The contacts and hits are the same either way (any tree over the same leaves gives the same
    /// closest hit); the rays enter fewer boxes from that frame on.
    ///
    /// Built in the frame, the build is that frame's host time: on the NVIDIA H200 machine
    /// (16 cores of a Xeon VM) the armadillo pair's first frame with one of its 52k-triangle
    /// bodies still took 13.8 ms against a median of 2.4 (the `files` scene of the suite,
    /// `raycontact-bench --files armadillo.off armadillo.off --translate-b 22.88,0,0`), on this
    /// 2-core machine 155 against 120 ms on lavapipe. Tests that check the tree of a given frame
    /// build it in the frame. Under `Auto`, the trees of the bodies a rebuild rebuilds in the
    /// frame made its host time 31.6-66.2 ms against 13.8-23.7 in the background (this module's
    /// doc).
    ///
    /// The CPU backend collapses the wide trees of the same bodies (and of a static body whose
    /// tree is made anew) from binned-SAH trees, built in the background under the same
    /// setting and default: that frame collapses the body's LBVH (or keeps the tree of a body
    /// at rest), and the first frame that updates the trees after the build is done puts its
    /// tree in place, refitted to the body's positions when they changed since; a frame that
    /// rebuilds the body's LBVH drops the build
    /// ([`BvhStats::refit_trees`](crate::BvhStats::refit_trees) and the counts beside it
    /// report each frame's). Under `Auto`, two tori of 90k triangles on a 2-core machine
    /// (`crate::wide_background` has the figures): the rebuild frame 45.7-65.8 ms with the
    /// builds in it, 24.5-35.0 in the background, and the slowest frame of a run 49.8-65.8
    /// against 33.0-44.9.
    ///
    /// ```no_run
    /// # use raycontact::{GpuContext, Scene};
    /// # let ctx = GpuContext::new()?;
    /// let mut scene = Scene::new(&ctx);
    /// scene.set_background_trees(false);
    /// assert!(!scene.background_trees());
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub fn set_background_trees(&mut self, on: bool) {
        match &mut self.engine {
            Engine::Gpu(g) => g.set_background_trees(on),
            Engine::Cpu(c) => c.set_background_trees(on),
        }
    }

    /// Whether the scene builds the binned-SAH trees of bodies at rest, and of bodies rebuilt
    /// under a refitting policy, in the background ([`Scene::set_background_trees`]; on by
    /// default but on the web).
    pub fn background_trees(&self) -> bool {
        match &self.engine {
            Engine::Gpu(g) => g.background_trees(),
            Engine::Cpu(c) => c.background_trees(),
        }
    }
}

/// The box that [`cpu::triangle_box`] gives body-local triangle `t` of a body (`triangles` its
/// packed vertex indices from its first triangle, three a triangle; `positions` its own, its
/// first vertex packed `vertex_offset`): bit for bit the kernels' `triangle_bounds`.
fn triangle_box_of(triangles: &[u32], positions: &[Vec3], vertex_offset: u32, t: usize) -> TriBox {
    let corner = |k: usize| positions[(triangles[3 * t + k] - vertex_offset) as usize];
    cpu::triangle_box(corner(0), corner(1), corner(2))
}

/// Refits `tree`, a binned-SAH tree of [`host_tree`] (its internal nodes in depth-first order,
/// each before its children, then its leaves), to a body's `positions` (`triangles` and
/// `vertex_offset` as [`triangle_box_of`] takes them), as the `fit` kernel would: each leaf its
/// triangle's box, each internal node the union of its children's, a zero of either sign as +0,
/// the nodes taken from the last up. For a tree written over a body that its frame keeps
/// (`Kept::built`).
fn fit_host_tree(tree: &mut [Node], triangles: &[u32], positions: &[Vec3], vertex_offset: u32) {
    let internal = tree.len() / 2;
    for leaf in &mut tree[internal..] {
        let b = triangle_box_of(triangles, positions, vertex_offset, (leaf.child & !LEAF_BIT) as usize);
        (leaf.min, leaf.max) = (b.min, b.max);
    }
    for k in (0..internal).rev() {
        let left = tree[k].child as usize;
        let (l, r) = (tree[left], tree[tree[left].escape as usize]);
        tree[k].min = l.min.min(r.min) + Vec3::ZERO;
        tree[k].max = l.max.max(r.max) + Vec3::ZERO;
    }
}

/// The binned-SAH tree of a body (its record, `triangles` its packed vertex indices, three a
/// triangle, `positions` its own) with its parents and, with `with_fans`, its fan words: over
/// its non-degenerate triangles, each with the box the twin [`cpu::triangle_box`] gives it.
fn host_tree(body: &BodyGpu, triangles: &[u32], positions: &[Vec3], with_fans: bool) -> HostTree {
    let boxes: Vec<TriBox> = (0..triangles.len() / 3)
        .into_par_iter()
        .with_min_len(1024)
        .map(|t| triangle_box_of(triangles, positions, body.vertex_offset, t))
        .collect();
    let (mut tree, mut parents) = (Vec::new(), Vec::new());
    sah_tree_of_boxes(&boxes, &mut tree);
    tree_parents(&tree, &mut parents);
    // `triangles` starts at the body's first triangle.
    let fans =
        if with_fans { fit_fans(&BodyGpu { tri_offset: 0, ..*body }, &tree, triangles) } else { Vec::new() };
    (tree, parents, fans)
}
