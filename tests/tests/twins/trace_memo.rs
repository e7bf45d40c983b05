//! The CPU backend's memo of the traces that skip a vertex (`TraceMemo`): an unbounded trace
//! asked again (same body, same ray bit for bit, same skipped vertex) is answered without a
//! cast, and with what the cast returned, and so is the same ray with a bound (cut at it), and
//! the opposite ray of one cast as a line (a volumetric vertex's own-body trace along its inward
//! normal, whose own-body checks along the outward normal are then answered at any bound); any
//! other trace is cast. On a ball draped in three
//! garments (its own-body traces asked once per garment) with a ring round its cap, with exits
//! remembered and not: the same contacts as casting every trace, in the same order, with fewer
//! casts; and the backend's contacts equal the twin's narrow phase. From one full pass to the
//! next the memo keeps the entries of the bodies that did not move, and forgets those of the
//! bodies that did, even where a vertex's ray stays the same bit for bit. A pass that asks no
//! trace the memo keeps is known beforehand (`trace_memo::asked`), and passes without it.

use std::sync::atomic::Ordering;

use glam::{Affine3A, Vec3};
use raycontact::internals::cpu::{BvhTracer, Narrow, Tracer};
use raycontact::internals::layout::{BodyPair, ContactGpu, NONE, Ray, SELF_CLOTH, WalkCounts};
use raycontact::internals::trace_memo::{self, TraceMemo};
use raycontact::internals::{FrameData, cpu};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Pairs, Scene};

use crate::casting::{CastCounter, Key, classify_in_order, key, scene_keys, sorted_keys};
use crate::reference::Packed;

/// A ball, three rippled sheets draped over its top (cutting into it at different depths), and
/// a torus round its cap.
fn draped_ball() -> Vec<(TriMesh, BodyKind)> {
    let mut out = vec![(meshes::icosphere(0.5, 4), BodyKind::Volumetric)];
    for (k, z) in [0.46f32, 0.49, 0.53].into_iter().enumerate() {
        let mut s = meshes::grid_sheet(1.4, 1.4, 48, 48).transformed(Affine3A::from_translation(Vec3::new(
            0.02 * k as f32,
            -0.015 * k as f32,
            z,
        )));
        for v in s.positions.iter_mut() {
            v.z += 0.01 * (9.0 * v.x + 4.0 * v.y + k as f32).sin() - 0.35 * (v.x * v.x + v.y * v.y);
        }
        out.push((s, BodyKind::Cloth { half_thickness: 0.004 }));
    }
    // A ring round the ball's cap, where the garments lie too.
    let torus =
        meshes::torus(0.35, 0.08, 64, 16).transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, 0.33)));
    out.push((torus, BodyKind::Volumetric));
    out
}

/// `bodies` packed, their frame built by the twins.
fn packed(bodies: &[(TriMesh, BodyKind)]) -> Packed {
    let refs: Vec<(&TriMesh, BodyKind)> = bodies.iter().map(|(m, k)| (m, *k)).collect();
    Packed::new(&refs)
}

