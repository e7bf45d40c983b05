//! [`Scene`]: the bodies, their per-frame BVHs, and the queries over them, on the GPU or on
//! the CPU backend.

use std::fmt;
use std::time::Instant;

use glam::Vec3;

use crate::body::{BodyData, BodyId, BodyKind, Packing, validate_positions};
use crate::contact::{Contact, Contacts, OverflowPolicy, Pairs, SelfCollision, sort_contacts};
use crate::context::GpuContext;
use crate::cpu;
use crate::error::{Error, Result};
use crate::frame::FrameData;
use crate::gpu::SceneGpu;
use crate::layout::{BodyPair, BodyState, Ray, RayHit, WALK_FALLBACK_BVH};
use crate::stats::{FrameStats, Stage};

/// Where a scene runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// WGSL kernels on a wgpu adapter.
    Gpu {
        /// The adapter's name.
        adapter: String,
        /// Whether it is a software adapter (lavapipe and the like).
        software: bool,
    },
    /// The CPU twins of the kernels, run natively with rayon.
    Cpu {
        /// Worker threads (1 = single-threaded).
        threads: usize,
    },
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Gpu { adapter, software: true } => write!(f, "GPU: {adapter} (software adapter)"),
            Backend::Gpu { adapter, software: false } => write!(f, "GPU: {adapter}"),
            Backend::Cpu { threads: 1 } => write!(f, "CPU backend (single-threaded)"),
            Backend::Cpu { threads } => write!(f, "CPU backend (rayon, {threads} threads)"),
        }
    }
}

#[derive(Debug)]
enum State {
    Gpu { gpu: Box<SceneGpu>, uploads: Vec<(u32, u32)> },
    Cpu { pool: rayon::ThreadPool, threads: usize, frame: FrameData, current: Vec<Vec3>, previous: Vec<Vec3> },
}

#[derive(Debug)]
struct Slot {
    generation: u32,
    body: Option<Body>,
}

#[derive(Debug)]
struct Body {
    data: BodyData,
    /// Positions as of the last update (the GPU's current positions after it).
    frame_positions: Vec<Vec3>,
    /// Positions were set since the last update.
    moved: bool,
    /// The positions it was added with ([`Scene::set_pose`] places them).
    rest: Vec<Vec3>,
    /// Largest distance of a rest position from the origin.
    radius: f32,
    /// Iterative detection's reference.
    reference: iterative::Reference,
}

/// A set of bodies whose BVHs are rebuilt every frame, on the GPU or on the CPU backend.
///
/// Per frame: [`set_positions`](Scene::set_positions) of the moving bodies, then one
/// [`update`](Scene::update) (or [`record_update`](Scene::record_update) into your own encoder),
/// which computes, for all bodies in one submission, area-weighted vertex normals, triangle and
/// body boxes, Morton codes, a radix sort, a Karras hierarchy with escape links, and the box
/// fit. The previous frame's positions stay on the GPU. Buffers are sized by capacity when
/// bodies are added and reused across frames.
///
/// ```no_run
/// use glam::Vec3;
/// use raycontact::{BodyKind, GpuContext, Ray, Scene};
///
/// let ctx = GpuContext::new()?;
/// let mut scene = Scene::new(&ctx);
/// let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
/// let body = scene.add_body(&positions, &[[0, 1, 2]], BodyKind::Volumetric)?;
/// scene.update()?;
/// let hits = scene.cast_rays(body, &[Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z)])?;
/// assert_eq!(hits[0].triangle, 0);
/// assert!((hits[0].t - 1.0).abs() < 1e-6);
/// # Ok::<(), raycontact::Error>(())
/// ```
#[derive(Debug)]
pub struct Scene {
    state: State,
    ctx: Option<GpuContext>,
    slots: Vec<Slot>,
    packing: Packing,
    relayout: bool,
    /// The BVH matches the bodies and positions (an update ran since the last change).
    fresh: bool,
    contact_capacity: u64,
    overflow: OverflowPolicy,
    prediction: f32,
    self_collision: SelfCollision,
    iterative: Option<crate::walk::Iterative>,
    memory: iterative::Memory,
}

impl Scene {
    /// An empty scene on the GPU of `ctx`.
    pub fn new(ctx: &GpuContext) -> Self {
        Self {
            state: State::Gpu { gpu: Box::new(SceneGpu::new(ctx, ctx.pipelines())), uploads: Vec::new() },
            ctx: Some(ctx.clone()),
            slots: Vec::new(),
            packing: Packing::default(),
            relayout: true,
            fresh: false,
            contact_capacity: crate::gpu::DEFAULT_CONTACT_CAPACITY,
            overflow: OverflowPolicy::Grow,
            prediction: 0.0,
            self_collision: SelfCollision::Cloth,
            iterative: None,
            memory: Default::default(),
        }
    }

