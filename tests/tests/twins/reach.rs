//! The rays classified by their re-projected length are not cast at a body that comes nowhere
//! near their origin (`Tracer::may_reach`; the kernels' `may_reach`, `leaf_near` on the BVH; the
//! CPU backend's, `WideTree::has_leaf_near` on its wide trees). Both queries against brute
//! force, and the contacts of the backend and of the twin's narrow phase against a
//! classification that casts every ray, on layered sheets whose gaps lie on both sides of the
//! reach.

use glam::{Affine3A, Vec3};
use rand::Rng;
use raycontact::internals::cpu::Narrow;
use raycontact::internals::layout::{BodyPair, SELF_CLOTH};
use raycontact::internals::{FrameData, cpu};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Pairs, Scene};
use raycontact_tests::rng;

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
    let mut total = 0;
    for (seed, gaps) in
        [(1, vec![0.012, 0.05, 0.019, 0.2]), (2, vec![0.021, 0.006, 0.08]), (3, vec![0.3, 0.01])]
    {
        let bodies = layers(&gaps, 40, seed);
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        scene.set_prediction_distance(prediction).unwrap();
        for (m, kind) in &bodies {
            scene.add_body(&m.positions, &m.triangles, *kind).unwrap();
        }
        let found = scene.detect(Pairs::Overlapping).unwrap().contacts;
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
        total += every.len();
    }
    assert!(total > 2000, "{total} contacts");
}