#[test]
fn a_trace_asked_again_is_answered_from_the_memo_and_the_contacts_stay_the_same() {
    let bodies = draped_ball();
    let prediction = 0.02;
    let mut scene = Scene::new_cpu(Some(2)).unwrap();
    scene.set_prediction_distance(prediction).unwrap();
    let ids: Vec<_> =
        bodies.iter().map(|(m, kind)| scene.add_body(&m.positions, &m.triangles, *kind).unwrap()).collect();
    let found = scene.detect(Pairs::Overlapping).unwrap().contacts;
    let frame: FrameData = scene.frame_data().unwrap();
    let packing = scene.packing().clone();
    let positions: Vec<Vec3> = bodies.iter().flat_map(|(m, _)| m.positions.iter().copied()).collect();
    let pairs: Vec<BodyPair> = cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, prediction);
    let ball = packing.index_of(ids[0]).unwrap() as u32;
    let garments = pairs.iter().filter(|p| (p.a == ball) != (p.b == ball)).count();
    assert!(garments >= 4, "the ball is in {garments} pairs with other bodies: {pairs:?}");
    let sources = cpu::ray_sources(&packing, &frame.body_state, &positions, &pairs);
    for remember_exit in [false, true] {
        let cx = Narrow {
            packing: &packing,
            frame: &frame,
            positions: &positions,
            previous: &positions,
            remember_exit,
            inversions: true,
        };
        let every = CastCounter::default();
        let plain = classify_in_order(&cx, &every, &pairs, &sources);
        let mut bounded_single = 0;
        for lines in [false, true] {
            let inner = CastCounter { lines, ..Default::default() };
            let mut memo = TraceMemo::default();
            memo.reset(&packing.bodies, &[]);
            let memoised = classify_in_order(&cx, &memo.tracer(&inner), &pairs, &sources);
            let (m, p): (Vec<Key>, Vec<Key>) =
                (memoised.iter().map(key).collect(), plain.iter().map(key).collect());
            let first = m.iter().zip(&p).position(|(x, y)| x != y);
            assert!(
                m == p,
                "remember_exit {remember_exit}, lines {lines}: {} contacts with the memo, {} without; first difference: {first:?}",
                m.len(),
                p.len()
            );
            let (all, cast) = (every.casts(), inner.casts());
            assert!(cast < all, "remember_exit {remember_exit}: {cast} casts with the memo, {all} without");
            // Each garment after the first asks the ball's own-body traces again.
            assert!(
                all - cast > 500,
                "remember_exit {remember_exit}: {} traces answered by the memo",
                all - cast
            );
            // The ball's own-body checks along its outward normals, bounded by the garment each
            // meets: answered from the lines of its exit traces (with exits remembered they are
            // unbounded, and kept or answered as any unbounded trace).
            let bounded = inner.bounded_skips.load(Ordering::Relaxed);
            if remember_exit {
                assert_eq!(bounded, 0);
            } else if lines {
                assert!(
                    bounded + 300 < bounded_single,
                    "{bounded} bounded checks cast with lines, {bounded_single} without"
                );
            } else {
                bounded_single = bounded;
                assert!(bounded > 300, "{bounded} bounded checks cast");
            }
        }
        assert!(plain.len() > 1000, "{} contacts", plain.len());
        if !remember_exit {
            // The backend (rayon, its memo) against the twin's narrow phase.
            let backend = scene_keys(&packing, &found);
            let twin = sorted_keys(&cpu::narrow_phase(&cx, &pairs));
            assert_eq!(backend, twin, "the backend against the twin");
        }
    }
}

