//! The frame: a new packing when bodies were added or removed, the positions set since the last
//! frame uploaded, and the per-frame stages (normals to fit) on the scene's backend.

use glam::Vec3;

use super::Scene;
use crate::backend::Engine;
use crate::body::BodyId;
use crate::cpu_backend::TreeWork;
use crate::error::{Error, Result};
use crate::kernels::{KernelGroups, WarmedUp};
use crate::packing::Packing;
use crate::stats::{BvhAction, FrameStats};

/// The most vertices of bodies that did not move that a run of moved bodies' positions takes in
/// (`Scene::stage_moved_positions`): 48 KiB written again rather than a second write. A
/// judgment, not a measurement (on lavapipe a staging buffer costs little): a buffer's creation,
/// mapping and copy command cost a driver about what copying tens of kilobytes costs.
const STILL_GAP: u32 = 4096;

impl Scene {
    /// Warms up, on the scene's GPU context, the kernels its detections run as it is set now
    /// ([`GpuContext::warm_up`](crate::GpuContext::warm_up)): a detection's
    /// ([`KernelGroups::DETECTION`]), iterative detection's where [`Scene::set_iterative`] set
    /// it ([`KernelGroups::ITERATIVE`]) and the intersection stages' where they are on
    /// ([`KernelGroups::INTERSECTIONS`]); those that no earlier warm-up of the context ran. The
    /// response and the ray queries, which a scene runs only when asked, are the caller's to
    /// add ([`KernelGroups::RESPONSE`], [`KernelGroups::RAY_QUERIES`]). A CPU scene has nothing
    /// to warm up. Errors: those of [`GpuContext::warm_up`](crate::GpuContext::warm_up).
    pub fn warm_up(&self) -> Result<WarmedUp> {
        let Engine::Gpu(g) = &self.engine else { return Ok(WarmedUp::default()) };
        let mut groups = KernelGroups::DETECTION;
        if self.iterative.is_some() {
            groups |= KernelGroups::ITERATIVE;
        }
        if self.intersections != crate::IntersectionMode::Off {
            groups |= KernelGroups::INTERSECTIONS;
        }
        g.ctx().warm_up(groups)
    }

