//! GPU timestamps around each stage's compute pass, when the adapter has `TIMESTAMP_QUERY`.
//!
//! A stage that does not run this frame records no pass, so writes no timestamps: its times
//! are not resolved, read or reported. An empty pass with timestamps costs a software adapter
//! about what a small dispatch does: on lavapipe, with every stage's pass recorded, resting-pile's
//! iterative frame (which runs one of the eleven timed stages) took 4.58/4.40/4.49 ms and
//! slow-pair's 0.94/0.91/0.90; without the empty passes 4.11/4.13/4.16 and 0.55/0.52/0.54
//! (`raycontact-bench --no-parry --implementations gpu,gpu-refit,gpu-walk`, 3 runs alternated).

use std::sync::atomic::{AtomicU32, Ordering};

use super::buffers::{READBACK, create_buffer};
use crate::context::GpuContext;
use crate::error::Result;
use crate::stats::{FrameStats, Stage};

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

/// Bytes of the resolve buffer per timed stage: a run of written stages starting at stage i is
/// resolved at `i` of these (a resolve's offset must be a multiple of this).
const RESOLVE_STRIDE: u64 = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;

/// A timestamp query set of two entries per timed stage, and its resolve and readback buffers.
#[derive(Debug)]
pub(crate) struct Timer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    /// The stages whose timestamps the frame being recorded (or last submitted) writes: bit i
    /// for `TIMED_STAGES[i]`. (Atomic only so that the timer is shared as `&self`.)
    written: AtomicU32,
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
            RESOLVE_STRIDE * TIMED_STAGES.len() as u64,
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        );
        let read = create_buffer(ctx, allocations, "raycontact.timestamps.read", bytes, READBACK);
        Some(Timer { set, resolve, read, written: AtomicU32::new(0) })
    }

    /// A new frame's recording: no stage's timestamps written yet.
    pub fn begin_frame(&self) {
        self.written.store(0, Ordering::Relaxed);
    }

    /// The timestamp writes of `stage`'s compute pass (marked written).
    pub fn writes(&self, stage: Stage) -> wgpu::ComputePassTimestampWrites<'_> {
        let si = TIMED_STAGES.iter().position(|s| *s == stage).expect("a timed stage") as u32;
        self.written.fetch_or(1 << si, Ordering::Relaxed);
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * si),
            end_of_pass_write_index: Some(2 * si + 1),
        }
    }

    /// Resolves the timestamps of the stages written (the update's, and the detection's with
    /// `detect`), each run of consecutive ones at once, and copies them for readback.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder, detect: bool) {
        let stages = if detect { TIMED_STAGES.len() } else { UPDATE_STAGES };
        let written = self.written.load(Ordering::Relaxed);
        let mut i = 0;
        while i < stages {
            if written & (1 << i) == 0 {
                i += 1;
                continue;
            }
            let first = i;
            while i < stages && written & (1 << i) != 0 {
                i += 1;
            }
            // Resolved at an aligned offset of its own (runs are apart, so they do not
            // overlap), then copied to its place in the readback.
            let queries = 2 * first as u32..2 * i as u32;
            let at = RESOLVE_STRIDE * first as u64;
            encoder.resolve_query_set(&self.set, queries.clone(), &self.resolve, at);
            let bytes = 8 * queries.len() as u64;
            encoder.copy_buffer_to_buffer(&self.resolve, at, &self.read, 16 * first as u64, Some(bytes));
        }
    }

    /// Puts the GPU times of the stages the last submitted frame timed (the update's, and the
    /// detection's with `detect`) into `stats`, in nanoseconds, with the bytes read back.
    /// Waits for the GPU.
    pub fn read(&self, ctx: &GpuContext, detect: bool, stats: &mut FrameStats) -> Result<()> {
        let stages = if detect { TIMED_STAGES.len() } else { UPDATE_STAGES };
        let written = self.written.load(Ordering::Relaxed) & ((1 << stages) - 1);
        if written == 0 {
            return Ok(());
        }
        // Up to the last stage written.
        let end = 32 - written.leading_zeros() as u64;
        let bytes = ctx.read_mapped(&self.read, "raycontact.timestamps.read", 0, 16 * end)?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let period = ctx.queue().get_timestamp_period() as f64;
        for (i, s) in TIMED_STAGES[..end as usize].iter().enumerate().filter(|(i, _)| written & (1 << i) != 0)
        {
            stats.stage(*s).gpu_ns = Some(ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period);
        }
        stats.bytes_read_back += 16 * end;
        Ok(())
    }
}

/// Begins the compute pass of a timed stage, with its timestamps (counted in `stats`) when there
/// is a timer. Only for a stage that runs (records a dispatch or a copy): see the module's
/// header.
pub(crate) fn timed_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    timer: Option<&Timer>,
    stage: Stage,
    stats: &mut FrameStats,
) -> wgpu::ComputePass<'e> {
    if timer.is_some() {
        stats.stage(stage).timestamps += 2;
    }
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(stage.label()),
        timestamp_writes: timer.map(|t| t.writes(stage)),
    })
}
