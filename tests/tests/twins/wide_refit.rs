//! The CPU backend's wide trees through rebuilds and refits (`raycontact::internals::wide_bvh`,
//! `wide_refit`): after each frame of moving and static bodies, under every update policy, their
//! lanes hold the boxes of the binary nodes they name and the wide walk finds the binary walk's
//! hits; a kept or refitted body's tree is collapsed from a binned-SAH tree over the LBVH's
//! leaves (`sah_tree`: a valid binary tree in which the binary walks find the same hits, the
//! same from the leaves in any order or from the triangles' boxes), and a
//! large one's refit split into subtrees equals its serial refit.

use glam::{Affine3A, Quat, Vec3};
use raycontact::internals::cpu;
use raycontact::internals::layout::{LEAF_BIT, NONE, Node, Ray};
use raycontact::internals::sah_tree::{sah_tree, sah_tree_of_boxes, tree_parents};
use raycontact::internals::wide_bvh::{BodyTree, PARALLEL_REFIT_RECORDS, WideTree};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, BvhAction, BvhUpdate, Pairs, Scene};
use raycontact_tests::rng;

use crate::reference::Packed;
use crate::wide::{check_lanes, compare_walks, random_rays, same, soup};

#[test]
fn the_wide_trees_follow_rebuilds_and_refits_of_moving_and_static_bodies() {
    // One body moves, the other is still (its wide tree is kept from frame to frame, whether
    // its binary tree is rebuilt or refitted), under each policy; Auto with a tight bound
    // alternates rebuilds and refits; an update with nothing set since the last keeps everything.
    let mut r = rng(4343);
    let mesh = meshes::torus(0.8, 0.3, 60, 30);
    let still = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, 0.0)));
    let policies = [BvhUpdate::Refit, BvhUpdate::Rebuild, BvhUpdate::Auto { max_degradation: 1.01 }];
    for policy in policies {
        let mut scene = Scene::new_cpu(Some(2)).unwrap();
        // The trees of each frame built in it (`Scene::set_background_trees`).
        scene.set_background_trees(false);
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
            // Every third frame the moving body is set to the positions it has, one coordinate
            // a float further (a refit that does not degrade the trees: Auto refits; the very
            // positions it has would change nothing).
            if frame % 3 != 0 {
                scene.set_positions(id, &moved).unwrap();
            } else {
                let mut same = scene.positions(id).unwrap().to_vec();
                same[0].x = same[0].x.next_up();
                scene.set_positions(id, &same).unwrap();
            }
            let stats = scene.update().unwrap();
            actions.push(stats.bvh.action);
            if policy == BvhUpdate::Refit {
                assert_eq!(stats.bvh.action, BvhAction::Refitted);
            }
            // Nothing set since: the frame keeps everything.
            let again = scene.update().unwrap();
            assert_eq!(again.bvh.action, BvhAction::Kept, "{policy:?} frame {frame}: nothing changed");
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
fn a_detection_after_an_update_keeps_the_trees_the_update_made() {
    // An engine that updates the BVHs (for its own ray queries) and then detects in the same
    // frame: at the detection nothing in the scene moved since the update, so every tree is
    // kept as the update made it (no binned-SAH tree made for a body still only since then),
    // and the contacts are those of a scene that only detects. Once the torus and the ball
    // stop while a third body goes on moving, they rest: both scenes collapse their trees from
    // binned-SAH trees at the first frame, and keep them.
    let torus = meshes::torus(0.8, 0.3, 60, 30);
    let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, 0.0)));
    let far = meshes::icosphere(0.2, 2).transformed(Affine3A::from_translation(Vec3::new(5.0, 0.0, 0.0)));
    let meshes = [&torus, &ball, &far];
    let mut scenes = [0, 1].map(|_| {
        let mut s = Scene::new_cpu(Some(2)).unwrap();
        // The trees of each frame built in it (`Scene::set_background_trees`).
        s.set_background_trees(false);
        let ids = meshes.map(|m| s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap());
        (s, ids)
    });
    let trees = |s: &mut Scene| {
        let f = s.frame_data().unwrap();
        [0, 1].map(|b| f.body_wide(b).unwrap().clone())
    };
    let mut rested = None;
    for frame in 0..8 {
        let k = 0.05 * frame as f32;
        let moving = frame < 4;
        for (s, ids) in &mut scenes {
            for (b, m) in meshes.iter().enumerate() {
                if moving || b == 2 {
                    let turn = Quat::from_rotation_z(k * (b as f32 + 1.0));
                    let p: Vec<Vec3> = m.positions.iter().map(|p| turn * *p + Vec3::X * (0.1 * k)).collect();
                    s.set_positions(ids[b], &p).unwrap();
                }
            }
        }
        scenes[0].0.update().unwrap();
        let made = trees(&mut scenes[0].0);
        let [a, b] = scenes.each_mut().map(|(s, _)| s.detect(Pairs::Overlapping).unwrap());
        assert!(!a.contacts.is_empty(), "frame {frame}: the bodies touch");
        assert_eq!(a.contacts, b.contacts, "frame {frame}: the contacts");
        let [(updated, _), (detected, _)] = &mut scenes;
        let (after, alone) = (trees(updated), trees(detected));
        for b in 0..2 {
            let what = format!("frame {frame}, body {b}");
            let (m, t) = (&made[b], &after[b]);
            assert!(
                m.nodes == t.nodes && m.tris == t.tris && m.sah == t.sah,
                "{what}: the update's tree kept"
            );
            // Collapsed from the LBVH while moving, from a binned-SAH tree once resting.
            for (tree, scene) in [(t, "updated"), (&alone[b], "detected")] {
                assert_eq!(tree.sah.is_empty(), moving, "{what}, the {scene} scene: a binned-SAH tree");
            }
        }
        if !moving {
            // The trees of the first resting frame, kept since.
            let now = after.map(|t| t.sah);
            assert!(rested.get_or_insert_with(|| now.clone()) == &now, "frame {frame}: the same SAH trees");
        }
    }
}

