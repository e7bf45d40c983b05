//! [`Scene`]: the bodies, their settings and their per-frame BVHs, on the GPU or on the CPU
//! backend. This file holds the bodies and the settings; the frame is in `frame.rs`, a
//! detection from plan to contacts in `detect.rs`, the ray queries in `rays.rs` (recorded:
//! `record_rays.rs`), the walk in `walk.rs`, the debugging reads in `queries.rs`,
//! iterative detection's bookkeeping in `iterative.rs`.

use glam::Vec3;

use crate::backend::{Backend, Engine};
use crate::body::{BodyData, BodyId, BodyKind, validate_positions};
use crate::contact::{OverflowPolicy, SelfCollision};
use crate::context::GpuContext;
use crate::cpu_backend::CpuScene;
use crate::error::{Error, Result};
use crate::gpu::GpuScene;
use crate::packing::Packing;

mod bvh;
mod detect;
mod frame;
mod intersection;
mod iterative;
mod queries;
mod rays;
mod record_rays;
mod response;
mod rest_trees;
mod walk;
mod workers;

/// Contact capacity of a new scene.
pub const DEFAULT_CONTACT_CAPACITY: u64 = 1 << 16;
/// Crossing capacity of a new scene ([`Scene::set_crossing_capacity`]).
pub const DEFAULT_CROSSING_CAPACITY: u64 = 1 << 16;

#[derive(Debug)]
struct Slot {
    generation: u32,
    body: Option<Body>,
}

#[derive(Debug)]
struct Body {
    data: BodyData,
    /// Positions as of the last update (the GPU's current positions after it) while `moved`;
    /// otherwise stale, the last update's being `data.positions`: read them with
    /// [`Body::frame_positions`]. An update copies nothing: [`Body::set_positions`] swaps the two
    /// vectors before it writes the new ones.
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

impl Body {
    /// The positions as of the last update.
    fn frame_positions(&self) -> &[Vec3] {
        if self.moved { &self.frame_positions } else { &self.data.positions }
    }

    /// Sets the latest positions (as many as the body has), keeping the last update's.
    fn set_positions(&mut self, positions: &[Vec3]) {
        if !self.moved {
            // `data.positions` holds the last update's: it becomes the frame's vector, and the
            // stale one takes the new positions.
            std::mem::swap(&mut self.frame_positions, &mut self.data.positions);
        }
        self.data.positions.copy_from_slice(positions);
        self.moved = true;
    }

    /// An update took the latest positions: they are the frame's now.
    fn updated(&mut self) {
        self.moved = false;
    }
}

/// A set of bodies whose BVHs are rebuilt (or refitted, [`Scene::set_bvh_update`]) every frame,
/// on the GPU or on the CPU backend.
///
/// Per frame: [`set_positions`](Scene::set_positions) of the moving bodies, then one
/// [`detect`](Scene::detect) (or [`update`](Scene::update) for the BVHs alone, or
/// [`record_update`](Scene::record_update) and [`record_detect`](Scene::record_detect) into your
/// own encoder), which computes, for all bodies in one submission, area-weighted vertex normals,
/// triangle and body boxes, Morton codes, a radix sort, a Karras hierarchy with escape links,
/// and the box fit. The previous frame's positions stay on the GPU. Buffers are sized by
/// capacity when bodies are added and reused across frames.
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
    engine: Engine,
    slots: Vec<Slot>,
    packing: Packing,
    /// Bodies were added or removed: the next frame packs them anew.
    relayout: bool,
    /// The BVH matches the bodies and positions (an update ran since the last change).
    fresh: bool,
    /// Most contacts a detection may return (the one owner of this number: plans carry it, a
    /// detection that grew it writes it back).
    contact_capacity: u64,
    overflow: OverflowPolicy,
    prediction: f32,
    self_collision: SelfCollision,
    /// Inversion handling (Lehericey et al. 2015, section 3.2), on by default.
    inversions: bool,
    iterative: Option<crate::walk::Iterative>,
    memory: iterative::Memory,
    /// How contacts become forces, and the pairs whose stiffness differs.
    response: crate::response::Response,
    pair_stiffness: Vec<(BodyId, BodyId, f32)>,
    /// The last detection completed for the current bodies: the response may act on it.
    detected: bool,
    /// How the BVHs follow the bodies.
    bvh_update: crate::BvhUpdate,
    /// `Auto`'s mirror of the GPU's trees (GPU scenes with `Auto` only).
    gpu_mirror: Option<Box<bvh::GpuMirror>>,
    /// Which intersection stages a detection runs.
    intersections: crate::IntersectionMode,
    /// Most crossings a detection may store (the one owner of this number, as for contacts).
    crossing_capacity: u64,
    /// The contact ordering's vectors, kept between detections.
    order_scratch: crate::contact_order::OrderScratch,
}

