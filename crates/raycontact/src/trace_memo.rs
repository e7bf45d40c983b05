//! A memo of the traces that skip a vertex, so that a trace asked again, by another pair or in a
//! later frame, is not cast again. Not a twin of any kernel: each GPU invocation casts its own
//! rays.
//!
//! The classification asks for the same trace several times when one body is in several pairs:
//! the own-body trace of a volumetric vertex into its body, to the exit (the first step of
//! volumetric → cloth, and of volumetric → volumetric when exits are remembered), does not depend
//! on the other body, so a body draped in three garments casts it three times. The traces that
//! skip a vertex (the source vertex's own triangles) are these own-body traces and the rays of a
//! self pair; the own-body ones are the longest, from the surface through the body's interior.
//! Within one frame, on the bench's `cloth-layers` (a body wearing three garments), the memo
//! answers a quarter of the traces that skip a vertex, about 20k a frame; on `eight-sheets`, a
//! tenth.
//!
//! A body that does not move asks the same traces frame after frame: the static scene of
//! `eight-sheets` (ground, sphere, cylinder) under its sheets, among them the longest of the
//! whole scene (from the cylinder's cap centres, vertices of 1,500 triangles). So the memo keeps
//! a body's entries from one full pass to the next for as long as the body's positions do not
//! change ([`TraceMemo::reset`] empties the slots of the bodies that moved since the last one,
//! and every slot for a new packing). On `eight-sheets` (`cpu-1`, its default 8 frames) the
//! unbounded traces the memo had to cast fell from 3,688 to 696 a frame (it answered the others,
//! 6,405 and then 9,397); over 24 frames, as the sheets settle, from 4,939 to 232.
//!
//! [`TraceMemo`] keeps, per packed vertex, the first unbounded trace that skipped it since its
//! body last moved: the body, the whole ray and the result. A later trace that skips the same
//! vertex, on the same body, from the same origin in the same direction with the same `tmin`
//! (bit for bit) gets that result, cut at its bound when it has one: the closest hit when it lies
//! within the bound, else a miss, which is what the bounded cast finds (it sees the same hits up
//! to its bound). Any other trace is cast, and only an unbounded one kept (in an empty slot). A
//! bounded trace's bound is another body's hit (the own-body check when exits are not
//! remembered) or a pair's reach, so no trace was asked twice with the same bound (over 4 frames
//! of every scene); but one is asked along the ray of an unbounded one: a volumetric vertex's
//! own-body check of its outward ray, up to the cloth that ray meets, along the outward normal,
//! once in each of its cloth pairs, while its exit trace runs along the inward normal. So an
//! unbounded trace along the inward normal is cast as a line where the tracer can
//! ([`Tracer::trace_line`]: the CPU backend's walks both directions in one walk of the tree), and
//! its entry keeps the outward ray's result too. On the bench's `cloth-layers` (`cpu-1`, one
//! frame) the traces cast fell from 66.1k (2.60M lanes tested) to 44.9k (1.10M), for 10.1k more
//! line walks (51.1k with 3.09M lanes to 61.2k with 4.06M): 9.3 % fewer lanes in all; on
//! `eight-sheets` 1.7 % fewer; on `resting-pile`'s full passes with exits remembered (`cpu-walk`:
//! its own-body traces along the inward normal walk both ways, with no outward check to answer)
//! 1.3 % more, one reason why such passes now go without it (below). While no slot holds an
//! entry a bounded trace reads none; and a pass none of whose traces the memo would keep
//! ([`asked`]: `resting-pile`'s full pass, all of whose traces that skip a vertex are bounded,
//! the armadillo pair's, `mesh-scaling`'s) goes without it, so its slots are never made. Nor
//! does a pass whose only such traces are volumetric bodies' exit traces, asked where exits are
//! remembered ([`pays`]: `cpu-walk`'s full passes on `resting-pile` and `slow-pair`): each is
//! asked again only by another pair whose ray from the same vertex hits, which is rare, so the
//! memo's slots and lines cost more than it answers.
//! Without it `cpu-walk`'s full pass on `resting-pile` took 8.69-9.01 ms against 9.67-10.14
//! with it (its mean speed-up over `cpu-rayon`, full and iterative passes together, 1.83-1.95x
//! -> 2.07-2.17x), `slow-pair`'s 0.35-0.42 against 0.39-0.43 (`raycontact-bench --cpu
//! --no-parry --scene resting-pile,slow-pair --implementations cpu-walk`, 5 runs alternated),
//! the same contacts.
//!
//! A trace's result is its closest hit, which depends on nothing but the body's positions and the
//! ray (not on the tree, the traversal or the order of the rays), so the contacts are those of
//! casting every trace: an entry is answered only while its body's positions are those it was
//! cast at, and for the same ray bit for bit (or its opposite, cast in the same walk), but for
//! the bound. Only for tracers whose result is a function of the
//! body and the ray (BVH casts), not for walks, whose result depends on the hint.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::Vec3;