#[test]
fn a_large_refitted_sah_tree_fits_its_moving_body() {
    // 20,480 triangles, refitted over frames of deformation: every lane holds this frame's box.
    let mesh = meshes::torus(1.0, 0.3, 160, 64);
    let mut scene = Scene::new_cpu(Some(2)).unwrap();
    // The binned-SAH tree built in the first frame (`Scene::set_background_trees`).
    scene.set_background_trees(false);
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
    // Every seventh triangle degenerate (out of the LBVH).
    let mut degenerate = soup(&mut r, 3000);
    for t in degenerate.triangles.iter_mut().step_by(7) {
        t[2] = t[1];
    }
    rounds.push(("a soup with degenerate triangles".into(), degenerate));
    for (what, mesh) in rounds {
        let p = Packed::new(&[(&mesh, BodyKind::Volumetric)]);
        let lbvh = p.frame.body_nodes(&p.packing, 0);
        let leaves = p.frame.body_state[0].leaf_count;
        let mut tree = Vec::new();
        sah_tree(lbvh, leaves, &mut tree);
        check_binary(&what, &tree, lbvh);
        // The tree of the leaves alone: in another order, or from the triangles' boxes (how the
        // GPU scene builds a body at rest's).
        let internal = (leaves as usize).saturating_sub(1);
        let mut reversed = lbvh.to_vec();
        reversed[internal..].reverse();
        let (mut again, mut from_boxes) = (Vec::new(), Vec::new());
        sah_tree(&reversed, leaves, &mut again);
        assert_eq!(again, tree, "{what}: the leaves in another order");
        sah_tree_of_boxes(&p.frame.tri_boxes[..mesh.triangles.len()], &mut from_boxes);
        assert_eq!(from_boxes, tree, "{what}: from the triangles' boxes");
        let mut parents = Vec::new();
        tree_parents(&tree, &mut parents);
        assert_eq!(parents.first(), Some(&NONE), "{what}: the root's parent");
        for (k, node) in tree[..internal].iter().enumerate() {
            let (left, right) = (node.child as usize, tree[node.child as usize].escape as usize);
            assert_eq!((parents[left], parents[right]), (k as u32, k as u32), "{what}: node {k}'s children");
        }
        // A tree over the same leaves: the same closest hits.
        let rays: Vec<(Ray, u32)> = random_rays(&mut r, 500).into_iter().map(|ray| (ray, NONE)).collect();
        let body = &p.packing.bodies[0];
        for (ray, ignore) in &rays {
            let a = cpu::closest_hit(body, lbvh, &p.positions, &p.packing.triangles, ray, *ignore, &[]);
            let b = cpu::closest_hit(body, &tree, &p.positions, &p.packing.triangles, ray, *ignore, &[]);
            assert!(same(&a, &b), "{what}: {ray:?}: LBVH {a:?}, SAH {b:?}");
        }
    }
    let mut none = vec![Node::default()];
    sah_tree(&[], 0, &mut none);
    assert!(none.is_empty());
}
