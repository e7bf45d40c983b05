//! The CPU backend's per-frame update against the twins: its normals, triangle boxes and body
//! boxes (computed with the triangles' cross products, the body boxes folded as floats) equal the
//! twins' bit for bit, degenerate triangles and signed zeros included, and the bodies that did not
//! move keep what a full update would compute.

use glam::{Affine3A, Quat, Vec3};
use raycontact::internals::cpu;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, BvhUpdate, Pairs, Scene};

use crate::reference::Packed;

#[test]
fn the_backends_normals_equal_the_twins_bit_for_bit() {
    let bunny = raycontact_tests::bunny();
    let torus = meshes::torus(1.0, 0.3, 40, 20);
    let p =
        Packed::new(&[(&bunny, BodyKind::Volumetric), (&torus, BodyKind::Cloth { half_thickness: 0.01 })]);
    let mut twin = vec![Vec3::ZERO; p.positions.len()];
    let k = &p.packing;
    cpu::vertex_normals(&p.positions, &k.triangles, &k.vertex_tri_offsets, &k.vertex_tris, &mut twin);
    let bits = |v: &[Vec3]| v.iter().map(|n| n.to_array().map(f32::to_bits)).collect::<Vec<_>>();
    assert_eq!(bits(&p.frame.normals), bits(&twin));
}

/// The CPU backend's triangle and body boxes (the triangles' taken with their cross products,
/// `cpu::body_bounds` over them) equal the twin `triangle_bounds`'s: on bodies with degenerate
/// triangles (left out of the box), with nothing but degenerate ones (no box: keys 0), with -0
/// and +0 corners, and on a large body split over threads.
#[test]
fn the_backends_body_boxes_equal_the_twins_with_degenerate_triangles() {
    let mut with_degenerate = meshes::icosphere(0.5, 2);
    let far = with_degenerate.positions.len() as u32;
    // A triangle of three equal corners far outside the sphere, and a sliver along an axis.
    with_degenerate.positions.extend([
        Vec3::splat(9.0),
        Vec3::new(-7.0, 0.0, 0.0),
        Vec3::new(-8.0, 0.0, 0.0),
    ]);
    with_degenerate.triangles.extend([[far, far, far], [far + 1, far + 2, far + 1]]);
    let flat = TriMesh {
        positions: vec![Vec3::new(-0.0, 0.0, 0.0), Vec3::X, Vec3::X * 2.0],
        triangles: vec![[0, 1, 2], [2, 1, 0]],
    };
    let signed = TriMesh {
        positions: vec![Vec3::new(-0.0, 0.0, 0.0), Vec3::new(0.0, -0.0, 1.0), Vec3::new(1.0, 0.0, -0.0)],
        triangles: vec![[0, 1, 2]],
    };
    let large = meshes::torus(1.0, 0.3, 160, 40);
    let meshes = [&with_degenerate, &flat, &signed, &large];
    let states = [true, false].map(|wide| {
        let mut s = Scene::new_cpu(Some(2)).unwrap();
        s.set_wide_bvh(wide);
        for m in meshes {
            s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
        }
        s.update().unwrap();
        let f = s.frame_data().unwrap();
        (f.body_state.clone(), f.tri_boxes.clone())
    });
    assert_eq!(states[0].1, states[1].1, "triangle boxes");
    assert_eq!(states[0].0, states[1].0, "body states");
    assert_eq!(states[0].0[1].min_key, [0; 3], "a body of degenerate triangles has no box");
    assert!(states[0].0[0].degenerate_count >= 2);
}

