//! Twin of `shaders/shared/classify.wgsl`: the classification of the narrow phase (Hermann et
//! al. 2008; Lehericey et al. 2015), shared by the full pass
//! ([`narrow_phase`](crate::cpu::narrow_phase), rays through the BVH) and iterative detection
//! ([`walk_contacts`](crate::cpu::walk_contacts), rays walked from last frame's hits), each
//! with its [`Tracer`].
//!
//! A ray classified by its re-projected length L = t |cos α| (the outward ray of volumetric →
//! volumetric and of volumetric → cloth, both rays of cloth → cloth and of a cloth against
//! itself, the rays of cloth → volumetric that hit the target's outside) is traced without
//! limit. A hit within the reach r along the ray (t ≤ r) is classified by its L; a hit beyond it
//! whose L is within r (v is within r of the hit triangle's plane, but maybe nowhere near the
//! triangle: a grazing hit far away) is confirmed by a second ray from the vertex straight
//! towards that plane (sign(cos α) m, m the triangle's unit normal, up to r) on the same body
//! ([`Narrow::straight`]): when it hits, the contact is made from its hit by the same rule, when
//! it misses the far hit is rejected. The straight ray walks from the slanted ray's hint (or the
//! far hit's triangle when there is none). Volumetric → cloth's inward ray traces the source
//! body first, to its exit, then the cloth up to half that distance. A cloth pair with r = 0 is
//! traced up to 0 (inversions only). Without inversion handling ([`Narrow::inversions`] false)
//! no hit is tested for an inversion. The reasons are in the WGSL header.
//!
//! The kernel casts a cloth vertex's inward and outward rays one after the other; a tracer that
//! can trace a ray and its opposite at once ([`Tracer::trace_line`]: the CPU backend's BVH
//! tracer) gets them as one request when both are cast without hints (cloth → cloth, a cloth's
//! self pair, cloth → volumetric). The hits, so the contacts, are the same.

use glam::Vec3;

use super::common::{reach, tri_vertices};
use crate::frame::FrameData;
use crate::layout::{
    BODY_CLOTH, BodyGpu, ContactGpu, NONE, Ray, RayHit, SELF_HIT_GAP, SELF_REACH_SIZE, WALK_RANGE,
    WalkCounts, contact_flags,
};
use crate::packing::Packing;

/// A trace's hit, and whether (in how many steps) a walk found it (WGSL `Traced`).
#[derive(Clone, Copy, Debug)]
pub struct Traced {
    /// The closest hit (or a miss).
    pub hit: RayHit,
    /// Found by walking from last frame's triangle.
    pub walked: bool,
    /// Edges the walk crossed.
    pub steps: u32,
    /// How the walk ended ([`NONE`]: the trace did not walk).
    pub outcome: u32,
    /// The hit triangle's unnormalised normal `cross(b - a, c - a)` when the tracer has it at
    /// hand (the wide walk's triangle records: [`WideHit::face`](crate::cpu::WideHit::face);
    /// the adjacency walk's corners: [`walk_ray`](crate::cpu::walk_ray)), else
    /// `None`, and the classification computes it from the positions (the same floats).
    pub face: Option<Vec3>,
}

impl Traced {
    /// A trace that did not walk: `hit` found through the BVH, with the hit triangle's `face`
    /// when the tracer has it.
    pub fn cast(hit: RayHit, face: Option<Vec3>) -> Self {
        Traced { hit, walked: false, steps: 0, outcome: NONE, face }
    }
}

/// How the classification casts its rays (the WGSL kernels' `trace`): through the BVH (the full
/// pass, [`narrow_phase`](crate::cpu::narrow_phase)) or by walking from last frame's hits
/// ([`walk_contacts`](crate::cpu::walk_contacts)).
pub trait Tracer: Sync {
    /// The closest hit of `ray` on packed body `b`, skipping the triangles of packed vertex
    /// `ignore`; `hint` is last frame's triangle of the same ray ([`NONE`]: unknown). Walk
    /// outcomes go to `counts`.
    fn trace(
        &self,
        cx: &Narrow<'_>,
        b: usize,
        ray: &Ray,
        ignore: u32,
        hint: u32,
        counts: &mut WalkCounts,
    ) -> Traced;