    /// Computes normals and boxes and rebuilds (or refits, as [`Scene::set_bvh_update`] says)
    /// the BVHs of all bodies for the positions set since the last update, and waits for it: on
    /// the GPU, one submission. Returns the frame's figures (GPU stage times when the adapter has
    /// timestamps; stage wall times on the CPU backend; what it did to the BVHs).
    ///
    /// Each update, like each detection, is a frame: its positions are the previous positions
    /// of the next one (what inversion handling and the response compare against). So a
    /// detection that follows an update with no positions set in between sees no motion: where
    /// the contacts need the step's motion, detect alone ([`Scene::detect`] updates the BVHs
    /// too, and leaves them fresh for ray queries after a full pass; on the CPU backend it
    /// builds the trees of the bodies in its pairs, and a moving body in none gets its trees
    /// when first read, the same trees). A frame in which nothing
    /// changed since the last one that brought the BVHs up to date (no position changed, no body
    /// added, removed or made static) keeps that frame's normals, boxes and BVHs and records
    /// none of their stages ([`BvhAction::Kept`]): a detection after an update casts its rays
    /// and nothing more.
    pub fn update(&mut self) -> Result<FrameStats> {
        if let Engine::Gpu(g) = &self.engine {
            let ctx = g.ctx().clone();
            let done = ctx.scoped("update", || {
                let mut enc = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("raycontact.update"),
                });
                let mut stats = self.record_update_frame(&mut enc, true);
                let Engine::Gpu(g) = &self.engine else { unreachable!("matched above") };
                g.resolve_timings(&mut enc);
                ctx.queue().submit([enc.finish()]);
                // Reading the stage times waits for the submission (one wait, not two); without
                // any to read, the update waits for it.
                if !g.read_timings(&mut stats)? {
                    ctx.wait("update")?;
                }
                Ok(stats)
            });
            // A failed update leaves the trees unknown: the next frame updates them.
            self.fresh &= done.is_ok();
            return done;
        }
        Ok(self.on_cpu_pool(|s| {
            let first = s.prepare_layout();
            s.run_cpu_frame(s.tree_work(first, true, true), false)
        }))
    }

    /// Records the frame of [`Scene::update`] into `encoder` without submitting it: the caller
    /// submits (once per frame, with its own work if it likes). Positions set before this call
    /// are uploaded by the queue at that submission. No pass writes GPU timestamps (nothing
    /// would read them: the stages' `gpu_ns` are `None`). GPU scenes only
    /// ([`Error::InvalidInput`] on the CPU backend).
    pub fn record_update(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<FrameStats> {
        if !matches!(self.engine, Engine::Gpu(_)) {
            return Err(Error::InvalidInput { what: "record_update needs a GPU scene".into() });
        }
        Ok(self.record_update_frame(encoder, false))
    }

    /// The frame of [`Scene::update`] recorded into `encoder`, timed only where the scene reads
    /// it back (`read_back`: [`Scene::update`], not [`Scene::record_update`]). GPU scenes only.
    fn record_update_frame(&mut self, encoder: &mut wgpu::CommandEncoder, read_back: bool) -> FrameStats {
        let first = self.prepare_layout();
        let work = self.tree_work(first, true, true);
        self.record_gpu_frame(encoder, first, work, read_back)
    }

    /// Applies a new packing when bodies were added or removed since the last frame; returns
    /// whether it did (the frame then starts from the bodies' current positions).
    pub(super) fn prepare_layout(&mut self) -> bool {
        let first = std::mem::take(&mut self.relayout);
        if first {
            let bodies = self.slots.iter().enumerate().filter_map(|(i, s)| {
                s.body.as_ref().map(|b| (BodyId { index: i as u32, generation: s.generation }, &b.data))
            });
            self.packing = Packing::build(bodies);
            let current = self.packed_positions(false);
            let previous = self.packed_positions(true);
            match &mut self.engine {
                Engine::Gpu(g) => g.set_packing(&self.packing, &current, &previous, self.contact_capacity),
                Engine::Cpu(c) => c.set_packing(&self.packing, current, previous),
            }
        }
        first
    }

    fn packed_positions(&self, frame: bool) -> Vec<Vec3> {
        let mut out = Vec::with_capacity(self.packing.params.vertex_count as usize);
        for id in &self.packing.ids {
            let b = self.body(*id).expect("packed bodies are live");
            out.extend_from_slice(if frame { b.frame_positions() } else { &b.data.positions });
        }
        out
    }

    /// Records the GPU frame (the trees as `work` asks, after a new packing when `first`) and
    /// marks the bodies' positions as the frame's; with timestamps (when timed) only where the
    /// scene submits and reads it (`read_back`). GPU scenes only.
    pub(super) fn record_gpu_frame(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        first: bool,
        work: TreeWork,
        read_back: bool,
    ) -> FrameStats {
        if !first {
            // (A new packing uploaded every body's positions.)
            self.stage_moved_positions();
        }
        let bvh = self.gpu_tree_action(work);
        // The stages to record: none for a frame that leaves even the normals (reported as kept).
        let stages = if work == TreeWork::Untouched { BvhAction::None } else { bvh.action };
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("a GPU scene") };
        let before = g.allocations();
        let mut stats = FrameStats::default();
        g.record_frame(encoder, !first, stages, read_back, &mut stats);
        stats.buffers_allocated = g.allocations() - before;
        stats.bvh = bvh;
        self.write_rest_trees(&mut stats);
        self.finish_frame(bvh.action != BvhAction::Kept);
        stats
    }

    /// Hands the GPU the positions set since the last frame: every moved body marked, and the
    /// positions of the moved bodies written into the upload buffer, one write for each run of
    /// them (bodies are packed in order, so are their vertices). wgpu makes a staging buffer
    /// and a copy for each write, whatever its size, so a run goes on past bodies that did not
    /// move, their positions written again (those the GPU has), while they hold at most
    /// [`STILL_GAP`] vertices. GPU scenes only.
    fn stage_moved_positions(&mut self) {
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("a GPU scene") };
        let (slots, packing) = (&self.slots, &self.packing);
        let body =
            |b: usize| slots[packing.ids[b].index as usize].body.as_ref().expect("packed bodies are live");
        // The run so far: packed bodies `first..end`, whose vertices end before `end_vertex`.
        let mut run: Option<(usize, usize, u32)> = None;
        let stage = |g: &mut crate::gpu::GpuScene, (first, end, _): (usize, usize, u32)| {
            let positions = (first..end).map(|k| body(k).data.positions.as_slice());
            g.stage_positions(packing.bodies[first].vertex_offset, positions);
        };
        for (b, packed) in packing.bodies.iter().enumerate() {
            if !body(b).moved {
                continue;
            }
            g.mark_moved(b);
            if let Some(m) = &mut self.gpu_mirror {
                m.mark_moved(b);
            }
            let end_vertex = packed.vertex_offset + packed.vertex_count;
            let still = |run_end: u32| packed.vertex_offset.checked_sub(run_end);
            match &mut run {
                Some((_, end, run_end)) if still(*run_end).is_some_and(|gap| gap <= STILL_GAP) => {
                    (*end, *run_end) = (b + 1, end_vertex);
                }
                _ => {
                    if let Some(r) = run.take() {
                        stage(g, r);
                    }
                    run = Some((b, b + 1, end_vertex));
                }
            }
        }
        if let Some(r) = run {
            stage(g, r);
        }
    }

    /// Turns the GPU stage times on (the default) or off: with them, each stage's compute pass
    /// writes timestamp queries where the adapter has `TIMESTAMP_QUERY`, and each frame resolves
    /// them and reads them back ([`StageStats::gpu_ns`](crate::StageStats)): a detection with
    /// its contacts, in the same mapping, an update alone in a buffer of its own.
    /// Off, no pass writes one and nothing more is read back: the stages' `gpu_ns` are `None`
    /// and the frame costs what its work costs. On a GPU the timestamps cost little; a software
    /// adapter pays for each: on lavapipe (2 cores) a frame of one or two small tori took
    /// 0.15–0.4 ms less without them, of 1.5–3 ms (the README's paragraph on
    /// `--no-gpu-timestamps`). A frame or detection recorded into a caller's encoder
    /// ([`Scene::record_update`], [`Scene::record_detect`]) writes none either way: nothing would
    /// resolve or read them. The CPU backend's stage times are wall-clock laps, always taken;
    /// there this setting does nothing.
    ///
    /// ```
    /// let mut scene = raycontact::Scene::new_cpu(Some(1)).unwrap();
    /// scene.set_gpu_timestamps(false);
    /// assert!(!scene.gpu_timestamps());
    /// ```
    pub fn set_gpu_timestamps(&mut self, on: bool) {
        if let Engine::Gpu(g) = &mut self.engine {
            g.set_timing(on);
        }
    }

    /// Whether the frames write GPU timestamps: a GPU scene whose adapter has them
    /// ([`GpuContext::has_timestamps`](crate::GpuContext)) and whose stage times
    /// [`Scene::set_gpu_timestamps`] did not turn off (but for what is recorded into a
    /// caller's encoder, which never writes them); never on the CPU backend.
    pub fn gpu_timestamps(&self) -> bool {
        matches!(&self.engine, Engine::Gpu(g) if g.timing())
    }

    /// Runs the CPU backend's frame: the moved bodies' positions, then every stage, with the
    /// trees as `work` asks; with `defer` (a detection), a rebuild leaves the moving bodies'
    /// trees for the detection to build, those of its pairs (`cpu_backend/deferred.rs`). CPU
    /// scenes only.
    pub(super) fn run_cpu_frame(&mut self, work: TreeWork, defer: bool) -> FrameStats {
        let first = matches!(work, TreeWork::Update { force: true, .. });
        let Engine::Cpu(c) = &mut self.engine else { unreachable!("a CPU scene") };
        if !first {
            let moved = self.packing.ids.iter().zip(&self.packing.bodies).enumerate().filter_map(
                |(b, (id, packed))| {
                    let body = self.slots[id.index as usize].body.as_ref().filter(|b| b.moved)?;
                    Some((b, packed.vertex_offset, body.data.positions.as_slice()))
                },
            );
            c.begin_frame(moved);
        }
        let stats = c.update(&self.packing, work, defer);
        self.finish_frame(stats.bvh.action != BvhAction::Kept);
        stats
    }

    fn finish_frame(&mut self, updated: bool) {
        for slot in &mut self.slots {
            if let Some(b) = slot.body.as_mut().filter(|b| b.moved) {
                b.updated();
            }
        }
        // Without an update the BVHs are last frame's: ray queries must wait for one (unless
        // they were fresh already: nothing changed since).
        self.fresh |= updated;
    }

    pub(super) fn require_fresh(&self) -> Result<()> {
        if self.fresh { Ok(()) } else { Err(Error::StaleBvh) }
    }
}
