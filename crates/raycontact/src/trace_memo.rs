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
//! body last moved: the body, the whole ray and the result. A later unbounded trace that skips
//! the same vertex gets that result if its body and ray are equal bit for bit; any other trace
//! is cast. A bounded trace (`tmax` finite) bypasses the memo: its bound is the distance of
//! another body's hit (the own-body trace when exits are not remembered) or a pair's reach, so
//! another pair asks for the same one only by coincidence. Measured over the bench's scenes, 4
//! frames each, not one bounded trace was asked twice (cloth-layers 11k bounded traces a frame,
//! eight-sheets 2k, resting-pile 6.3k: every trace that skips a vertex there, so its full pass
//! does not touch the memo at all), while the unbounded ones gave every answer (cloth-layers
//! 20k of 66k, eight-sheets 5k of 75k).
//!
//! A trace's result is its closest hit, which depends on nothing but the body's positions and the
//! ray (not on the tree, the traversal or the order of the rays), so the contacts are those of
//! casting every trace: an entry is answered only while its body's positions are those it was
//! cast at, and for the same ray bit for bit. Only for tracers whose result is a function of the
//! body and the ray (BVH casts), not for walks, whose result depends on the hint.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::Vec3;

use crate::cpu::{Narrow, Traced, Tracer};
use crate::layout::{BodyGpu, NONE, Ray, WalkCounts};
use crate::packing::has_moved;

/// A memoised trace: the body and the ray's bits (origin, direction, `tmin`, `tmax`), and what
/// the trace returned.
#[derive(Clone, Copy, Debug)]
struct Entry {
    body: u32,
    ray: [u32; 8],
    traced: Traced,
}

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

    /// `inner`'s traces through this memo.
    pub fn tracer<'m, T: Tracer>(&'m self, inner: &'m T) -> Memoized<'m, T> {
        Memoized { memo: self, inner }
    }
}

/// A [`Tracer`] answering the unbounded traces that skip a vertex from a [`TraceMemo`] when it
/// holds the same trace, and casting through `inner` otherwise (remembering the first unbounded
/// one per vertex).
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
        let memoised = ignore != NONE && ray.tmax == f32::INFINITY;
        let slot = if memoised { self.memo.slots.get(ignore as usize) } else { None };
        let Some(slot) = slot else {
            return self.inner.trace(cx, b, ray, ignore, hint, counts);
        };
        let bits = ray_bits(ray);
        if let Some(e) = slot.get() {
            if e.body == b as u32 && e.ray == bits {
                return e.traced;
            }
        }
        let traced = self.inner.trace(cx, b, ray, ignore, hint, counts);
        // Kept only in an empty slot: a filled one (by another trace of this vertex, or by
        // another thread meanwhile) keeps its entry.
        if slot.set(Entry { body: b as u32, ray: bits, traced }).is_ok()
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

    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32) -> bool {
        self.inner.may_reach(cx, b, p, r)
    }

    fn normal(&self, cx: &Narrow<'_>, v: u32) -> Vec3 {
        self.inner.normal(cx, v)
    }
}