    /// Twin of the kernel's `may_reach` (`shared/classify.wgsl`): whether packed body `b` may
    /// have a triangle that does not use packed vertex `ignore` ([`NONE`]: any triangle) within
    /// distance `r` of `p` (`true` whenever unsure). The rays classified by their re-projected
    /// length make a contact only of a hit within the reach of their origin (their own, or their
    /// straight ray's), so they are not cast where this says no ([`asks_reach`]).
    fn may_reach(&self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool;

    /// The traces of `ray` and of its opposite ray (the same origin and bounds, `-dir`) on
    /// packed body `b`, skipping the triangles of packed vertex `ignore`, without hints: what
    /// [`Self::trace`] returns for each, in that order; `None` when the tracer casts them one by
    /// one through [`Self::trace`] (the default; the walks, whose traces follow hints). The BVH
    /// tracer walks the tree once for both.
    fn trace_line(&self, _: &Narrow<'_>, _: usize, _: &Ray, _: u32) -> Option<[Traced; 2]> {
        None
    }

    /// Twin of the kernel's `source_normal` (`shared/classify.wgsl`): the normal of packed
    /// vertex `v`, as `vertex_normals` computes it. The frame's (`narrow_phase` reads the
    /// normals `vertex_normals` wrote), unless the tracer computes it itself.
    fn normal(&self, cx: &Narrow<'_>, v: u32) -> Vec3 {
        cx.frame.normals[v as usize]
    }
}

/// A ray's closest hit on a body with the hit triangle's normal (WGSL `Probe`): `unit` its unit
/// normal m (the kernel keeps the unnormalised `face`), `cosine = dir · m`, `length = t |cosine|`
/// (the ray re-projected onto m).
#[derive(Clone, Copy, Debug)]
struct Probe {
    hit: RayHit,
    /// The kernel's `face` normalised once, where the kernel normalises it at each use (the
    /// classification, the straight ray, the contact): the same floats.
    unit: Vec3,
    cosine: f32,
    length: f32,
    walked: bool,
    steps: u32,
    outcome: u32,
}

impl Probe {
    const NONE: Probe = Probe {
        hit: RayHit::MISS,
        unit: Vec3::ZERO,
        cosine: 0.0,
        length: 0.0,
        walked: false,
        steps: 0,
        outcome: NONE,
    };

    fn hits(&self) -> bool {
        self.hit.triangle != NONE
    }
}

/// The narrow phase's view of one frame: the packing, the BVHs and both position sets.
#[derive(Clone, Copy, Debug)]
pub struct Narrow<'a> {
    /// The packed bodies.
    pub packing: &'a Packing,
    /// This frame's normals, boxes and BVHs.
    pub frame: &'a FrameData,
    /// This frame's positions. The kernels read them, the previous positions and the normals
    /// (`frame.normals`) from the regions of one vertex buffer
    /// ([`VERTEX_REGIONS`](crate::layout::VERTEX_REGIONS)); the twins take them as separate
    /// slices, as they take the triangles and the adjacency (`packing`), the two regions of the
    /// triangle buffer ([`TRIANGLE_REGIONS`](crate::layout::TRIANGLE_REGIONS)).
    pub positions: &'a [Vec3],
    /// The previous frame's positions.
    pub previous: &'a [Vec3],
    /// Trace each volumetric source body without limit, so that contacts remember where the ray
    /// leaves it ([`crate::layout::DETECT_REMEMBER_EXIT`]).
    pub remember_exit: bool,
    /// Inversion handling (Lehericey et al. 2015, section 3.2): a cloth vertex that crossed the
    /// hit triangle since the previous frame gives an `INVERTED` collision. Off: the
    /// [`crate::layout::DETECT_NO_INVERSION`] bit.
    pub inversions: bool,
}

/// One classification's mutable state: the tracer's counters, the contacts found and the
/// tracer's `may_reach` answer once asked (the kernel's `reach_answer`).
struct Sink<'s, T: Tracer> {
    tracer: &'s T,
    counts: WalkCounts,
    out: &'s mut Vec<ContactGpu>,
    reach: Option<bool>,
}

