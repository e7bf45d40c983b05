//! The binned-SAH trees of bodies at rest on the GPU (`scene/rest_trees.rs`): a body that a
//! frame's update keeps while it updates others, its tree an LBVH rebuilt at its positions,
//! gets once per rest the binned-SAH tree over that LBVH's leaves (nodes, parents and, where
//! the tuning passes fans, fan words: `assert_same_frame` checks them against the CPU frame's),
//! and the detections and ray queries on it find what the CPU backend finds; moved, it is an
//! LBVH again under `Rebuild`. Under `Refit` every body the first frame rebuilds gets such a
//! tree for the frames after, which refit it. Built in the background (the default), a tree of
//! a body at rest is written by a later frame in which the body still rests, and dropped if it
//! moves first; one of a rebuilt body by a later frame that refits the body (on the GPU), keeps
//! it after a refit (refitted on the host) or in which it rests.

use glam::{Affine3A, Vec3};
use raycontact::internals::FrameData;
use raycontact::internals::background_trees::{MAX_WAITING_BUILDS, hold_background_trees};
use raycontact::internals::layout::BODY_FANS;
use raycontact::internals::sah_tree::sah_tree;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, BvhStats, BvhUpdate, Pairs, Ray, Scene};
use raycontact_tests::{ctx, other_tuning_ctx};

use crate::bvh::assert_same_frame;
use crate::narrow::assert_same;

/// A torus passing through a sphere with 96 triangles at each pole (`BODY_FANS`), and a cloth
/// sheet under both.
fn bodies() -> [(TriMesh, BodyKind); 3] {
    let sphere = meshes::uv_sphere(1.0, 96, 24);
    let torus =
        meshes::torus(1.0, 0.3, 48, 24).transformed(Affine3A::from_translation(Vec3::new(1.0, 0.0, 0.0)));
    let sheet = meshes::grid_sheet(4.0, 4.0, 30, 30)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, -0.95)));
    [
        (torus, BodyKind::Volumetric),
        (sphere, BodyKind::Volumetric),
        (sheet, BodyKind::Cloth { half_thickness: 0.02 }),
    ]
}

/// Rays from a ring around the sphere towards points near its centre.
fn rays() -> Vec<Ray> {
    (0..64)
        .map(|i| {
            let a = i as f32 * 0.37;
            let origin = Vec3::new(3.0 * a.cos(), 3.0 * a.sin(), 0.8 * (1.3 * a).sin());
            let target = Vec3::new(0.2 * (2.0 * a).sin(), 0.1, 0.3 * a.cos());
            Ray::new(origin, (target - origin).normalize())
        })
        .collect()
}

