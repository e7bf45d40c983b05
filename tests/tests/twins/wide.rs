//! The CPU backend's 4-wide BVH (`raycontact::internals::wide_bvh`, walked by
//! `cpu::closest_hit_wide`) against the binary tree it is collapsed from: the same hit, ray for
//! ray (triangle, t, u, v), on random rays through triangle soups and closed surfaces, with and
//! without an ignored vertex, after rebuilds and after refits; and the same contacts as the
//! binary walk on the 200 random placements of the GPU tests. Also: its lanes hold the boxes of
//! the binary nodes they name, and the backend's normals equal the twin's bit for bit.

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::internals::cpu::{self, Narrow};
use raycontact::internals::layout::{BodyPair, LEAF_BIT, NONE, Ray, RayHit, SELF_CLOTH};
use raycontact::internals::wide_bvh::WideTree;
use raycontact::internals::{FrameData, Packing};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, BvhAction, BvhUpdate, Pairs, Scene};
use raycontact_tests::{random_unit, rng};

use crate::reference::Packed;

/// Random rays towards and through the unit box, a fifth of them bounded.
fn random_rays(r: &mut rand_pcg::Pcg64, n: usize) -> Vec<Ray> {
    (0..n)
        .map(|i| {
            let o = if i % 2 == 0 {
                random_unit(r) * 3.0
            } else {
                Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))
            };
            // Some rays along an axis: their other axes are parallel slabs.
            let d = match i % 7 {
                0 => Vec3::X,
                1 => -Vec3::Z,
                _ => random_unit(r),
            };
            let mut ray = Ray::new(o, d * r.random_range(0.2..5.0f32));
            if i % 5 == 0 {
                ray.tmin = r.random_range(0.0..0.5);
                ray.tmax = r.random_range(0.5..2.0);
            }
            ray
        })
        .collect()
}