impl Scene {
    fn with_engine(engine: Engine) -> Self {
        Self {
            engine,
            slots: Vec::new(),
            packing: Packing::default(),
            relayout: true,
            fresh: false,
            contact_capacity: DEFAULT_CONTACT_CAPACITY,
            overflow: OverflowPolicy::Grow,
            prediction: 0.0,
            self_collision: SelfCollision::Cloth,
            inversions: true,
            iterative: None,
            memory: Default::default(),
            response: Default::default(),
            pair_stiffness: Vec::new(),
            detected: false,
            bvh_update: crate::BvhUpdate::Rebuild,
            gpu_mirror: None,
            intersections: crate::IntersectionMode::Off,
            crossing_capacity: DEFAULT_CROSSING_CAPACITY,
            order_scratch: Default::default(),
        }
    }

    /// An empty scene on the GPU of `ctx`.
    pub fn new(ctx: &GpuContext) -> Self {
        Self::with_engine(Engine::Gpu(Box::new(GpuScene::new(ctx))))
    }

    /// An empty scene on the CPU backend: the kernels' CPU twins on a rayon pool of `threads`
    /// workers (`None`: one per core; `Some(1)`: single-threaded; on the web, where no thread
    /// can be spawned, always the calling thread alone). Every figure it reports is
    /// labelled with [`Backend::Cpu`]. It honours the contact capacity and the
    /// [`OverflowPolicy`] as the GPU does (it finds every contact in one run, so growing costs
    /// it no second run).
    ///
    /// ```
    /// let scene = raycontact::Scene::new_cpu(Some(1)).unwrap();
    /// assert_eq!(scene.backend().to_string(), "CPU backend (single-threaded)");
    /// ```
    pub fn new_cpu(threads: Option<usize>) -> Result<Self> {
        Ok(Self::with_engine(Engine::Cpu(Box::new(CpuScene::new(threads)?))))
    }

    /// An empty scene on the CPU backend whose parallel work runs on the caller's rayon `pool`
    /// (not on the web, where no thread can be spawned): an engine's own pool, so that the
    /// collision step adds no threads of its own, or a pool whose workers the caller has pinned
    /// to cores. The scene uses its workers only inside its own calls, and several scenes may
    /// share one pool. Otherwise it is [`Scene::new_cpu`] with the pool's thread count, but for
    /// how long its calls keep the pool's other workers awake:
    /// [`WorkersAwake::SHARED`](crate::WorkersAwake::SHARED) at most (the caller's own jobs may
    /// be waiting for them: [`Scene::set_workers_awake`]). A caller that runs its step inside
    /// `pool.install` has each call run in place on that worker, without handing it to the pool
    /// and waiting for it back (on this project's 2-core VM, 0.10–0.14 ms a detection when the
    /// workers sleep between frames: 50 resting tori's iterative detections took 0.69–0.71 ms
    /// from the main thread, 0.62–0.63 ms inside `install`). So does a caller that is the pool's
    /// worker 0 itself: a pool built on the calling thread with rayon's
    /// `ThreadPoolBuilder::use_current_thread` (README, The CPU backend's workers).
    ///
    /// ```
    /// use std::sync::Arc;
    /// let pool = raycontact::rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let scene = raycontact::Scene::new_cpu_on_pool(Arc::new(pool));
    /// assert_eq!(scene.backend().to_string(), "CPU backend (rayon, 2 threads)");
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_cpu_on_pool(pool: std::sync::Arc<rayon::ThreadPool>) -> Self {
        Self::with_engine(Engine::Cpu(Box::new(CpuScene::on_pool(pool))))
    }

