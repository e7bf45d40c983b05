//! Ray queries: closest-hit, any-hit and all-hits ray casts through the BVHs of a list of bodies
//! (WGSL `shared/ray.wgsl`, `shared/bvh.wgsl`, `shared/targets.wgsl`) and walks over a body's
//! triangle adjacency (WGSL `shared/walk.wgsl`).

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use super::{BodyGpu, NONE};

/// Entries of the short traversal stack of a ray query (see `closest_hit` in
/// `shaders/shared/bvh.wgsl`); past it a query falls back to a stackless walk, never misses.
pub const SHORT_STACK: u32 = 16;

/// A ray segment `origin + t * dir`, `t` in `[tmin, tmax]` (WGSL `Ray`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Ray {
    /// Origin.
    pub origin: Vec3,
    /// Smallest accepted `t`.
    pub tmin: f32,
    /// Direction (need not be normalised; `t` is in units of it).
    pub dir: Vec3,
    /// Largest accepted `t`.
    pub tmax: f32,
}

impl Ray {
    /// A ray from `origin` along `dir` over `[0, inf)`.
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Self { origin, tmin: 0.0, dir, tmax: f32::INFINITY }
    }

    /// The ray segment `origin + t * dir` for `t` in `[tmin, tmax]`.
    pub fn segment(origin: Vec3, dir: Vec3, tmin: f32, tmax: f32) -> Self {
        Self { origin, tmin, dir, tmax }
    }

    /// The point `origin + t * dir`.
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + self.dir * t
    }
}

/// The hit of a ray (WGSL `RayHit`), 32 bytes: the closest one ([`Scene::cast_rays`]) or the
/// first one found ([`Scene::cast_rays_anyhit`]). A miss has `triangle == NONE`, `body == NONE`
/// and `t == inf`.
///
/// [`Scene::cast_rays`]: crate::Scene::cast_rays
/// [`Scene::cast_rays_anyhit`]: crate::Scene::cast_rays_anyhit
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RayHit {
    /// Ray parameter of the hit.
    pub t: f32,
    /// Body-local triangle index, or [`NONE`].
    pub triangle: u32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// BVH nodes read (over every body of the query): each node whose box was tested, and each
    /// node a closest-hit walk went back to from its stack (which reads its child word, not
    /// its box: the entry distance kept on the stack answers the box test).
    pub nodes_visited: u32,
    /// Triangles tested.
    pub triangles_tested: u32,
    /// 1 when the short traversal stack overflowed and the query finished with a stackless walk
    /// (it still finds the closest hit). Always 0 for an any-hit query, which walks stackless.
    pub fallback: u32,
    /// The body hit: its position in the query's list of bodies (0 for a query of one body), or
    /// [`NONE`] on a miss.
    pub body: u32,
}

impl RayHit {
    /// A miss, before any node is visited.
    pub const MISS: RayHit = RayHit {
        t: f32::INFINITY,
        triangle: NONE,
        u: 0.0,
        v: 0.0,
        nodes_visited: 0,
        triangles_tested: 0,
        fallback: 0,
        body: NONE,
    };

    /// Whether the ray hit a triangle.
    pub fn is_hit(&self) -> bool {
        self.triangle != NONE
    }
}

/// A body a ray query tests (WGSL `QueryTarget`), 48 bytes: a copy of its [`BodyGpu`] record
/// (where its triangles and nodes are) and its packed index (where its
/// [`BodyState`](super::BodyState), hence its leaf count, is). The query kernels read these
/// instead of the scene's body table, so that they bind no more than 8 storage buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct QueryTarget {
    /// The body's packed record.
    pub body: BodyGpu,
    /// The body's packed index.
    pub index: u32,
    /// Padding.
    pub pad: u32,
}

/// One hit of an all-hits query (WGSL `RayIntersection`), 20 bytes. A ray's hits are sorted by
/// `t`, then `body`, then `triangle` ([`RayIntersection::order`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RayIntersection {
    /// Ray parameter of the hit.
    pub t: f32,
    /// Body-local triangle index.
    pub triangle: u32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// The body hit: its position in the query's list of bodies.
    pub body: u32,
}