#[test]
fn the_memo_answers_only_the_same_body_ray_and_skipped_vertex_and_forgets_on_reset() {
    let p = packed(&draped_ball());
    let cx = p.narrow();
    let inner = CastCounter::default();
    let mut memo = TraceMemo::default();
    memo.reset(&p.packing.bodies, &[]);
    let v = 17u32;
    let ray = Ray::new(p.positions[v as usize], -p.positions[v as usize]);
    let casts = || inner.casts();
    let mut counts = WalkCounts::default();
    let mut trace = |memo: &TraceMemo, b: usize, r: &Ray, ignore: u32| {
        memo.tracer(&inner).trace(&cx, b, r, ignore, NONE, &mut counts).hit
    };
    let first = trace(&memo, 0, &ray, v);
    assert!(first.triangle != NONE, "the ray from the ball's surface through its centre leaves it");
    assert_eq!(casts(), 1);
    let again = trace(&memo, 0, &ray, v);
    assert_eq!(
        (again.t.to_bits(), again.triangle, again.u.to_bits()),
        (first.t.to_bits(), first.triangle, first.u.to_bits())
    );
    assert_eq!(casts(), 1, "answered by the memo");
    // The same ray with a bound: answered, cut at the bound (a miss short of the hit, the hit
    // from its distance on), as the bounded cast finds it.
    for (tmax, hits) in [(0.5 * first.t, false), (first.t, true), (2.0 * first.t, true)] {
        let bounded = Ray { tmax, ..ray };
        let answered = trace(&memo, 0, &bounded, v);
        let cast = BvhTracer.trace(&cx, 0, &bounded, v, NONE, &mut WalkCounts::default()).hit;
        assert_eq!(answered.triangle != NONE, hits, "bound {tmax}");
        assert_eq!((answered.triangle, answered.t.to_bits()), (cast.triangle, cast.t.to_bits()));
    }
    assert_eq!(casts(), 1, "bounded traces of the same ray answered by the memo");
    // Another origin bit, another body, another skipped vertex, no skipped vertex, the opposite
    // direction (not cast as a line by this tracer): each cast.
    let moved = Ray { origin: Vec3 { z: f32::from_bits(ray.origin.z.to_bits() ^ 1), ..ray.origin }, ..ray };
    trace(&memo, 0, &moved, v);
    trace(&memo, 4, &ray, v);
    trace(&memo, 0, &ray, v + 1);
    trace(&memo, 0, &ray, NONE);
    trace(&memo, 0, &Ray { dir: -ray.dir, ..ray }, v);
    assert_eq!(casts(), 6);
    // A bounded trace is never kept: asked again, it is cast again (and a bounded trace on an
    // empty slot leaves it empty for the unbounded one).
    let bounded = Ray { tmax: 2.0 * first.t, ..ray };
    let b1 = trace(&memo, 0, &bounded, v + 2);
    let b2 = trace(&memo, 0, &bounded, v + 2);
    assert_eq!((b1.triangle, b1.t.to_bits()), (b2.triangle, b2.t.to_bits()));
    assert_eq!(casts(), 8);
    trace(&memo, 0, &ray, v + 2);
    trace(&memo, 0, &ray, v + 2);
    assert_eq!(casts(), 9, "the unbounded trace of that vertex is memoised");
    // The first trace of the slot stays; the memo forgets it on reset.
    trace(&memo, 0, &ray, v);
    assert_eq!(casts(), 9);
    memo.reset(&p.packing.bodies, &[]);
    trace(&memo, 0, &ray, v);
    assert_eq!(casts(), 10);
    // A frame of bounded traces only writes nothing, and the next frame starts empty too.
    memo.reset(&p.packing.bodies, &[]);
    trace(&memo, 0, &bounded, v);
    memo.reset(&p.packing.bodies, &[]);
    trace(&memo, 0, &ray, v);
    assert_eq!(casts(), 12);
    // `forget` empties every slot too (for a pass that does not use the memo).
    trace(&memo, 0, &ray, v);
    assert_eq!(casts(), 12);
    memo.forget();
    trace(&memo, 0, &ray, v);
    assert_eq!(casts(), 13);
}

/// A full pass asks a trace the memo keeps (an unbounded trace that skips a vertex) only where
/// `trace_memo::asked` says so: a volumetric body with a cloth, a self pair, or a pair with a
/// volumetric body when exits are remembered. Where it says no, no such trace is asked (the
/// CPU backend and the parry3d peer then pass without the memo, which is never sized); where a
/// volumetric body's own trace to the exit is asked, it says yes. Each pair of the draped ball
/// on its own, with exits remembered and not.
#[test]
fn the_memo_is_used_only_by_passes_that_ask_a_trace_it_keeps() {
    let p = packed(&draped_ball());
    let (ball, sheet, other_sheet, torus) = (0u32, 1u32, 2u32, 4u32);
    // (a, b, asked without and with exits remembered, an unbounded skip surely asked without
    // and with).
    let cases = [
        (ball, torus, [false, true], [false, true]),
        (ball, sheet, [true, true], [true, true]),
        (sheet, other_sheet, [false, false], [false, false]),
        (ball, ball, [true, true], [true, true]),
        (torus, torus, [true, true], [true, true]),
        // A cloth's self pair: its rays skip the vertex, cast as lines by the backend's tracer.
        (sheet, sheet, [true, true], [false, false]),
    ];
    for (a, b, asked, surely) in cases {
        let pairs = [BodyPair { a, b, prediction: 0.02, pad: 0 }];
        let sources = cpu::ray_sources(&p.packing, &p.frame.body_state, &p.positions, &pairs);
        assert!(!sources.is_empty(), "pair ({a}, {b}): no sources");
        for (k, remember_exit) in [false, true].into_iter().enumerate() {
            let what = format!("pair ({a}, {b}), exits remembered: {remember_exit}");
            let cx = Narrow { remember_exit, ..p.narrow() };
            let says = trace_memo::asked(&p.packing.bodies, &pairs, remember_exit);
            assert_eq!(says, asked[k], "{what}");
            let counter = CastCounter { lines: true, ..Default::default() };
            classify_in_order(&cx, &counter, &pairs, &sources);
            let skips = counter.unbounded_skips.load(Ordering::Relaxed);
            assert!(says || skips == 0, "{what}: {skips} unbounded traces that skip a vertex");
            assert!(!surely[k] || skips > 0, "{what}: no unbounded trace that skips a vertex");
        }
    }
}

