//! The classification that casts every trace it asks, one source after the other: the
//! reference that the CPU backend's savings (rays that cannot reach left out, traces asked again
//! answered from a memo) are held to. And the contacts as comparable keys.

use std::sync::atomic::{AtomicU32, Ordering};

use glam::Vec3;
use raycontact::Contact;
use raycontact::internals::Packing;
use raycontact::internals::cpu::{self, BvhTracer, Narrow, Traced, Tracer};
use raycontact::internals::layout::{BodyPair, ContactGpu, NONE, Ray, WalkCounts};

/// The BVH tracer, counting its casts. With `every_ray`, `may_reach` always says yes: every
/// ray is cast (the classification before `may_reach`); without, it asks the BVH. With `lines`,
/// it casts a ray and its opposite in one walk when asked (`trace_line`, counted in
/// `line_casts`), as the CPU backend's tracer does; without, one by one. `may_reach`'s noes are
/// counted in `refusals` (the classification asks it once a source: the sources turned away).
#[derive(Default)]
pub struct CastCounter {
    /// Traces cast.
    pub casts: AtomicU32,
    /// Cast the rays that cannot reach too.
    pub every_ray: bool,
    /// Cast a ray and its opposite in one walk.
    pub lines: bool,
    /// Lines cast (with `lines`).
    pub line_casts: AtomicU32,
    /// Bounded traces that skip a vertex cast (own-body checks up to another body's hit).
    pub bounded_skips: AtomicU32,
    /// Unbounded traces that skip a vertex cast (what a memo keeps), lines not counted.
    pub unbounded_skips: AtomicU32,
    /// `may_reach` said no (never with `every_ray`).
    pub refusals: AtomicU32,
}

impl CastCounter {
    /// Traces cast so far.
    pub fn casts(&self) -> u32 {
        self.casts.load(Ordering::Relaxed)
    }

    /// `may_reach`'s noes so far.
    pub fn refusals(&self) -> u32 {
        self.refusals.load(Ordering::Relaxed)
    }
}

impl Tracer for CastCounter {
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced {
        self.casts.fetch_add(1, Ordering::Relaxed);
        if ignore != NONE {
            let skips = if ray.tmax != f32::INFINITY { &self.bounded_skips } else { &self.unbounded_skips };
            skips.fetch_add(1, Ordering::Relaxed);
        }
        BvhTracer.trace(cx, b, ray, ignore, hint, counts)
    }

    fn trace_line(&self, cx: &Narrow<'_>, b: usize, ray: &Ray, ignore: u32) -> Option<[Traced; 2]> {
        if !self.lines {
            return None;
        }
        self.line_casts.fetch_add(1, Ordering::Relaxed);
        BvhTracer.trace_line(cx, b, ray, ignore)
    }

    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        let near = self.every_ray || BvhTracer.may_reach(cx, b, p, r, ignore);
        if !near {
            self.refusals.fetch_add(1, Ordering::Relaxed);
        }
        near
    }
}

/// The classification of `sources` (`cpu::ray_sources`' list for `pairs`) through `tracer`,
/// one after the other.
pub fn classify_in_order<T: Tracer>(
    cx: &Narrow<'_>,
    tracer: &T,
    pairs: &[BodyPair],
    sources: &[[u32; 2]],
) -> Vec<ContactGpu> {
    let mut out = Vec::new();
    for &[k, local] in sources {
        let p = &pairs[(k / 2) as usize];
        let (a, b) = if k % 2 == 0 { (p.a, p.b) } else { (p.b, p.a) };
        cpu::classify(
            cx,
            tracer,
            (a as usize, local, b as usize, k),
            p.prediction,
            cpu::Rays::BOTH,
            &mut out,
        );
    }
    out
}

/// A contact as a comparable key: source body and vertex, target body and triangle (packed
/// bodies), flags, and the depth's bits.
pub type Key = (u32, u32, u32, u32, u32, u32);

/// The key of a contact as the twins write it.
pub fn key(c: &ContactGpu) -> Key {
    (c.source_body, c.source_vertex, c.target_body, c.target_triangle, c.flags, c.depth.to_bits())
}

/// The keys of `contacts`, sorted.
pub fn sorted_keys(contacts: &[ContactGpu]) -> Vec<Key> {
    let mut k: Vec<Key> = contacts.iter().map(key).collect();
    k.sort_unstable();
    k
}

/// The keys of a scene's contacts (bodies by their place in `packing`), sorted.
pub fn scene_keys(packing: &Packing, contacts: &[Contact]) -> Vec<Key> {
    let index = |id| packing.index_of(id).unwrap() as u32;
    let mut k: Vec<Key> = contacts
        .iter()
        .map(|c| {
            let (s, t) = (index(c.source_body), index(c.target_body));
            (s, c.source_vertex, t, c.target_triangle, c.flags.bits(), c.depth.to_bits())
        })
        .collect();
    k.sort_unstable();
    k
}