    /// Where the scene runs.
    pub fn backend(&self) -> Backend {
        self.engine.describe()
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
        if let Engine::Gpu(g) = &self.engine {
            let mut p = self.packing_params_of_live();
            p.vertex_count = p.vertex_count.saturating_add(positions.len() as u32);
            p.tri_count = p.tri_count.saturating_add(triangles.len() as u32);
            p.tile_count += crate::layout::tiles_for(triangles.len() as u32);
            p.body_count += 1;
            if let Err((what, value, limit)) = crate::gpu::check_fits(g.ctx(), &p) {
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
        self.detected = false;
        Ok(id)
    }

    /// The totals of the live bodies packed together (what the next packing will hold).
    fn packing_params_of_live(&self) -> crate::layout::FrameParams {
        let mut p = crate::layout::FrameParams::default();
        for b in self.slots.iter().filter_map(|s| s.body.as_ref()) {
            p.vertex_count = p.vertex_count.saturating_add(b.data.positions.len() as u32);
            p.tri_count = p.tri_count.saturating_add(b.data.triangles.len() as u32);
            p.tile_count += crate::layout::tiles_for(b.data.triangles.len() as u32);
            p.body_count += 1;
        }
        p
    }

    /// Removes a body; its id becomes invalid.
    pub fn remove_body(&mut self, id: BodyId) -> Result<()> {
        self.body(id)?;
        let slot = &mut self.slots[id.index as usize];
        slot.body = None;
        slot.generation += 1;
        self.relayout = true;
        self.fresh = false;
        self.detected = false;
        Ok(())
    }

    fn body(&self, id: BodyId) -> Result<&Body> {
        self.slots
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.body.as_ref())
            .ok_or(Error::UnknownBody { body: id })
    }

    /// Sets the positions of a body's vertices for the next frame; the current ones become the
    /// previous frame's at the next update. Positions equal bit for bit to those the body has
    /// change nothing: as for a body whose positions are not set, the next frame keeps its
    /// normals, boxes and trees (an engine may hand over every body's positions each step,
    /// those of its bodies at rest included). Errors: [`Error::WrongVertexCount`],
    /// [`Error::NonFinite`], [`Error::UnknownBody`].
    pub fn set_positions(&mut self, id: BodyId, positions: &[Vec3]) -> Result<()> {
        let expected = self.body(id)?.data.positions.len();
        if positions.len() != expected {
            return Err(Error::WrongVertexCount { body: id, got: positions.len(), expected });
        }
        validate_positions(id, positions)?;
        let body = self.slots[id.index as usize].body.as_mut().expect("checked above");
        if bytemuck::cast_slice::<Vec3, u32>(&body.data.positions)
            == bytemuck::cast_slice::<Vec3, u32>(positions)
        {
            return Ok(());
        }
        // The GPU gets them with the next frame (`Scene::stage_moved_positions`).
        body.set_positions(positions);
        self.fresh = false;
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

    /// Marks a body static (or not): a body the caller does not move, such as the ground or a
    /// fixed obstacle. [`Pairs::Overlapping`](crate::Pairs::Overlapping) then tests no pair of
    /// two static bodies and no self pair of a static body: their contacts cannot change, and a
    /// physics engine has no use for them. Pairs listed with [`Pairs::List`](crate::Pairs::List)
    /// or [`Pairs::WithDistance`](crate::Pairs::WithDistance) are tested as listed. Its
    /// positions may still be set. Its normals and trees are kept while its positions stay (as
    /// any body's, on both backends), and on the CPU backend its rays walk a tree made from a
    /// binned-SAH tree
    /// from its first frame on (the slower build is paid when its tree is made, not in a later
    /// frame; again each time it is moved). A change
    /// takes effect at the next frame, as an added body does (the bodies are packed anew, and
    /// iterative detection starts from a full pass). Errors: [`Error::UnknownBody`].
    pub fn set_static(&mut self, id: BodyId, fixed: bool) -> Result<()> {
        self.body(id)?;
        let body = self.slots[id.index as usize].body.as_mut().expect("checked above");
        if body.data.fixed != fixed {
            body.data.fixed = fixed;
            self.relayout = true;
            self.fresh = false;
            self.detected = false;
        }
        Ok(())
    }

    /// Whether a body is static ([`Scene::set_static`]).
    pub fn is_static(&self, id: BodyId) -> Result<bool> {
        Ok(self.body(id)?.data.fixed)
    }

    /// The live bodies, in slot order.
    pub fn bodies(&self) -> impl Iterator<Item = BodyId> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.body.is_some())
            .map(|(i, s)| BodyId { index: i as u32, generation: s.generation })
    }