use crate::cpu::{Narrow, Traced, Tracer};
use crate::layout::{BODY_CLOTH, BodyGpu, BodyPair, NONE, Ray, RayHit, WalkCounts};
use crate::packing::has_moved;

/// A memoised trace: the body and the ray's bits (origin, direction, `tmin`, `tmax`: an
/// unbounded ray), and what the trace returned; with `back`, what the opposite ray (the same
/// origin and bounds, the direction negated) returned, when the two were cast as a line.
#[derive(Clone, Copy, Debug)]
struct Entry {
    body: u32,
    ray: [u32; 8],
    traced: Traced,
    back: Option<Traced>,
}

impl Entry {
    /// What a trace of `ray` on body `b` returns, if this entry holds it: the same body, origin
    /// and `tmin` bit for bit, and the entry's direction or (cast as a line) its opposite. For
    /// a bounded `ray`, the closest hit of the unbounded one when it lies within the bound, else
    /// a miss: the closest hit of the bounded ray, which sees the same hits up to its bound.
    fn answer(&self, b: usize, ray: &Ray) -> Option<Traced> {
        let bits = ray_bits(ray);
        if self.body != b as u32 || bits[..3] != self.ray[..3] || bits[6] != self.ray[6] {
            return None;
        }
        let traced = if bits[3..6] == self.ray[3..6] {
            self.traced
        } else if (0..3).all(|i| bits[3 + i] == self.ray[3 + i] ^ SIGN) {
            self.back?
        } else {
            return None;
        };
        let within = traced.hit.triangle != NONE && traced.hit.t <= ray.tmax;
        Some(if ray.tmax == f32::INFINITY || within { traced } else { Traced::cast(RayHit::MISS, None) })
    }
}

/// The sign bit of an `f32`: negating a float flips it alone.
const SIGN: u32 = 1 << 31;

/// The bits of a ray, compared instead of its floats (so that -0 is not 0 and NaN equals
/// itself).
fn ray_bits(r: &Ray) -> [u32; 8] {
    let (o, d) = (r.origin, r.dir);
    [o.x, o.y, o.z, d.x, d.y, d.z, r.tmin, r.tmax].map(f32::to_bits)
}

/// Per packed vertex, the first unbounded trace that skipped it since its body last moved.
/// Sized by the vertex count and reused from frame to frame: [`TraceMemo::reset`] empties the
/// slots of the bodies that moved.
#[derive(Debug, Default)]
pub struct TraceMemo {
    slots: Vec<OnceLock<Entry>>,
    /// Whether some slot may hold an entry (set by a write, cleared when a reset empties them
    /// all).
    written: AtomicBool,
}

impl TraceMemo {
    /// Readies the memo for a full pass over the packed `bodies` (each one's vertices in
    /// order, from its `vertex_offset`): empties the slots of the bodies that `moved` marks
    /// (their positions changed since the last reset; `has_moved`: an empty `moved` is every
    /// body), and every slot when the packed vertex count changed. The other bodies' entries
    /// stay: their positions are those the entries were cast at. Allocates only when the memo
    /// grows; touches no slot when none was filled.
    pub fn reset(&mut self, bodies: &[BodyGpu], moved: &[bool]) {
        let vertices = bodies.iter().map(|b| (b.vertex_offset + b.vertex_count) as usize).max().unwrap_or(0);
        let all = self.slots.len() != vertices || (0..bodies.len()).all(|b| has_moved(moved, b));
        if all {
            if std::mem::take(self.written.get_mut()) {
                self.slots.clear();
            }
            self.slots.resize_with(vertices, OnceLock::new);
            return;
        }
        // Not all: the slots are already sized for these bodies.
        if !*self.written.get_mut() {
            return;
        }
        for (b, body) in bodies.iter().enumerate() {
            if !has_moved(moved, b) {
                continue;
            }
            let first = body.vertex_offset as usize;
            for s in &mut self.slots[first..first + body.vertex_count as usize] {
                s.take();
            }
        }
    }

    /// Empties every slot, keeping the memo's memory and allocating none (for a pass that does
    /// not use it: [`asked`]). Touches no slot when none was filled.
    pub fn forget(&mut self) {
        if std::mem::take(self.written.get_mut()) {
            for s in &mut self.slots {
                s.take();
            }
        }
    }

    /// The memo for a full pass over `pairs` of the packed `bodies`: readied as [`Self::reset`]
    /// does with `moved` where it pays ([`pays`]: the pass asks a trace it keeps, which is asked
    /// again), else emptied ([`Self::forget`]: its entries would outlive the bodies' moves) and
    /// `None`, the pass going without it.
    pub fn for_pass(&mut self, bodies: &[BodyGpu], pairs: &[BodyPair], moved: &[bool]) -> Option<&Self> {
        if pays(bodies, pairs) {
            self.reset(bodies, moved);
            Some(self)
        } else {
            self.forget();
            None
        }
    }