/// The memo pays (`trace_memo::pays`) where a trace it keeps may be asked again within a pair:
/// a volumetric pair's exit traces (asked where exits are remembered) are not: cast through the
/// memo, a vertex's exit trace is never asked twice in the pair, with or without a prediction
/// (the ball and the torus round its cap, interpenetrating; two balls a little apart, whose
/// predictions' own-body checks run outward from vertices whose inward rays meet nothing), so
/// the memo answers none and such a pass goes without it. A volumetric body with a cloth, or a
/// self pair, keeps it paying, and a list pays where any of its pairs does. The contacts are
/// the same either way.
#[test]
fn the_memo_pays_where_a_trace_it_keeps_is_asked_again() {
    let pair = |a, b, prediction| BodyPair { a, b, prediction, pad: 0 };
    let ball = meshes::icosphere(0.5, 4);
    let apart = ball.transformed(Affine3A::from_translation(Vec3::new(1.01, 0.0, 0.0)));
    let balls = packed(&[(ball, BodyKind::Volumetric), (apart, BodyKind::Volumetric)]);
    let draped = packed(&draped_ball());
    let volumetric = [(&draped, pair(0, 4, 0.0)), (&draped, pair(0, 4, 0.02)), (&balls, pair(0, 1, 0.02))];
    for (p, pair) in volumetric {
        let (bodies, pairs, what) = (&p.packing.bodies, [pair], format!("{pair:?}"));
        assert!(trace_memo::asked(bodies, &pairs, true), "{what}: exit traces asked");
        assert!(!trace_memo::pays(bodies, &pairs), "{what}");
        let sources = cpu::ray_sources(&p.packing, &p.frame.body_state, &p.positions, &pairs);
        let cx = Narrow { remember_exit: true, ..p.narrow() };
        let (every, inner) = (CastCounter::default(), CastCounter { lines: true, ..Default::default() });
        let plain = classify_in_order(&cx, &every, &pairs, &sources);
        let mut memo = TraceMemo::default();
        memo.reset(bodies, &[]);
        let memoised = classify_in_order(&cx, &memo.tracer(&inner), &pairs, &sources);
        assert_eq!(sorted_keys(&memoised), sorted_keys(&plain), "{what}: the contacts");
        assert!(plain.len() > 20, "{what}: {} contacts", plain.len());
        // (A line is one walk for a trace and its opposite, counted apart from the casts.)
        let cast = inner.casts() + inner.line_casts.load(Ordering::Relaxed);
        assert_eq!(cast, every.casts(), "{what}: traces answered by the memo");
    }
    let bodies = &draped.packing.bodies;
    let (ball, sheet, torus) = (0u32, 1u32, 4u32);
    assert!(trace_memo::pays(bodies, &[pair(ball, sheet, 0.0)]), "a volumetric body with a cloth");
    assert!(trace_memo::pays(bodies, &[pair(torus, torus, 0.0)]), "a self pair");
    assert!(trace_memo::pays(bodies, &[pair(ball, torus, 0.0), pair(torus, torus, 0.0)]), "a list");
}

