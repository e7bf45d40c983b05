//! The intersection stages on the GPU (edge–triangle crossings, their contour, global
//! intersection analysis and their contacts), recorded into the detection's encoder after the
//! vertex rays: every per-frame accumulator cleared, then three timed compute passes
//! (`Crossings`, `Contour`, `Analysis`), every count that decides a dispatch kept on the GPU
//! (indirect dispatches from `edge_tiles` and `intersect_args`). `buffers.rs` holds their
//! buffers and bind groups, `readback.rs` their copy to the host.

use super::{GpuDetection, GpuScene};
use crate::kernels::Kernel;
use crate::layout::{INTERSECT_FULL, IntersectParams, WG_SIZE, dispatch_size};
use crate::stats::{FrameStats, Stage, StageStats};

mod buffers;
mod readback;

pub(crate) use buffers::IntersectBuffers;

/// The GPU buffers the intersection stages of the last recorded detection leave their results
/// in (layouts in [`crate::internals::layout`]; counts in `state`).
#[derive(Clone, Copy, Debug)]
pub struct IntersectionBuffers<'a> {
    /// [`IntersectState`](crate::internals::layout::IntersectState): the counters.
    pub state: &'a wgpu::Buffer,
    /// [`CrossingGpu`](crate::internals::layout::CrossingGpu) records, the first
    /// `min(state.crossings, capacity)` valid, in no particular order.
    pub crossings: &'a wgpu::Buffer,
    /// [`ContourGpu`](crate::internals::layout::ContourGpu), one per crossing (full analysis).
    pub contour: &'a wgpu::Buffer,
    /// [`LoopGpu`](crate::internals::layout::LoopGpu) records, `state.loops` of them (full
    /// analysis).
    pub loops: &'a wgpu::Buffer,
    /// [`RegionGpu`](crate::internals::layout::RegionGpu), one per packed vertex (full analysis).
    pub regions: &'a wgpu::Buffer,
}

/// What one detection asks of the intersection stages on the GPU.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IntersectRun {
    /// The kernels' mode code; 0: the stages do not run (nothing is recorded).
    pub mode: u32,
    /// Crossing capacity.
    pub crossings: u64,
    /// Edge-list capacity (0: the buffers' current one).
    pub list: u64,
}

impl GpuScene {
    /// Capacity of the intersection stages' edge list (0 before they first ran).
    pub fn edge_list_capacity(&self) -> u64 {
        self.intersect.as_ref().map_or(0, |b| b.cap.list)
    }