impl RayIntersection {
    /// The order of a ray's hits (`before` in `raycast_all.wgsl`): by `t`, then by the body's
    /// position in the query's list, then by triangle index. A ray through an edge or vertex
    /// shared by several triangles hits each of them at the same `t` (computed from that edge
    /// or vertex alone, so the tie is exact), listed by triangle index.
    /// (Hits are never NaN; `-0.0` and `0.0` are the same `t`, as on the GPU.)
    pub fn order(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering::{Greater, Less};
        if self.t != other.t {
            return if self.t < other.t { Less } else { Greater };
        }
        self.body.cmp(&other.body).then(self.triangle.cmp(&other.triangle))
    }
}

/// What an all-hits query found for one ray (WGSL `RayHitCount`), 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RayHitCount {
    /// Hits within `[tmin, tmax]` on the query's bodies (may exceed the query's `max_hits`).
    pub found: u32,
    /// Hits stored: `min(found, max_hits)`, the first ones in [`RayIntersection::order`].
    pub stored: u32,
    /// BVH nodes whose box was tested.
    pub nodes_visited: u32,
    /// Triangles tested.
    pub triangles_tested: u32,
}

impl RayHitCount {
    /// Hits found but not stored: the ray's overflow.
    pub fn overflow(&self) -> u32 {
        self.found - self.stored
    }
}

/// Totals of an all-hits query over all its rays (WGSL `RayHitTotals`, atomics there), 16
/// bytes: the head of its counts buffer, before the rays' [`RayHitCount`]s
/// ([`RAY_COUNTS_OFFSET`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RayHitTotals {
    /// Hits found.
    pub found: u32,
    /// Hits stored.
    pub stored: u32,
    /// Rays with at least one hit.
    pub rays_hit: u32,
    /// Rays that found more hits than `max_hits`.
    pub rays_overflowed: u32,
}

impl RayHitTotals {
    /// The totals of these per-ray counts, as the kernel sums them.
    pub fn of(counts: &[RayHitCount]) -> Self {
        let mut t = RayHitTotals::default();
        for c in counts {
            t.found += c.found;
            t.stored += c.stored;
            t.rays_hit += u32::from(c.found > 0);
            t.rays_overflowed += u32::from(c.found > c.stored);
        }
        t
    }

    /// Hits found but not stored, over all rays: the query's overflow.
    pub fn overflow(&self) -> u32 {
        self.found - self.stored
    }
}

/// Bytes of the [`RayHitTotals`] at the head of an all-hits query's counts buffer: the
/// [`RayHitCount`]s of the rays follow (WGSL `RayHitCounts`).
pub const RAY_COUNTS_OFFSET: u64 = std::mem::size_of::<RayHitTotals>() as u64;

/// Adjacency entry of an edge used by one triangle only (no neighbour across it).
pub const BOUNDARY: u32 = 0xFFFF_FFFE;
/// Adjacency entry of an edge used by three or more triangles (or twice by the same degenerate
/// triangle): no single neighbour across it.
pub const NON_MANIFOLD: u32 = 0xFFFF_FFFD;

/// Outcome of a walk ([`WalkHit::outcome`]): the walk reached a triangle the ray hits within
/// `[tmin, tmax]`.
pub const WALK_HIT: u32 = 0;
/// Outcome of a walk: the edge to cross is a boundary or non-manifold edge.
pub const WALK_BOUNDARY: u32 = 1;
/// Outcome of a walk: the next triangle is one of the last [`WALK_HISTORY`] visited. The edge
/// choice depends only on the ray and the triangle, so a revisit means the walk would cycle
/// forever (a ping-pong across one edge is the shortest such cycle).
pub const WALK_LOOP: u32 = 2;
/// Outcome of a walk: it would have to cross more than `max_steps` edges.
pub const WALK_STEPS: u32 = 3;
/// Outcome of a walk: the ray's line crosses the current triangle, but behind `tmin` or beyond
/// `tmax` (the paper's "ray behind triangle"): the walk stops there, a miss.
pub const WALK_RANGE: u32 = 4;
/// Outcome of a walk: the ray is parallel to the current triangle's plane (or the triangle is
/// degenerate): no edge can be chosen.
pub const WALK_PARALLEL: u32 = 5;
/// Outcome of a walk: the ray had no start triangle ([`NONE`]).
pub const WALK_NO_START: u32 = 6;
/// Outcome codes (the slots of [`WalkCounts::outcomes`]; the last slot is unused).
pub const WALK_OUTCOMES: u32 = 8;
/// Triangles a walk remembers to detect a loop: cycles of up to this length end as
/// [`WALK_LOOP`]; longer ones run out of steps.
pub const WALK_HISTORY: u32 = 8;
// `shaders/shared/walk.wgsl` keeps the history in two `vec4<u32>`.
const _: () = assert!(WALK_HISTORY == 8);
/// Largest `max_steps` of a walk (llvmpipe caps every shader loop at 65,535 iterations).
pub const MAX_WALK_STEPS: u32 = 1 << 15;
/// [`WalkParams::fallback`]: cast the ray through the BVH when the walk does not hit.
pub const WALK_FALLBACK_BVH: u32 = 0;
/// [`WalkParams::fallback`]: drop the ray until the next full pass (the paper's behaviour).
pub const WALK_FALLBACK_DROP: u32 = 1;

