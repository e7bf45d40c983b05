//! The CPU backend's 4-wide BVH (`raycontact::internals::wide_bvh`, walked by
//! `cpu::closest_hit_wide`) against the binary tree it is collapsed from: the same hit, ray for
//! ray (triangle, t, u, v), on random rays through triangle soups and closed surfaces, with and
//! without an ignored vertex, after rebuilds and after refits; and the same contacts as the
//! binary walk on the 200 random placements of the GPU tests. The line walk
//! (`cpu::closest_hits_line`, a ray and its opposite in one walk) finds each ray's hit of the
//! wide walk, on the same rays, and the kernels' line walk of the binary tree
//! (`cpu::closest_hits_line_binary`) each ray's hit of the GPU walk. Also: its lanes hold the
//! boxes of the binary nodes they name, a kept body's tree is collapsed from a binned-SAH tree
//! over the LBVH's leaves (a valid binary tree that the binary walks find the same hits in), a
//! large one's refit split into subtrees equals its serial refit, and the backend's normals,
//! triangle boxes and body boxes equal the twins' bit for bit.

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::internals::cpu::{self, Narrow};
use raycontact::internals::layout::{BodyPair, LEAF_BIT, NONE, Node, Ray, RayHit, SELF_CLOTH};
use raycontact::internals::sah_tree::sah_tree;
use raycontact::internals::wide_bvh::{BodyTree, PARALLEL_REFIT_RECORDS, WideTree};
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
/// the wide tree, the binary ordered walk and the GPU's walk (`cpu::closest_hit`), and a fourth
/// when the wide tree was collapsed from a binned-SAH tree: the GPU's walk of that tree with
/// this frame's boxes ([`fitted_sah`]); and the
/// line walk of the ray with its opposite, whose hits are the wide walk's of each. Returns the
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
    let sah = fitted_sah(frame, p, b);
    // The face the classification computes from the positions: the wide walks give it from
    // their records, bit for bit (none on a miss, or from a body too small for a wide tree).
    let face_of = |h: &RayHit| {
        (h.triangle != u32::MAX && !wide.nodes.is_empty()).then(|| {
            let g = 3 * (body.tri_offset + h.triangle) as usize;
            let [a, b, c] = [0, 1, 2].map(|k| pos[p.triangles[g + k] as usize]);
            (b - a).cross(c - a)
        })
    };
    let mut hits = 0;
    for (i, (ray, ignore)) in rays.iter().enumerate() {
        let w = cpu::closest_hit_wide(body, nodes, wide, pos, &p.triangles, ray, *ignore);
        let o = cpu::closest_hit_ordered(body, nodes, pos, &p.triangles, ray, *ignore);
        let g = cpu::closest_hit(body, nodes, pos, &p.triangles, ray, *ignore);
        assert!(
            same(&w, &o) && same(&w, &g),
            "{what}: ray {i} {ray:?}: wide {w:?}, ordered {o:?}, gpu walk {g:?}"
        );
        let back = Ray { dir: -ray.dir, ..*ray };
        let wb = cpu::closest_hit_wide(body, nodes, wide, pos, &p.triangles, &back, *ignore);
        let [l, lb] = cpu::closest_hits_line(body, nodes, wide, pos, &p.triangles, [ray, &back], *ignore);
        assert!(
            same(&l, &w) && same(&lb, &wb),
            "{what}: ray {i} {ray:?}: line walk {l:?} and {lb:?}, wide walks {w:?} and {wb:?}"
        );
        // The kernels' line walk (`shared/bvh_line.wgsl`'s twin, on the binary tree): each ray's
        // hit of its own walk; the boxes read counted once, in the first ray's hit (the second
        // counts only its stackless walk, after a full stack).
        let gb = cpu::closest_hit(body, nodes, pos, &p.triangles, &back, *ignore);
        let [bl, blb] = cpu::closest_hits_line_binary(body, nodes, pos, &p.triangles, ray, *ignore);
        assert!(
            same(&bl, &g) && same(&blb, &gb),
            "{what}: ray {i} {ray:?}: binary line walk {bl:?} and {blb:?}, gpu walks {g:?} and {gb:?}"
        );
        assert!(blb.fallback == 1 || blb.nodes_visited == 0, "{what}: ray {i}: {blb:?}");
        // The counting walks: the same hits, counters included, and one fetch per wide node
        // visited, each of two to four lanes.
        let counted =
            cpu::closest_hit_wide_counted::<true>(body, nodes, wide, pos, &p.triangles, ray, *ignore);
        let (wf, fetched) = (counted.hit, counted.fetched);
        assert_eq!(wf, w, "{what}: ray {i}: the counting wide walk");
        assert_eq!(counted.face, face_of(&w), "{what}: ray {i}: the hit's face from its record");
        let lanes = w.nodes_visited - 1;
        assert!(
            2 * fetched <= lanes && lanes <= 4 * fetched,
            "{what}: ray {i}: {fetched} wide nodes fetched for {lanes} lanes"
        );
        let line = cpu::closest_hits_line_counted::<true>(
            body,
            nodes,
            wide,
            pos,
            &p.triangles,
            [ray, &back],
            *ignore,
        );
        let (lf, line_fetched) = (line.map(|h| h.hit), line[0].fetched);
        assert_eq!(lf, [l, lb], "{what}: ray {i}: the counting line walk");
        assert_eq!(line[1].fetched, 0, "{what}: ray {i}: the line walk's fetches are counted once");
        for (h, hit) in line.iter().zip([l, lb]) {
            assert_eq!(h.face, face_of(&hit), "{what}: ray {i}: the line walk's face from its record");
        }
        let line_lanes = l.nodes_visited + lb.nodes_visited - 2;
        assert!(2 * line_fetched <= line_lanes && line_lanes <= 4 * line_fetched, "{what}: ray {i}");
        if let Some(sah) = &sah {
            let s = cpu::closest_hit(body, sah, pos, &p.triangles, ray, *ignore);
            assert!(same(&w, &s), "{what}: ray {i} {ray:?}: wide {w:?}, the SAH tree's walk {s:?}");
        }
        hits += usize::from(w.is_hit());
    }
    hits
}

