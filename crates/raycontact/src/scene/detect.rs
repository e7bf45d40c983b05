//! A detection, top to bottom: the pairs checked, the packing applied, the plan decided (full or
//! iterative pass, pairs, capacities), the frame and the plan run on the backend, then what the
//! scene keeps (the grown capacity, iterative detection's reference) and the contacts in their
//! documented order.

use rayon::prelude::*;
use web_time::Instant;

use super::{Scene, check_distance};
use crate::backend::Engine;
use crate::body::BodyId;
use crate::contact::{Contact, Contacts, Pairs, SelfCollision};
use crate::contact_order::{OrderScratch, contact_order_with, convert_in_order};
use crate::contact_sort::{MIN_JOB, PARALLEL_ENTRIES};
use crate::error::{Error, Result};
use crate::intersection::IntersectionMode;
use crate::layout::{BodyPair, ContactGpu, SELF_CLOTH, SELF_VOLUMETRIC, WALK_FALLBACK_BVH};
use crate::plan::{DetectPlan, Outcome, PairSelection, Pass, SOURCES_PER_CONTACT, overlapping_sources};
use crate::stats::FrameStats;

impl Scene {
    /// One frame of collision detection, blocking: rebuilds every body's normals and BVH for
    /// the positions set since the last frame, then casts a ray from every source vertex of each
    /// tested pair, both ways (Hermann et al. 2008), and reads the contacts back. On the GPU: one
    /// submission; the readback copies the counters and as many contacts as the last frame had
    /// (plus a margin), and a second copy-only submission fetches the rest when there are more.
    ///
    /// Errors: [`Error::UnknownBody`] for a pair naming a removed body, [`Error::InvalidInput`]
    /// for a bad prediction distance, [`Error::ContactOverflow`] (and, with
    /// [`Scene::set_intersections`], [`Error::CrossingOverflow`]) with
    /// [`OverflowPolicy::Error`](crate::OverflowPolicy::Error), [`Error::Gpu`].
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
        let mut found = Contacts::default();
        self.detect_into(pairs, &mut found)?;
        Ok(found)
    }

    /// [`Scene::detect`] into `found`, reusing its contact vector: an engine that keeps one
    /// [`Contacts`] from frame to frame allocates nothing for the contacts once the vector is
    /// large enough, where [`Scene::detect`] returns a new one each frame, whose pages the system
    /// hands out afresh (on the benchmark's 2-core VM, putting `cloth-layers`' 40k contacts,
    /// 3.4 MB, in their order took 0.6–1.3 ms into a new vector, 0.43–0.58 ms into the last
    /// frame's). `found` is replaced whole (its old contacts, counts and intersections dropped)
    /// when the detection succeeds, and left as it was when it fails. The same errors as
    /// [`Scene::detect`].
    ///
    /// ```no_run
    /// # use raycontact::{Contacts, GpuContext, Pairs, Scene};
    /// # let ctx = GpuContext::new()?;
    /// # let mut scene = Scene::new(&ctx);
    /// let mut found = Contacts::default();
    /// for _frame in 0..3 {
    ///     // ... scene.set_positions(...) ...
    ///     scene.detect_into(Pairs::Overlapping, &mut found)?;
    ///     for c in &found.contacts {
    ///         // ... respond ...
    ///     }
    /// }
    /// # Ok::<(), raycontact::Error>(())
    /// ```
    pub fn detect_into(&mut self, pairs: Pairs<'_>, found: &mut Contacts) -> Result<()> {
        self.on_cpu_pool(|s| crate::blocking::block_on("Scene::detect", s.run_detect(pairs, true, found)))?
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
        let mut found = Contacts::default();
        self.run_detect(pairs, false, &mut found).await?;
        Ok(found)
    }

    /// [`Scene::detect_async`] into `found`, reusing its contact vector, as
    /// [`Scene::detect_into`] does.
    pub async fn detect_into_async(&mut self, pairs: Pairs<'_>, found: &mut Contacts) -> Result<()> {
        self.run_detect(pairs, false, found).await
    }

    async fn run_detect(&mut self, pairs: Pairs<'_>, blocking: bool, into: &mut Contacts) -> Result<()> {
        self.check_pairs(pairs)?;
        let first = self.prepare_layout();
        let plan = self.plan(pairs, first);
        let mut stats = FrameStats::default();
        let found = match &self.engine {
            Engine::Gpu(g) => {
                let ctx = g.ctx().clone();
                ctx.scoped_async("detect", self.run_gpu(&ctx, &plan, first, &mut stats, blocking)).await
            }
            Engine::Cpu(_) => {
                // The trees of the bodies in no pair are left unbuilt (`cpu_backend/deferred.rs`).
                stats = self.run_cpu_frame(self.tree_work(first, plan.bvh, plan.intersect.mode != 0), true);
                let Engine::Cpu(c) = &mut self.engine else { unreachable!("matched above") };
                c.detect(&self.packing, &plan, &mut stats)
            }
        };
        let found = match found {
            Ok(found) => found,
            Err(e) => {
                // What the backend holds may not be a complete detection: start again from a
                // full pass, after a frame that updates the trees.
                self.memory.valid = false;
                self.detected = false;
                self.fresh = false;
                return Err(e);
            }
        };
        stats.iterative = matches!(plan.pass, Pass::Iterative { .. });
        stats.walked = found.walked;
        stats.walk = found.walk;
        (stats.sources, stats.unreached) = (found.sources, found.unreached);
        self.contact_capacity = found.contact_capacity;
        if plan.intersect.mode != 0 {
            self.crossing_capacity = found.crossing_capacity;
        }
        self.detected = true;
        self.after_detect(&plan);
        let mut scratch = std::mem::take(&mut self.order_scratch);
        let order = self.contacts_into(&found, stats, into, &mut scratch);
        match &mut self.engine {
            // Kept in order where an iterative pass may walk them.
            Engine::Cpu(c) => c.keep_contacts(found.contacts.into_vec(), order.filter(|_| plan.remember)),
            // Its vector for the next readback.
            Engine::Gpu(g) => g.recycle_contacts(found.contacts),
        }
        self.order_scratch = scratch;
        Ok(())
    }

    /// The GPU frame and detection: one encoder for both, then the plan's grow-and-re-run loop.
    async fn run_gpu(
        &mut self,
        ctx: &crate::GpuContext,
        plan: &DetectPlan,
        first: bool,
        stats: &mut FrameStats,
        blocking: bool,
    ) -> Result<Outcome> {
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.detect") });
        // An iterative pass's normals: read by the intersection stages (`untangle_contacts`);
        // the walk computes its sources' own.
        let work = self.tree_work(first, plan.bvh, plan.intersect.mode != 0);
        let start = Instant::now();
        *stats = self.record_gpu_frame(&mut enc, first, work, true);
        stats.host.record_ns = start.elapsed().as_nanos() as f64;
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("a GPU scene") };
        let before = g.allocations();
        // (The stage times come with the contacts.)
        let found = g.detect(enc, plan, stats, blocking).await?;
        stats.buffers_allocated += g.allocations() - before;
        Ok(found)
    }

    /// Records a detection into `encoder` after [`Scene::record_update`] recorded the frame
    /// into it (or into an earlier submission), without submitting or reading anything back: the
    /// contacts stay on the GPU for a GPU solver, in [`Scene::contact_buffers`], in no particular
    /// order. The caller submits. Nothing can be re-run: past the contact capacity the count in
    /// the state buffer exceeds it and the arguments cover the stored contacts (and a source
    /// list found short counts the overflow in the state's `sources`; the next blocking
    /// detection grows it). No pass writes GPU timestamps (nothing would read them: the stages'
    /// `gpu_ns` are `None`). GPU scenes only ([`Error::InvalidInput`] on the CPU backend).
    pub fn record_detect(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        pairs: Pairs<'_>,
    ) -> Result<FrameStats> {
        if !matches!(self.engine, Engine::Gpu(_)) {
            return Err(Error::InvalidInput { what: "record_detect needs a GPU scene".into() });
        }
        self.require_fresh()?;
        self.check_pairs(pairs)?;
        let plan = self.plan(pairs, false);
        let mut stats = FrameStats::default();
        let Engine::Gpu(g) = &mut self.engine else { unreachable!("checked above") };
        let before = g.allocations();
        g.record_detect_only(encoder, &plan, &mut stats);
        stats.buffers_allocated = g.allocations() - before;
        stats.iterative = matches!(plan.pass, Pass::Iterative { .. });
        self.detected = true;
        self.after_detect(&plan);
        Ok(stats)
    }

    /// Every body a pair list names exists, and every distance is finite and >= 0.
    fn check_pairs(&self, pairs: Pairs<'_>) -> Result<()> {
        let check = |a: BodyId, b: BodyId, d: Option<f32>| -> Result<()> {
            self.body(a)?;
            self.body(b)?;
            match d {
                Some(d) => check_distance(d, &format!("the prediction distance of pair ({a}, {b})")),
                None => Ok(()),
            }
        };
        match pairs {
            Pairs::Overlapping => Ok(()),
            Pairs::List(l) => l.iter().try_for_each(|&(a, b)| check(a, b, None)),
            Pairs::WithDistance(l) => l.iter().try_for_each(|&(a, b, d)| check(a, b, Some(d))),
        }
    }

    /// The detection's plan, once the packing is applied (`first`: it is new this frame, so
    /// the pass is full).
    fn plan(&self, pairs: Pairs<'_>, first: bool) -> DetectPlan {
        let selection = self.select(pairs);
        let pass = match self.iterative {
            Some(it) if !first && self.can_walk(&selection) => Pass::Iterative {
                fallback: it.fallback.code(),
                reach: it.confidence * it.displacement_threshold,
            },
            _ => Pass::Full,
        };
        let n = self.packing.params.body_count as u64;
        let vertices = |b: u32| self.packing.bodies[b as usize].vertex_count as u64;
        let source_most = match selection.list() {
            Some(l) => {
                l.iter().map(|p| if p.a == p.b { vertices(p.a) } else { vertices(p.a) + vertices(p.b) }).sum()
            }
            None => overlapping_sources(&self.packing.bodies, selection.broad_phase().0),
        };
        let rebuild = match pass {
            Pass::Full => true,
            Pass::Iterative { fallback, .. } => fallback == WALK_FALLBACK_BVH,
        };
        DetectPlan {
            pair_capacity: selection.list().map_or(n * (n + 1) / 2, |l| l.len() as u64),
            // Every vertex of every directed pair of a list; for overlapping pairs, as many as
            // they can list within the budget (`overlapping_sources`).
            source_need: match selection.list() {
                Some(_) => source_most,
                None => source_most.min(SOURCES_PER_CONTACT * self.contact_capacity),
            },
            source_most,
            bvh: rebuild,
            pairs: selection,
            pass,
            remember: self.iterative.is_some(),
            inversions: self.inversions,
            contact_capacity: self.contact_capacity,
            overflow: self.overflow,
            intersect: self.intersect_plan(rebuild),
        }
    }

    /// The pairs of `pairs` in packed body indices (checked by [`Self::check_pairs`]).
    fn select(&self, pairs: Pairs<'_>) -> PairSelection {
        let pack = |a: BodyId, b: BodyId, prediction: f32| BodyPair {
            a: self.packing.index_of(a).expect("checked pair") as u32,
            b: self.packing.index_of(b).expect("checked pair") as u32,
            prediction,
            pad: 0,
        };
        match pairs {
            Pairs::Overlapping => {
                let self_collision = match self.self_collision {
                    SelfCollision::None => 0,
                    SelfCollision::Cloth => SELF_CLOTH,
                    SelfCollision::All => SELF_CLOTH | SELF_VOLUMETRIC,
                };
                PairSelection::Overlapping { self_collision, prediction: self.prediction }
            }
            Pairs::List(l) => {
                PairSelection::Listed(l.iter().map(|&(a, b)| pack(a, b, self.prediction)).collect())
            }
            Pairs::WithDistance(l) => {
                PairSelection::Listed(l.iter().map(|&(a, b, d)| pack(a, b, d)).collect())
            }
        }
    }

    /// The contacts in their documented order, bodies by id, into `into` (its contact vector
    /// refilled in place), and the permutation that put them in it (`None`: they came in
    /// order), in `scratch`.
    fn contacts_into<'s>(
        &self,
        found: &Outcome,
        mut stats: FrameStats,
        into: &mut Contacts,
        scratch: &'s mut OrderScratch,
    ) -> Option<&'s [u32]> {
        let (ids, found_contacts) = (&self.packing.ids, &*found.contacts);
        // Every source vertex is below the largest body's vertex count.
        let vertices = self.packing.bodies.iter().map(|b| b.vertex_count).max().unwrap_or(0);
        let out = &mut into.contacts;
        let order = move || {
            // Moved in (not borrowed): the permutation outlives the closure.
            let scratch = scratch;
            let convert = |c: &ContactGpu| Contact::from_gpu(c, ids);
            // Few contacts in order (an iterative pass on the CPU) are converted in the pass that
            // finds them in order; others are ordered, then converted.
            if found_contacts.len() < PARALLEL_ENTRIES
                && convert_in_order(found_contacts, ids, vertices, scratch, out, convert)
            {
                return None;
            }
            let order = contact_order_with(found_contacts, ids, vertices, scratch);
            out.clear();
            match order {
                Some(order) => out.par_extend(
                    order.par_iter().with_min_len(MIN_JOB).map(|&i| convert(&found_contacts[i as usize])),
                ),
                None => out.par_extend(found_contacts.par_iter().with_min_len(MIN_JOB).map(convert)),
            }
            order
        };
        // On the CPU backend's pool (its thread count), else in rayon's global pool: many
        // contacts sent there as one job (`scope` from a thread outside the pool), whose parallel
        // steps then start their jobs from a worker, where each would be sent from this thread
        // and waited for on its own; fewer are ordered on this thread (their steps are not
        // split), where waking a worker would cost more than it gains. On the 2-core VM (medians
        // of 10 frames, 3 runs): `cloth-layers`' 40k contacts 0.44-0.66 ms in one job, 0.73-1.33
        // with each step sent on its own; `resting-pile`'s 6k 0.15-0.21 in one job, 0.10-0.14
        // on this thread.
        let many = found_contacts.len() >= PARALLEL_ENTRIES;
        let start = Instant::now();
        let order = match &self.engine {
            Engine::Cpu(c) => c.install(order),
            Engine::Gpu(_) if many => rayon::scope(|_| order()),
            Engine::Gpu(_) => order(),
        };
        stats.host.order_ns = start.elapsed().as_nanos() as f64;
        // Counted for the intersections' figures, which exist only where the stages ran: else no
        // pass over the contacts (on the H200 machine's host, 0.23-0.27 ms of `cloth-layers`' GPU
        // frame, its 40k contacts).
        let untangle = if IntersectionMode::from_code(found.intersections.mode) == IntersectionMode::Off {
            0
        } else {
            into.contacts.iter().filter(|c| c.flags.contains(crate::ContactFlags::UNTANGLE)).count()
        };
        let intersections =
            crate::intersection::canonical(&found.intersections, &self.packing, untangle as u32);
        stats.intersections = intersections.counts;
        (into.pairs, into.stats, into.intersections) = (found.pairs, stats, intersections);
        order
    }
}
