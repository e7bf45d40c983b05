//! GPU timestamps around each stage's compute pass, when the adapter has `TIMESTAMP_QUERY`.
//!
//! A stage that does not run this frame records no pass, so writes no timestamps: its times
//! are not resolved, read or reported. An empty pass with timestamps costs a software adapter
//! about what a small dispatch does: on lavapipe, with every stage's pass recorded, resting-pile's
//! iterative frame (which runs one of the eleven timed stages) took 4.58/4.40/4.49 ms and
//! slow-pair's 0.94/0.91/0.90; without the empty passes 4.11/4.13/4.16 and 0.55/0.52/0.54
//! (`raycontact-bench --no-parry --implementations gpu,gpu-refit,gpu-walk`, 3 runs alternated).
//!
//! A detection copies its frame's timestamps into its contact readback, after the counters, and
//! reads them from the same mapping ([`Timer::resolve_into`], [`Timer::times`]): one mapping a
//! frame, where a buffer of the timer's own was mapped and waited for after the contacts. An
//! update alone (`Scene::update`) still reads them from that buffer ([`Timer::read`]): it reads
//! nothing else back. On lavapipe the second mapping had cost too little to measure (GPU frames,
//! two mappings against one, three alternated runs: `hermann-tori` 2.91-2.97 against
//! 2.87-3.02 ms, `slow-pair` 2.82-2.92 against 2.78-2.92, `resting-pile` 37.98-38.88 against
//! 37.27-38.04); on a GPU each mapping is a wait on the device's queue, and the timestamps are
//! now read without a vector made for them.

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

/// Bytes of every timed stage's two timestamps in a readback ([`Timer::resolve_into`]).
pub(crate) const TIMES_BYTES: u64 = 16 * TIMED_STAGES.len() as u64;

/// A timestamp query set of two entries per timed stage, its resolve buffer, and the readback
/// of an update's times (a detection's go into its contact readback).
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
        // The update's stages (`read`); a detection's go with its contacts (`resolve_into`).
        let bytes = 16 * UPDATE_STAGES as u64;
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

    /// Resolves the timestamps of the update's stages written and copies them for
    /// [`Self::read`] (an update alone: a detection's go with its contacts,
    /// [`Self::resolve_into`]).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        self.resolve_into(encoder, false, &self.read, 0);
    }

    /// Resolves the timestamps of the stages written (the update's, and the detection's with
    /// `detect`), each run of consecutive ones at once, and copies them into `read` from byte
    /// `at` ([`TIMES_BYTES`] there), to be read with what else it holds ([`Self::times`]): the
    /// detection's contact readback, so that a detection maps one buffer, not two.
    pub fn resolve_into(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        detect: bool,
        read: &wgpu::Buffer,
        at: u64,
    ) {
        let written = self.written_of(detect);
        let mut i = 0;
        while written >> i != 0 {
            if written & (1 << i) == 0 {
                i += 1;
                continue;
            }
            let first = i;
            while written & (1 << i) != 0 {
                i += 1;
            }
            // Resolved at an aligned offset of its own (runs are apart, so they do not
            // overlap), then copied to its place in the readback.
            let queries = 2 * first as u32..2 * i as u32;
            let resolved = RESOLVE_STRIDE * first as u64;
            encoder.resolve_query_set(&self.set, queries.clone(), &self.resolve, resolved);
            let bytes = 8 * queries.len() as u64;
            encoder.copy_buffer_to_buffer(&self.resolve, resolved, read, at + 16 * first as u64, Some(bytes));
        }
    }

    /// Bytes of the stages' timestamps up to the last stage written (`written`: bit i for
    /// `TIMED_STAGES[i]`).
    fn end(written: u32) -> u64 {
        16 * (32 - written.leading_zeros()) as u64
    }

    /// Puts the GPU times of the stages the last submitted update timed into `stats`, in
    /// nanoseconds, with the bytes read back. Waits for the GPU where the update timed a stage
    /// (its mapping waits for the submission): returns whether it did.
    pub fn read(&self, ctx: &GpuContext, stats: &mut FrameStats) -> Result<bool> {
        let end = Self::end(self.written_of(false));
        if end == 0 {
            return Ok(false);
        }
        let label = "raycontact.timestamps.read";
        let read =
            ctx.map_read_async(&self.read, label, 0, end, true, |bytes| self.times(ctx, false, bytes, stats));
        crate::blocking::block_on(label, read)??;
        Ok(true)
    }

    /// The stages written (bit i for `TIMED_STAGES[i]`): the update's, and the detection's with
    /// `detect`.
    fn written_of(&self, detect: bool) -> u32 {
        let stages = if detect { TIMED_STAGES.len() } else { UPDATE_STAGES };
        self.written.load(Ordering::Relaxed) & ((1 << stages) - 1)
    }

    /// Puts the GPU times of the stages the last submitted frame timed (the update's, and the
    /// detection's with `detect`) into `stats`, in nanoseconds, from `bytes`: what
    /// [`Self::resolve_into`] copied, from the byte it copied them to. Counted as read back.
    pub fn times(&self, ctx: &GpuContext, detect: bool, bytes: &[u8], stats: &mut FrameStats) {
        let written = self.written_of(detect);
        let end = Self::end(written) as usize;
        let tick = |j: usize| bytemuck::pod_read_unaligned::<u64>(&bytes[8 * j..8 * j + 8]);
        let period = ctx.queue().get_timestamp_period() as f64;
        for (i, s) in TIMED_STAGES[..end / 16].iter().enumerate().filter(|(i, _)| written & (1 << i) != 0) {
            stats.stage(*s).gpu_ns = Some(tick(2 * i + 1).saturating_sub(tick(2 * i)) as f64 * period);
        }
        stats.bytes_read_back += end as u64;
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
