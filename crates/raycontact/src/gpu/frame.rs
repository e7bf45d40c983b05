//! One frame on the GPU: the previous positions kept, the staged positions uploaded, then the
//! per-frame stages for all bodies, one compute pass per stage, as the frame's [`BvhAction`]
//! says. A rebuild is 12 dispatches (10 when every body it sorts has short keys, which take 6
//! sort passes, 8 when every body has tiny keys, 4 passes: `layout::key_form`; 5 when the sort
//! is one `radix_tiles` dispatch), a refit 3:
//!
//! | stage | rebuild | refit | kernel |
//! | --- | ---: | ---: | --- |
//! | normals | 1 | 1 | `vertex_normals`: normals and the bodies' boxes |
//! | bounds | | 1 | `triangle_bounds`: the triangle boxes |
//! | morton | 1 | | `morton`: triangle boxes, Morton codes, leaf counts, the sort's first counts |
//! | sort | 8, 6, 4 (1) | | `radix_scatter`, one per 4-bit digit (`layout::sort_passes`; `radix_tiles`: `sort::sorts_whole`) |
//! | hierarchy | 1 | | `hierarchy` |
//! | fit | 1 | 1 | `fit` |
//!
//! An iterative pass that needs no BVH runs `vertex_normals` alone. A stage that does not run
//! records no pass, so writes no timestamps (`timer.rs`). A body whose frame
//! data the frame leaves as it is (`layout::BODY_KEEP`, marked by `kept.rs`) is skipped by
//! every one of these kernels, and its state is not cleared.
//!
//! A body newly at rest (kept while others are rebuilt or refitted, its tree a rebuild at its
//! positions: `kept.rs`) gets its binned-SAH tree, built on the host by the scene
//! (`scene/rest_trees.rs`) and written over its LBVH before the frame is submitted
//! ([`GpuScene::write_rest_tree`]): the frame's kernels leave the body, and the frames after
//! walk the new tree until it is rebuilt (a refit refits it, through its parents). Under a
//! refitting policy the trees of a rebuild's bodies are written so too, before the next frame
//! ([`GpuScene::defer_tree`]).

use super::GpuScene;
use super::buffers::B;
use super::kept::{BuiltTree, HostTree};
use super::sort::record_sort;
use super::timer::{TIMED_STAGES, UPDATE_STAGES, timed_pass};
use crate::kernels::Kernel;
use crate::layout::{BODY_FANS, BodyGpu, BodyState, Node, TRIANGLE_REGIONS, VERTEX_PREVIOUS, WG_SIZE};
use crate::stats::{BvhAction, FrameStats, Stage};

/// Byte ranges of a body's [`BodyState`] that hold its box: `min_key` and `max_key`.
const BOX_KEYS: [(u64, u64); 2] = [
    (std::mem::offset_of!(BodyState, min_key) as u64, 12),
    (std::mem::offset_of!(BodyState, max_key) as u64, 12),
];

