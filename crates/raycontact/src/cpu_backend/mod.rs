//! The CPU backend: the kernels' CPU twins ([`crate::cpu`]) run natively on a rayon pool, over
//! the same packed layout as the GPU. It is a real backend for machines without a GPU, and the
//! reference of every GPU test. It keeps what the GPU keeps in its buffers: the current and
//! previous positions, the frame's data, and what iterative detection remembers.

use glam::Vec3;
use rayon::prelude::*;

use crate::bvh_update::Quality;
use crate::contact_parts::ContactParts;
use crate::contact_sort::MIN_JOB;
use crate::cpu::{ExitMemo, ResponseSums, SourceLists};
use crate::error::Result;
use crate::frame::FrameData;
use crate::layout::{BodyPair, ContactGpu, Ray, RayHit, ResponseParams};
use crate::order_runs::OrderRuns;
use crate::packing::Packing;
use crate::stats::FrameStats;
use crate::trace_memo::TraceMemo;
use crate::walk::{WalkOptions, WalkResult};
use crate::workers_awake::WorkersAwake;

#[cfg(not(target_arch = "wasm32"))]
mod awake;
mod deferred;
mod detect;
mod frame;
mod intersect;
mod lag;
mod narrow;
mod queries;
mod refit;

use crate::changes::Changes;
pub(crate) use frame::{Follow, TreeWork};

/// Where the CPU backend's parallel work runs: a rayon pool natively (its own, or one the caller
/// shares with it); on the web, where no thread can be spawned, the calling thread (rayon's
/// global pool falls back to it there).
#[derive(Clone, Debug)]
pub(crate) struct Pool(#[cfg(not(target_arch = "wasm32"))] std::sync::Arc<rayon::ThreadPool>);

impl Pool {
    #[cfg(not(target_arch = "wasm32"))]
    fn new(threads: Option<usize>) -> Result<Self> {
        let mut b = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("raycontact-cpu-{i}"));
        if let Some(t) = threads {
            b = b.num_threads(t.max(1));
        }
        let pool = b.build().map_err(|e| crate::Error::InvalidInput { what: format!("rayon pool: {e}") })?;
        Ok(Pool(std::sync::Arc::new(pool)))
    }

    #[cfg(target_arch = "wasm32")]
    fn new(_threads: Option<usize>) -> Result<Self> {
        Ok(Pool())
    }

    fn threads(&self) -> usize {
        #[cfg(not(target_arch = "wasm32"))]
        return self.0.current_num_threads();
        #[cfg(target_arch = "wasm32")]
        1
    }

    /// Runs `op` on the pool (in place when called from one of its workers).
    pub(crate) fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        #[cfg(not(target_arch = "wasm32"))]
        return self.0.install(op);
        #[cfg(target_arch = "wasm32")]
        op()
    }

    /// [`Pool::install`] of a whole call of the scene, with the pool's other workers kept
    /// awake until it ends, for at most `most` ([`awake`]: they come to each parallel stage
    /// without being woken; `None`: not kept awake).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn install_awake<R: Send>(
        &self,
        most: Option<std::time::Duration>,
        op: impl FnOnce() -> R + Send,
    ) -> R {
        self.0.install(|| {
            let _awake = most.map(awake::Awake::start);
            op()
        })
    }
}

/// A scene on the CPU backend.
#[derive(Debug)]
pub(crate) struct CpuScene {
    pool: Pool,
    threads: usize,
    /// How its pool's other workers wait through a call ([`WorkersAwake`]).
    workers_awake: WorkersAwake,
    /// What the last frame built.
    frame: FrameData,
    /// The trees' costs at their last rebuild (what `BvhUpdate::Auto` compares against).
    quality: Quality,
    /// The bodies moved since the trees' last update (whose wide trees must follow).
    changes: Changes,
    /// Packed positions of this frame and the previous one.
    current: Vec<Vec3>,
    previous: Vec<Vec3>,
    /// Each body's vertices in Morton order (as packed): the order the full pass casts in.
    order: Vec<u32>,
    /// The boxes of runs of `order` at the positions of the last full pass.
    runs: OrderRuns,
    /// The full pass's traces that skip a vertex, each cast once while its body does not move.
    memo: TraceMemo,
    /// Per packed body: its positions changed since the memo's last reset (all after a new
    /// packing).
    memo_moved: Vec<bool>,
    /// The kernel's exit memo, for a full pass on the twins' binary trees.
    exits: ExitMemo,
    /// The pair list of the last full pass, kept when iterative detection is on.
    memory_pairs: Vec<BodyPair>,
    /// The last detection's contacts, handed back by the scene ([`CpuScene::keep_contacts`]):
    /// what the response acts on, and what an iterative pass re-casts (every detection since
    /// the last full pass had iterative detection on, or the scene starts with a full pass), in
    /// the documented order when iterative detection is on.
    last: Vec<ContactGpu>,
    /// The contacts of the detection before the last, emptied: the next detection's output
    /// (its memory already touched: [`crate::contact_parts`]).
    spare: Vec<ContactGpu>,
    /// The narrow phase's per-job contact vectors, kept between frames.
    parts: ContactParts,
    /// The full pass's source lists, kept between frames.
    sources: SourceLists,
    /// Per packed body, whether it is in the pairs whose deferred trees are built (scratch of
    /// [`CpuScene::build_deferred`]).
    in_pairs: Vec<bool>,
}