    /// The intersection stages' buffers, when they have run.
    pub fn intersection_buffers(&self) -> Option<IntersectionBuffers<'_>> {
        self.intersect.as_ref().map(|b| IntersectionBuffers {
            state: &b.state,
            crossings: &b.crossings,
            contour: &b.contour,
            loops: &b.loops,
            regions: &b.regions,
        })
    }

    /// Records the intersection stages of detection `d` (`d.intersect`) into `encoder`, their
    /// contacts going to its contact side (and capacity); then `contact_args` when `contact_args`
    /// (in the `Analysis` pass, after the last contact). Their passes are timed only with
    /// `read_back` (a detection this scene reads back). With mode 0 nothing is recorded (no pass,
    /// so no timestamps), and `contact_args` is the caller's.
    pub(in crate::gpu) fn record_intersections(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        d: &GpuDetection,
        contact_args: bool,
        read_back: bool,
        stats: &mut FrameStats,
    ) {
        let (run, side, contacts) = (&d.intersect, d.side, d.contacts);
        if run.mode == 0 {
            return;
        }
        self.fit_intersections(run.crossings, run.list);
        let b = self.intersect.as_ref().expect("intersection buffers");
        let full = run.mode == INTERSECT_FULL;
        let (edges, vertices) = (self.edges.len() as u32, self.params.vertex_count);
        let params = IntersectParams {
            mode: run.mode,
            crossing_capacity: b.cap.crossings.min(u32::MAX as u64) as u32,
            edge_source_capacity: b.cap.list.min(u32::MAX as u64) as u32,
            table_mask: (b.cap.table() - 1) as u32,
            edge_count: edges,
            vertex_count: vertices,
            body_count: self.params.body_count,
            contact_capacity: contacts.min(u32::MAX as u64) as u32,
            pair_capacity: self.bufs.capacity().pairs as u32,
            tri_count: self.params.tri_count,
            ..Default::default()
        };
        self.ctx.queue().write_buffer(&b.params, 0, bytemuck::bytes_of(&params));
        let mut clear = |buffer: &wgpu::Buffer, bytes: u64, stage: Stage| {
            encoder.clear_buffer(buffer, 0, Some(bytes));
            stats.stage(stage).bytes_written += bytes;
        };
        clear(&b.state, buffers::STATE_BYTES, Stage::Crossings);
        if full {
            clear(&b.contour, buffers::CONTOUR_BYTES * b.cap.crossings, Stage::Contour);
            clear(&b.table, 4 * b.cap.table(), Stage::Contour);
            clear(&b.marks, 4 * edges as u64, Stage::Contour);
            clear(&b.regions, buffers::REGION_BYTES * vertices as u64, Stage::Analysis);
        }
        let timer = self.timer_for(read_back);
        {
            let mut pass = super::timer::timed_pass(encoder, timer, Stage::Crossings, stats);
            let st = stats.stage(Stage::Crossings);
            self.run(&mut pass, Kernel::EdgeTiles, side, 1, st);
            self.run_indirect(&mut pass, Kernel::EdgeSources, side, 0, st);
            self.run(&mut pass, Kernel::IntersectArgs, side, 1, st);
            self.run_indirect(&mut pass, Kernel::Crossings, side, 16, st);
            self.run(&mut pass, Kernel::IntersectArgs, side, 1, st);
        }
        if full {
            // (Crossings alone have no contour: no pass, so no empty pass's timestamps.)
            let mut pass = super::timer::timed_pass(encoder, timer, Stage::Contour, stats);
            let st = stats.stage(Stage::Contour);
            for k in
                [Kernel::CrossingLinks, Kernel::ContourHook, Kernel::ContourCompress, Kernel::ContourStart]
            {
                self.run_indirect(&mut pass, k, side, 32, st);
            }
        }
        let mut pass = super::timer::timed_pass(encoder, timer, Stage::Analysis, stats);
        let st = stats.stage(Stage::Analysis);
        if full {
            self.run(&mut pass, Kernel::RegionsHook, side, edges.div_ceil(WG_SIZE), st);
            self.run(&mut pass, Kernel::RegionAreas, side, vertices.div_ceil(WG_SIZE), st);
            self.run_indirect(&mut pass, Kernel::WrongSide, side, 32, st);
            self.run_indirect(&mut pass, Kernel::ContourWalk, side, 32, st);
            self.run(&mut pass, Kernel::UntangleContacts, side, vertices.div_ceil(WG_SIZE), st);
        }
        self.run_indirect(&mut pass, Kernel::EdgeContacts, side, 32, st);
        if contact_args {
            self.dispatch(&mut pass, Kernel::ContactArgs, side, 1, st);
        }
    }

    /// A dispatch of intersection kernel `k` over `groups` workgroups.
    fn run(&self, pass: &mut wgpu::ComputePass<'_>, k: Kernel, side: u32, groups: u32, st: &mut StageStats) {
        if groups == 0 {
            return;
        }
        let b = self.intersect.as_ref().expect("intersection buffers");
        pass.set_pipeline(self.pipelines.pipeline(k));
        pass.set_bind_group(0, b.group(k, side), &[]);
        let (x, y) = dispatch_size(groups);
        pass.dispatch_workgroups(x, y, 1);
        self.account_intersection(k, st);
    }

    /// An indirect dispatch of intersection kernel `k` with the arguments at byte `offset` of
    /// the stages' argument buffer.
    fn run_indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        k: Kernel,
        side: u32,
        offset: u64,
        st: &mut StageStats,
    ) {
        let b = self.intersect.as_ref().expect("intersection buffers");
        pass.set_pipeline(self.pipelines.pipeline(k));
        pass.set_bind_group(0, b.group(k, side), &[]);
        pass.dispatch_workgroups_indirect(&b.args, offset);
        self.account_intersection(k, st);
    }

    /// Counts a dispatch of intersection kernel `k` and the bytes of the buffers it binds (their
    /// capacities: the counts live on the GPU).
    fn account_intersection(&self, k: Kernel, st: &mut StageStats) {
        st.dispatches += 1;
        let b = self.intersect.as_ref().expect("intersection buffers");
        for (bytes, writes) in b.bound_bytes(self, k) {
            st.bytes_read += bytes;
            if writes {
                st.bytes_written += bytes;
            }
        }
    }
}
