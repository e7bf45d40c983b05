//! GPU timestamps around each stage's compute pass, when the adapter has `TIMESTAMP_QUERY`.

use super::buffers::{READBACK, create_buffer};
use crate::context::GpuContext;
use crate::error::Result;
use crate::stats::Stage;

/// Stages of a frame that run in compute passes, in order: the update's, then the detection's.
pub(crate) const TIMED_STAGES: [Stage; 11] = [
    Stage::Normals,
    Stage::Bounds,
    Stage::Morton,
    Stage::Sort,
    Stage::Hierarchy,
    Stage::Fit,
    Stage::Pairs,
    Stage::Rays,
    Stage::Crossings,
    Stage::Contour,
    Stage::Analysis,
];
/// Timed stages of an update alone.
pub(crate) const UPDATE_STAGES: usize = 6;

/// A timestamp query set of two entries per timed stage, and its resolve and readback buffers.
#[derive(Debug)]
pub(crate) struct Timer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

impl Timer {
    /// A timer when the context has timestamps.
    pub fn new(ctx: &GpuContext, allocations: &mut u64) -> Option<Self> {
        if !ctx.has_timestamps() {
            return None;
        }
        let n = 2 * TIMED_STAGES.len() as u32;
        let set = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("raycontact.timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: n,
        });
        let bytes = 8 * n as u64;
        let resolve = create_buffer(
            ctx,
            allocations,
            "raycontact.timestamps.resolve",
            bytes,
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        );
        let read = create_buffer(ctx, allocations, "raycontact.timestamps.read", bytes, READBACK);
        Some(Timer { set, resolve, read })
    }

    /// The timestamp writes of `stage`'s compute pass.
    pub fn writes(&self, stage: Stage) -> wgpu::ComputePassTimestampWrites<'_> {
        let si = TIMED_STAGES.iter().position(|s| *s == stage).expect("a timed stage") as u32;
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * si),
            end_of_pass_write_index: Some(2 * si + 1),
        }
    }

    /// Resolves the first `stages` stages' timestamps and copies them for readback.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder, stages: usize) {
        let n = 2 * stages as u32;
        encoder.resolve_query_set(&self.set, 0..n, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, Some(8 * n as u64));
    }

    /// Per-stage GPU times of the last submitted frame (the update's stages, and the
    /// detection's with `detect`), in nanoseconds. Waits for the GPU.
    pub fn read(&self, ctx: &GpuContext, detect: bool) -> Result<Vec<(Stage, f64)>> {
        let stages = if detect { TIMED_STAGES.len() } else { UPDATE_STAGES };
        let bytes = ctx.read_mapped(&self.read, "raycontact.timestamps.read", 0, 16 * stages as u64)?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let period = ctx.queue().get_timestamp_period() as f64;
        Ok(TIMED_STAGES[..stages]
            .iter()
            .enumerate()
            .map(|(i, s)| (*s, ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period))
            .collect())
    }
}

/// Begins the compute pass of a timed stage, with its timestamps when there is a timer.
pub(crate) fn timed_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    timer: Option<&Timer>,
    stage: Stage,
) -> wgpu::ComputePass<'e> {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(stage.label()),
        timestamp_writes: timer.map(|t| t.writes(stage)),
    })
}