impl<T: Tracer> Sink<'_, T> {
    /// The tracer's `may_reach` for body `b` at `p`, asked once a source as the kernel asks it
    /// (every step that asks, asks the same).
    fn may_reach(&mut self, cx: &Narrow<'_>, b: usize, p: Vec3, r: f32, ignore: u32) -> bool {
        *self.reach.get_or_insert_with(|| self.tracer.may_reach(cx, b, p, r, ignore))
    }

    /// What the classification counted.
    fn classified(&self) -> Classified {
        Classified { walk: self.counts, unreached: self.reach == Some(false) }
    }
}

/// What [`classify`] counted of a source's traces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Classified {
    /// The walks' counters of its traces (an iterative pass's; zeros through the BVH).
    pub walk: WalkCounts,
    /// The tracer's `may_reach` said no: the rays classified by their re-projected length were
    /// not cast (the kernel counts such a source into
    /// [`DetectState::unreached`](crate::layout::DetectState::unreached)).
    pub unreached: bool,
}

impl Narrow<'_> {
    #[allow(clippy::too_many_arguments)]
    fn probe<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        b: usize,
        origin: Vec3,
        dir: Vec3,
        tmin: f32,
        tmax: f32,
        ignore: u32,
        hint: u32,
    ) -> Probe {
        let ray = Ray { origin, tmin, dir, tmax };
        let tr = sink.tracer.trace(self, b, &ray, ignore, hint, &mut sink.counts);
        self.probe_of(b, dir, tr)
    }

    /// The probe of trace `tr` along `dir` on packed body `b`.
    fn probe_of(&self, b: usize, dir: Vec3, tr: Traced) -> Probe {
        let mut pr =
            Probe { hit: tr.hit, walked: tr.walked, steps: tr.steps, outcome: tr.outcome, ..Probe::NONE };
        if tr.hit.triangle != NONE {
            let face = tr.face.unwrap_or_else(|| {
                let g = (self.packing.bodies[b].tri_offset + tr.hit.triangle) as usize;
                let (ta, tb, tc) = tri_vertices(self.positions, &self.packing.triangles, g);
                (tb - ta).cross(tc - ta)
            });
            pr.unit = face.normalize();
            pr.cosine = dir.dot(pr.unit);
            pr.length = tr.hit.t * pr.cosine.abs();
        }
        pr
    }

    /// A probe classified by its re-projected length, with reach `r` (grown by the margin): a
    /// contact comes of it only from a hit within the reach of `origin`, so it is not cast (a
    /// miss) where the tracer knows that body `b` (for a self pair, without the triangles of
    /// `ignore`) comes nowhere near, when [`asks_reach`] asks it.
    #[allow(clippy::too_many_arguments)]
    fn probe_by_length<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        b: usize,
        origin: Vec3,
        dir: Vec3,
        tmax: f32,
        ignore: u32,
        hint: u32,
        r: f32,
    ) -> Probe {
        if asks_reach(&self.packing.bodies[b], ignore, r) && !sink.may_reach(self, b, origin, r, ignore) {
            return Probe::NONE;
        }
        self.probe(sink, b, origin, dir, 0.0, tmax, ignore, hint)
    }

    /// The probes of a cloth vertex's two rays along its normal `n` from `origin` on packed body
    /// `b`, up to `tmax` without hints, in one trace when the tracer can (`None` when it casts
    /// them one by one): the inward one (`-n`) and the outward one.
    fn probe_line<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        b: usize,
        origin: Vec3,
        n: Vec3,
        tmax: f32,
        ignore: u32,
    ) -> Option<[Probe; 2]> {
        let ray = Ray { origin, tmin: 0.0, dir: -n, tmax };
        let [i, o] = sink.tracer.trace_line(self, b, &ray, ignore)?;
        Some([self.probe_of(b, -n, i), self.probe_of(b, n, o)])
    }

    /// Twin of `own_hit`: the source body's own hit along the ray, up to `t` (or without limit
    /// when exits are remembered).
    #[allow(clippy::too_many_arguments)]
    fn own_hit<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        a: usize,
        origin: Vec3,
        dir: Vec3,
        t: f32,
        v: u32,
        hint: u32,
    ) -> RayHit {
        let tmax = if self.remember_exit { f32::INFINITY } else { t };
        let ray = Ray { origin, tmin: 0.0, dir, tmax };
        sink.tracer.trace(self, a, &ray, v, hint, &mut sink.counts).hit
    }

    /// The hit a ray classified by L is classified by (twin of the `straight` step of
    /// `classify`): `pr` itself unless it lies beyond the reach `r` with L within it and
    /// `candidate` (the case's rule for such a hit) holds; then the straight ray from `origin`
    /// towards `pr`'s triangle's plane, up to `r`, on body `b`, walking from `hint` (or `pr`'s
    /// triangle when [`NONE`]). Returns the probe and its direction.
    #[allow(clippy::too_many_arguments)]
    fn straight<T: Tracer>(
        &self,
        sink: &mut Sink<'_, T>,
        (pr, dir, candidate): (Probe, Vec3, bool),
        b: usize,
        origin: Vec3,
        r: f32,
        ignore: u32,
        hint: u32,
    ) -> (Probe, Vec3) {
        if !(candidate && pr.hits() && pr.hit.t > r && pr.length < r) {
            return (pr, dir);
        }
        let m = if pr.cosine < 0.0 { -pr.unit } else { pr.unit };
        let hint = if hint == NONE { pr.hit.triangle } else { hint };
        (self.probe(sink, b, origin, m, 0.0, r, ignore, hint), m)
    }

    /// Whether packed vertex `v` is strictly on the other side of triangle `tri` of body `b`
    /// than at the previous positions.
    fn inverted(&self, v: u32, b: usize, tri: u32) -> bool {
        let g = (self.packing.bodies[b].tri_offset + tri) as usize;
        let side = |pos: &[Vec3]| {
            let (ta, tb, tc) = tri_vertices(pos, &self.packing.triangles, g);
            (pos[v as usize] - ta).dot((tb - ta).cross(tc - ta))
        };
        let (now, before) = (side(self.positions), side(self.previous));
        (now < 0.0 && before > 0.0) || (now > 0.0 && before < 0.0)
    }

    /// Twin of `emit`: the contact of probe `pr` along `dir` from `s`.
    fn contact(&self, s: &Source, pr: &Probe, through: bool, flags: u32, exit: u32) -> ContactGpu {
        let g = (self.packing.bodies[s.b].tri_offset + pr.hit.triangle) as usize;
        let (ta, tb, tc) = tri_vertices(self.positions, &self.packing.triangles, g);
        let toward = if pr.cosine < 0.0 { -pr.unit } else { pr.unit };
        let (normal, depth) =
            if through { (toward, pr.length + s.ea + s.eb) } else { (-toward, s.ea + s.eb - pr.length) };
        let (u, v) = (pr.hit.u, pr.hit.v);
        let q = ta * (1.0 - u - v) + tb * u + tc * v;
        ContactGpu {
            source_body: s.a as u32,
            source_vertex: s.local,
            target_body: s.b as u32,
            target_triangle: pr.hit.triangle,
            source_point: s.p - s.ea * normal,
            u,
            target_point: q + s.eb * normal,
            v,
            normal,
            depth,
            ray_length: pr.hit.t,
            weight: pr.cosine.abs(),
            flags: flags | if pr.walked { contact_flags::WALKED } else { 0 },
            pair: s.k,
            exit_triangle: exit,
            walk_steps: pr.steps,
            pad0: 0,
            pad1: 0,
        }
    }
}

