//! The rays classified by their re-projected length are not cast at a body that comes nowhere
//! near their origin (`Tracer::may_reach`; the kernels' `may_reach`, `other_near` on the BVH
//! without its triangle test, whose twin is `cpu::leaf_near`; the CPU backend's,
//! `WideTree::has_leaf_near` on its wide trees), nor, for a coarse cloth's self pair, where no
//! triangle without the source vertex comes within the reach (`other_near`, the CPU backend's
//! `other_near_wide`, by `triangle_within`). The queries against brute force, and the contacts
//! of the backend and of the twin's narrow phase against a classification that casts every ray,
//! on layered sheets whose gaps lie on both sides of the reach and on a coarse sheet folded over
//! itself.

use glam::{Affine3A, Vec3};
use rand::Rng;
use raycontact::internals::cpu::Narrow;
use raycontact::internals::layout::{BodyPair, SELF_CLOTH};
use raycontact::internals::{FrameData, cpu};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Pairs, Scene};
use raycontact_tests::{folded_sheet, rng};

use crate::casting::{CastCounter, classify_in_order, scene_keys, sorted_keys};
use crate::reference::Packed;

#[test]
fn a_leaf_is_near_exactly_when_a_leaf_box_grown_by_the_reach_holds_the_point() {
    let torus = meshes::torus(1.0, 0.3, 48, 16);
    let mut r = rng(31);
    let mut soup = TriMesh { positions: Vec::new(), triangles: Vec::new() };
    for t in 0..2000u32 {
        let c = Vec3::new(r.random(), r.random(), r.random()) * 3.0 - 1.5;
        for _ in 0..3 {
            soup.positions.push(c + (Vec3::new(r.random(), r.random(), r.random()) - 0.5) * 0.1);
        }
        soup.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    let p = Packed::new(&[(&torus, BodyKind::Volumetric), (&soup, BodyKind::Volumetric)]);
    let (mut near, mut far) = (0, 0);
    for b in 0..2 {
        let tree = p.frame.body_wide(b).expect("a wide tree");
        let body = &p.packing.bodies[b];
        let boxes = &p.frame.tri_boxes[body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize];
        for _ in 0..2000 {
            let q = Vec3::new(r.random(), r.random(), r.random()) * 4.0 - 2.0;
            let reach = 10f32.powf(r.random_range(-3.0..-0.5));
            let brute = boxes.iter().filter(|x| x.flags & 1 == 0).any(|x| {
                (x.min - Vec3::splat(reach)).cmple(q).all() && q.cmple(x.max + Vec3::splat(reach)).all()
            });
            assert_eq!(tree.has_leaf_near(q, reach), brute, "body {b}: point {q}, reach {reach}");
            let binary = p.frame.body_nodes(&p.packing, b);
            assert_eq!(cpu::leaf_near(binary, q, reach), brute, "body {b}, binary: point {q}, reach {reach}");
            if brute { near += 1 } else { far += 1 }
        }
    }
    assert!(near > 300 && far > 300, "{near} near, {far} far");
}

/// Sheets of `n` quads a side stacked along z with the given gaps (each sheet rippled), over a
/// ball.
fn layers(gaps: &[f32], n: u32, seed: u64) -> Vec<(TriMesh, BodyKind)> {
    let mut r = rng(seed);
    let mut out = vec![(meshes::icosphere(0.5, 3), BodyKind::Volumetric)];
    let mut z = 0.52;
    for (k, &gap) in std::iter::once(&0.0).chain(gaps).enumerate() {
        z += gap;
        let phase: f32 = r.random_range(0.0..6.0);
        let mut s = meshes::grid_sheet(1.6, 1.6, n, n).transformed(Affine3A::from_translation(Vec3::new(
            0.03 * k as f32,
            -0.02 * k as f32,
            z,
        )));
        for v in s.positions.iter_mut() {
            v.z += 0.004 * (7.0 * v.x + 5.0 * v.y + phase).sin() - 0.3 * (v.x * v.x + v.y * v.y);
        }
        out.push((s, BodyKind::Cloth { half_thickness: 0.004 }));
    }
    out
}

#[test]
fn rays_that_cannot_reach_are_not_cast_and_the_contacts_stay_the_same() {
    // Reach max(prediction, 2 × 0.004) = 0.02: gaps under it, at it and far over it.
    let prediction = 0.02;
    let (mut total, mut unreached) = (0, 0);
    for (seed, gaps) in
        [(1, vec![0.012, 0.05, 0.019, 0.2]), (2, vec![0.021, 0.006, 0.08]), (3, vec![0.3, 0.01])]
    {
        let bodies = layers(&gaps, 40, seed);
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        scene.set_prediction_distance(prediction).unwrap();
        for (m, kind) in &bodies {
            scene.add_body(&m.positions, &m.triangles, *kind).unwrap();
        }
        let detected = scene.detect(Pairs::Overlapping).unwrap();
        let found = detected.contacts;
        let frame: FrameData = scene.frame_data().unwrap();
        let packing = scene.packing().clone();
        let positions: Vec<Vec3> = bodies.iter().flat_map(|(m, _)| m.positions.iter().copied()).collect();
        let pairs: Vec<BodyPair> =
            cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, prediction);
        let cx = cpu::Narrow {
            packing: &packing,
            frame: &frame,
            positions: &positions,
            previous: &positions,
            remember_exit: false,
            inversions: true,
        };
        let sources = cpu::ray_sources(&packing, &frame.body_state, &positions, &pairs);
        let every_ray = CastCounter { every_ray: true, ..Default::default() };
        let every = sorted_keys(&classify_in_order(&cx, &every_ray, &pairs, &sources));
        assert_eq!(
            sorted_keys(&cpu::narrow_phase(&cx, &pairs)),
            every,
            "seed {seed}, gaps {gaps:?}: the twin"
        );
        // Without wide trees the twin asks the binary trees, as the kernel.
        let mut binary = frame.clone();
        binary.wide = Default::default();
        let cx_binary = Narrow { frame: &binary, ..cx };
        assert_eq!(sorted_keys(&cpu::narrow_phase(&cx_binary, &pairs)), every, "seed {seed}: binary trees");
        let backend = scene_keys(&packing, &found);
        assert_eq!(backend, every, "seed {seed}, gaps {gaps:?}: the backend");
        // The sources turned away: the backend counts each one `may_reach` said no to, once.
        let asking = CastCounter::default();
        assert_eq!(sorted_keys(&classify_in_order(&cx, &asking, &pairs, &sources)), every, "seed {seed}");
        assert_eq!(detected.stats.unreached, asking.refusals(), "seed {seed}, gaps {gaps:?}: turned away");
        assert_eq!(detected.stats.sources as usize, sources.len(), "seed {seed}, gaps {gaps:?}: sources");
        total += every.len();
        unreached += asking.refusals();
    }
    assert!(total > 2000, "{total} contacts");
    // The ball's vertices ask every sheet; the sheets' the ones beyond their gaps.
    assert!(unreached > 1000, "{unreached} sources turned away");
}

