//! The fan words `fit` writes and the walks that pass them (`layout::TRIANGLE_WORDS`,
//! `FAN_VALENCE`, `Tuning::fan_walks`): on the GPU, a body with a vertex of many triangles gets
//! its tree's fan words (equal to the twin's, `cpu::fit_fans`) where the tuning passes fans, and
//! a detection whose own-body traces start at such a vertex finds the CPU backend's contacts,
//! that vertex's among them, on both tunings.

use glam::{Affine3A, Vec3};
use raycontact::internals::cpu;
use raycontact::internals::layout::{BODY_FANS, FAN_VALENCE, NONE, Ray};
use raycontact::meshes;
use raycontact::{BodyKind, Pairs, Scene};
use raycontact_tests::{ctx, other_tuning_ctx};

use crate::narrow::assert_same;

#[test]
fn a_pole_inside_another_body_is_found_through_its_fan_as_on_the_cpu() {
    // Sphere A's north pole (96 triangles) inside sphere B; a torus, whose vertices have 6.
    let segments = 96;
    let a = meshes::uv_sphere(1.0, segments, 24);
    let b = meshes::uv_sphere(1.0, 40, 20).transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, 1.6)));
    let torus =
        meshes::torus(1.0, 0.3, 40, 20).transformed(Affine3A::from_translation(Vec3::new(0.0, 4.0, 0.0)));
    let pole = a.positions.iter().position(|p| (*p - Vec3::Z).length() < 1e-6).expect("a pole") as u32;
    for context in [ctx(), other_tuning_ctx()] {
        let what = format!("{:?}", context.tuning());
        let fan_walks = context.tuning().fan_walks;
        let mut gpu = Scene::new(context);
        let mut cpu_scene = Scene::new_cpu(None).unwrap();
        let mut ids = Vec::new();
        for s in [&mut gpu, &mut cpu_scene] {
            ids = [&a, &b, &torus]
                .iter()
                .map(|m| s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap())
                .collect();
        }
        let g = gpu.detect(Pairs::Overlapping).unwrap().contacts;
        let c = cpu_scene.detect(Pairs::Overlapping).unwrap().contacts;
        assert_same(&what, &g, &c);
        assert!(
            g.iter().any(|k| k.source_body == ids[0] && k.source_vertex == pole),
            "{what}: the pole's contact"
        );
        let p = gpu.packing().clone();
        let frame = gpu.frame_data().unwrap();
        let flags: Vec<bool> = p.bodies.iter().map(|body| body.flags & BODY_FANS != 0).collect();
        assert_eq!(flags, [true, true, false], "{what}: BODY_FANS at {FAN_VALENCE} triangles");
        let (body, nodes) = (&p.bodies[0], frame.body_nodes(&p, 0));
        let fans = cpu::fit_fans(body, nodes, &p.triangles);
        if fan_walks {
            assert_eq!(frame.body_fans(&p, 0), &fans[..], "{what}: fan words");
        } else {
            assert!(frame.fans.is_empty(), "{what}: a tuning that passes no fan writes none");
        }
        let packed_pole = body.vertex_offset + pole;
        assert!(fans.iter().filter(|&&v| v == packed_pole).count() > 30, "{what}: the pole's fan");
        // The pole's own-body trace, as the kernel walks it: the same hit through fewer nodes.
        let positions = &frame_positions(&gpu, &p);
        let ray =
            Ray { origin: positions[packed_pole as usize], tmin: 0.0, dir: Vec3::NEG_Z, tmax: f32::INFINITY };
        let passed = cpu::fan_to_pass(body, &p.vertex_tri_offsets, packed_pole, &fans);
        assert_eq!(passed.len(), fans.len(), "{what}: the pole's fan is passed");
        let plain = cpu::closest_hit(body, nodes, positions, &p.triangles, &ray, packed_pole, &[]);
        let skipping = cpu::closest_hit(body, nodes, positions, &p.triangles, &ray, packed_pole, passed);
        assert_eq!((skipping.t, skipping.triangle), (plain.t, plain.triangle), "{what}");
        // The plain walk enters the box of every triangle around the pole (each holds the origin).
        let saved = plain.nodes_visited - skipping.nodes_visited;
        assert!(saved >= segments, "{what}: {skipping:?} against {plain:?}");
        // A vertex of 6 triangles passes no fan.
        let rim = body.vertex_offset + 200;
        assert!(cpu::fan_to_pass(body, &p.vertex_tri_offsets, rim, &fans).is_empty());
        assert!(cpu::fan_to_pass(body, &p.vertex_tri_offsets, NONE, &fans).is_empty());
    }
}

/// The packed positions of every body of `scene`.
fn frame_positions(scene: &Scene, p: &raycontact::internals::Packing) -> Vec<Vec3> {
    p.ids.iter().flat_map(|id| scene.positions(*id).unwrap().to_vec()).collect()
}