/// Result of one walk (WGSL `WalkHit`), 32 bytes: the hit the walk found or, when it did not
/// hit and the fallback is the BVH, the BVH's closest hit; with how the walk ended.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct WalkHit {
    /// Ray parameter of the hit; `inf` on a miss.
    pub t: f32,
    /// Body-local triangle hit, or [`NONE`].
    pub triangle: u32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// How the walk ended: [`WALK_HIT`], [`WALK_BOUNDARY`], [`WALK_LOOP`], [`WALK_STEPS`],
    /// [`WALK_RANGE`], [`WALK_PARALLEL`] or [`WALK_NO_START`].
    pub outcome: u32,
    /// Edges the walk crossed (triangles tested: `steps + 1`, none without a start).
    pub steps: u32,
    /// The triangle the walk ended on (the hit, or where it stopped), or [`NONE`] without a
    /// start.
    pub last: u32,
    /// 1 when `t`, `triangle`, `u`, `v` come from the BVH fallback, 0 when from the walk.
    pub bvh: u32,
}

impl WalkHit {
    /// Whether the ray hit a triangle (by the walk or by the fallback).
    pub fn is_hit(&self) -> bool {
        self.triangle != NONE
    }
}

/// Counters of a batch of walks (WGSL `WalkCounts`, atomics there), 48 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WalkCounts {
    /// Rays per outcome, indexed by the outcome code ([`WALK_HIT`] ...).
    pub outcomes: [u32; 8],
    /// Rays cast through the BVH because their walk did not hit (fallback [`WALK_FALLBACK_BVH`]).
    pub fallback_casts: u32,
    /// Of those, the rays the BVH found a hit for.
    pub fallback_hits: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

impl WalkCounts {
    /// The counters of these walk results, as the kernel counts them.
    pub fn of(hits: &[WalkHit]) -> Self {
        let mut c = WalkCounts::default();
        for h in hits {
            c.add(h);
        }
        c
    }

    /// Counts one walk result.
    pub fn add(&mut self, h: &WalkHit) {
        if let Some(slot) = self.outcomes.get_mut(h.outcome as usize) {
            *slot += 1;
        }
        if h.bvh != 0 {
            self.fallback_casts += 1;
            self.fallback_hits += u32::from(h.is_hit());
        }
    }

    /// Adds another set of counters.
    pub fn add_counts(&mut self, other: &WalkCounts) {
        for (a, b) in self.outcomes.iter_mut().zip(other.outcomes) {
            *a += b;
        }
        self.fallback_casts += other.fallback_casts;
        self.fallback_hits += other.fallback_hits;
    }

    /// Rays whose walk ended with `outcome`.
    pub fn outcome(&self, outcome: u32) -> u32 {
        self.outcomes.get(outcome as usize).copied().unwrap_or(0)
    }

    /// Rays counted.
    pub fn total(&self) -> u32 {
        self.outcomes.iter().sum()
    }
}

/// Parameters of a batch of walks (WGSL `WalkParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WalkParams {
    /// Packed index of the body.
    pub body: u32,
    /// Rays in the batch.
    pub ray_count: u32,
    /// Most edges one walk crosses (at most [`MAX_WALK_STEPS`]).
    pub max_steps: u32,
    /// [`WALK_FALLBACK_BVH`] or [`WALK_FALLBACK_DROP`].
    pub fallback: u32,
    /// Packed triangles: the size of a region of the triangle buffer (the adjacency is its
    /// second region, [`TRIANGLE_ADJACENCY`](super::TRIANGLE_ADJACENCY)).
    pub tri_count: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

/// Bytes of the [`WalkCounts`] at the head of a walk's output buffer: the [`WalkHit`]s follow
/// (WGSL `WalkOutput`), one storage buffer for both.
pub const WALK_HITS_OFFSET: u64 = std::mem::size_of::<WalkCounts>() as u64;