/// The distance from `p` to triangle `t`, in f64: the least of the distances to the plane (where
/// `p` projects inside) and to the three edges (the test's own computation, not the library's).
fn distance64(p: Vec3, t: [Vec3; 3]) -> f64 {
    let v = |q: Vec3| [q.x as f64, q.y as f64, q.z as f64];
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    };
    let (p, [a, b, c]) = (v(p), t.map(v));
    let n = cross(sub(b, a), sub(c, a));
    let side = |e0: [f64; 3], e1: [f64; 3]| dot(cross(sub(e1, e0), sub(p, e0)), n) >= 0.0;
    let edge = |e0: [f64; 3], e1: [f64; 3]| {
        let e = sub(e1, e0);
        let s = (dot(sub(p, e0), e) / dot(e, e)).clamp(0.0, 1.0);
        let d = sub([e0[0] + s * e[0], e0[1] + s * e[1], e0[2] + s * e[2]], p);
        dot(d, d).sqrt()
    };
    if side(a, b) && side(b, c) && side(c, a) {
        dot(sub(p, a), n).abs() / dot(n, n).sqrt()
    } else {
        edge(a, b).min(edge(b, c)).min(edge(c, a))
    }
}

#[test]
fn another_triangle_is_near_exactly_when_one_without_the_vertex_lies_within_the_reach() {
    // `triangle_within` against the f64 distance; `other_near` (the kernels' twin, on the binary
    // tree) and `other_near_wide` (the backend's, on the 4-wide tree) against every triangle
    // that does not use the vertex; points whose distance to the nearest such triangle lies
    // within a rounding margin of the reach left out.
    let sheet = meshes::grid_sheet(1.0, 1.0, 12, 12);
    let mut folded = meshes::torus(0.6, 0.25, 24, 12);
    let mut r = rng(41);
    for p in folded.positions.iter_mut() {
        *p += (Vec3::new(r.random(), r.random(), r.random()) - 0.5) * 0.02;
    }
    let p =
        Packed::new(&[(&sheet, BodyKind::Cloth { half_thickness: 0.01 }), (&folded, BodyKind::Volumetric)]);
    let (mut near, mut far, mut skipped) = (0, 0, 0);
    for b in 0..2 {
        let body = &p.packing.bodies[b];
        let tri = |t: usize| {
            let g = body.tri_offset as usize + t;
            let idx = [0, 1, 2].map(|k| p.packing.triangles[3 * g + k]);
            (idx, idx.map(|i| p.positions[i as usize]))
        };
        let (first, count) = (body.vertex_offset, body.vertex_count);
        for _ in 0..3000 {
            // From a vertex of the body (a self pair's source), or a point near the body.
            let ignore = if r.random_bool(0.7) { first + r.random_range(0..count) } else { u32::MAX };
            let q = if ignore != u32::MAX {
                p.positions[ignore as usize]
            } else {
                Vec3::new(r.random(), r.random(), r.random()) * 2.0 - 1.0
            };
            let reach = 10f32.powf(r.random_range(-2.5..-0.3));
            let d = (0..body.tri_count as usize)
                .filter(|&t| !tri(t).0.contains(&ignore))
                .map(|t| distance64(q, tri(t).1))
                .fold(f64::INFINITY, f64::min);
            for t in 0..body.tri_count as usize {
                let dt = distance64(q, tri(t).1);
                if (dt - reach as f64).abs() > 1e-5 {
                    let within = cpu::triangle_within(q, reach, tri(t).1);
                    assert_eq!(
                        within,
                        dt <= reach as f64,
                        "triangle {t} of body {b}, point {q}, reach {reach}"
                    );
                }
            }
            if (d - reach as f64).abs() <= 1e-5 {
                skipped += 1;
                continue;
            }
            let brute = d <= reach as f64;
            let nodes = p.frame.body_nodes(&p.packing, b);
            let binary = cpu::other_near(body, nodes, &p.positions, &p.packing.triangles, q, reach, ignore);
            assert_eq!(binary, brute, "body {b}, binary: point {q}, reach {reach}, ignoring {ignore}");
            let wide = cpu::other_near_wide(p.frame.body_wide(b).unwrap(), q, reach, ignore);
            assert_eq!(wide, brute, "body {b}, wide: point {q}, reach {reach}, ignoring {ignore}");
            if brute { near += 1 } else { far += 1 }
        }
    }
    assert!(near > 500 && far > 500 && skipped < 50, "{near} near, {far} far, {skipped} left out");
}