/// Where a contact comes from (WGSL `Source`).
struct Source {
    a: usize,
    local: u32,
    b: usize,
    k: u32,
    p: Vec3,
    ea: f32,
    eb: f32,
}

/// Twin of `asks_reach` in `shared/classify.wgsl`: whether a ray classified by its re-projected
/// length at body `b`, skipping the triangles of packed vertex `ignore`, asks the tracer's
/// `may_reach` (with reach `r`, grown by the margin) before it is cast: always at another body's
/// source ([`NONE`]), and at its own (a cloth's self pair) where [`SELF_REACH_SIZE`] of the
/// cloth's mean edge lengths exceed the reach (the constant's doc says why). Either way the
/// contacts are the same: a ray not cast where `may_reach` says no would find nothing within
/// the reach. Only the work differs.
pub fn asks_reach(b: &BodyGpu, ignore: u32, r: f32) -> bool {
    ignore == NONE || SELF_REACH_SIZE * b.mean_size > r
}

/// Twin of `class_of` in `shared/classify.wgsl`: collision below `touch`, prediction below
/// `predict`, 0 otherwise.
fn class_of(length: f32, touch: f32, predict: f32) -> u32 {
    if length < touch {
        contact_flags::COLLISION
    } else if length < predict {
        contact_flags::PREDICTION
    } else {
        0
    }
}