#[test]
fn bodies_at_rest_get_binned_sah_trees_with_the_same_contacts_and_hits() {
    let meshes = bodies();
    for context in [ctx(), other_tuning_ctx()] {
        for policy in [BvhUpdate::Rebuild, BvhUpdate::Refit] {
            let what = format!("{:?}, {policy:?}", context.tuning());
            let mut gpu = Scene::new(context);
            // Each tree in the frame that finds its body at rest: the frames below expect them.
            gpu.set_background_trees(false);
            let mut cpu = Scene::new_cpu(None).unwrap();
            let mut ids = Vec::new();
            for s in [&mut gpu, &mut cpu] {
                s.set_bvh_update(policy).unwrap();
                s.set_prediction_distance(0.05).unwrap();
                ids =
                    meshes.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
            }
            // The torus moves every frame; the sphere in frame 3 only; the sheet in frames 0 and 4.
            let (mut rested, mut refit_trees) = (Vec::new(), Vec::new());
            for frame in 0..7 {
                let at = |m: &TriMesh, shift: Vec3| -> Vec<Vec3> {
                    m.positions.iter().map(|p| *p + shift).collect()
                };
                let moves = [true, frame == 3, frame == 0 || frame == 4];
                for s in [&mut gpu, &mut cpu] {
                    for (b, (m, _)) in meshes.iter().enumerate() {
                        if moves[b] {
                            let shift = Vec3::new(0.02 * frame as f32, 0.01 * (b + frame) as f32, 0.0);
                            s.set_positions(ids[b], &at(m, shift)).unwrap();
                        }
                    }
                }
                let what = format!("{what}, frame {frame}");
                let g = gpu.detect(Pairs::Overlapping).unwrap();
                let c = cpu.detect(Pairs::Overlapping).unwrap();
                assert!(!g.contacts.is_empty(), "{what}");
                assert_same(&what, &g.contacts, &c.contacts);
                rested.push(g.stats.bvh.rest_trees);
                refit_trees.push(g.stats.bvh.refit_trees);
                let (gf, cf) = (gpu.frame_data().unwrap(), cpu.frame_data().unwrap());
                assert_same_frame(&what, &gf, &cf, gpu.packing());
                assert_ne!(gpu.packing().bodies[1].flags & BODY_FANS, 0, "{what}: the sphere's poles");
                let sah = gf.sah_trees.clone();
                let expected = match policy {
                    // The sphere at rest from frame 1 to 2 and from frame 4 on; the sheet from
                    // frame 1 to 3 and from frame 5 on.
                    BvhUpdate::Rebuild => [false, frame != 0 && frame != 3, frame != 0 && frame != 4],
                    // Every body from frame 1 on: the trees of frame 0's rebuild, written before
                    // frame 1, whose refits keep their shape.
                    _ => [frame != 0; 3],
                };
                assert_eq!(sah, expected, "{what}: binned-SAH trees");
                let p = gpu.packing();
                // Exactly the tree of the CPU frame's leaves while the body stays where it came to
                // rest: always under Rebuild (`assert_same_frame` takes a refitted one too).
                let still =
                    |b: usize| policy == BvhUpdate::Rebuild || b == 1 && frame < 3 || b == 2 && frame < 4;
                for b in (0..3).filter(|&b| sah[b] && still(b)) {
                    let mut tree = Vec::new();
                    sah_tree(cf.body_nodes(p, b), cf.body_state[b].leaf_count, &mut tree);
                    assert_eq!(gf.body_nodes(p, b), &tree[..], "{what}: body {b}'s tree");
                }
                let hits = gpu.cast_rays(&ids[..], &rays()).unwrap();
                let want = cpu.cast_rays(&ids[..], &rays()).unwrap();
                for (i, (h, w)) in hits.iter().zip(&want).enumerate() {
                    assert_eq!((h.body, h.triangle), (w.body, w.triangle), "{what}: ray {i}");
                    assert!((h.t - w.t).abs() <= 1e-5 * w.t.abs().max(1e-2), "{what}: ray {i}: t");
                }
                assert!(hits.iter().filter(|h| h.is_hit()).count() > 32, "{what}: rays hit");
            }
            let (expected, rebuilt): (&[u32], &[u32]) = match policy {
                BvhUpdate::Rebuild => (&[0, 2, 0, 0, 1, 1, 0], &[0; 7]),
                _ => (&[0; 7], &[3, 0, 0, 0, 0, 0, 0]),
            };
            assert_eq!(rested, expected, "{what}: bodies newly at rest per frame");
            assert_eq!(refit_trees, rebuilt, "{what}: trees of rebuilt bodies per frame");
        }
    }
}

/// One frame of the background tests: the bodies that `moves` says shifted, then the detection
/// on both scenes, which must agree (contacts and frame: each GPU tree with a binned-SAH flag is
/// the tree over the CPU frame's leaves, or one refitted since, its leaves' boxes this frame's
/// and each node its children's union). Returns the GPU frame's BVH stats, and both frames.
fn moved_frame(
    scenes: [&mut Scene; 2],
    ids: &[raycontact::BodyId],
    what: &str,
    frame: usize,
    moves: [bool; 3],
) -> (BvhStats, FrameData, FrameData) {
    let meshes = bodies();
    let [gpu, cpu] = scenes;
    for s in [&mut *gpu, &mut *cpu] {
        for (b, (m, _)) in meshes.iter().enumerate().filter(|&(b, _)| moves[b]) {
            let shift = Vec3::new(0.02 * frame as f32, 0.01 * (b + frame) as f32, 0.0);
            let at: Vec<Vec3> = m.positions.iter().map(|p| *p + shift).collect();
            s.set_positions(ids[b], &at).unwrap();
        }
    }
    let g = gpu.detect(Pairs::Overlapping).unwrap();
    assert_same(what, &g.contacts, &cpu.detect(Pairs::Overlapping).unwrap().contacts);
    let (gf, cf) = (gpu.frame_data().unwrap(), cpu.frame_data().unwrap());
    assert_same_frame(what, &gf, &cf, gpu.packing());
    (g.stats.bvh, gf, cf)
}