    /// `inner`'s traces through this memo.
    pub fn tracer<'m, T: Tracer>(&'m self, inner: &'m T) -> Memoized<'m, T> {
        Memoized { memo: self, inner }
    }
}

/// Whether a full pass over `pairs` (of the packed `bodies`) asks a trace the memo keeps: an
/// unbounded trace that skips a vertex. Those are the own-body trace of a volumetric vertex to
/// the exit (asked in a pair with a cloth, and in every pair when exits are remembered:
/// `remember_exit`) and the rays of a self pair. Otherwise every trace of the pass is bounded
/// (a volumetric vertex's own-body check, up to the other body's hit) or skips no vertex, so the
/// memo would keep nothing: the pass casts the same without it, and its slots (about 160 bytes
/// a vertex: 51 MB at `mesh-scaling`'s 641k triangles) need not exist.
pub fn asked(bodies: &[BodyGpu], pairs: &[BodyPair], remember_exit: bool) -> bool {
    let cloth = |b: u32| bodies[b as usize].flags & BODY_CLOTH != 0;
    pairs.iter().any(|p| {
        let (a, b) = (cloth(p.a), cloth(p.b));
        p.a == p.b || a != b || (remember_exit && !(a && b))
    })
}

/// Whether a full pass over `pairs` asks a trace the memo keeps ([`asked`]) that a later trace
/// of the pass may be answered from within a pair: a self pair's rays, and the own-body traces
/// of a volumetric body paired with a cloth (the exit traces along its inward normals and the
/// checks along its outward ones, on the same lines). A volumetric pair's exit traces (exits
/// remembered) are not: a vertex's inward ray meets the other body (a collision) or its outward
/// ray does (a prediction), seldom both, so each is asked again by another pair whose ray from
/// the same vertex hits, which is rare; the module's doc has the figures.
pub fn pays(bodies: &[BodyGpu], pairs: &[BodyPair]) -> bool {
    asked(bodies, pairs, false)
}

/// A [`Tracer`] answering the traces that skip a vertex from a [`TraceMemo`] when it holds an
/// unbounded trace of the same ray (or of its opposite, cast with it as a line), and casting
/// through `inner` otherwise (remembering the first unbounded one per vertex).
#[derive(Debug)]
pub struct Memoized<'m, T> {
    memo: &'m TraceMemo,
    inner: &'m T,
}

impl<T: Tracer> Tracer for Memoized<'_, T> {
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        let slot = if ignore != NONE { self.memo.slots.get(ignore as usize) } else { None };
        let bounded = ray.tmax != f32::INFINITY;
        // A bounded trace is only answered (from an entry of its ray, or of the opposite ray
        // cast with it), never kept: while no slot holds an entry it reads none.
        let Some(slot) = slot.filter(|_| !bounded || self.memo.written.load(Ordering::Relaxed)) else {
            return self.inner.trace(cx, b, ray, ignore, hint, counts);
        };
        if let Some(traced) = slot.get().and_then(|e| e.answer(b, ray)) {
            return traced;
        }
        if bounded {
            return self.inner.trace(cx, b, ray, ignore, hint, counts);
        }
        // Along the inward normal (a volumetric vertex's own-body trace to the exit): cast as a
        // line where the tracer can, so that the own-body checks along the outward normal, each
        // bounded by another body's hit, are answered too.
        let bits = |v: Vec3| v.to_array().map(f32::to_bits);
        let inward = bits(ray.dir) == bits(-self.inner.normal(cx, ignore));
        let (traced, back) = match inward.then(|| self.inner.trace_line(cx, b, ray, ignore)).flatten() {
            Some([traced, back]) => (traced, Some(back)),
            None => (self.inner.trace(cx, b, ray, ignore, hint, counts), None),
        };
        // Kept only in an empty slot: a filled one (by another trace of this vertex, or by
        // another thread meanwhile) keeps its entry.
        if slot.set(Entry { body: b as u32, ray: ray_bits(ray), traced, back }).is_ok()
            && !self.memo.written.load(Ordering::Relaxed)
        {
            self.memo.written.store(true, Ordering::Relaxed);
        }
        traced
    }

    /// `inner`'s, past the memo: a line trace is the pair of rays along a cloth vertex's normal,
    /// which only the pair that asks it casts (a cloth vertex's traces that skip it are its self
    /// pair's; the memoised own-body traces are volumetric vertices').
    fn trace_line(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32) -> Option<[Traced; 2]> {
        self.inner.trace_line(cx, b, ray, ignore)
    }

    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        self.inner.may_reach(cx, b, p, r, ignore)
    }

    fn normal(&self, cx: &Narrow<'_>, v: u32) -> Vec3 {
        self.inner.normal(cx, v)
    }
}
