//! One frame on the GPU: the previous positions kept, the staged positions uploaded, then
//! normals, bounds, Morton codes, sort, hierarchy and fit for all bodies, one compute pass per
//! stage (a refit skips Morton codes, sort and hierarchy).

use super::GpuScene;
use super::buffers::B;
use super::sort::record_sort;
use super::timer::{TIMED_STAGES, UPDATE_STAGES, timed_pass};
use crate::kernels::Kernel;
use crate::layout::{BodyState, VERTEX_PREVIOUS, WG_SIZE};
use crate::stats::{BvhAction, FrameStats, Stage};

impl GpuScene {
    /// Records one frame into `encoder` without submitting it: the current positions become the
    /// previous ones (`copy_previous`), the staged uploads are copied in, and the per-frame
    /// stages run as `bvh` says: all of them ([`BvhAction::Rebuilt`]); normals, bounds and fit
    /// on the last rebuild's tree ([`BvhAction::Refitted`]: its leaf and degenerate counts are
    /// kept, the body boxes cleared); or the vertex normals alone ([`BvhAction::Kept`], an
    /// iterative pass that needs no BVH). The passes of the stages that do not run stay, empty,
    /// so that every timestamp pair is written.
    pub fn record_frame(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        copy_previous: bool,
        bvh: BvhAction,
        stats: &mut FrameStats,
    ) {
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
        // Per-frame accumulators start from zero when the BVH is rebuilt; a refit clears the
        // body boxes alone (the leaf and degenerate counts are the tree's); otherwise the last
        // frame's, boxes included, stay.
        let rebuild = bvh == BvhAction::Rebuilt;
        let clear = match bvh {
            BvhAction::Rebuilt => &[B::BodyState, B::Visits][..],
            BvhAction::Refitted => &[B::Visits][..],
            _ => &[][..],
        };
        for &b in clear {
            encoder.clear_buffer(self.bufs.get(b), 0, Some(self.bufs.used(b)));
            stats.stage(Stage::Bounds).bytes_written += self.bufs.used(b);
        }
        if bvh == BvhAction::Refitted {
            // `min_key` (bytes 0..12) and `max_key` (16..28) of each body.
            let stride = size_of::<BodyState>() as u64;
            for body in 0..p.body_count as u64 {
                for key in [0, 16] {
                    encoder.clear_buffer(self.bufs.get(B::BodyState), body * stride + key, Some(12));
                    stats.stage(Stage::Bounds).add_clear(12);
                }
            }
        }
        let vertex_groups = p.vertex_count.div_ceil(WG_SIZE);
        let tiles = p.tile_count;
        for stage in &TIMED_STAGES[..UPDATE_STAGES] {
            let mut pass = timed_pass(encoder, self.timer.as_ref(), *stage);
            let runs = match stage {
                Stage::Normals => bvh != BvhAction::None,
                Stage::Bounds | Stage::Fit => rebuild || bvh == BvhAction::Refitted,
                _ => rebuild,
            };
            if !runs {
                continue;
            }
            let st = stats.stage(*stage);
            match stage {
                Stage::Normals => self.dispatch(&mut pass, Kernel::VertexNormals, 0, vertex_groups, st),
                Stage::Bounds => self.dispatch(&mut pass, Kernel::TriangleBounds, 0, tiles, st),
                Stage::Morton => self.dispatch(&mut pass, Kernel::Morton, 0, tiles, st),
                Stage::Sort => record_sort(
                    &mut pass,
                    &self.pipelines,
                    |k, sp| self.bufs.group(k, sp),
                    tiles,
                    |k, sp| self.account(k, sp, st),
                ),
                Stage::Hierarchy => self.dispatch(&mut pass, Kernel::Hierarchy, 0, tiles, st),
                Stage::Fit => self.dispatch(&mut pass, Kernel::Fit, 0, tiles, st),
                _ => unreachable!("not a stage of the update"),
            }
        }
        if let Some(t) = &self.timer {
            t.resolve(encoder, UPDATE_STAGES);
        }
    }
}