    /// An empty scene on the CPU backend: the kernels' CPU twins on a rayon pool of `threads`
    /// workers (`None`: one per core; `Some(1)`: single-threaded). Every figure it reports is
    /// labelled with [`Backend::Cpu`].
    ///
    /// ```
    /// let scene = raycontact::Scene::new_cpu(Some(1)).unwrap();
    /// assert_eq!(scene.backend().to_string(), "CPU backend (single-threaded)");
    /// ```
    pub fn new_cpu(threads: Option<usize>) -> Result<Self> {
        let mut b = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("raycontact-cpu-{i}"));
        if let Some(t) = threads {
            b = b.num_threads(t.max(1));
        }
        let pool = b.build().map_err(|e| Error::InvalidInput { what: format!("rayon pool: {e}") })?;
        let threads = pool.current_num_threads();
        Ok(Self {
            state: State::Cpu {
                pool,
                threads,
                frame: FrameData::default(),
                current: Vec::new(),
                previous: Vec::new(),
            },
            ctx: None,
            slots: Vec::new(),
            packing: Packing::default(),
            relayout: true,
            fresh: false,
            contact_capacity: crate::gpu::DEFAULT_CONTACT_CAPACITY,
            overflow: OverflowPolicy::Grow,
            prediction: 0.0,
            self_collision: SelfCollision::Cloth,
            iterative: None,
            memory: Default::default(),
        })
    }

    /// Where the scene runs.
    pub fn backend(&self) -> Backend {
        match (&self.state, &self.ctx) {
            (State::Gpu { .. }, Some(ctx)) => {
                Backend::Gpu { adapter: ctx.adapter_name().to_string(), software: ctx.is_software() }
            }
            (State::Cpu { threads, .. }, _) => Backend::Cpu { threads: *threads },
            (State::Gpu { .. }, None) => unreachable!("a GPU scene has a context"),
        }
    }

    fn next_id(&self) -> BodyId {
        match self.slots.iter().position(|s| s.body.is_none()) {
            Some(i) => BodyId { index: i as u32, generation: self.slots[i].generation },
            None => BodyId { index: self.slots.len() as u32, generation: 0 },
        }
    }

    /// Adds a body from its vertex positions and triangles (counter-clockwise seen from
    /// outside for a volumetric body).
    ///
    /// Errors, each naming the body and the element: [`Error::IndexOutOfRange`],
    /// [`Error::NonFinite`], [`Error::NoTriangles`], [`Error::BadThickness`],
    /// [`Error::TooLarge`] (over the device's buffer limits once packed with the other bodies).
    /// Degenerate (zero-area) triangles are accepted, kept out of the BVH and counted
    /// ([`Scene::body_state`]).
    pub fn add_body(&mut self, positions: &[Vec3], triangles: &[[u32; 3]], kind: BodyKind) -> Result<BodyId> {
        let id = self.next_id();
        let data = BodyData::new(id, positions, triangles, kind)?;
        if let Some(ctx) = &self.ctx {
            let mut p = self.packing.params;
            p.vertex_count = p.vertex_count.saturating_add(positions.len() as u32);
            p.tri_count = p.tri_count.saturating_add(triangles.len() as u32);
            p.tile_count += crate::layout::tiles_for(triangles.len() as u32);
            p.body_count += 1;
            if let Err((what, value, limit)) = SceneGpu::check_fits(ctx, &p) {
                return Err(Error::TooLarge { body: id, what, value, limit });
            }
        }
        let radius = positions.iter().map(|p| p.length()).fold(0.0f32, f32::max);
        let body = Body {
            frame_positions: data.positions.clone(),
            rest: data.positions.clone(),
            data,
            moved: false,
            radius,
            reference: Default::default(),
        };
        if id.index as usize == self.slots.len() {
            self.slots.push(Slot { generation: 0, body: Some(body) });
        } else {
            self.slots[id.index as usize].body = Some(body);
        }
        self.relayout = true;
        self.fresh = false;
        Ok(id)
    }

    /// Removes a body; its id becomes invalid.
    pub fn remove_body(&mut self, id: BodyId) -> Result<()> {
        self.body(id)?;
        let slot = &mut self.slots[id.index as usize];
        slot.body = None;
        slot.generation += 1;
        self.relayout = true;
        self.fresh = false;
        Ok(())
    }

    fn body(&self, id: BodyId) -> Result<&Body> {
        self.slots
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.body.as_ref())
            .ok_or(Error::UnknownBody { body: id })
    }

    /// Every body a pair list names exists.
    fn check_pairs(&self, pairs: Pairs<'_>) -> Result<()> {
        let ids: Vec<BodyId> = match pairs {
            Pairs::Overlapping => Vec::new(),
            Pairs::List(l) => l.iter().flat_map(|&(a, b)| [a, b]).collect(),
            Pairs::WithDistance(l) => l.iter().flat_map(|&(a, b, _)| [a, b]).collect(),
        };
        ids.into_iter().try_for_each(|id| self.body(id).map(|_| ()))
    }

    /// Sets the positions of a body's vertices for the next frame; the current ones become the
    /// previous frame's at the next update. Errors: [`Error::WrongVertexCount`],
    /// [`Error::NonFinite`], [`Error::UnknownBody`].
    pub fn set_positions(&mut self, id: BodyId, positions: &[Vec3]) -> Result<()> {
        let expected = self.body(id)?.data.positions.len();
        if positions.len() != expected {
            return Err(Error::WrongVertexCount { body: id, got: positions.len(), expected });
        }
        validate_positions(id, positions)?;
        let body = self.slots[id.index as usize].body.as_mut().expect("checked above");
        body.data.positions.copy_from_slice(positions);
        body.moved = true;
        self.fresh = false;
        if !self.relayout {
            if let State::Gpu { gpu, uploads } = &mut self.state {
                let b = self.packing.index_of(id).expect("packed body");
                let off = self.packing.bodies[b].vertex_offset;
                gpu.stage_positions(off, positions);
                uploads.push((off, positions.len() as u32));
            }
        }
        self.track_displacement(id);
        Ok(())
    }

    /// A body's latest positions.
    pub fn positions(&self, id: BodyId) -> Result<&[Vec3]> {
        Ok(&self.body(id)?.data.positions)
    }

    /// A body's triangles.
    pub fn triangles(&self, id: BodyId) -> Result<&[[u32; 3]]> {
        Ok(&self.body(id)?.data.triangles)
    }

    /// A body's kind.
    pub fn kind(&self, id: BodyId) -> Result<BodyKind> {
        Ok(self.body(id)?.data.kind)
    }

    /// The live bodies, in slot order.
    pub fn bodies(&self) -> impl Iterator<Item = BodyId> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.body.is_some())
            .map(|(i, s)| BodyId { index: i as u32, generation: s.generation })
    }

    /// How the live bodies are packed (as of the last update).
    pub fn packing(&self) -> &Packing {
        &self.packing
    }

    fn packed_positions(&self, frame: bool) -> Vec<Vec3> {
        let mut out = Vec::with_capacity(self.packing.params.vertex_count as usize);
        for id in &self.packing.ids {
            let b = self.body(*id).expect("packed bodies are live");
            out.extend_from_slice(if frame { &b.frame_positions } else { &b.data.positions });
        }
        out
    }

    fn apply_layout(&mut self) {
        let bodies = self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.body.as_ref().map(|b| (BodyId { index: i as u32, generation: s.generation }, &b.data))
        });
        self.packing = Packing::build(bodies);
        let current = self.packed_positions(false);
        let previous = self.packed_positions(true);
        match &mut self.state {
            State::Gpu { gpu, uploads } => {
                gpu.set_packing(&self.packing, &current, &previous);
                uploads.clear();
            }
            State::Cpu { current: c, previous: p, .. } => {
                *c = current;
                *p = previous;
            }
        }
    }

    /// Rebuilds normals, boxes and BVHs of all bodies for the positions set since the last
    /// update, and waits for it: on the GPU, one submission. Returns the frame's figures (GPU
    /// stage times when the adapter has timestamps; stage wall times on the CPU backend).
    pub fn update(&mut self) -> Result<FrameStats> {
        match &self.state {
            State::Gpu { .. } => {
                let ctx = self.ctx.clone().expect("GPU scene");
                let mut stats = ctx.scoped("update", || {
                    let mut enc = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("raycontact.update"),
                    });
                    let stats = self.record_update(&mut enc)?;
                    ctx.queue().submit([enc.finish()]);
                    ctx.wait("update")?;
                    Ok(stats)
                })?;
                if let State::Gpu { gpu, .. } = &self.state {
                    if let Some(times) = gpu.read_timings(false)? {
                        stats.bytes_read_back += 8 * 2 * times.len() as u64;
                        for (s, ns) in times {
                            stats.stage(s).gpu_ns = Some(ns);
                        }
                    }
                }
                Ok(stats)
            }
            State::Cpu { .. } => self.update_cpu(),
        }
    }

    /// Records the frame of [`Scene::update`] into `encoder` without submitting it: the caller
    /// submits (once per frame, with its own work if it likes). Positions set before this call
    /// are uploaded by the queue at that submission. GPU scenes only
    /// ([`Error::InvalidInput`] on the CPU backend).
    pub fn record_update(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<FrameStats> {
        self.record_update_with(encoder, true)
    }

    /// [`Scene::record_update`]; without `rebuild`, only the vertex normals (iterative passes
    /// that need no BVH).
    fn record_update_with(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        rebuild: bool,
    ) -> Result<FrameStats> {
        let first = std::mem::take(&mut self.relayout);
        if first {
            self.apply_layout();
        }
        let State::Gpu { gpu, uploads } = &mut self.state else {
            return Err(Error::InvalidInput { what: "record_update needs a GPU scene".into() });
        };
        let before = gpu.allocations;
        let mut stats = FrameStats::default();
        gpu.record_frame(encoder, !first, uploads, rebuild || first, &mut stats);
        uploads.clear();
        stats.buffers_allocated = gpu.allocations - before;
        self.finish_frame(rebuild || first);
        Ok(stats)
    }

    fn finish_frame(&mut self, rebuilt: bool) {
        for slot in &mut self.slots {
            if let Some(b) = slot.body.as_mut().filter(|b| b.moved) {
                b.frame_positions.copy_from_slice(&b.data.positions);
                b.moved = false;
            }
        }
        // Without a rebuild the BVHs are last frame's: ray queries must wait for an update.
        self.fresh = rebuilt;
    }

    fn update_cpu(&mut self) -> Result<FrameStats> {
        self.update_cpu_with(true)
    }

    fn update_cpu_with(&mut self, rebuild: bool) -> Result<FrameStats> {
        let first = std::mem::take(&mut self.relayout);
        let rebuild = rebuild || first;
        if first {
            self.apply_layout();
        } else {
            let moved: Vec<(usize, BodyId)> = self
                .packing
                .ids
                .iter()
                .enumerate()
                .filter(|(_, id)| self.body(**id).is_ok_and(|b| b.moved))
                .map(|(i, id)| (i, *id))
                .collect();
            let State::Cpu { current, previous, .. } = &mut self.state else { unreachable!() };
            previous.copy_from_slice(current);
            for (i, id) in moved {
                let off = self.packing.bodies[i].vertex_offset as usize;
                let src = &self.slots[id.index as usize].body.as_ref().expect("live").data.positions;
                current[off..off + src.len()].copy_from_slice(src);
            }
        }
        let State::Cpu { pool, frame, current, .. } = &mut self.state else { unreachable!() };
        let mut stats = FrameStats::default();
        let packing = &self.packing;
        if rebuild {
            pool.install(|| {
                frame.rebuild(packing, current, |stage, ns| stats.stage(stage).cpu_ns = Some(ns))
            });
        } else {
            let start = Instant::now();
            frame.normals.resize(current.len(), Vec3::ZERO);
            cpu::vertex_normals(
                current,
                &packing.triangles,
                &packing.vertex_tri_offsets,
                &packing.vertex_tris,
                &mut frame.normals,
            );
            stats.stage(Stage::Normals).cpu_ns = Some(start.elapsed().as_nanos() as f64);
        }
        self.finish_frame(rebuild);
        Ok(stats)
    }

    fn require_fresh(&self) -> Result<()> {
        if self.fresh { Ok(()) } else { Err(Error::StaleBvh) }
    }

    /// Closest hits of `rays` against a body's BVH as of the last update (triangle indices are
    /// the body's own). A ray through a shared edge or vertex hits one of the incident
    /// triangles (the watertight test never lets it through); equal `t` goes to the lower
    /// triangle index. On the GPU: one submission and one readback of `rays.len()` hits.
    /// Errors: [`Error::StaleBvh`] when bodies or positions changed since the last update.
    pub fn cast_rays(&mut self, id: BodyId, rays: &[Ray]) -> Result<Vec<RayHit>> {
        self.require_fresh()?;
        let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
        match &mut self.state {
            State::Gpu { gpu, .. } => {
                let ctx = self.ctx.clone().expect("GPU scene");
                ctx.scoped("raycast", || gpu.raycast(b as u32, rays))
            }
            State::Cpu { pool, frame, current, .. } => {
                let packing = &self.packing;
                Ok(pool.install(|| cpu::raycast_ordered(packing, frame, current, b, rays)))
            }
        }
    }

    /// Everything the last frame built, in the packed layout (reads it back from the GPU: for
    /// tests and debugging, not for every frame).
    pub fn frame_data(&mut self) -> Result<FrameData> {
        self.require_fresh()?;
        match &mut self.state {
            State::Gpu { gpu, .. } => gpu.read_frame(),
            State::Cpu { frame, .. } => Ok(frame.clone()),
        }
    }

    /// The source vertices the last full-pass detection listed (`ray_sources`): (directed pair
    /// `k` of its pair list, body-local vertex), sorted, and how many were found (more than
    /// listed when the list was full). Reads them back: for tests and debugging. GPU scenes only
    /// ([`Error::InvalidInput`] on the CPU backend, whose twin is [`cpu::ray_sources`]).
    pub fn ray_sources(&mut self) -> Result<(Vec<[u32; 2]>, u32)> {
        let State::Gpu { gpu, .. } = &mut self.state else {
            return Err(Error::InvalidInput { what: "ray_sources reads a GPU scene's list".into() });
        };
        let state: Vec<crate::layout::DetectState> = gpu.read(crate::gpu::B::DetectState, 0, 1)?;
        let found = state[0].sources;
        let listed = (found as u64).min(gpu.source_capacity());
        let mut list: Vec<[u32; 2]> = gpu.read(crate::gpu::B::Sources, 0, listed)?;
        list.sort_unstable();
        Ok((list, found))
    }

    /// A body's box, leaf count and degenerate-triangle count as of the last update (a 32-byte
    /// readback on the GPU).
    pub fn body_state(&mut self, id: BodyId) -> Result<BodyState> {
        self.require_fresh()?;
        let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
        match &mut self.state {
            State::Gpu { gpu, .. } => Ok(gpu.read::<BodyState>(crate::gpu::B::BodyState, b as u64, 1)?[0]),
            State::Cpu { frame, .. } => Ok(frame.body_state[b]),
        }
    }

    /// A body's positions in the previous frame, as the last update left them on the GPU (or in
    /// the CPU backend): the positions of the update before it. Equals the current positions
    /// after the update that added the body. A readback on the GPU: for tests and debugging.
    pub fn previous_positions(&mut self, id: BodyId) -> Result<Vec<Vec3>> {
        self.require_fresh()?;
        let b = self.packing.index_of(id).ok_or(Error::UnknownBody { body: id })?;
        let body = self.packing.bodies[b];
        let range = body.vertex_offset as usize..(body.vertex_offset + body.vertex_count) as usize;
        match &mut self.state {
            State::Gpu { gpu, .. } => {
                gpu.read::<Vec3>(crate::gpu::B::PrevPositions, range.start as u64, range.len() as u64)
            }
            State::Cpu { previous, .. } => Ok(previous[range].to_vec()),
        }
    }

    /// Sets how many contacts one detection may return (65536 by default). The buffer grows on
    /// the next detection when it is smaller; past the capacity the [`OverflowPolicy`] applies.
    pub fn set_contact_capacity(&mut self, contacts: u64) {
        self.contact_capacity = contacts.max(1);
        // What iterative detection remembers may not fit any more: the next pass is full.
        self.memory.valid = false;
        if let State::Gpu { gpu, .. } = &mut self.state {
            gpu.contact_capacity = self.contact_capacity;
        }
    }

    /// Sets what a detection does when it finds more contacts than the capacity.
    pub fn set_overflow_policy(&mut self, policy: OverflowPolicy) {
        self.overflow = policy;
    }

    /// Sets the prediction distance of the pairs that [`Pairs::Overlapping`] and
    /// [`Pairs::List`] test (0 by default: no predictions). Outward rays report a surface
    /// within this distance (measured along its normal) as a prediction; the broad phase grows
    /// the body boxes by it. Errors: [`Error::InvalidInput`] unless finite and >= 0.
    ///
    /// ```
    /// let mut scene = raycontact::Scene::new_cpu(Some(1)).unwrap();
    /// scene.set_prediction_distance(0.05).unwrap();
    /// assert!(scene.set_prediction_distance(-1.0).is_err());
    /// ```
    pub fn set_prediction_distance(&mut self, distance: f32) -> Result<()> {
        check_distance(distance, "the prediction distance")?;
        self.prediction = distance;
        Ok(())
    }

    /// The prediction distance of [`Pairs::Overlapping`] and [`Pairs::List`].
    pub fn prediction_distance(&self) -> f32 {
        self.prediction
    }

    /// Sets which bodies [`Pairs::Overlapping`] also tests against themselves
    /// ([`SelfCollision::Cloth`] by default, as Lehericey et al. 2015 do). A self pair given in
    /// [`Pairs::List`] is tested whatever this says.
    pub fn set_self_collision(&mut self, which: SelfCollision) {
        self.self_collision = which;
    }

    fn self_collision_bits(&self) -> u32 {
        match self.self_collision {
            SelfCollision::None => 0,
            SelfCollision::Cloth => crate::layout::SELF_CLOTH,
            SelfCollision::All => crate::layout::SELF_CLOTH | crate::layout::SELF_VOLUMETRIC,
        }
    }

    fn packed_pairs(&self, pairs: Pairs<'_>) -> Result<Option<Vec<BodyPair>>> {
        let pack = |a: BodyId, b: BodyId, prediction: f32| -> Result<BodyPair> {
            let ia = self.packing.index_of(a).ok_or(Error::UnknownBody { body: a })?;
            let ib = self.packing.index_of(b).ok_or(Error::UnknownBody { body: b })?;
            check_distance(prediction, &format!("the prediction distance of pair ({a}, {b})"))?;
            Ok(BodyPair { a: ia as u32, b: ib as u32, prediction, pad: 0 })
        };
        match pairs {
            Pairs::Overlapping => Ok(None),
            Pairs::List(list) => {
                list.iter().map(|&(a, b)| pack(a, b, self.prediction)).collect::<Result<_>>().map(Some)
            }
            Pairs::WithDistance(list) => {
                list.iter().map(|&(a, b, d)| pack(a, b, d)).collect::<Result<_>>().map(Some)
            }
        }
    }

    /// Source vertices a detection may list: every vertex of every directed pair for a given
    /// list; for overlapping pairs 0 (the list keeps its capacity and grows when a detection
    /// finds it short).
    fn source_need(&self, packed: &Option<Vec<BodyPair>>) -> u64 {
        let vertices = |b: u32| self.packing.bodies[b as usize].vertex_count as u64;
        packed.as_ref().map_or(0, |list| {
            list.iter().map(|p| if p.a == p.b { vertices(p.a) } else { vertices(p.a) + vertices(p.b) }).sum()
        })
    }

    /// The most pairs a detection may test, and the broad phase's settings.
    fn pair_plan(&self, packed: &Option<Vec<BodyPair>>) -> (u64, (u32, f32)) {
        let n = self.packing.params.body_count as u64;
        let need = packed.as_ref().map_or(n * (n + 1) / 2, |p| p.len() as u64);
        (need, (self.self_collision_bits(), self.prediction))
    }

    /// One frame of collision detection, blocking: rebuilds every body's normals and BVH for
    /// the positions set since the last frame, then casts a ray from every source vertex of each
    /// tested pair, both ways (Hermann et al. 2008), and reads the contacts back. On the GPU: one
    /// submission; the readback copies the counters and as many contacts as the last frame had
    /// (plus a margin), and a second copy-only submission fetches the rest when there are more.
    ///
    /// Errors: [`Error::UnknownBody`] for a pair naming a removed body,
    /// [`Error::ContactOverflow`] with [`OverflowPolicy::Error`], [`Error::Gpu`].
    ///
    /// ```no_run
    /// use glam::{Affine3A, Vec3};
    /// use raycontact::{meshes, BodyKind, GpuContext, Pairs, Scene};
    /// let ctx = GpuContext::new()?;
    /// let mut scene = Scene::new(&ctx);
    /// let s = meshes::icosphere(1.0, 3);
    /// let moved = s.transformed(Affine3A::from_translation(Vec3::X * 1.5));
    /// scene.add_body(&s.positions, &s.triangles, BodyKind::Volumetric)?;
    /// scene.add_body(&moved.positions, &moved.triangles, BodyKind::Volumetric)?;
    /// let found = scene.detect(Pairs::Overlapping)?;
    /// assert!(!found.contacts.is_empty());
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub fn detect(&mut self, pairs: Pairs<'_>) -> Result<Contacts> {
        self.check_pairs(pairs)?;
        match &self.state {
            State::Cpu { .. } => {
                let walking = self.walking(pairs)?;
                let rebuild = walking.is_none_or(|(fallback, _)| fallback == WALK_FALLBACK_BVH);
                let mut stats = self.update_cpu_with(rebuild)?;
                let packed = self.packed_pairs(pairs)?;
                let pairing = (self.self_collision_bits(), self.prediction);
                let State::Cpu { pool, frame, current, previous, .. } = &self.state else { unreachable!() };
                let cx = cpu::Narrow {
                    packing: &self.packing,
                    frame,
                    positions: current,
                    previous,
                    remember_exit: self.iterative.is_some(),
                };
                let (mut raw, pair_list) = match walking {
                    Some((fallback, reach)) => {
                        let start = Instant::now();
                        let tracer = cpu::WalkTracer { fallback, reach };
                        let m = &self.memory;
                        let (raw, counts) =
                            pool.install(|| cpu::walk_contacts(&cx, &tracer, &m.pairs, &m.contacts));
                        stats.stage(Stage::Rays).cpu_ns = Some(start.elapsed().as_nanos() as f64);
                        stats.iterative = true;
                        stats.walked = m.contacts.len() as u32;
                        stats.walk = counts;
                        (raw, None)
                    }
                    None => {
                        let start = Instant::now();
                        let list = packed.clone().unwrap_or_else(|| {
                            cpu::broad_phase(&self.packing.bodies, &frame.body_state, pairing.0, pairing.1)
                        });
                        stats.stage(Stage::Pairs).cpu_ns = Some(start.elapsed().as_nanos() as f64);
                        let start = Instant::now();
                        let raw = pool.install(|| cpu::narrow_phase(&cx, &list));
                        stats.stage(Stage::Rays).cpu_ns = Some(start.elapsed().as_nanos() as f64);
                        (raw, Some(list))
                    }
                };
                let pair_count = pair_list.as_ref().map_or(self.memory.pairs.len(), |l| l.len()) as u32;
                if self.iterative.is_some() {
                    if let Some(list) = pair_list {
                        self.memory.pairs = list;
                    }
                    self.memory.contacts.clone_from(&raw);
                }
                self.after_detect(walking.is_none(), (packed, pairing));
                sort_contacts(&mut raw, &self.packing.ids);
                let contacts = raw.iter().map(|c| Contact::from_gpu(c, &self.packing.ids)).collect();
                Ok(Contacts { contacts, pairs: pair_count, stats })
            }
            State::Gpu { .. } => {
                let ctx = self.ctx.clone().expect("GPU scene");
                pollster::block_on(ctx.scoped_async("detect", self.detect_gpu(&ctx, pairs, true)))
            }
        }
    }

    /// [`Scene::detect`] as a future that never blocks the thread: it records and submits the
    /// frame, then polls the device each time it is polled until the contacts are mapped. (The
    /// future is not `Send`: wgpu's error scopes are per thread.) On the CPU backend it runs the
    /// work when first polled.
    ///
    /// ```no_run
    /// # use raycontact::{GpuContext, Pairs, Scene};
    /// # let ctx = GpuContext::new()?;
    /// # let mut scene = Scene::new(&ctx);
    /// let found = pollster::block_on(scene.detect_async(Pairs::Overlapping))?;
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub async fn detect_async(&mut self, pairs: Pairs<'_>) -> Result<Contacts> {
        match &self.state {
            State::Cpu { .. } => self.detect(pairs),
            State::Gpu { .. } => {
                self.check_pairs(pairs)?;
                let ctx = self.ctx.clone().expect("GPU scene");
                ctx.scoped_async("detect", self.detect_gpu(&ctx, pairs, false)).await
            }
        }
    }

    /// Whether this detection is an iterative pass, and then its fallback code and walk reach
    /// (`confidence × threshold`). Decided before the update (it decides the update's work).
    fn walking(&self, pairs: Pairs<'_>) -> Result<Option<(u32, f32)>> {
        let Some(it) = self.iterative.filter(|_| !self.relayout) else { return Ok(None) };
        let packed = self.packed_pairs(pairs)?;
        let pairing = (self.self_collision_bits(), self.prediction);
        Ok(self
            .plan_iterative(&packed, pairing)
            .then_some((it.fallback.code(), it.confidence * it.displacement_threshold)))
    }

    async fn detect_gpu(&mut self, ctx: &GpuContext, pairs: Pairs<'_>, blocking: bool) -> Result<Contacts> {
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.detect") });
        let walking = self.walking(pairs)?;
        let rebuild = walking.is_none_or(|(fallback, _)| fallback == WALK_FALLBACK_BVH);
        let mut stats = self.record_update_with(&mut enc, rebuild)?;
        let packed = self.packed_pairs(pairs)?;
        let (pair_need, pairing) = self.pair_plan(&packed);
        let source_need = self.source_need(&packed);
        let capacity = self.contact_capacity;
        let remember = self.iterative.is_some();
        let State::Gpu { gpu, .. } = &mut self.state else { unreachable!() };
        let before = gpu.allocations;
        if walking.is_none() {
            gpu.reserve_detect(pair_need, capacity, source_need);
        }
        let side = gpu.side ^ 1;
        let rerun = |gpu: &mut SceneGpu, enc: Option<wgpu::CommandEncoder>, stats: &mut FrameStats| {
            let mut enc = enc.unwrap_or_else(|| {
                ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("raycontact.detect.rerun"),
                })
            });
            let copied =
                gpu.record_detect(&mut enc, packed.as_deref(), pairing, walking, remember, side, true, stats);
            ctx.queue().submit([enc.finish()]);
            copied
        };
        let copied = rerun(gpu, Some(enc), &mut stats);
        let (mut state, mut raw) = gpu.read_detect(copied, &mut stats, blocking).await?;
        if walking.is_none() && state.sources as u64 > gpu.source_capacity() {
            // More source vertices within reach than the list holds (an internal buffer, grown
            // whatever the overflow policy): the BVHs are still valid, so run the rays again.
            gpu.reserve_detect(pair_need, self.contact_capacity, state.sources as u64);
            let copied = rerun(gpu, None, &mut stats);
            (state, raw) = gpu.read_detect(copied, &mut stats, blocking).await?;
        }
        let (_, cap) = gpu.detect_capacity();
        if state.contact_count as u64 > cap {
            match self.overflow {
                OverflowPolicy::Error => {
                    return Err(Error::ContactOverflow { needed: state.contact_count as u64, capacity: cap });
                }
                OverflowPolicy::Grow => {
                    // The BVHs are still valid: grow the contact buffer and run the detection again.
                    // (An iterative pass finds at most as many contacts as it remembers, which fit.)
                    debug_assert!(walking.is_none(), "an iterative pass cannot overflow");
                    self.contact_capacity = state.contact_count as u64;
                    gpu.reserve_detect(pair_need, state.contact_count as u64, state.sources as u64);
                    let copied = rerun(gpu, None, &mut stats);
                    (state, raw) = gpu.read_detect(copied, &mut stats, blocking).await?;
                }
            }
        }
        if let Some(times) = gpu.read_timings(true)? {
            for (s, ns) in times {
                stats.stage(s).gpu_ns = Some(ns);
            }
        }
        stats.buffers_allocated += gpu.allocations - before;
        stats.iterative = walking.is_some();
        stats.walked = state.walked;
        stats.walk = state.walk;
        self.after_detect(walking.is_none(), (packed, pairing));
        sort_contacts(&mut raw, &self.packing.ids);
        let contacts = raw.iter().map(|c| Contact::from_gpu(c, &self.packing.ids)).collect();
        Ok(Contacts { contacts, pairs: state.pair_count, stats })
    }

    /// Records a detection into `encoder` after [`Scene::record_update`] recorded the frame
    /// into it (or into an earlier submission), without submitting or reading anything back: the
    /// contacts stay on the GPU for a GPU solver, in [`Scene::contact_buffers`], in no particular
    /// order. The caller submits. GPU scenes only.
    pub fn record_detect(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        pairs: Pairs<'_>,
    ) -> Result<FrameStats> {
        self.require_fresh()?;
        self.check_pairs(pairs)?;
        let walking = self.walking(pairs)?;
        let packed = self.packed_pairs(pairs)?;
        let (pair_need, pairing) = self.pair_plan(&packed);
        let source_need = self.source_need(&packed);
        let capacity = self.contact_capacity;
        let remember = self.iterative.is_some();
        let State::Gpu { gpu, .. } = &mut self.state else {
            return Err(Error::InvalidInput { what: "record_detect needs a GPU scene".into() });
        };
        let mut stats = FrameStats::default();
        if walking.is_none() {
            gpu.reserve_detect(pair_need, capacity, source_need);
        }
        let side = gpu.side ^ 1;
        gpu.record_detect(encoder, packed.as_deref(), pairing, walking, remember, side, false, &mut stats);
        stats.iterative = walking.is_some();
        self.after_detect(walking.is_none(), (packed, pairing));
        Ok(stats)
    }

    /// Where [`Scene::record_detect`] leaves the contacts on the GPU (bodies by packed index, see
    /// [`Scene::packing`]), with the count and indirect dispatch arguments for a GPU consumer.
    /// `None` on the CPU backend.
    pub fn contact_buffers(&self) -> Option<crate::ContactBuffers<'_>> {
        match &self.state {
            State::Gpu { gpu, .. } => Some(gpu.contact_buffers()),
            State::Cpu { .. } => None,
        }
    }

    /// GPU buffers created so far by this scene (0 on the CPU backend). Constant across frames
    /// once the bodies are added: nothing is allocated per frame.
    pub fn buffer_allocations(&self) -> u64 {
        match &self.state {
            State::Gpu { gpu, .. } => gpu.allocations,
            State::Cpu { .. } => 0,
        }
    }
}