/// Which rays of a source vertex to classify, and last frame's triangles of each
/// (`classify`'s `sides`, `hint_in`, `hint_out`, `hint_exit`).
#[derive(Clone, Copy, Debug)]
pub struct Rays {
    /// Bit 0: the inward ray; bit 1: the outward ray.
    pub sides: u32,
    /// Last frame's triangle of the inward ray on the target ([`NONE`]: unknown).
    pub hint_in: u32,
    /// Last frame's triangle of the outward ray on the target.
    pub hint_out: u32,
    /// Last frame's triangle where the ray left the source body.
    pub hint_exit: u32,
}

impl Rays {
    /// Both rays, no hints: the full pass.
    pub const BOTH: Rays = Rays { sides: 3, hint_in: NONE, hint_out: NONE, hint_exit: NONE };
}

/// Twin of `classify` in `shaders/shared/classify.wgsl`: appends to `out` the contacts of
/// source vertex `local` of packed body `a` against packed body `b` (`a` itself for a self pair)
/// of directed pair `k` with prediction distance `predict`, casting `rays` with `tracer`
/// (Hermann et al. 2008; Lehericey et al. 2015: four cases by body kind, re-projection,
/// inversion; the rules are in `narrow_phase.wgsl`'s header). Returns the walk counters of its
/// traces and whether `may_reach` turned it away.
#[allow(clippy::too_many_arguments)]
pub fn classify<T: Tracer>(
    cx: &Narrow<'_>,
    tracer: &T,
    key: (usize, u32, usize, u32),
    predict: f32,
    rays: Rays,
    out: &mut Vec<ContactGpu>,
) -> Classified {
    let v = cx.packing.bodies[key.0].vertex_offset + key.1;
    classify_at(cx, tracer, key, (cx.positions[v as usize], tracer.normal(cx, v)), predict, rays, out)
}

