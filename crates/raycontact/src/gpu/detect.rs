//! A detection plan on the GPU: recorded (broad phase or listed pairs, the source vertices
//! within reach, the narrow phase as an indirect dispatch; or the iterative pass's walks),
//! submitted and read back; and the one grow-and-re-run loop, for full and iterative passes
//! alike, when the source list or the contact buffer was short.

use web_time::Instant;

use super::GpuScene;
use super::buffers::{B, contact_sides};
use super::timer::timed_pass;
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::layout::{
    BROAD_IN_TILES_BODIES, BodyPair, DETECT_BROAD_IN_TILES, DETECT_NO_INVERSION, DETECT_REMEMBER_EXIT,
    DetectParams, DetectState, PAIRS_OFFSET, WG_SIZE,
};
use crate::plan::{
    DetectPlan, Outcome, Pass, fills_most, grown_capacity, on_crossing_overflow, on_overflow, with_headroom,
};
use crate::stats::{FrameStats, Stage};

/// Attempts of one detection: the first, a re-run with a longer source list and edge list, one
/// with a larger crossing buffer, one with a larger contact buffer. More means the counts
/// changed between identical runs, which is a bug.
const MAX_ATTEMPTS: u32 = 4;

/// The first counter of [`DetectState`] an iterative pass resets (the pair count stays).
const COUNTERS_START: u64 = std::mem::offset_of!(DetectState, sources) as u64;

/// The GPU side of one detection: the ping-pong side it writes and the capacities it runs with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GpuDetection {
    /// The contact side it writes.
    pub(super) side: u32,
    /// Its contact capacity.
    pub(super) contacts: u64,
    sources: u64,
    /// The intersection stages: mode, crossing capacity, edge-list capacity.
    pub(super) intersect: super::IntersectRun,
}

impl GpuScene {
    /// Starts a detection of `plan`: the contacts go to the other ping-pong side than last
    /// frame's (which an iterative pass reads).
    fn begin(&self, plan: &DetectPlan) -> GpuDetection {
        GpuDetection {
            side: self.side ^ 1,
            contacts: plan.contact_capacity,
            sources: plan.source_need.max(self.source_headroom),
            intersect: super::IntersectRun {
                mode: plan.intersect.mode,
                crossings: plan.intersect.crossing_capacity,
                list: 0,
            },
        }
    }

    /// Grows the detection's buffers to `d`'s capacities, and zeroes new contact buffers
    /// (`Buffers::clear_new_contacts`, counted in `stats`' rays stage). An iterative pass reads
    /// last frame's contacts and pair list: a buffer replaced under it gets its old contents
    /// copied over in `encoder` first (after that clear).
    fn reserve(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &DetectPlan,
        d: &GpuDetection,
        stats: &mut FrameStats,
    ) {
        let replaced =
            self.bufs.fit_detect(&self.ctx, &self.pipelines, plan.pair_capacity, d.contacts, d.sources);
        self.bufs.clear_new_contacts(encoder, stats.stage(Stage::Rays));
        if matches!(plan.pass, Pass::Iterative { .. }) {
            for (b, old, bytes) in replaced {
                encoder.copy_buffer_to_buffer(&old, 0, self.bufs.get(b), 0, Some(bytes));
            }
        }
    }

    /// Records `plan` after this frame's update into `encoder`, without submitting it or reading
    /// anything back: the contacts stay on the GPU ([`GpuScene::contact_buffers`]). Its passes
    /// write no timestamps (nothing would resolve or read them).
    pub fn record_detect_only(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &DetectPlan,
        stats: &mut FrameStats,
    ) {
        let d = self.begin(plan);
        self.reserve(encoder, plan, &d, stats);
        self.record_detect(encoder, plan, &d, false, stats);
    }