fn check_distance(distance: f32, what: &str) -> Result<()> {
    if distance.is_finite() && distance >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidInput { what: format!("{what} must be finite and >= 0, not {distance}") })
    }
}

impl FrameData {
    /// Rebuilds the frame in place (reusing the vectors), reporting each stage's wall time.
    pub(crate) fn rebuild(
        &mut self,
        packing: &Packing,
        positions: &[Vec3],
        mut time: impl FnMut(Stage, f64),
    ) {
        let t = packing.params.tri_count as usize;
        self.normals.resize(positions.len(), Vec3::ZERO);
        self.tri_boxes.resize(t, Default::default());
        self.body_state.clear();
        self.body_state.resize(packing.bodies.len(), BodyState::default());
        self.keys.resize(t, 0);
        self.values.resize(t, 0);
        self.nodes.resize(2 * t, Default::default());
        self.parents.resize(2 * t, crate::layout::NONE);
        let mut clock = Instant::now();
        let mut lap = |s: Stage, time: &mut dyn FnMut(Stage, f64)| {
            let now = Instant::now();
            time(s, (now - clock).as_nanos() as f64);
            clock = now;
        };
        cpu::vertex_normals(
            positions,
            &packing.triangles,
            &packing.vertex_tri_offsets,
            &packing.vertex_tris,
            &mut self.normals,
        );
        lap(Stage::Normals, &mut time);
        cpu::triangle_bounds(packing, positions, &mut self.tri_boxes, &mut self.body_state);
        lap(Stage::Bounds, &mut time);
        cpu::morton(
            packing,
            positions,
            &self.tri_boxes,
            &mut self.body_state,
            &mut self.keys,
            &mut self.values,
        );
        lap(Stage::Morton, &mut time);
        cpu::radix_sort(&packing.segments, &mut self.keys, &mut self.values);
        lap(Stage::Sort, &mut time);
        cpu::hierarchy(
            packing,
            &self.body_state,
            &self.keys,
            &self.values,
            &mut self.nodes,
            &mut self.parents,
        );
        lap(Stage::Hierarchy, &mut time);
        cpu::fit(packing, &self.body_state, &self.tri_boxes, &mut self.nodes);
        lap(Stage::Fit, &mut time);
    }
}

mod iterative;
mod walk;