/// [`classify`] given the source vertex's position and its normal (`tracer.normal`): a caller
/// that classifies many sources reads them for several at once, whose cache misses then overlap
/// (the CPU backend's full pass, whose sources are in Morton order, not in memory order).
#[allow(clippy::too_many_arguments)]
pub fn classify_at<T: Tracer>(
    cx: &Narrow<'_>,
    tracer: &T,
    (a, local, b, k): (usize, u32, usize, u32),
    (p, n): (Vec3, Vec3),
    predict: f32,
    rays: Rays,
    out: &mut Vec<ContactGpu>,
) -> Classified {
    use contact_flags::{COLLISION, INVERTED, INWARD_RAY, OUTWARD_RAY, PREDICTION};
    let mut sink = Sink { tracer, counts: WalkCounts::default(), out, reach: None };
    let (body_a, body_b) = (&cx.packing.bodies[a], &cx.packing.bodies[b]);
    let cloth_a = body_a.flags & BODY_CLOTH != 0;
    let cloth_b = body_b.flags & BODY_CLOTH != 0;
    let (ea, eb) = (body_a.half_thickness, body_b.half_thickness);
    let reach = reach(predict, ea, eb);
    let self_pair = a == b;
    let v = body_a.vertex_offset + local;
    if n == Vec3::ZERO {
        return sink.classified();
    }
    let s = Source { a, local, b, k, p, ea, eb };
    let emit = |sink: &mut Sink<'_, T>, pr: &Probe, through: bool, flags: u32, exit: u32| {
        sink.out.push(cx.contact(&s, pr, through, flags, exit))
    };
    let inf = f32::INFINITY;
    // The rays classified by L go without limit (but not past 0 when the reach is 0).
    let beyond = if reach <= 0.0 { 0.0 } else { inf };
    // The reach of `may_reach`, grown by a margin: a hit computed at t <= r may lie a rounding
    // error farther, and the grown boxes are rounded too.
    let near = reach + reach * 1.0e-3 + 1.0e-5 * p.x.abs().max(p.y.abs()).max(p.z.abs().max(1.0));
    let (use_in, use_out) = (rays.sides & 1 != 0, rays.sides & 2 != 0);
    let (hin, hout, hexit) = (rays.hint_in, rays.hint_out, rays.hint_exit);
    if !cloth_a && self_pair {
        if use_in {
            let first = cx.probe(&mut sink, a, p, -n, 0.0, inf, v, hin);
            if first.hits() && first.cosine > 0.0 {
                let t1 = first.hit.t;
                let second = cx.probe(&mut sink, a, p, -n, t1 + SELF_HIT_GAP * t1, inf, v, NONE);
                if second.hits()
                    && second.hit.t > t1
                    && second.hit.triangle != first.hit.triangle
                    && second.cosine > 0.0
                {
                    emit(&mut sink, &first, true, COLLISION | INWARD_RAY, NONE);
                }
            }
        }
    } else if !cloth_a && !cloth_b {
        if use_in {
            let i = cx.probe(&mut sink, b, p, -n, 0.0, inf, NONE, hin);
            if i.hits() && i.cosine > 0.0 {
                let own = cx.own_hit(&mut sink, a, p, -n, i.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < i.hit.t) {
                    emit(&mut sink, &i, true, COLLISION | INWARD_RAY, own.triangle);
                }
            }
        }
        if use_out && predict > 0.0 {
            let o = cx.probe_by_length(&mut sink, b, p, n, beyond, NONE, hout, near);
            let (o, dir) = cx.straight(&mut sink, (o, n, o.cosine < 0.0), b, p, reach, NONE, hout);
            if o.hits() && o.cosine < 0.0 && o.length < predict {
                let own = cx.own_hit(&mut sink, a, p, dir, o.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < o.hit.t) {
                    emit(&mut sink, &o, false, PREDICTION | OUTWARD_RAY, own.triangle);
                }
            }
        }
    } else if !cloth_a {
        if use_in {
            // The own body first, to where the ray leaves it; then the cloth up to half that
            // exit distance (a hit beyond it is rejected: the same contacts as a cloth ray
            // without limit rejected by an own trace up to twice its hit, on shorter rays).
            let exit = cx.probe(&mut sink, a, p, -n, 0.0, inf, v, hexit).hit;
            let i = cx.probe(&mut sink, b, p, -n, 0.0, 0.5 * exit.t, NONE, hin);
            if i.hits() {
                // The exit the bounded own trace (up to 2 t) used to report: only one lying
                // exactly there, unless exits are remembered.
                let remembered = cx.remember_exit || exit.t == 2.0 * i.hit.t;
                emit(
                    &mut sink,
                    &i,
                    true,
                    COLLISION | INWARD_RAY,
                    if remembered { exit.triangle } else { NONE },
                );
            }
        }
        if use_out && reach > 0.0 {
            let o = cx.probe_by_length(&mut sink, b, p, n, beyond, NONE, hout, near);
            let (o, dir) = cx.straight(&mut sink, (o, n, true), b, p, reach, NONE, hout);
            let class = class_of(o.length, eb, predict);
            if o.hits() && class != 0 {
                let own = cx.own_hit(&mut sink, a, p, dir, o.hit.t, v, hexit);
                if !(own.triangle != NONE && own.t < o.hit.t) {
                    emit(&mut sink, &o, false, class | OUTWARD_RAY, own.triangle);
                }
            }
        }
    } else if !cloth_b {
        // Both rays in one trace where the tracer can (the same hits).
        let line = if use_in && use_out && hin == NONE && hout == NONE {
            cx.probe_line(&mut sink, b, p, n, inf, NONE)
        } else {
            None
        };
        let [i, o] = line.unwrap_or_else(|| {
            let i = if use_in { cx.probe(&mut sink, b, p, -n, 0.0, inf, NONE, hin) } else { Probe::NONE };
            let o = if use_out { cx.probe(&mut sink, b, p, n, 0.0, inf, NONE, hout) } else { Probe::NONE };
            [i, o]
        });
        let inside_i = i.hits() && i.cosine > 0.0;
        let inside_o = o.hits() && o.cosine > 0.0;
        if inside_o && (!inside_i || o.length < i.length) {
            emit(&mut sink, &o, true, COLLISION | OUTWARD_RAY, NONE);
        } else if inside_i {
            emit(&mut sink, &i, true, COLLISION | INWARD_RAY, NONE);
        } else {
            // Hits of b's outside, within the reach along the ray (or the straight ray's).
            for (h, dir, hint, ray) in [(i, -n, hin, INWARD_RAY), (o, n, hout, OUTWARD_RAY)] {
                let (h, _) = cx.straight(&mut sink, (h, dir, true), b, p, reach, NONE, hint);
                let class = class_of(h.length, ea, predict);
                if h.hits() && h.hit.t <= reach && h.cosine <= 0.0 && class != 0 {
                    emit(&mut sink, &h, false, class | ray, NONE);
                }
            }
        }
    } else {
        let ignore = if self_pair { v } else { NONE };
        let (mut todo, mut done, mut hints) = (rays.sides, 0u32, [hin, hout]);
        // Both rays in one trace where the tracer can (the same hits); then side by side. Both
        // are classified by L: where `may_reach` says no, neither (nor a straight ray of theirs)
        // finds anything within the reach, and no contact comes of the source (the misses
        // `probe_by_length` would give each), so it returns, as the kernel's `classify` does.
        let line = if todo == 3 && hin == NONE && hout == NONE {
            if asks_reach(body_b, ignore, near) && !sink.may_reach(cx, b, p, near, ignore) {
                return sink.classified();
            }
            cx.probe_line(&mut sink, b, p, n, beyond, ignore)
        } else {
            None
        };
        for i in 0..3 {
            let side = i & 1;
            if todo & (1 << side) == 0 || done & (1 << side) != 0 {
                continue;
            }
            done |= 1 << side;
            let (dir, ray) = if side == 1 { (n, OUTWARD_RAY) } else { (-n, INWARD_RAY) };
            // Read from `line` where it lies: `match line` copied both probes out first, and
            // reading one back by the side's index waited for those stores (`perf annotate`:
            // `classify_at`'s hottest loads); 8 runs alternated (`raycontact-bench --cpu
            // --no-parry --scene cloth-layers,eight-sheets --implementations cpu-1 --frames
            // 10`), the ray stage 75.0 / 76.2 -> 71.6 / 73.9 ms (min / median) on
            // `cloth-layers`, 24.0 / 24.7 -> 23.4 / 23.9 on `eight-sheets`.
            let h = match &line {
                Some(both) => both[side],
                None => cx.probe_by_length(&mut sink, b, p, dir, beyond, ignore, hints[side], near),
            };
            let other = 1 - side;
            if h.outcome == WALK_RANGE && todo & (1 << other) == 0 {
                todo |= 1 << other;
                hints[other] = hints[side];
            }
            let (h, _) = cx.straight(&mut sink, (h, dir, true), b, p, reach, ignore, hints[side]);
            if h.hits() {
                if cx.inversions && h.hit.t <= reach && cx.inverted(v, b, h.hit.triangle) {
                    emit(&mut sink, &h, true, COLLISION | INVERTED | ray, NONE);
                } else {
                    let class = class_of(h.length, ea + eb, predict);
                    if class != 0 {
                        emit(&mut sink, &h, false, class | ray, NONE);
                    }
                }
            }
        }
    }
    sink.classified()
}