#[test]
fn bodies_that_did_not_move_keep_what_a_full_update_would_compute() {
    // With the wide trees on, the CPU backend brings up to date only the bodies whose
    // positions changed since the trees' last update; with them off (the twins end to end) it
    // recomputes every body. Both must hold the same normals, boxes, keys and binary trees at
    // every frame, whichever body moves, under each policy. A static body's wide tree is
    // collapsed from a binned-SAH tree from its first frame on.
    let torus = meshes::torus(0.8, 0.3, 40, 20);
    let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, 0.0)));
    let ground =
        meshes::cuboid(Vec3::new(2.0, 0.15, 2.0), 4).transformed(Affine3A::from_translation(-1.05 * Vec3::Y));
    let policies = [BvhUpdate::Rebuild, BvhUpdate::Refit, BvhUpdate::Auto { max_degradation: 1.01 }];
    for policy in policies {
        let mut scenes = [true, false].map(|wide| {
            let mut s = Scene::new_cpu(Some(2)).unwrap();
            // The static body's tree built in the frames that move it
            // (`Scene::set_background_trees`).
            s.set_background_trees(false);
            s.set_bvh_update(policy).unwrap();
            s.set_wide_bvh(wide);
            let ids = [
                s.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap(),
                s.add_body(&ball.positions, &ball.triangles, BodyKind::Cloth { half_thickness: 0.01 })
                    .unwrap(),
                s.add_body(&ground.positions, &ground.triangles, BodyKind::Volumetric).unwrap(),
            ];
            s.set_static(ids[2], true).unwrap();
            (s, ids)
        });
        for frame in 0..9 {
            let k = frame as f32 * 0.2;
            // Body 0 moves every frame but the fourth; the ball every third frame; the
            // static ground once (frame 6: it may still be moved).
            let moves = [frame % 4 != 3, frame % 3 == 1, frame == 6];
            for (s, ids) in &mut scenes {
                for (b, mesh) in [&torus, &ball, &ground].into_iter().enumerate() {
                    if frame > 0 && moves[b] {
                        let shift = Vec3::new(0.02 * (k + b as f32).sin(), 0.01 * k, 0.0);
                        let p: Vec<Vec3> = mesh
                            .positions
                            .iter()
                            .map(|p| Quat::from_rotation_z(0.1 * k * p.x) * *p + shift)
                            .collect();
                        s.set_positions(ids[b], &p).unwrap();
                    }
                }
            }
            let found = scenes.each_mut().map(|(s, _)| s.detect(Pairs::Overlapping).unwrap().contacts);
            assert_eq!(found[0], found[1], "{policy:?} frame {frame}: contacts");
            let [(wide, _), (twins, _)] = &mut scenes;
            let (a, b) = (wide.frame_data().unwrap(), twins.frame_data().unwrap());
            let what = format!("{policy:?} frame {frame}");
            let bits = |v: &[Vec3]| v.iter().map(|n| n.to_array().map(f32::to_bits)).collect::<Vec<_>>();
            assert_eq!(bits(&a.normals), bits(&b.normals), "{what}: normals");
            assert_eq!(a.tri_boxes, b.tri_boxes, "{what}: triangle boxes");
            assert_eq!(a.body_state, b.body_state, "{what}: body states");
            let p = wide.packing().clone();
            for body in 0..3 {
                assert_eq!(a.body_nodes(&p, body), b.body_nodes(&p, body), "{what}: body {body}'s tree");
                assert_eq!(
                    a.body_parents(&p, body),
                    b.body_parents(&p, body),
                    "{what}: body {body}'s parents"
                );
                let r = p.bodies[body].tri_offset as usize
                    ..(p.bodies[body].tri_offset + p.bodies[body].tri_count) as usize;
                if a.body_state[body].leaf_count > 0 && policy == BvhUpdate::Rebuild {
                    assert_eq!(a.keys[r.clone()], b.keys[r.clone()], "{what}: body {body}'s keys");
                    assert_eq!(a.values[r.clone()], b.values[r], "{what}: body {body}'s values");
                }
            }
            // The static ground's wide tree comes from a binned-SAH tree, also in the frames it
            // was moved in.
            assert!(!a.body_wide(2).unwrap().sah.is_empty(), "{what}: the static body's SAH tree");
        }
    }
}
