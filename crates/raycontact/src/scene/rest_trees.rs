//! The binned-SAH trees of a GPU scene's bodies at rest: a body that a frame's update keeps
//! while it rebuilds or refits others, and whose tree is an LBVH rebuilt at its positions (they
//! did not change since, and no refit made its tree: `gpu/kept.rs`), has that LBVH replaced by
//! the binned-SAH tree over the same leaves ([`sah_tree_of_boxes`]), built here on the host
//! from its positions and written before the frame is submitted
//! ([`GpuScene::write_rest_tree`]). As the CPU backend collapses such a body's wide tree from
//! that tree ([`Making::Sah`]). The closest hit does not depend on the tree, so the contacts
//! are the same; the rays enter fewer boxes until the body moves: a rebuild then makes it an
//! LBVH again, a refit ([`BvhUpdate::Refit`], `Auto`) refits its shape (its parents are
//! written for `fit`). A tree per rest, however long the rest. `Auto`'s measure stays that of
//! the LBVHs its mirror keeps (`scene/bvh.rs`), as the CPU backend measures its binary trees,
//! not the wide ones it walks.
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
//! ray), `eight-sheets` (three static bodies) from 103.6-104.5 to 96.0-97.1 ms; under `Refit`
//! (`--implementations gpu-refit`) from 73.6-75.9 to 68.3-69.3 and from 94.8-95.8 to 88.4-90.0.
//!
//! [`Making::Sah`]: crate::wide_bvh::Making
//! [`BvhUpdate::Refit`]: crate::BvhUpdate::Refit

use rayon::prelude::*;
use web_time::Instant;

use super::Scene;
use crate::backend::Engine;
use crate::cpu::{self, fit_fans};
use crate::layout::{Node, TriBox};
use crate::sah_tree::{sah_tree_of_boxes, tree_parents};
use crate::stats::FrameStats;

/// One body's tree at rest: its nodes, their parents and its fan words (empty unless the body
/// has them).
type RestTree = (Vec<Node>, Vec<u32>, Vec<u32>);

impl Scene {
    /// Writes the binned-SAH tree of every body newly at rest in the GPU frame just recorded,
    /// built in parallel over the bodies; their number and the host time go to `stats.bvh`.
    /// GPU scenes only.
    pub(super) fn write_rest_trees(&mut self, stats: &mut FrameStats) {
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("a GPU scene") };
        let rest = g.newly_at_rest();
        if rest.is_empty() {
            return;
        }
        let start = Instant::now();
        let (slots, packing) = (&self.slots, &self.packing);
        // (The GPU scene stays out of the tasks: on the web it is not `Sync`.)
        let with_fans: Vec<bool> = rest.iter().map(|&b| g.has_fans(packing.bodies[b].flags)).collect();
        let trees: Vec<RestTree> = rest
            .par_iter()
            .zip(&with_fans)
            .map(|(&b, &with_fans)| {
                let body = &packing.bodies[b];
                let data =
                    &slots[packing.ids[b].index as usize].body.as_ref().expect("packed bodies are live").data;
                let first = 3 * body.tri_offset as usize;
                let triangles = &packing.triangles[first..first + 3 * body.tri_count as usize];
                let corner = |v: u32| data.positions[(v - body.vertex_offset) as usize];
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
            })
            .collect();
        for (&b, (tree, parents, fans)) in rest.iter().zip(&trees) {
            g.write_rest_tree(b, &packing.bodies[b], (tree, parents, fans), stats);
        }
        stats.bvh.rest_trees = rest.len() as u32;
        let ns = start.elapsed().as_nanos() as f64;
        stats.bvh.host_ns = Some(stats.bvh.host_ns.unwrap_or(0.0) + ns);
    }
}