/// A volumetric vertex's own-body trace along its inward normal, cast through the memo by a
/// tracer that walks a ray and its opposite together, is cast as a line: the own-body checks
/// along its outward normal, whatever their bound, are then answered, each as its own cast
/// finds it. On a torus, whose inner vertices' outward rays cross the hole into the far side,
/// and on a ball, whose outward rays leave it.
#[test]
fn an_inward_trace_cast_as_a_line_answers_the_outward_checks_at_any_bound() {
    let p = packed(&draped_ball());
    let cx = p.narrow();
    let inner = CastCounter { lines: true, ..Default::default() };
    let mut memo = TraceMemo::default();
    memo.reset(&p.packing.bodies, &[]);
    let mut counts = WalkCounts::default();
    let (mut far_hits, mut checks) = (0, 0);
    for b in [0usize, 4] {
        let body = &p.packing.bodies[b];
        for v in body.vertex_offset..body.vertex_offset + body.vertex_count {
            let (o, n) = (p.positions[v as usize], p.frame.normals[v as usize]);
            let exit = Ray { origin: o, dir: -n, tmin: 0.0, tmax: f32::INFINITY };
            let lines = inner.line_casts.load(Ordering::Relaxed);
            let got = memo.tracer(&inner).trace(&cx, b, &exit, v, NONE, &mut counts).hit;
            let want = BvhTracer.trace(&cx, b, &exit, v, NONE, &mut WalkCounts::default()).hit;
            assert_eq!(
                (got.triangle, got.t.to_bits()),
                (want.triangle, want.t.to_bits()),
                "body {b} vertex {v}"
            );
            assert_eq!(inner.line_casts.load(Ordering::Relaxed), lines + 1, "cast as a line");
            let out = Ray { dir: n, ..exit };
            let far = BvhTracer.trace(&cx, b, &out, v, NONE, &mut WalkCounts::default()).hit;
            far_hits += usize::from(far.triangle != NONE);
            let bound = if far.triangle != NONE { far.t } else { 0.3 };
            for tmax in [0.5 * bound, bound, 2.0 * bound, f32::INFINITY] {
                let check = Ray { tmax, ..out };
                let got = memo.tracer(&inner).trace(&cx, b, &check, v, NONE, &mut counts);
                let want = BvhTracer.trace(&cx, b, &check, v, NONE, &mut WalkCounts::default());
                let key = |t: &raycontact::internals::cpu::Traced| {
                    (t.hit.triangle, t.hit.t.to_bits(), t.hit.u.to_bits(), t.hit.v.to_bits())
                };
                assert_eq!(key(&got), key(&want), "body {b} vertex {v} bound {tmax}");
                checks += 1;
            }
        }
    }
    assert_eq!(inner.casts(), 0, "every check answered, none cast");
    assert!(far_hits > 50, "{far_hits} outward rays meet their own body (the torus's inner side)");
    assert!(checks > 2000);
}

/// `bodies` with the first one's (a ball of radius 0.5 at the origin) lower part (z < -0.1)
/// squashed towards z = -0.1, its bottom to -0.18: the vertices above keep their positions and
/// normals, and so the bits of their own-body rays, but those rays now leave the ball sooner.
fn squashed(bodies: &[(TriMesh, BodyKind)]) -> Vec<(TriMesh, BodyKind)> {
    let mut out = bodies.to_vec();
    for p in out[0].0.positions.iter_mut().filter(|p| p.z < -0.1) {
        p.z = -0.1 + 0.2 * (p.z + 0.1);
    }
    out
}

/// Every source of every pair of `p` (prediction 0.02) classified in order through `tracer`,
/// exits remembered.
fn classify_packed<T: Tracer>(p: &Packed, tracer: &T) -> Vec<ContactGpu> {
    let cx = Narrow { remember_exit: true, ..p.narrow() };
    let pairs = cpu::broad_phase(&p.packing.bodies, &p.frame.body_state, SELF_CLOTH, 0.02);
    let sources = cpu::ray_sources(&p.packing, &p.frame.body_state, &p.positions, &pairs);
    classify_in_order(&cx, tracer, &pairs, &sources)
}

