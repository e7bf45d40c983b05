//! `cpu::broad_phase` and `cpu::ray_sources` against brute-force box tests in f64 on random
//! scenes of volumetric bodies and cloths. A pair or vertex whose box gap lies within 1e-5 of
//! the reach is skipped (f32 may round either way there).

use glam::{Affine3A, DVec3, Vec3};
use rand::Rng;
use raycontact::BodyKind;
use raycontact::internals::cpu;
use raycontact::internals::layout::{BodyPair, SELF_CLOTH, SELF_VOLUMETRIC};
use raycontact::meshes::{self, TriMesh};
use raycontact_tests::rng;

use crate::reference::{Packed, bounds};

/// A random scene: `n` small bodies (spheres, boxes, sheets with a half-thickness) in a box
/// of side 4, and a body of collinear (all degenerate) triangles.
fn random_scene(r: &mut rand_pcg::Pcg64, n: usize) -> Vec<(TriMesh, BodyKind)> {
    let mut bodies: Vec<(TriMesh, BodyKind)> = (0..n)
        .map(|i| {
            let at =
                Vec3::new(r.random_range(-2.0..2.0), r.random_range(-2.0..2.0), r.random_range(-2.0..2.0));
            let place = Affine3A::from_translation(at);
            match i % 3 {
                0 => {
                    (meshes::icosphere(r.random_range(0.2..0.8), 1).transformed(place), BodyKind::Volumetric)
                }
                1 => (
                    meshes::cuboid(Vec3::splat(r.random_range(0.2..0.6)), 1).transformed(place),
                    BodyKind::Volumetric,
                ),
                _ => (
                    meshes::grid_sheet(1.0, 0.8, 4, 3).transformed(place),
                    BodyKind::Cloth { half_thickness: r.random_range(0.0..0.2) },
                ),
            }
        })
        .collect();
    let line = TriMesh { positions: vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0], triangles: vec![[0, 1, 2]] };
    bodies.push((line, BodyKind::Volumetric));
    bodies
}

/// Each body's box from its positions over its non-degenerate triangles (f64), or `None`.
fn boxes(bodies: &[(TriMesh, BodyKind)]) -> Vec<Option<(DVec3, DVec3)>> {
    bodies
        .iter()
        .map(|(m, _)| {
            let flat = |t: &[u32; 3]| {
                let [a, b, c] = t.map(|i| m.positions[i as usize]);
                (b - a).cross(c - a).length_squared() == 0.0
            };
            bounds(m.triangles.iter().filter(|t| !flat(t)).flat_map(|t| t.map(|i| m.positions[i as usize])))
        })
        .collect()
}

/// How far `p` is outside box (lo, hi) (the largest per-axis excess, negative inside).
fn outside(p: DVec3, (lo, hi): (DVec3, DVec3)) -> f64 {
    (lo - p).max(p - hi).max_element()
}

/// The largest per-axis gap between two boxes (negative when they overlap).
fn gap((l1, h1): (DVec3, DVec3), (l2, h2): (DVec3, DVec3)) -> f64 {
    (l1 - h2).max(l2 - h1).max_element()
}

fn packed(bodies: &[(TriMesh, BodyKind)]) -> Packed {
    let refs: Vec<(&TriMesh, BodyKind)> = bodies.iter().map(|(m, k)| (m, *k)).collect();
    Packed::new(&refs)
}