    /// Runs `plan`: records it into `encoder` (which holds this frame's update), submits, reads
    /// the counters and contacts back, and re-runs the rays (the BVHs stay valid) while the
    /// source list or, under [`crate::OverflowPolicy::Grow`], the contact buffer was short.
    pub async fn detect(
        &mut self,
        mut encoder: wgpu::CommandEncoder,
        plan: &DetectPlan,
        stats: &mut FrameStats,
        blocking: bool,
    ) -> Result<Outcome> {
        let mut d = self.begin(plan);
        for _ in 0..MAX_ATTEMPTS {
            let start = Instant::now();
            self.reserve(&mut encoder, plan, &d, stats);
            let (copied, copied_crossings) = self.record_detect(&mut encoder, plan, &d, true, stats);
            let submit = Instant::now();
            self.ctx.queue().submit([encoder.finish()]);
            stats.host.record_ns += (submit - start).as_nanos() as f64;
            stats.host.submit_ns += submit.elapsed().as_nanos() as f64;
            let (state, contacts) = self.read_detect(copied, d.contacts, stats, blocking).await?;
            let mode = d.intersect.mode;
            let intersections = self.read_intersections(mode, copied_crossings, stats, blocking).await?;
            encoder = self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("raycontact.detect.rerun"),
            });
            let mut short = false;
            if plan.pass == Pass::Full && state.sources as u64 > self.source_capacity() {
                // More source vertices within reach than the list holds (an internal buffer,
                // grown whatever the overflow policy, as a contact buffer grows).
                // (Never past what a full pass can list, and never below what this one did.)
                let listed = state.sources as u64;
                d.sources = grown_capacity(listed).min(plan.source_most).max(listed);
                short = true;
            }
            let listed = intersections.state.edge_sources as u64;
            if mode != 0 && listed > self.edge_list_capacity() {
                // The same for the edges the crossings trace.
                d.intersect.list = listed;
                short = true;
            }
            if short {
                self.recycle_contacts(contacts);
                continue;
            }
            if mode != 0 {
                let found = intersections.state.crossings as u64;
                let capacity = on_crossing_overflow(plan.overflow, found, d.intersect.crossings)?;
                if capacity != d.intersect.crossings {
                    d.intersect.crossings = capacity;
                    self.recycle_contacts(contacts);
                    continue;
                }
            }
            let found = state.contact_count as u64;
            let capacity = on_overflow(plan.overflow, found, d.contacts)?;
            if capacity != d.contacts {
                d.contacts = capacity;
                self.recycle_contacts(contacts);
                continue;
            }
            // A list or buffer filled past three quarters grows before the next frame (its
            // `reserve`), so that a count rising from frame to frame does not make that frame
            // cast its rays twice: the source list, and under the Grow policy the contact and
            // crossing buffers.
            let sources = state.sources as u64;
            if plan.pass == Pass::Full {
                self.last_source_count = Some(sources);
            }
            if plan.pass == Pass::Full && fills_most(sources, self.source_capacity()) {
                // Never past what a full pass can list.
                self.source_headroom = grown_capacity(sources).min(plan.source_most);
            }
            let crossings = intersections.state.crossings as u64;
            return Ok(Outcome {
                contacts,
                pairs: state.pair_count,
                walked: state.walked,
                walk: state.walk,
                // 0 in an iterative pass, which clears the counters from `sources` on.
                sources: state.sources,
                unreached: state.unreached,
                contact_capacity: with_headroom(plan.overflow, found, d.contacts),
                intersections,
                crossing_capacity: with_headroom(plan.overflow, crossings, d.intersect.crossings),
            });
        }
        Err(Error::Gpu {
            context: "detect",
            message: format!("the counts changed between {MAX_ATTEMPTS} runs of the same detection"),
        })
    }

    /// Records the detection: parameters, then a full pass (the pairs — `plan`'s list, or every
    /// pair whose boxes overlap, found on the GPU — their workgroup layout, the source vertices
    /// within reach and the narrow phase as an indirect dispatch) or an iterative pass
    /// (`walk_contacts` over the other side's contacts, with the pair list of the last full
    /// pass). With `plan.remember` or without `readback`, `contact_args` records the indirect
    /// arguments over the contacts (for the next frame's walks, or a GPU consumer). With
    /// `readback`, the passes are timed (when the scene times them) and the counters and the
    /// first contacts are copied for readback; returns how many contacts that copy holds. The
    /// intersection stages follow the rays (`contact_args` then comes after their contacts),
    /// with their own copy: returns how many crossings it holds.
    fn record_detect(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &DetectPlan,
        d: &GpuDetection,
        readback: bool,
        stats: &mut FrameStats,
    ) -> (u64, u64) {
        let q = self.ctx.queue().clone();
        let (walk_fallback, walk_reach) = match plan.pass {
            Pass::Full => (0, 0.0),
            Pass::Iterative { fallback, reach } => (fallback, reach),
        };
        let (self_collision, prediction) = plan.pairs.broad_phase();
        // A full pass finding the pairs of few bodies runs the broad phase inside `pair_tiles`.
        let broad_in_tiles = plan.pass == Pass::Full
            && plan.pairs.list().is_none()
            && self.params.body_count <= BROAD_IN_TILES_BODIES;
        let params = DetectParams {
            pair_capacity: self.bufs.capacity().pairs as u32,
            contact_capacity: d.contacts.min(u32::MAX as u64) as u32,
            body_count: self.params.body_count,
            self_collision,
            prediction,
            walk_fallback,
            walk_reach,
            flags: if plan.remember { DETECT_REMEMBER_EXIT } else { 0 }
                | if plan.inversions { 0 } else { DETECT_NO_INVERSION }
                | if broad_in_tiles { DETECT_BROAD_IN_TILES } else { 0 },
            source_capacity: self.bufs.capacity().sources.min(u32::MAX as u64) as u32,
            vertex_count: self.params.vertex_count,
            tri_count: self.params.tri_count,
            side: d.side & 1,
        };
        q.write_buffer(self.bufs.get(B::DetectParams), 0, bytemuck::bytes_of(&params));
        let b = self.params.body_count as u64;
        if plan.pass == Pass::Full {
            let list = plan.pairs.list();
            if let Some(l) = list.filter(|l| !l.is_empty()) {
                q.write_buffer(self.bufs.get(B::Pairs), PAIRS_OFFSET, bytemuck::cast_slice(l));
            }
            let state = DetectState { pair_count: list.map_or(0, |l| l.len() as u32), ..Default::default() };
            q.write_buffer(self.bufs.get(B::Pairs), 0, bytemuck::bytes_of(&state));
            let pairs = list.map_or((b * (b + 1) / 2).max(1), |l| l.len() as u64);
            self.bufs.set_used(B::Pairs, PAIRS_OFFSET + size_of::<BodyPair>() as u64 * pairs);
            self.bufs.set_used(B::TileOffsets, 4 * (2 * pairs + 1));
            // The entries the kernels write and read: the last full pass's count (the list is
            // sized for every source the pairs can list, most of it unused), or the whole list.
            let capacity = self.bufs.capacity().sources;
            self.bufs.set_used(B::Sources, 8 * self.last_source_count.map_or(capacity, |n| n.min(capacity)));
            // The exit memo after the list (`narrow_phase.wgsl`): the words of the bodies that
            // moved since the last full pass emptied, the others' kept (a buffer grown since
            // holds none: all unknown).
            let (sources, memo) = (self.bufs.get(B::Sources), 8 * capacity);
            self.kept.take_stale_exits(|first, count| {
                encoder.clear_buffer(sources, memo + 4 * u64::from(first), Some(4 * u64::from(count)));
            });
        } else {
            // The pair list and its workgroup layout stay those of the last full pass; only the
            // counters after the pair count start again (not `stored`, which this pass reads).
            // Cleared in the encoder, after `reserve` copied a grown pair list over.
            let counters = std::mem::offset_of!(DetectState, stored) as u64 - COUNTERS_START;
            encoder.clear_buffer(self.bufs.get(B::Pairs), COUNTERS_START, Some(counters));
        }
        if plan.pass == Pass::Full {
            // (An iterative pass keeps the last full pass's pairs: no pass.)
            let mut pass = timed_pass(encoder, self.timer_for(readback), Stage::Pairs, stats);
            let st = stats.stage(Stage::Pairs);
            if plan.pairs.list().is_none() && !broad_in_tiles {
                let groups = (b * b).div_ceil(WG_SIZE as u64) as u32;
                self.dispatch(&mut pass, Kernel::BroadPhase, 0, groups, st);
            }
            self.dispatch(&mut pass, Kernel::PairTiles, 0, 1, st);
            // The source vertices within reach, then the narrow phase's dispatch over them.
            self.dispatch_indirect(&mut pass, Kernel::RaySources, 0, B::Dispatch, st);
            self.dispatch(&mut pass, Kernel::SourceArgs, 0, 1, st);
        }
        let ((cur, _), (_, prev_args)) = contact_sides(d.side);
        {
            let mut pass = timed_pass(encoder, self.timer_for(readback), Stage::Rays, stats);
            let st = stats.stage(Stage::Rays);
            match plan.pass {
                Pass::Full => self.dispatch_indirect(&mut pass, Kernel::NarrowPhase, d.side, B::Dispatch, st),
                Pass::Iterative { .. } => {
                    self.dispatch_indirect(&mut pass, Kernel::WalkContacts, d.side, prev_args, st)
                }
            }
            if (plan.remember || !readback) && d.intersect.mode == 0 {
                self.dispatch(&mut pass, Kernel::ContactArgs, d.side, 1, st);
            }
        }
        let contact_args = plan.remember || !readback;
        self.record_intersections(encoder, d, contact_args, readback, stats);
        self.side = d.side;
        if !readback {
            return (0, 0);
        }
        let k = self.readback_contacts(d.contacts);
        self.record_contact_copy(encoder, cur, k, stats);
        (k, self.record_intersection_copy(encoder, d.intersect.mode, stats))
    }
}
