//! The binned-SAH trees a GPU scene builds on the host for its bodies, where a tree serves many
//! frames (as the CPU backend's wide trees are collapsed from such trees, [`Making::Sah`]):
//!
//! - A body at rest: a body that a frame's update keeps while it rebuilds or refits others,
//!   and whose tree is an LBVH rebuilt at its positions (they did not change since, and no
//!   refit made its tree: `gpu/kept.rs`), has that LBVH replaced by the binned-SAH tree over
//!   the same leaves ([`sah_tree_of_boxes`]), built here on the host from its positions and
//!   written before the frame is submitted ([`GpuScene::write_rest_tree`]). A tree per rest,
//!   however long the rest.
//! - Under a refitting policy ([`BvhUpdate::Refit`], `Auto`), every body a rebuild rebuilds: its
//!   tree, built from the positions of that frame, is written over the LBVH before the next
//!   frame's commands ([`GpuScene::defer_tree`]), which refit it as the body moves (`fit`
//!   climbs the parents written with it).
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
//! [`Making::Sah`]: crate::wide_bvh::Making
//! [`BvhUpdate::Refit`]: crate::BvhUpdate::Refit

use glam::Vec3;
use rayon::prelude::*;
use web_time::Instant;

use super::Scene;
use crate::backend::Engine;
use crate::cpu::{self, fit_fans};
use crate::gpu::{GpuScene, HostTree};
use crate::layout::TriBox;
use crate::packing::Packing;
use crate::sah_tree::{sah_tree_of_boxes, tree_parents};
use crate::stats::FrameStats;

impl Scene {
    /// Writes the binned-SAH tree of every body newly at rest in the GPU frame just recorded,
    /// and under a refitting policy makes those of the bodies it rebuilds for the next frame
    /// ([`GpuScene::defer_tree`]): each set built in parallel over its bodies; their numbers and
    /// the host time go to `stats.bvh`. GPU scenes only.
    pub(super) fn write_rest_trees(&mut self, stats: &mut FrameStats) {
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("a GPU scene") };
        let rest = g.newly_at_rest();
        let rebuilt = if self.bvh_update.refits() { g.rebuilt_bodies() } else { Vec::new() };
        if rest.is_empty() && rebuilt.is_empty() {
            return;
        }
        let start = Instant::now();
        let (slots, packing) = (&self.slots, &self.packing);
        let data = |b: usize| {
            &slots[packing.ids[b].index as usize].body.as_ref().expect("packed bodies are live").data
        };
        // (The GPU scene stays out of the tasks: on the web it is not `Sync`.)
        let build = |g: &GpuScene, bodies: &[usize]| -> Vec<HostTree> {
            let with_fans: Vec<bool> = bodies.iter().map(|&b| g.has_fans(packing.bodies[b].flags)).collect();
            let build_one =
                |(&b, &with_fans): (&usize, &bool)| host_tree(packing, b, &data(b).positions, with_fans);
            bodies.par_iter().zip(&with_fans).map(build_one).collect()
        };
        for (&b, (tree, parents, fans)) in rest.iter().zip(&build(g, &rest)) {
            g.write_rest_tree(b, &packing.bodies[b], (tree, parents, fans), stats);
        }
        for (&b, tree) in rebuilt.iter().zip(build(g, &rebuilt)) {
            g.defer_tree(b, &packing.bodies[b], tree);
        }
        stats.bvh.rest_trees = rest.len() as u32;
        stats.bvh.refit_trees = rebuilt.len() as u32;
        let ns = start.elapsed().as_nanos() as f64;
        stats.bvh.host_ns = Some(stats.bvh.host_ns.unwrap_or(0.0) + ns);
    }
}

/// The binned-SAH tree of packed body `b` at `positions` (its own), with its parents and, with
/// `with_fans`, its fan words: over its non-degenerate triangles, each with the box the twin
/// [`cpu::triangle_box`] gives it.
fn host_tree(packing: &Packing, b: usize, positions: &[Vec3], with_fans: bool) -> HostTree {
    let body = &packing.bodies[b];
    let first = 3 * body.tri_offset as usize;
    let triangles = &packing.triangles[first..first + 3 * body.tri_count as usize];
    let corner = |v: u32| positions[(v - body.vertex_offset) as usize];
    let boxes: Vec<TriBox> = triangles
        .par_chunks_exact(3)
        .with_min_len(1024)
        .map(|t| cpu::triangle_box(corner(t[0]), corner(t[1]), corner(t[2])))
        .collect();
    let (mut tree, mut parents) = (Vec::new(), Vec::new());
    sah_tree_of_boxes(&boxes, &mut tree);
    tree_parents(&tree, &mut parents);
    let fans = if with_fans { fit_fans(body, &tree, &packing.triangles) } else { Vec::new() };
    (tree, parents, fans)
}