/// Body `b`'s binned-SAH tree (its wide tree's, `None` when it has none) with this frame's
/// boxes, as the refit of its wide tree must see it: each leaf the box of the LBVH's leaf of its
/// triangle, each internal node the union of its children's (`+ 0.0`, as the LBVH's refit).
fn fitted_sah(frame: &FrameData, p: &Packing, b: usize) -> Option<Vec<Node>> {
    let mut sah = frame.body_wide(b).unwrap().sah.clone();
    if sah.is_empty() {
        return None;
    }
    let internal = sah.len() / 2;
    let of_triangle: std::collections::HashMap<u32, (Vec3, Vec3)> =
        frame.body_nodes(p, b)[internal..].iter().map(|l| (l.child & !LEAF_BIT, (l.min, l.max))).collect();
    // Children after parents: in reverse, the leaves first.
    for i in (0..sah.len()).rev() {
        let (min, max) = if i >= internal {
            of_triangle[&(sah[i].child & !LEAF_BIT)]
        } else {
            let l = sah[sah[i].child as usize];
            let r = sah[l.escape as usize];
            (l.min.min(r.min) + Vec3::ZERO, l.max.max(r.max) + Vec3::ZERO)
        };
        (sah[i].min, sah[i].max) = (min, max);
    }
    Some(sah)
}