    /// How the live bodies are packed (as of the last update): the packed body indices that
    /// [`Scene::contact_buffers`] and [`crate::internals`] use.
    pub fn packing(&self) -> &crate::internals::Packing {
        &self.packing
    }

    /// The CPU backend's last frame as it is, its trees left behind unfitted (`None` on the GPU).
    #[cfg(test)]
    pub(crate) fn cpu_frame(&self) -> Option<&crate::frame::FrameData> {
        match &self.engine {
            Engine::Cpu(c) => Some(c.frame_as_is()),
            Engine::Gpu(_) => None,
        }
    }

    /// Sets how many contacts one detection may return (65536 by default). Past the capacity
    /// the [`OverflowPolicy`] applies; [`OverflowPolicy::Grow`] raises it (to twice the number
    /// needed, plus 256) and runs the rays again, on both backends. Under
    /// [`OverflowPolicy::Grow`] a detection that fills more than three quarters of it also raises
    /// it, to twice what it found (plus 256), for the next detection: a count that rises from
    /// frame to frame then grows the buffer without running the rays twice.
    pub fn set_contact_capacity(&mut self, contacts: u64) {
        self.contact_capacity = contacts.max(1);
        // What iterative detection remembers may not fit any more: the next pass is full.
        self.memory.valid = false;
    }

    /// The contact capacity: as set, or as the last [`OverflowPolicy::Grow`] raised it.
    pub fn contact_capacity(&self) -> u64 {
        self.contact_capacity
    }

    /// Sets what a detection does when it finds more contacts than the capacity.
    pub fn set_overflow_policy(&mut self, policy: OverflowPolicy) {
        self.overflow = policy;
    }

    /// Sets the prediction distance of the pairs that [`Pairs::Overlapping`](crate::Pairs) and
    /// [`Pairs::List`](crate::Pairs) test (0 by default: no predictions). Outward rays report a
    /// surface within this distance (measured along its normal) as a prediction; the broad phase
    /// grows the body boxes by it. Errors: [`Error::InvalidInput`] unless finite and >= 0.
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

    /// The prediction distance of [`Pairs::Overlapping`](crate::Pairs) and
    /// [`Pairs::List`](crate::Pairs).
    pub fn prediction_distance(&self) -> f32 {
        self.prediction
    }

    /// Sets which bodies [`Pairs::Overlapping`](crate::Pairs) also tests against themselves
    /// ([`SelfCollision::Cloth`] by default, as Lehericey et al. 2015 do). A self pair given in
    /// [`Pairs::List`](crate::Pairs) is tested whatever this says.
    pub fn set_self_collision(&mut self, which: SelfCollision) {
        self.self_collision = which;
    }

    /// Turns inversion handling (Lehericey et al. 2015, section 3.2) on (the default) or off.
    /// On, a cloth vertex whose ray hits a cloth triangle (of another cloth or its own) within
    /// the pair's reach, on the other side of that triangle than at the previous frame's
    /// positions, gives a collision flagged [`ContactFlags::INVERTED`](crate::ContactFlags)
    /// whose normal points back across the triangle, whatever its distance. Off, every cloth
    /// against cloth hit is classified by its re-projected length alone, so a vertex that went
    /// through a cloth in one frame is held on the side it reached (the cloths stay tangled):
    /// for comparisons, and for callers that untangle by other means. Volumetric targets are
    /// unaffected (inversions are tested for cloth against cloth only). The next detection is a
    /// full pass.
    ///
    /// ```
    /// let mut scene = raycontact::Scene::new_cpu(Some(1)).unwrap();
    /// assert!(scene.inversion_handling());
    /// scene.set_inversion_handling(false);
    /// assert!(!scene.inversion_handling());
    /// ```
    pub fn set_inversion_handling(&mut self, on: bool) {
        if self.inversions != on {
            self.inversions = on;
            self.memory.valid = false;
        }
    }

    /// Whether inversion handling is on ([`Scene::set_inversion_handling`]).
    pub fn inversion_handling(&self) -> bool {
        self.inversions
    }
}

pub(crate) fn check_distance(distance: f32, what: &str) -> Result<()> {
    if distance.is_finite() && distance >= 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidInput { what: format!("{what} must be finite and >= 0, not {distance}") })
    }
}