impl CpuScene {
    /// A scene without bodies on a rayon pool of `threads` workers (`None`: one per core; on
    /// the web, always the calling thread alone).
    pub fn new(threads: Option<usize>) -> Result<Self> {
        Ok(Self::with_pool(Pool::new(threads)?, WorkersAwake::WholeCall))
    }

    /// A scene without bodies whose parallel work runs on the caller's rayon `pool`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn on_pool(pool: std::sync::Arc<rayon::ThreadPool>) -> Self {
        Self::with_pool(Pool(pool), WorkersAwake::SHARED)
    }

    fn with_pool(pool: Pool, workers_awake: WorkersAwake) -> Self {
        let threads = pool.threads();
        let mut frame = FrameData::default();
        frame.wide.background = cfg!(not(target_arch = "wasm32"));
        Self {
            pool,
            threads,
            workers_awake,
            frame,
            quality: Quality::default(),
            changes: Changes::default(),
            current: Vec::new(),
            previous: Vec::new(),
            order: Vec::new(),
            runs: OrderRuns::default(),
            memo: TraceMemo::default(),
            memo_moved: Vec::new(),
            exits: ExitMemo::default(),
            memory_pairs: Vec::new(),
            last: Vec::new(),
            spare: Vec::new(),
            parts: ContactParts::default(),
            sources: SourceLists::default(),
            in_pairs: Vec::new(),
        }
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The backend's pool, for running a whole call of the scene on it
    /// (`Scene::on_cpu_pool`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn pool(&self) -> Pool {
        self.pool.clone()
    }

    /// How the pool's other workers wait through a call.
    pub(crate) fn workers_awake(&self) -> WorkersAwake {
        self.workers_awake
    }

    /// Sets how the pool's other workers wait through a call.
    pub(crate) fn set_workers_awake(&mut self, awake: WorkersAwake) {
        self.workers_awake = awake;
    }

    /// Runs `op` on the backend's pool (its threads for rayon's parallel iterators).
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        self.pool.install(op)
    }

    /// A new packing: its current and previous positions.
    pub fn set_packing(&mut self, packing: &Packing, current: Vec<Vec3>, previous: Vec<Vec3>) {
        self.order = self.pool.install(|| crate::ray_order::vertex_order(packing, &current));
        self.memo_moved = vec![true; packing.bodies.len()];
        self.current = current;
        self.previous = previous;
    }

    /// Starts a frame: the current positions become the previous ones, and `moved` bodies
    /// (packed body, its vertex offset, positions; in packing order, as the scene lists them)
    /// get their new positions. The two vectors trade places, so that each vertex is copied
    /// once: a moved body's from its new positions, any other's from the previous ones, which
    /// are its current ones too (instead of every vertex into the previous ones, then the moved
    /// bodies' again).
    pub fn begin_frame<'a>(&mut self, moved: impl Iterator<Item = (usize, u32, &'a [Vec3])>) {
        std::mem::swap(&mut self.previous, &mut self.current);
        // `current` holds this frame's positions before vertex `done` (and where a body listed
        // out of order lies: any order gives the same result).
        let mut done = 0;
        for (body, offset, positions) in moved {
            let off = offset as usize;
            if off > done {
                self.current[done..off].copy_from_slice(&self.previous[done..off]);
            }
            self.current[off..off + positions.len()].copy_from_slice(positions);
            done = done.max(off + positions.len());
            self.changes.mark(body);
            if let Some(m) = self.memo_moved.get_mut(body) {
                *m = true;
            }
        }
        let end = self.current.len();
        if end > done {
            self.current[done..end].copy_from_slice(&self.previous[done..end]);
        }
    }

    /// The frame: the vertex normals, then the trees as `work` asks (rebuilt, refitted or
    /// kept), with each stage's wall time in `stats`. With `defer` (a detection's update, its
    /// pair list next), a rebuild leaves the moving bodies' trees to be built when read
    /// ([`deferred`]).
    pub fn update(&mut self, packing: &Packing, work: TreeWork, defer: bool) -> FrameStats {
        let mut stats = FrameStats::default();
        let (frame, current, quality) = (&mut self.frame, &self.current, &mut self.quality);
        let changes = &mut self.changes;
        let bvh = self.pool.install(|| {
            let time = |stage, ns| *stats.stage(stage).cpu_ns.get_or_insert(0.0) += ns;
            frame.update(packing, current, work, quality, Follow::Rays { changes, defer }, time)
        });
        stats.bvh = bvh;
        stats
    }

    /// Whether the rays walk 4-wide trees (built after each update) or the binary trees.
    pub fn set_wide_bvh(&mut self, wide: bool) {
        self.frame.wide.off = !wide;
        if !wide {
            self.frame.wide.trees.clear();
        }
    }

    /// Whether the binned-SAH trees are built in the background (`crate::wide_background`).
    pub fn set_background_trees(&mut self, on: bool) {
        self.frame.wide.background = on && cfg!(not(target_arch = "wasm32"));
    }

    /// Whether the binned-SAH trees are built in the background.
    pub fn background_trees(&self) -> bool {
        self.frame.wide.background
    }

    /// What the last frame built, every binary tree fitted (`lag`).
    pub fn frame(&mut self, packing: &Packing) -> &FrameData {
        self.fit_lagging(packing);
        &self.frame
    }

    /// What the last frame built, as it is (its trees left behind unfitted).
    #[cfg(test)]
    pub(crate) fn frame_as_is(&self) -> &FrameData {
        &self.frame
    }

    /// The bodies' states as the last frame left them.
    pub fn body_state(&self) -> &[crate::layout::BodyState] {
        &self.frame.body_state
    }

    /// Builds the binary trees that rebuilds did not build and fits those that `Refit` frames
    /// left behind (`lag`), before they are read (on the pool only where there is one: a query
    /// does not hand itself to a worker for nothing).
    pub(crate) fn fit_lagging(&mut self, packing: &Packing) {
        self.build_deferred(packing, None, None);
        if self.frame.lag.any_behind() {
            let frame = &mut self.frame;
            self.pool.install(|| frame.fit_lagging(packing));
        }
    }

    /// Fits the binary trees that `Refit` frames left behind, leaving those not built as they
    /// are: an iterative pass, whose walks (and their fallback through the wide trees) read no
    /// binary tree but for its root's box, up to date in both.
    pub(crate) fn fit_left_behind(&mut self, packing: &Packing) {
        if self.frame.lag.behind.contains(&true) {
            let frame = &mut self.frame;
            self.pool.install(|| frame.fit_behind(packing, false));
        }
    }

    /// The packed positions of the previous frame.
    pub fn previous(&self) -> &[Vec3] {
        &self.previous
    }

    /// Keeps the contacts of the detection that just ran, handed back by the scene once it has
    /// put them in order: moved as they are, or, with `order` (the scene passes it when
    /// iterative detection is on), gathered through that permutation into the vector they
    /// replace, so that the next iterative pass walks them, and finds its contacts, in the
    /// documented order: their vertices in order (neighbours' incidence and triangles close
    /// in memory, where the full pass's ray order scatters them), and no permutation to
    /// compute for its contacts ([`crate::contact_order`]).
    pub fn keep_contacts(&mut self, contacts: Vec<ContactGpu>, order: Option<&[u32]>) {
        let Some(order) = order else {
            self.spare = std::mem::replace(&mut self.last, contacts);
            return;
        };
        let mut ordered = std::mem::take(&mut self.last);
        ordered.clear();
        self.pool.install(|| {
            ordered.par_extend(order.par_iter().with_min_len(MIN_JOB).map(|&i| contacts[i as usize]));
        });
        self.last = ordered;
        self.spare = contacts;
    }

    /// The response to the last detection's contacts ([`crate::cpu::response`]).
    pub fn response(&self, packing: &Packing, params: &ResponseParams, stiffness: &[f32]) -> ResponseSums {
        let mut sums = ResponseSums::new(self.current.len());
        crate::cpu::response(
            params,
            &packing.bodies,
            &packing.triangles,
            &self.current,
            &self.previous,
            stiffness,
            &self.last,
            &mut sums,
        );
        sums
    }

    /// Closest hits of `rays` against packed body `b` (the backend's own traversal,
    /// [`crate::cpu::raycast_ordered`]).
    pub fn raycast(&mut self, packing: &Packing, b: usize, rays: &[Ray]) -> Vec<RayHit> {
        self.fit_lagging(packing);
        self.pool.install(|| crate::cpu::raycast_ordered(packing, &self.frame, &self.current, b, rays))
    }

    /// Walks of `rays` over packed body `b` from `starts` ([`crate::cpu::walk`]).
    pub fn walk(
        &mut self,
        packing: &Packing,
        b: usize,
        rays: &[Ray],
        starts: &[u32],
        options: &WalkOptions,
    ) -> WalkResult {
        self.fit_lagging(packing);
        let (hits, counts) = self
            .pool
            .install(|| crate::cpu::walk(packing, &self.frame, &self.current, b, rays, starts, options));
        WalkResult { hits, counts }
    }
}