#[test]
fn the_memo_keeps_the_traces_of_the_bodies_that_did_not_move_and_forgets_the_others() {
    let before = draped_ball();
    let after = squashed(&before);
    let (p0, p1) = (packed(&before), packed(&after));
    let ball = 0;
    let all_but_ball: Vec<bool> = (0..before.len()).map(|b| b != ball).collect();
    let only_ball: Vec<bool> = (0..before.len()).map(|b| b == ball).collect();
    let inner = CastCounter::default();
    let mut memo = TraceMemo::default();
    let plain = |p: &Packed| classify_packed(p, &CastCounter::default());
    let memoised = |p: &Packed, memo: &TraceMemo| classify_packed(p, &memo.tracer(&inner));
    let (want0, want1) = (plain(&p0), plain(&p1));
    assert!(want0 != want1, "squashing the ball changes the contacts (their exits)");
    // A first pass fills the memo.
    memo.reset(&p0.packing.bodies, &[]);
    assert!(memoised(&p0, &memo) == want0, "the first pass");
    let first = inner.casts();
    // Nothing but the others moved: the ball's own-body traces are answered.
    memo.reset(&p0.packing.bodies, &all_but_ball);
    assert!(memoised(&p0, &memo) == want0, "the ball kept");
    let second = inner.casts() - first;
    assert!(second + 500 < first, "{second} casts with the ball's traces kept, {first} without");
    // The ball squashed, and said so: its traces are cast again.
    memo.reset(&p1.packing.bodies, &only_ball);
    assert!(memoised(&p1, &memo) == want1, "the ball squashed and marked");
    // Had the move not been said, the kept traces of the rays that stayed the same would be
    // answered at the old positions: what the marks are for (and what makes this test see a
    // lost mark).
    memo.reset(&p0.packing.bodies, &only_ball);
    memoised(&p0, &memo);
    memo.reset(&p1.packing.bodies, &all_but_ball);
    assert!(memoised(&p1, &memo) != want1, "a move not marked is not seen by the memo");
    // A packing of another vertex count empties every slot.
    let smaller = packed(&before[..before.len() - 1]);
    memo.reset(&smaller.packing.bodies, &vec![false; before.len() - 1]);
    let c = inner.casts();
    memoised(&smaller, &memo);
    let recast = inner.casts() - c;
    memo.reset(&smaller.packing.bodies, &[]);
    let c = inner.casts();
    memoised(&smaller, &memo);
    assert_eq!(recast, inner.casts() - c, "a new vertex count: nothing kept");
}

/// A ball, and a cloth bowl inside it (z = 0.1 + 4 (x^2 + y^2), its rim out through the top):
/// the inward rays of the ball's top vertices meet the bowl's bottom about 0.4 below, within half
/// their way out of the ball (a volumetric → cloth contact), until the ball's lower half is
/// squashed (`squashed`: their way out falls from 1 to about 0.7, so the bowl lies beyond half
/// of it).
fn ball_and_bowl() -> Vec<(TriMesh, BodyKind)> {
    let mut bowl = meshes::grid_sheet(0.6, 0.6, 30, 30);
    for v in bowl.positions.iter_mut() {
        v.z = 0.1 + 4.0 * (v.x * v.x + v.y * v.y);
    }
    vec![(meshes::icosphere(0.5, 4), BodyKind::Volumetric), (bowl, BodyKind::Cloth { half_thickness: 0.004 })]
}

#[test]
fn the_cpu_backend_forgets_the_traces_of_a_body_that_moved_and_finds_the_twins_contacts() {
    // The backend (wide trees, memo) against `set_wide_bvh(false)` (the kernels' twins, every
    // trace cast), frame after frame: the bowl moved alone (the ball's own-body traces kept),
    // then the ball's lower half squashed (its top vertices' rays the same bits, their way out
    // shorter: kept traces would be stale, and the bowl's contacts with them would stay), then
    // nothing moved.
    let before = ball_and_bowl();
    let after = squashed(&before);
    let mut scenes = [Scene::new_cpu(Some(2)).unwrap(), Scene::new_cpu(Some(2)).unwrap()];
    scenes[1].set_wide_bvh(false);
    let mut ids = Vec::new();
    for s in &mut scenes {
        ids = before.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    }
    let mut last = Vec::new();
    for frame in 0..4 {
        for s in &mut scenes {
            match frame {
                1 => {
                    let shifted: Vec<Vec3> =
                        before[1].0.positions.iter().map(|p| *p + Vec3::Z * 0.002).collect();
                    s.set_positions(ids[1], &shifted).unwrap();
                }
                2 => s.set_positions(ids[0], &after[0].0.positions).unwrap(),
                _ => {}
            }
        }
        let [w, t] = scenes.each_mut().map(|s| s.detect(Pairs::Overlapping).unwrap().contacts);
        let inward = |c: &[raycontact::Contact]| c.iter().filter(|c| c.source_body == ids[0]).count();
        assert!(inward(&w) > 0 || frame == 2 || frame == 3, "frame {frame}: the ball's rays meet the bowl");
        assert!(w == t, "frame {frame}: the backend's contacts are the twins'");
        if frame == 2 {
            assert!(inward(&w) < inward(&last), "squashing the ball takes the bowl out of its rays' reach");
        }
        last = w;
    }
}