impl GpuScene {
    /// Records one frame into `encoder` without submitting it: the current positions become the
    /// previous ones (`copy_previous`), the staged uploads are copied in, and the per-frame
    /// stages run as `bvh` says: all of them ([`BvhAction::Rebuilt`]); normals, bounds and fit
    /// on the last rebuild's tree ([`BvhAction::Refitted`]: its leaf and degenerate counts are
    /// kept, the body boxes cleared); the vertex normals alone ([`BvhAction::Kept`], an
    /// iterative pass that needs no BVH, whose intersection stages read the normals); or no
    /// stage ([`BvhAction::None`]: an iterative pass whose walk computes its sources' normals
    /// itself, the normals region and the body boxes keeping the last frame's). A stage that does
    /// not run records no pass. Its passes write timestamps (when timed) only with `read_back`:
    /// a frame that this scene submits and reads, not one recorded into a caller's encoder,
    /// where nothing would resolve or read them.
    pub fn record_frame(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        copy_previous: bool,
        bvh: BvhAction,
        read_back: bool,
        stats: &mut FrameStats,
    ) {
        if let Some(t) = &self.timer {
            t.begin_frame();
        }
        // The trees of the bodies the last frame rebuilt, made for this one (which refits them)
        // in that frame: background trees off.
        for (b, body, tree) in std::mem::take(&mut self.deferred) {
            self.write_rest_tree(b, &body, (&tree.0, &tree.1, &tree.2), stats);
        }
        let uploads = std::mem::take(&mut self.uploads);
        let p = self.params;
        if p.tri_count == 0 {
            return;
        }
        let pos_bytes = 12 * p.vertex_count as u64;
        if copy_previous {
            // Positions region -> previous-positions region of the same buffer, through
            // `B::Previous` (WebGPU copies no buffer into itself).
            let (vertices, previous) = (self.bufs.get(B::Vertices), self.bufs.get(B::Previous));
            encoder.copy_buffer_to_buffer(vertices, 0, previous, 0, Some(pos_bytes));
            encoder.copy_buffer_to_buffer(
                previous,
                0,
                vertices,
                self.vertex_region(VERTEX_PREVIOUS),
                Some(pos_bytes),
            );
            stats.stage(Stage::Upload).add_copy(pos_bytes);
            stats.stage(Stage::Upload).add_copy(pos_bytes);
        }
        for (first, count) in uploads {
            let (off, size) = (12 * first as u64, 12 * count as u64);
            encoder.copy_buffer_to_buffer(
                self.bufs.get(B::Upload),
                off,
                self.bufs.get(B::Vertices),
                off,
                Some(size),
            );
            stats.stage(Stage::Upload).add_copy(size);
        }
        let rebuild = bvh == BvhAction::Rebuilt;
        // The bodies whose data stays (`layout::BODY_KEEP`): their states are not cleared.
        self.kept.begin_frame(self.ctx.queue(), &self.bufs, bvh);
        // Fewer sort passes where every body the rebuild sorts has short or tiny keys.
        if rebuild {
            let passes = self.kept.sort_passes();
            if passes != self.sort_passes {
                self.write_sort_passes(passes);
            }
        }
        self.clear_accumulators(encoder, bvh, stats);
        let vertex_groups = p.vertex_count.div_ceil(WG_SIZE * self.ctx.tuning().items);
        let triangle_groups = self.ctx.tuning().tile_groups(p.tile_count);
        for stage in &TIMED_STAGES[..UPDATE_STAGES] {
            let runs = match stage {
                Stage::Normals => bvh != BvhAction::None,
                // A rebuild computes the triangle boxes with the Morton codes.
                Stage::Bounds => bvh == BvhAction::Refitted,
                Stage::Fit => rebuild || bvh == BvhAction::Refitted,
                _ => rebuild,
            };
            if !runs {
                continue;
            }
            let mut pass = timed_pass(encoder, self.timer_for(read_back), *stage, stats);
            let st = stats.stage(*stage);
            match stage {
                Stage::Normals => self.dispatch(&mut pass, Kernel::VertexNormals, 0, vertex_groups, st),
                Stage::Bounds => self.dispatch(&mut pass, Kernel::TriangleBounds, 0, triangle_groups, st),
                Stage::Morton => self.dispatch(&mut pass, Kernel::Morton, 0, triangle_groups, st),
                Stage::Sort => record_sort(
                    &mut pass,
                    &self.pipelines,
                    |k, sp| self.bufs.group(k, sp),
                    p.tile_count,
                    self.sort_passes,
                    self.sort_whole,
                    |k, sp| self.account(k, sp, st),
                ),
                Stage::Hierarchy => self.dispatch(&mut pass, Kernel::Hierarchy, 0, triangle_groups, st),
                Stage::Fit => self.dispatch(&mut pass, Kernel::Fit, 0, triangle_groups, st),
                _ => unreachable!("not a stage of the update"),
            }
        }
        self.kept.end_frame(bvh);
    }

    /// The packed bodies newly at rest in the frame just recorded (`kept.rs`): kept by a rebuild
    /// or refit that updates other bodies, their trees LBVHs rebuilt at their positions.
    pub fn newly_at_rest(&self) -> Vec<usize> {
        self.kept.newly_at_rest().collect()
    }

    /// Starts `build`, packed body `b`'s binned-SAH tree over its LBVH's leaves, in the
    /// background: newly at rest in the frame just recorded, or (`refit`) rebuilt by it under a
    /// refitting policy (`Kept::building`).
    pub fn building(&mut self, b: usize, build: impl FnOnce() -> HostTree + Send + 'static, refit: bool) {
        self.kept.building(b, build, refit);
    }

    /// The binned-SAH trees built in the background that are done, for the bodies that the frame
    /// just recorded refits or keeps while it refits, or in which they rest, to be written over
    /// their LBVHs ([`Self::write_rest_tree`]; `kept.rs`, `Kept::built`).
    pub fn built_trees(&mut self) -> Vec<BuiltTree> {
        self.kept.built()
    }

    /// The packed bodies the frame just recorded rebuilt (none unless it was a rebuild).
    pub fn rebuilt_bodies(&self) -> Vec<usize> {
        self.kept.rebuilt().collect()
    }

    /// Keeps `tree` (as [`Self::write_rest_tree`] takes it), a binned-SAH tree over the leaves
    /// of the LBVH the frame just recorded builds for packed body `b`, built in that frame (not
    /// in the background: [`Self::set_background_trees`]), to be written over that LBVH when the
    /// next frame is recorded, before its commands: under a refitting policy, whose next frames
    /// refit the tree. Dropped by a new packing.
    pub fn defer_tree(&mut self, b: usize, body: &BodyGpu, tree: HostTree) {
        self.deferred.push((b, *body, tree));
    }

    /// Whether the trees of packed bodies with `flags` have fan words (`fit` writes them).
    pub fn has_fans(&self, flags: u32) -> bool {
        flags & BODY_FANS != 0 && self.ctx.tuning().fan_walks
    }