#[test]
fn a_coarse_cloths_self_pair_casts_only_where_its_rays_can_reach_and_finds_the_same_contacts() {
    // Reach max(0.02, 2 × 0.004) = 0.02; cells of 0.1 (mean edge about 0.11: 0.6 of it exceeds
    // the reach). The upper layer lies 0.012 and 0.03 above the lower one: the vertices of the
    // layers' overlap find each other (or, at 0.03, nothing within the reach), the others
    // nothing at all, and are not cast.
    let prediction = 0.02;
    for gap in [0.012, 0.03] {
        let sheet = folded_sheet(16, 10, 11, 0.1, gap);
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        scene.set_prediction_distance(prediction).unwrap();
        scene
            .add_body(&sheet.positions, &sheet.triangles, BodyKind::Cloth { half_thickness: 0.004 })
            .unwrap();
        let detected = scene.detect(Pairs::Overlapping).unwrap();
        let found = detected.contacts;
        let frame: FrameData = scene.frame_data().unwrap();
        let packing = scene.packing().clone();
        assert!(0.6 * packing.bodies[0].mean_size > prediction * 1.01, "a coarse cloth");
        let pairs: Vec<BodyPair> =
            cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, prediction);
        assert_eq!(pairs.len(), 1, "the self pair");
        let cx = cpu::Narrow {
            packing: &packing,
            frame: &frame,
            positions: &sheet.positions,
            previous: &sheet.positions,
            remember_exit: false,
            inversions: true,
        };
        let sources = cpu::ray_sources(&packing, &frame.body_state, &sheet.positions, &pairs);
        let every_ray = CastCounter { every_ray: true, lines: true, ..Default::default() };
        let every = sorted_keys(&classify_in_order(&cx, &every_ray, &pairs, &sources));
        let asking = CastCounter { lines: true, ..Default::default() };
        assert_eq!(sorted_keys(&classify_in_order(&cx, &asking, &pairs, &sources)), every, "gap {gap}");
        assert_eq!(sorted_keys(&cpu::narrow_phase(&cx, &pairs)), every, "gap {gap}: the twin");
        let mut binary = frame.clone();
        binary.wide = Default::default();
        let cx_binary = Narrow { frame: &binary, ..cx };
        assert_eq!(sorted_keys(&cpu::narrow_phase(&cx_binary, &pairs)), every, "gap {gap}: binary trees");
        assert_eq!(scene_keys(&packing, &found), every, "gap {gap}: the backend");
        // Every source cast its two rays in one line without the question; with it, only
        // those of the layers' overlap (5 columns of 11 rows on each layer, the fold's), and
        // none where the layers lie farther apart than the reach.
        let lines = |c: &CastCounter| c.line_casts.load(std::sync::atomic::Ordering::Relaxed) as usize;
        assert_eq!(lines(&every_ray), sources.len(), "gap {gap}");
        let cast = lines(&asking);
        // Every other source was turned away, and counted so by the backend.
        assert_eq!(asking.refusals() as usize, sources.len() - cast, "gap {gap}");
        assert_eq!(detected.stats.unreached, asking.refusals(), "gap {gap}: the backend");
        assert_eq!(detected.stats.sources as usize, sources.len(), "gap {gap}: the backend's sources");
        if gap < prediction {
            assert!(cast > 0 && cast <= 12 * 11 + 11, "gap {gap}: {cast} of {} sources cast", sources.len());
            assert!(every.len() > 50, "gap {gap}: {} contacts between the layers", every.len());
        } else {
            assert_eq!(cast, 0, "gap {gap}: {cast} of {} sources cast", sources.len());
            assert!(every.is_empty(), "gap {gap}: {} contacts", every.len());
        }
    }
}