#[test]
fn broad_phase_lists_the_pairs_whose_grown_boxes_overlap() {
    let mut r = rng(1979);
    let mut found = 0;
    for round in 0..60 {
        let bodies = random_scene(&mut r, 12);
        let p = packed(&bodies);
        let boxes = boxes(&bodies);
        let prediction = [0.0, 0.05, 0.3][round % 3];
        let self_bits = [0, SELF_CLOTH, SELF_CLOTH | SELF_VOLUMETRIC][(round / 3) % 3];
        let got = cpu::broad_phase(&p.packing.bodies, &p.frame.body_state, self_bits, prediction);
        assert!(got.iter().all(|q| q.prediction == prediction && q.pad == 0));
        let list: Vec<(u32, u32)> = got.iter().map(|q| (q.a, q.b)).collect();
        assert!(list.windows(2).all(|w| w[0] < w[1]), "round {round}: (a, b) order, no pair twice: {list:?}");
        for (i, (bi, ki)) in boxes.iter().zip(&bodies).enumerate() {
            let listed = |j: usize| list.contains(&(i as u32, j as u32));
            let cloth = matches!(ki.1, BodyKind::Cloth { .. });
            let wanted = if cloth { SELF_CLOTH } else { SELF_VOLUMETRIC };
            assert_eq!(listed(i), bi.is_some() && self_bits & wanted != 0, "round {round}: self pair {i}");
            for (j, (bj, kj)) in boxes.iter().zip(&bodies).enumerate().skip(i + 1) {
                let (Some(bi), Some(bj)) = (bi, bj) else {
                    assert!(!listed(j), "round {round}: ({i}, {j}) without a box");
                    continue;
                };
                let reach = (prediction as f64).max((ki.1.half_thickness() + kj.1.half_thickness()) as f64);
                let g = gap(*bi, *bj);
                if (g - reach).abs() < 1e-5 {
                    continue;
                }
                assert_eq!(listed(j), g <= reach, "round {round}: ({i}, {j}) gap {g}, reach {reach}");
                found += usize::from(g <= reach && i != j);
            }
            assert!(!list.iter().any(|&(a, b)| b < a), "round {round}: a <= b");
        }
    }
    assert!(found > 100, "{found} overlapping pairs: the scenes must overlap often");
}

#[test]
fn ray_sources_list_the_vertices_within_reach_of_the_target_box() {
    let mut r = rng(1980);
    let mut listed = 0;
    for round in 0..30 {
        let bodies = random_scene(&mut r, 8);
        let p = packed(&bodies);
        let boxes = boxes(&bodies);
        let n = bodies.len() as u32;
        let pairs: Vec<BodyPair> = (0..20)
            .map(|_| {
                let a = r.random_range(0..n);
                let b = if r.random_bool(0.2) { a } else { r.random_range(0..n) };
                BodyPair { a, b, prediction: [0.0, 0.1, 0.5][r.random_range(0..3)], pad: 0 }
            })
            .collect();
        let got = cpu::ray_sources(&p.packing, &p.frame.body_state, &p.positions, &pairs);
        // Brute force: every directed pair (2k: a -> b; 2k + 1: b -> a, not for a self pair),
        // every vertex of the source unless the target is a box-tested target and the vertex
        // lies beyond the reach of its box. A self pair and volumetric -> cloth list every
        // vertex.
        let mut expected = Vec::new();
        let mut borderline = Vec::new();
        for (k, q) in pairs.iter().enumerate() {
            let mut directed = vec![(2 * k as u32, q.a as usize, q.b as usize)];
            if q.a != q.b {
                directed.push((2 * k as u32 + 1, q.b as usize, q.a as usize));
            }
            for (kd, a, b) in directed {
                let (ka, kb) = (bodies[a].1, bodies[b].1);
                let cloth = |k: BodyKind| matches!(k, BodyKind::Cloth { .. });
                let tested = a != b && (cloth(ka) || !cloth(kb));
                let reach = (q.prediction as f64).max((ka.half_thickness() + kb.half_thickness()) as f64);
                for (v, x) in bodies[a].0.positions.iter().enumerate() {
                    let entry = [kd, v as u32];
                    match (tested, boxes[b]) {
                        (false, _) => expected.push(entry),
                        // A target without leaves has no box: the rule does not say.
                        (true, None) => borderline.push(entry),
                        (true, Some(bx)) => {
                            let out = outside(x.as_dvec3(), bx);
                            if (out - reach).abs() < 1e-5 {
                                borderline.push(entry);
                            } else if out <= reach {
                                expected.push(entry);
                            }
                        }
                    }
                }
            }
        }
        let got_clear: Vec<[u32; 2]> = got.iter().copied().filter(|e| !borderline.contains(e)).collect();
        assert_eq!(got_clear, expected, "round {round}");
        listed += expected.len();
    }
    assert!(listed > 1000, "{listed} sources listed");
}