    /// Writes `tree` over the tree of packed body `b` (`body`), at rest in the frame just
    /// recorded (or, for a tree over its LBVH's leaves built since its rebuild, refitted by it):
    /// its nodes (body-local, a binary tree over its LBVH's leaves) with their compact child
    /// pairs where the tuning keeps them (`layout::Node`: `cpu::child_pairs`, in the grid of the
    /// tree's root box, stored in the body's last pair node), their `parents` (for a later
    /// refit) and, where the body has them ([`Self::has_fans`]), its fan words. Queue writes:
    /// done before the frame's commands run, which leave the body (it is kept) or refit the tree
    /// written (`fit` writes its boxes, child pairs and fan words again).
    /// Counted as uploads in `stats`.
    pub fn write_rest_tree(
        &mut self,
        b: usize,
        body: &BodyGpu,
        (tree, parents, fans): (&[Node], &[u32], &[u32]),
        stats: &mut FrameStats,
    ) {
        let q = self.ctx.queue();
        let st = stats.stage(Stage::Upload);
        let mut write = |buffer: B, offset: u64, bytes: &[u8]| {
            if !bytes.is_empty() {
                q.write_buffer(self.bufs.get(buffer), offset, bytes);
                st.add_copy(bytes.len() as u64);
            }
        };
        let nodes = body.node_offset as u64;
        let node_bytes = size_of::<Node>() as u64;
        write(B::Nodes, node_bytes * nodes, bytemuck::cast_slice(tree));
        if let (true, Some(root)) = (self.ctx.tuning().child_pairs, tree.first()) {
            // In the grid of the tree's own root box, stored in the body's last pair node for
            // the walks; the pairs after two nodes a triangle of capacity (`layout::Node`).
            let grid = crate::layout::PairGrid::of_box(root.min, root.max);
            crate::cpu::child_pairs(tree, &grid, &mut self.pairs_scratch);
            let first = self.bufs.child_pairs_offset() + node_bytes * body.tri_offset as u64;
            write(B::Nodes, first, bytemuck::cast_slice(&self.pairs_scratch));
            let last = first + node_bytes * (body.tri_count as u64).saturating_sub(1);
            write(B::Nodes, last, bytemuck::bytes_of(&grid.node()));
        }
        write(B::Parents, 4 * nodes, bytemuck::cast_slice(parents));
        if self.has_fans(body.flags) {
            let words = 3 * TRIANGLE_REGIONS as u64 * self.params.tri_count as u64 + body.tri_offset as u64;
            write(B::Triangles, 4 * words, bytemuck::cast_slice(fans));
        }
        self.kept.rest(b);
    }

    /// Per packed body, whether its tree is a binned-SAH tree written over its LBVH
    /// ([`Self::write_rest_tree`]) and not rebuilt since.
    pub fn sah_trees(&self) -> &[bool] {
        self.kept.sah_trees()
    }

    /// Zeroes what the frame's kernels accumulate into: for a rebuild every body's state (box
    /// keys, leaf and degenerate counts), the sort's digit counts and `fit`'s keys; for a refit
    /// `fit`'s keys and the box keys (the counts are the tree's); when only the normals run, the
    /// box keys alone (`vertex_normals` reduces the boxes whenever it runs). The states of the
    /// bodies the frame keeps (`layout::BODY_KEEP`) stay.
    fn clear_accumulators(&self, encoder: &mut wgpu::CommandEncoder, bvh: BvhAction, stats: &mut FrameStats) {
        let st = stats.stage(Stage::Normals);
        let whole = match bvh {
            BvhAction::Rebuilt => &[B::BodyState, B::Counters, B::FitKeys][..],
            BvhAction::Refitted => &[B::FitKeys][..],
            _ => &[][..],
        };
        let kept = self.kept.any();
        for &b in whole.iter().filter(|&&b| !(kept && b == B::BodyState)) {
            encoder.clear_buffer(self.bufs.get(b), 0, Some(self.bufs.used(b)));
            st.add_clear(self.bufs.used(b));
        }
        if bvh == BvhAction::None || (bvh == BvhAction::Rebuilt && !kept) {
            return;
        }
        let stride = size_of::<BodyState>() as u64;
        let bodies = self.params.body_count as usize;
        let buffer = self.bufs.get(B::BodyState);
        if bvh == BvhAction::Rebuilt {
            // The whole states of the bodies not kept, a run of consecutive ones at a time.
            let mut b = 0;
            while b < bodies {
                let first = b;
                while b < bodies && !self.kept.is_kept(b) {
                    b += 1;
                }
                if b > first {
                    let bytes = (b - first) as u64 * stride;
                    encoder.clear_buffer(buffer, first as u64 * stride, Some(bytes));
                    st.add_clear(bytes);
                }
                b += 1;
            }
            return;
        }
        for body in (0..bodies).filter(|&b| !self.kept.is_kept(b)) {
            for (offset, bytes) in BOX_KEYS {
                encoder.clear_buffer(buffer, body as u64 * stride + offset, Some(bytes));
                st.add_clear(bytes);
            }
        }
    }
}