/// Each lane of each wide node holds this frame's box of the binary node it names (of its SAH
/// tree when it has one, [`fitted_sah`], else of the LBVH), and the leaves hold every leaf
/// triangle of the LBVH once.
fn check_lanes(what: &str, frame: &FrameData, p: &Packing, b: usize) {
    let lbvh = frame.body_nodes(p, b);
    let tree: &WideTree = frame.body_wide(b).unwrap();
    let fitted = fitted_sah(frame, p, b);
    let nodes = fitted.as_deref().unwrap_or(lbvh);
    let mut leaves = Vec::new();
    for (n, src) in tree.nodes.iter().zip(&tree.source) {
        assert!((2..=4).contains(&n.count), "{what}: a wide node of {} children", n.count);
        for i in 0..n.count as usize {
            let bn = &nodes[src[i] as usize];
            for a in 0..3 {
                assert_eq!((n.lo[a][i], n.hi[a][i]), (bn.min[a], bn.max[a]), "{what}: lane box");
            }
            if n.child[i] & LEAF_BIT != 0 {
                let r = n.child[i] & !LEAF_BIT;
                let rec = &tree.tris[r as usize];
                assert_eq!(LEAF_BIT | rec.triangle, bn.child, "{what}: leaf triangle");
                // Collapsed from a binned-SAH tree (refitted from the last node backwards):
                // the records in the order of the nodes and lanes that hold them.
                if fitted.is_some() {
                    assert_eq!(r as usize, leaves.len(), "{what}: records in node order");
                }
                leaves.push(rec.triangle);
            }
        }
        assert!(n.child[n.count as usize..].iter().all(|&c| c == NONE));
    }
    leaves.sort_unstable();
    let mut want: Vec<u32> = lbvh.iter().filter_map(|n| n.triangle()).collect();
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
    // One body moves, the other is still (its wide tree is kept from frame to frame, whether
    // its binary tree is rebuilt or refitted), under each policy; Auto with a tight bound
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
        let mut still_sah = None;
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
            // The still body's tree is kept from frame 1 on (its positions are frame 0's),
            // also across Auto's switches between rebuilds and refits: collapsed from a
            // binned-SAH tree. The moving body's, in a frame it moved, from its LBVH.
            let kept = f.body_wide(1).unwrap();
            assert!(!kept.sah.is_empty(), "{policy:?} frame {frame}: a kept tree");
            if let Some(first) = &still_sah {
                assert_eq!(first, &kept.sah, "{policy:?} frame {frame}: the same SAH tree");
            }
            still_sah = Some(kept.sah.clone());
            if frame % 3 != 0 {
                // The moving body's tree: from its LBVH under Rebuild; under a policy that
                // refits, from a binned-SAH tree made at the last rebuild, refitted since.
                let sah = !f.body_wide(0).unwrap().sah.is_empty();
                assert_eq!(sah, policy != BvhUpdate::Rebuild, "{policy:?} frame {frame}: a moved body");
            }
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
fn a_large_refitted_sah_tree_fits_its_moving_body() {
    // 20,480 triangles, refitted over frames of deformation: every lane holds this frame's box.
    let mesh = meshes::torus(1.0, 0.3, 160, 64);
    let mut scene = Scene::new_cpu(Some(2)).unwrap();
    scene.set_bvh_update(BvhUpdate::Refit).unwrap();
    let id = scene.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    scene.update().unwrap();
    for frame in 1..4 {
        let k = 0.2 * frame as f32;
        let moved: Vec<Vec3> = mesh.positions.iter().map(|p| Quat::from_rotation_z(k * p.x) * *p).collect();
        scene.set_positions(id, &moved).unwrap();
        assert_eq!(scene.update().unwrap().bvh.action, BvhAction::Refitted);
        let (f, p) = (scene.frame_data().unwrap(), scene.packing().clone());
        let what = format!("frame {frame}");
        assert!(!f.body_wide(0).unwrap().sah.is_empty(), "{what}: an SAH tree");
        check_lanes(&what, &f, &p, 0);
    }
}

/// A large tree collapsed from a binned-SAH tree: its refit plan splits its nodes and records
/// into disjoint ranges (each a subtree's descendants, whose children stay inside it) and the
/// nodes above them, every node and record once; refitted split in a pool of four threads it
/// equals the serial refit, node for node and record for record, frame after frame.
#[test]
fn a_split_refit_equals_the_serial_refit() {
    let mesh = meshes::torus(1.0, 0.3, 200, 60);
    let p = Packed::new(&[(&mesh, BodyKind::Volumetric)]);
    let (lbvh, leaves) = (p.frame.body_nodes(&p.packing, 0), p.frame.body_state[0].leaf_count);
    let mut tree = WideTree::default();
    tree.collapse_sah(BodyTree::new(&p.packing, 0, lbvh, leaves, &p.positions));
    assert!(tree.tris.len() >= PARALLEL_REFIT_RECORDS);
    let plan = tree.refit_plan.clone();
    assert!(plan.tasks.len() >= 16, "{} tasks", plan.tasks.len());
    // Every node in the top or in exactly one task; every record of a task's nodes in its
    // range, the others held by top nodes.
    let mut owner = vec![usize::MAX; tree.nodes.len()];
    for &w in &plan.top {
        assert_eq!(std::mem::replace(&mut owner[w as usize], plan.tasks.len()), usize::MAX);
    }
    let mut record_owner = vec![usize::MAX; tree.tris.len()];
    for (k, &[n0, n1, r0, r1]) in plan.tasks.iter().enumerate() {
        assert!(n0 < n1 && r0 <= r1);
        for w in n0..n1 {
            assert_eq!(std::mem::replace(&mut owner[w as usize], k), usize::MAX, "node {w} twice");
        }
        for r in r0..r1 {
            record_owner[r as usize] = k;
        }
    }
    assert!(plan.tasks.windows(2).all(|t| t[0][1] <= t[1][0] && t[0][3] <= t[1][2]));
    assert!(plan.top.windows(2).all(|t| t[0] > t[1]), "top nodes last first");
    for (w, n) in tree.nodes.iter().enumerate() {
        let k = owner[w];
        assert_ne!(k, usize::MAX, "node {w} in no part");
        for i in 0..n.count as usize {
            let c = n.child[i];
            if c & LEAF_BIT != 0 {
                let r = (c & !LEAF_BIT) as usize;
                let want = if k == plan.tasks.len() { usize::MAX } else { k };
                assert_eq!(record_owner[r], want, "record {r} of node {w}");
            } else if k != plan.tasks.len() {
                assert_eq!(owner[c as usize], k, "child {c} of node {w} outside its task");
            }
        }
    }
    let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    let mut serial = tree.clone();
    for frame in 1..4 {
        let k = 0.3 * frame as f32;
        let moved: Vec<Vec3> = p.positions.iter().map(|q| Quat::from_rotation_z(k * q.x) * *q).collect();
        four.install(|| tree.refit_sah(&moved, true));
        serial.refit_sah(&moved, false);
        assert!(tree == serial, "frame {frame}: the split refit differs");
        assert!(tree.tris.iter().all(|r| r.corners == r.vertices.map(|v| moved[v as usize])));
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

/// Checks that `tree` is a binary tree in the packed layout over `leaves` leaves: every node is
/// reached once by the depth-first walk of the child and escape links, every internal node's box
/// holds its children's, and its leaves are `want`'s leaves (triangle and box).
fn check_binary(what: &str, tree: &[Node], want: &[Node]) {
    let n = want.len().div_ceil(2);
    assert_eq!(tree.len(), want.len(), "{what}: node count");
    let leaf_set = |nodes: &[Node]| {
        let mut l: Vec<(u32, [u32; 6])> = nodes
            .iter()
            .filter_map(|x| {
                x.triangle().map(|t| (t, [x.min.to_array(), x.max.to_array()].concat().try_into().unwrap()))
            })
            .map(|(t, b): (u32, [f32; 6])| (t, b.map(f32::to_bits)))
            .collect();
        l.sort_unstable();
        l
    };
    assert_eq!(leaf_set(tree), leaf_set(want), "{what}: the leaves");
    assert!(
        tree[n - 1..].iter().all(Node::is_leaf) && !tree[..n - 1].iter().any(Node::is_leaf),
        "{what}: layout"
    );
    let mut seen = vec![false; tree.len()];
    let mut at = 0u32;
    while at != NONE {
        assert!(!std::mem::replace(&mut seen[at as usize], true), "{what}: node {at} reached twice");
        let node = &tree[at as usize];
        if node.is_leaf() {
            at = node.escape;
            continue;
        }
        let (l, r) = (node.child as usize, tree[node.child as usize].escape as usize);
        for c in [l, r] {
            assert!(
                node.min.cmple(tree[c].min).all() && tree[c].max.cmple(node.max).all(),
                "{what}: child {c} of {at}"
            );
        }
        assert_eq!(tree[r].escape, node.escape, "{what}: the right child of {at} escapes as it does");
        at = node.child;
    }
    assert!(seen.iter().all(|&s| s), "{what}: a node not reached");
}

#[test]
fn the_sah_tree_is_a_binary_tree_over_the_lbvh_leaves() {
    let mut r = rng(4545);
    let mut rounds: Vec<(String, TriMesh)> =
        [1, 2, 3, 17, 5000, 20_000].into_iter().map(|n| (format!("soup of {n}"), soup(&mut r, n))).collect();
    // A pile of triangles of different sizes whose boxes share one centre (no plane splits
    // them: halved by count), and three apart from it.
    let mut pile = TriMesh::default();
    for t in 0..300u32 {
        let s = 0.1 + 0.001 * t as f32;
        let far = if t % 100 == 99 { Vec3::splat(t as f32) } else { Vec3::ZERO };
        pile.positions.extend([
            far + Vec3::new(-s, -s, 0.0),
            far + Vec3::new(s, -s, 0.0),
            far + Vec3::new(0.0, s, 0.0),
        ]);
        pile.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    rounds.push(("a pile on one centre".into(), pile));
    rounds.push(("a torus".into(), meshes::torus(0.8, 0.3, 60, 30)));
    for (what, mesh) in rounds {
        let p = Packed::new(&[(&mesh, BodyKind::Volumetric)]);
        let lbvh = p.frame.body_nodes(&p.packing, 0);
        let mut tree = Vec::new();
        sah_tree(lbvh, p.frame.body_state[0].leaf_count, &mut tree);
        check_binary(&what, &tree, lbvh);
        // A tree over the same leaves: the same closest hits.
        let rays: Vec<(Ray, u32)> = random_rays(&mut r, 500).into_iter().map(|ray| (ray, NONE)).collect();
        let body = &p.packing.bodies[0];
        for (ray, ignore) in &rays {
            let a = cpu::closest_hit(body, lbvh, &p.positions, &p.packing.triangles, ray, *ignore);
            let b = cpu::closest_hit(body, &tree, &p.positions, &p.packing.triangles, ray, *ignore);
            assert!(same(&a, &b), "{what}: {ray:?}: LBVH {a:?}, SAH {b:?}");
        }
    }
    let mut none = vec![Node::default()];
    sah_tree(&[], 0, &mut none);
    assert!(none.is_empty());
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