fn soup(r: &mut rand_pcg::Pcg64, count: u32) -> TriMesh {
    let mut m = TriMesh::default();
    for t in 0..count {
        let c = Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
        let size = r.random_range(0.02..0.3);
        for _ in 0..3 {
            m.positions.push(c + random_unit(r) * size);
        }
        m.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    m
}

/// The same hit: triangle, t, u and v, bit for bit.
fn same(a: &RayHit, b: &RayHit) -> bool {
    (a.triangle, a.t.to_bits(), a.u.to_bits(), a.v.to_bits())
        == (b.triangle, b.t.to_bits(), b.u.to_bits(), b.v.to_bits())
}

/// Every ray of `rays` (with its ignored vertex) walked three ways through body `b` of `frame`:
/// the wide tree, the binary ordered walk and the GPU's walk (`cpu::closest_hit`). Returns the
/// hits.
fn compare_walks(
    what: &str,
    p: &Packing,
    frame: &FrameData,
    pos: &[Vec3],
    b: usize,
    rays: &[(Ray, u32)],
) -> usize {
    let body = &p.bodies[b];
    let nodes = frame.body_nodes(p, b);
    let wide = frame.body_wide(b).expect("the CPU frame has wide trees");
    let mut hits = 0;
    for (i, (ray, ignore)) in rays.iter().enumerate() {
        let w = cpu::closest_hit_wide(body, nodes, wide, pos, &p.triangles, ray, *ignore);
        let o = cpu::closest_hit_ordered(body, nodes, pos, &p.triangles, ray, *ignore);
        let g = cpu::closest_hit(body, nodes, pos, &p.triangles, ray, *ignore);
        assert!(
            same(&w, &o) && same(&w, &g),
            "{what}: ray {i} {ray:?}: wide {w:?}, ordered {o:?}, gpu walk {g:?}"
        );
        hits += usize::from(w.is_hit());
    }
    hits
}

/// Each lane of each wide node holds the box of the binary node it names, and the leaves hold
/// every leaf triangle of the binary tree once.
fn check_lanes(what: &str, frame: &FrameData, p: &Packing, b: usize) {
    let nodes = frame.body_nodes(p, b);
    let tree: &WideTree = frame.body_wide(b).unwrap();
    let mut leaves = Vec::new();
    for (n, src) in tree.nodes.iter().zip(&tree.source) {
        assert!((2..=4).contains(&n.count), "{what}: a wide node of {} children", n.count);
        for i in 0..n.count as usize {
            let bn = &nodes[src[i] as usize];
            for a in 0..3 {
                assert_eq!((n.lo[a][i], n.hi[a][i]), (bn.min[a], bn.max[a]), "{what}: lane box");
            }
            if n.child[i] & LEAF_BIT != 0 {
                let rec = &tree.tris[(n.child[i] & !LEAF_BIT) as usize];
                assert_eq!(LEAF_BIT | rec.triangle, bn.child, "{what}: leaf triangle");
                leaves.push(rec.triangle);
            }
        }
        assert!(n.child[n.count as usize..].iter().all(|&c| c == NONE));
    }
    leaves.sort_unstable();
    let mut want: Vec<u32> = nodes.iter().filter_map(|n| n.triangle()).collect();
    want.sort_unstable();
    assert_eq!(leaves, want, "{what}: the wide leaves are the binary leaves");
}

#[test]
fn the_wide_walk_finds_the_binary_walks_hit_ray_for_ray() {
    let mut r = rng(4242);
    let decoy = meshes::icosphere(0.3, 1);
    let mut hits = 0;
    for round in 0..8 {
        let mesh = match round % 4 {
            0 => soup(&mut r, [10, 3000][round / 4]),
            1 => meshes::torus(0.8, 0.3, 60, 30),
            2 => raycontact_tests::bunny().transformed(Affine3A::from_scale(Vec3::splat(8.0))),
            _ => {
                let mut m = meshes::icosphere(1.0, 4);
                m.positions.iter_mut().for_each(|p| *p *= r.random_range(0.7..1.2));
                m
            }
        };
        let p = Packed::new(&[(&decoy, BodyKind::Volumetric), (&mesh, BodyKind::Volumetric)]);
        check_lanes(&format!("round {round}"), &p.frame, &p.packing, 1);
        let mut rays: Vec<(Ray, u32)> =
            random_rays(&mut r, 3000).into_iter().map(|ray| (ray, NONE)).collect();
        // From every vertex inwards and outwards, its own triangles ignored (the narrow phase's
        // rays).
        let off = p.packing.bodies[1].vertex_offset;
        for (v, x) in mesh.positions.iter().enumerate().step_by(3) {
            let d = random_unit(&mut r);
            rays.push((Ray::new(*x, d), off + v as u32));
            rays.push((Ray::new(*x, -d), off + v as u32));
        }
        hits += compare_walks(&format!("round {round}"), &p.packing, &p.frame, &p.positions, 1, &rays);
        // The CPU backend's batch query walks the wide trees too.
        let batch: Vec<Ray> = rays.iter().map(|(ray, _)| *ray).collect();
        let q = cpu::raycast_ordered(&p.packing, &p.frame, &p.positions, 1, &batch);
        let scene = cpu::QueryScene { packing: &p.packing, frame: &p.frame, positions: &p.positions };
        let g = cpu::raycast(&scene, &[1], &batch);
        assert!(q.iter().zip(&g).all(|(a, b)| same(a, b)), "round {round}: raycast_ordered");
    }
    assert!(hits > 5000, "{hits} hits");
}

#[test]
fn the_wide_trees_follow_rebuilds_and_refits_of_moving_and_static_bodies() {
    // One body moves, the other is still (its wide tree is kept from frame to frame when its
    // binary tree is updated the same way), under each policy; Auto with a tight bound
    // alternates rebuilds and refits.
    let mut r = rng(4343);
    let mesh = meshes::torus(0.8, 0.3, 60, 30);
    let still = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, 0.0)));
    let policies = [BvhUpdate::Refit, BvhUpdate::Rebuild, BvhUpdate::Auto { max_degradation: 1.01 }];
    for policy in policies {
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        scene.set_bvh_update(policy).unwrap();
        let id = scene.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
        scene.add_body(&still.positions, &still.triangles, BodyKind::Volumetric).unwrap();
        scene.update().unwrap();
        let mut actions = Vec::new();
        for frame in 1..8 {
            let k = frame as f32 * 0.3;
            let moved: Vec<Vec3> = mesh
                .positions
                .iter()
                .map(|p| {
                    Quat::from_rotation_z(k * p.x) * *p + Vec3::new(0.0, 0.1 * (3.0 * p.x + k).sin(), 0.0)
                })
                .collect();
            // Every other frame the moving body keeps its positions too.
            if frame % 3 != 0 {
                scene.set_positions(id, &moved).unwrap();
            }
            let stats = scene.update().unwrap();
            actions.push(stats.bvh.action);
            if policy == BvhUpdate::Refit {
                assert_eq!(stats.bvh.action, BvhAction::Refitted);
            }
            let f = scene.frame_data().unwrap();
            let p = scene.packing().clone();
            let positions: Vec<Vec3> =
                scene.positions(id).unwrap().iter().chain(&still.positions).copied().collect();
            for b in 0..2 {
                let what = format!("{policy:?} frame {frame} body {b}");
                check_lanes(&what, &f, &p, b);
                let rays: Vec<(Ray, u32)> =
                    random_rays(&mut r, 1000).into_iter().map(|ray| (ray, NONE)).collect();
                compare_walks(&what, &p, &f, &positions, b, &rays);
                // The records hold this frame's corners.
                let tree = f.body_wide(b).unwrap();
                for rec in &tree.tris {
                    assert_eq!(rec.corners, rec.vertices.map(|v| positions[v as usize]), "{what}: a record");
                }
            }
        }
        if let BvhUpdate::Auto { .. } = policy {
            assert!(
                actions.contains(&BvhAction::Rebuilt) && actions.contains(&BvhAction::Refitted),
                "{actions:?}"
            );
        }
    }
}