/// One frame of the background test of bodies at rest ([`moved_frame`]), in which each GPU body
/// whose tree is a binned-SAH tree must have the one over its LBVH's leaves at its positions.
/// Returns which bodies have one, and how many trees the frame wrote.
fn step(
    scenes: [&mut Scene; 2],
    ids: &[raycontact::BodyId],
    frame: usize,
    moves: [bool; 3],
) -> ([bool; 3], u32) {
    let what = format!("background trees, frame {frame}");
    let [gpu, cpu] = scenes;
    let (bvh, gf, cf) = moved_frame([&mut *gpu, cpu], ids, &what, frame, moves);
    let sah: [bool; 3] = gf.sah_trees[..].try_into().unwrap();
    for b in (0..3).filter(|&b| sah[b]) {
        let mut tree = Vec::new();
        sah_tree(cf.body_nodes(gpu.packing(), b), cf.body_state[b].leaf_count, &mut tree);
        assert_eq!(gf.body_nodes(gpu.packing(), b), &tree[..], "{what}: body {b}'s tree");
    }
    (sah, bvh.rest_trees)
}

#[test]
fn trees_built_in_the_background_are_written_while_their_body_rests() {
    let mut gpu = Scene::new(ctx());
    let mut cpu = Scene::new_cpu(None).unwrap();
    assert!(gpu.background_trees(), "the default off the web");
    assert!(cpu.background_trees(), "the default off the web, on the CPU backend too");
    let mut ids = Vec::new();
    for s in [&mut gpu, &mut cpu] {
        s.set_prediction_distance(0.05).unwrap();
        ids = bodies().iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    }
    assert_eq!(step([&mut gpu, &mut cpu], &ids, 0, [true; 3]), ([false; 3], 0));
    // The sphere and the sheet rest: their trees are started, none is written in this frame.
    assert_eq!(step([&mut gpu, &mut cpu], &ids, 1, [true, false, false]), ([false; 3], 0));
    // The sphere moves before its tree is written: the tree is dropped, whether it was done or
    // not (the sheet's may be written).
    let (sah, mut total) = step([&mut gpu, &mut cpu], &ids, 2, [true, true, false]);
    assert!(!sah[1], "the sphere moved: no tree over its last leaves");
    // Resting again, it gets the tree over its new leaves (`step` checks it) in a later frame.
    let mut frame = 3;
    loop {
        assert!(frame < 200, "the trees of the bodies at rest were not written in 200 frames");
        let (sah, written) = step([&mut gpu, &mut cpu], &ids, frame, [true, false, false]);
        if frame == 3 {
            assert!(!sah[1], "the sphere's new tree is started in frame 3, not written");
        }
        total += written;
        frame += 1;
        if sah[1] && sah[2] {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // One tree a rest: none is built again while they rest.
    assert_eq!(total, 2, "the sphere's tree and the sheet's, once each");
    for frame in frame..frame + 10 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (sah, written) = step([&mut gpu, &mut cpu], &ids, frame, [true, false, false]);
        assert_eq!((sah[1], sah[2], written), (true, true, 0), "frame {frame}: the trees kept, none written");
    }
}

#[test]
fn trees_of_rebuilt_bodies_built_in_the_background_are_written_when_refitted_kept_or_at_rest() {
    let meshes = bodies();
    let mut gpu = Scene::new(ctx());
    let mut cpu = Scene::new_cpu(None).unwrap();
    assert!(gpu.background_trees(), "the default off the web");
    let mut ids = Vec::new();
    for s in [&mut gpu, &mut cpu] {
        s.set_bvh_update(BvhUpdate::Refit).unwrap();
        s.set_prediction_distance(0.05).unwrap();
        ids = meshes.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    }
    // The builds that frame 0 starts wait until frame 2. The torus moves every frame: its tree
    // is written by a frame that refits it. The sphere moves in frames 0 and 1 only: its tree is
    // written by a frame that keeps it after a refit moved its boxes, refitted on the host. The
    // sheet moves in frame 0 only: at rest from frame 1, its tree written as built.
    let mut hold = Some(hold_background_trees());
    let mut written_in = [None; 3];
    let mut frame = 0;
    while written_in.contains(&None) {
        assert!(frame < 200, "the trees of the rebuilt bodies were not written in 200 frames");
        if frame == 2 {
            hold = None;
        }
        let what = format!("background refit trees, frame {frame}");
        let moves = [true, frame <= 1, frame == 0];
        let (bvh, gf, cf) = moved_frame([&mut gpu, &mut cpu], &ids, &what, frame, moves);
        let expected = if frame == 0 { 3 } else { 0 };
        assert_eq!(bvh.refit_trees, expected, "{what}: trees started for the rebuilt bodies");
        assert_eq!(bvh.rest_trees, 0, "{what}: no tree of its own for a body at rest with one pending");
        let mut newly = 0;
        for (b, written) in written_in.iter_mut().enumerate() {
            match (*written, gf.sah_trees[b]) {
                (None, true) => {
                    assert!(frame >= 2, "{what}: body {b}'s tree written while the builds are held");
                    *written = Some(frame);
                    newly += 1;
                }
                (Some(_), false) => panic!("{what}: body {b}'s binned-SAH tree lost without a rebuild"),
                _ => {}
            }
        }
        assert_eq!(bvh.refit_trees_written, newly, "{what}: trees written");
        if gf.sah_trees[2] {
            // The sheet has not moved since its rebuild: exactly the tree over its leaves.
            let mut tree = Vec::new();
            sah_tree(cf.body_nodes(gpu.packing(), 2), cf.body_state[2].leaf_count, &mut tree);
            assert_eq!(gf.body_nodes(gpu.packing(), 2), &tree[..], "{what}: the sheet's tree");
        }
        frame += 1;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    drop(hold);
    // Written once each: none again, the torus still refitted every frame.
    for frame in frame..frame + 5 {
        let what = format!("background refit trees, frame {frame}");
        let (bvh, gf, _) = moved_frame([&mut gpu, &mut cpu], &ids, &what, frame, [true, false, false]);
        assert_eq!(gf.sah_trees, [true; 3], "{what}");
        assert_eq!((bvh.refit_trees_written, bvh.rest_trees), (0, 0), "{what}: nothing written again");
    }
}

#[test]
fn refit_trees_past_the_waiting_limit_are_written_in_a_later_frame() {
    // More small moving bodies are rebuilt at once under `Refit` than builds may wait for the
    // trees' thread: while the builds are held, those past the limit wait in their bodies; once
    // let go, every body's tree is written by a frame that refits it (not at the next rebuild,
    // which `Refit` may never make), and the contacts stay the CPU backend's throughout.
    let ball = meshes::icosphere(0.1, 1);
    let count = MAX_WAITING_BUILDS + 6;
    let mut gpu = Scene::new(ctx());
    let mut cpu = Scene::new_cpu(None).unwrap();
    // On a grid, each shifted a little off it (no ray through another ball's vertex).
    let place = |i: usize, frame: usize| -> Vec<Vec3> {
        let k = i as f32;
        let grid = Vec3::new(0.15 * (i % 10) as f32, 0.15 * (i / 10) as f32, 0.0);
        let off = Vec3::new(0.013 * k.sin(), 0.011 * (1.7 * k).cos(), 0.02 * (2.3 * k).sin());
        let at = grid + off + Vec3::splat(0.01 * frame as f32);
        ball.positions.iter().map(|p| *p + at).collect()
    };
    let mut ids = Vec::new();
    for s in [&mut gpu, &mut cpu] {
        s.set_bvh_update(BvhUpdate::Refit).unwrap();
        ids = (0..count)
            .map(|i| s.add_body(&place(i, 0), &ball.triangles, BodyKind::Volumetric).unwrap())
            .collect();
    }
    let mut hold = Some(hold_background_trees());
    let mut written = 0;
    let mut frame = 0;
    loop {
        assert!(frame < 200, "{written} of {count} trees written in 200 frames");
        if frame == 2 {
            hold = None;
        }
        let what = format!("refit trees past the waiting limit, frame {frame}");
        for s in [&mut gpu, &mut cpu] {
            for (i, &id) in ids.iter().enumerate() {
                s.set_positions(id, &place(i, frame)).unwrap();
            }
        }
        let g = gpu.detect(Pairs::Overlapping).unwrap();
        assert!(!g.contacts.is_empty(), "{what}: contacts");
        assert_same(&what, &g.contacts, &cpu.detect(Pairs::Overlapping).unwrap().contacts);
        let expected = if frame == 0 { count as u32 } else { 0 };
        assert_eq!(g.stats.bvh.refit_trees, expected, "{what}: trees started for the rebuilt bodies");
        written += g.stats.bvh.refit_trees_written as usize;
        let sah = gpu.frame_data().unwrap().sah_trees.iter().filter(|&&s| s).count();
        assert_eq!(sah, written, "{what}: the trees written are the bodies' binned-SAH trees");
        if frame < 2 {
            assert_eq!(written, 0, "{what}: a tree written while the builds are held");
        }
        if written == count {
            break;
        }
        frame += 1;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(hold.is_none());
}