#[test]
fn wide_and_binary_walks_find_the_same_contacts_on_200_random_placements() {
    // The shapes and placements of the GPU tests' `random_placements_match_the_cpu_reference`.
    let shapes = [
        raycontact_tests::bunny().transformed(Affine3A::from_scale(Vec3::splat(0.2))),
        meshes::torus(1.0, 0.35, 40, 20),
        meshes::cuboid(Vec3::new(0.8, 0.6, 0.5), 4),
        meshes::icosphere(0.9, 3),
        meshes::cylinder(0.6, 0.8, 32),
    ];
    let mut r = rng(2008);
    let mut total = 0;
    for placement in 0..200 {
        let pose = |r: &mut rand_pcg::Pcg64| {
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(r.random_range(0.7..1.3)),
                Quat::from_axis_angle(random_unit(r), r.random_range(0.0..std::f32::consts::TAU)),
                random_unit(r) * r.random_range(0.0..0.9),
            )
        };
        let m1 = shapes[r.random_range(0..shapes.len())].transformed(pose(&mut r));
        let m2 = shapes[r.random_range(0..shapes.len())].transformed(pose(&mut r));
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        scene.add_body(&m1.positions, &m1.triangles, BodyKind::Volumetric).unwrap();
        scene.add_body(&m2.positions, &m2.triangles, BodyKind::Volumetric).unwrap();
        let found = scene.detect(Pairs::Overlapping).unwrap().contacts;
        let frame = scene.frame_data().unwrap();
        let packing = scene.packing().clone();
        let positions: Vec<Vec3> = m1.positions.iter().chain(&m2.positions).copied().collect();
        let pairs: Vec<BodyPair> = cpu::broad_phase(&packing.bodies, &frame.body_state, SELF_CLOTH, 0.0);
        let mut binary = frame.clone();
        binary.wide = Default::default();
        let run = |f: &FrameData| {
            let cx = Narrow {
                packing: &packing,
                frame: f,
                positions: &positions,
                previous: &positions,
                remember_exit: false,
                inversions: true,
            };
            let mut c = cpu::narrow_phase(&cx, &pairs);
            c.sort_by_key(|c| (c.source_body, c.source_vertex, c.target_body, c.flags));
            c
        };
        let (w, b) = (run(&frame), run(&binary));
        assert_eq!(w, b, "placement {placement}: contacts through the wide and the binary trees");
        // And the scene (its rays in Morton order) found the same ones.
        assert_eq!(found.len(), w.len(), "placement {placement}: the scene's detection");
        // Every ray of every source vertex, hit for hit, both directions.
        for (k, p) in pairs.iter().enumerate() {
            for (a, t) in [(p.a, p.b), (p.b, p.a)] {
                let src = &packing.bodies[a as usize];
                let rays: Vec<(Ray, u32)> = (0..src.vertex_count)
                    .map(|v| {
                        let g = src.vertex_offset + v;
                        (Ray::new(positions[g as usize], -frame.normals[g as usize]), g)
                    })
                    .collect();
                compare_walks(
                    &format!("placement {placement} pair {k}"),
                    &packing,
                    &frame,
                    &positions,
                    t as usize,
                    &rays,
                );
            }
        }
        total += w.len();
    }
    assert!(total > 1000, "{total} contacts");
}

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

#[test]
fn without_wide_trees_the_backend_walks_the_binary_trees_and_finds_the_same_contacts() {
    // Scene::set_wide_bvh(false): no wide tree is built, the rays walk the binary trees (the
    // kernels' algorithm), the contacts are the wide walk's; turned back on (under Refit, which
    // never rebuilds), the next frame builds the trees again.
    let a = meshes::torus(0.8, 0.3, 60, 30);
    let b = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.7, 0.1, 0.0)));
    for policy in [BvhUpdate::Rebuild, BvhUpdate::Refit] {
        let mut wide = Scene::new_cpu(Some(2)).unwrap();
        let mut binary = Scene::new_cpu(Some(2)).unwrap();
        binary.set_wide_bvh(false);
        let mut ids = Vec::new();
        for s in [&mut wide, &mut binary] {
            s.set_bvh_update(policy).unwrap();
            ids.push(s.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).unwrap());
            s.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).unwrap();
        }
        for frame in 0..4 {
            let k = 0.05 * frame as f32;
            let moved: Vec<Vec3> = a.positions.iter().map(|p| Quat::from_rotation_z(k) * *p).collect();
            wide.set_positions(ids[0], &moved).unwrap();
            binary.set_positions(ids[1], &moved).unwrap();
            if frame == 3 {
                binary.set_wide_bvh(true);
            }
            let w = wide.detect(Pairs::Overlapping).unwrap();
            let n = binary.detect(Pairs::Overlapping).unwrap();
            assert!(!w.contacts.is_empty(), "{policy:?} frame {frame}: the bodies touch");
            assert_eq!(w.contacts, n.contacts, "{policy:?} frame {frame}: the same contacts");
            let f = binary.frame_data().unwrap();
            let built = (0..2).all(|b| f.body_wide(b).is_some());
            assert_eq!(built, frame == 3, "{policy:?} frame {frame}: wide trees built only when on");
        }
    }
}
