//! The BVH update policy on the GPU (`BvhUpdate`): a refit frame records normals, bounds and
//! fit alone, its trees (binned-SAH trees over the leaves of the last rebuild, written after it)
//! are refitted over the CPU backend's refitted trees' leaves and boxes bit for bit, its contacts
//! equal a GPU rebuild's at the same positions and the CPU twin's; `Auto` decides frame for frame as
//! the CPU backend does (its measure is the same code on a mirror of the GPU's trees).

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, BvhAction, BvhUpdate, Pairs, Scene, Stage};
use raycontact_tests::ctx;

use crate::bvh::assert_same_frame;
use crate::narrow::assert_same;

/// Two interlocked tori and a cloth sheet over them.
fn bodies() -> Vec<(TriMesh, BodyKind)> {
    let a = meshes::torus(1.0, 0.35, 48, 24);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(1.0, 0.0, 0.0),
    ));
    let sheet = meshes::grid_sheet(3.0, 3.0, 40, 40)
        .transformed(Affine3A::from_translation(Vec3::new(0.5, 0.0, 0.5)));
    vec![
        (a, BodyKind::Volumetric),
        (b, BodyKind::Volumetric),
        (sheet, BodyKind::Cloth { half_thickness: 0.01 }),
    ]
}

/// Body `body` of [`bodies`] at `frame`: twisted, swollen and rippled more and more.
fn deformed(m: &TriMesh, body: usize, frame: usize) -> Vec<Vec3> {
    let k = frame as f32 * 0.08;
    m.positions
        .iter()
        .map(|p| {
            let twist = Quat::from_rotation_x(k * (p.x + body as f32));
            let swell = 1.0 + 0.3 * k * (2.0 * p.y + body as f32).sin();
            twist * (*p * swell) + Vec3::new(0.0, 0.0, 0.1 * k * (4.0 * p.x).sin())
        })
        .collect()
}

fn scene(gpu: bool, policy: BvhUpdate) -> (Scene, Vec<BodyId>) {
    let mut s = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
    s.set_bvh_update(policy).unwrap();
    s.set_prediction_distance(0.05).unwrap();
    let ids = bodies().iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    (s, ids)
}

#[test]
fn a_gpu_refit_equals_the_cpu_refit_and_finds_a_rebuilds_contacts() {
    let meshes = bodies();
    let (mut refit, ids) = scene(true, BvhUpdate::Refit);
    let (mut rebuild, _) = scene(true, BvhUpdate::Rebuild);
    let (mut cpu, _) = scene(false, BvhUpdate::Refit);
    // The binned-SAH trees of frame 0's rebuild made in that frame, so that frame 1 has them
    // (in the background they come when the trees' thread is done: `gpu/rest_trees.rs`).
    refit.set_background_trees(false);
    for frame in 0..8 {
        for s in [&mut refit, &mut rebuild, &mut cpu] {
            for (b, (m, _)) in meshes.iter().enumerate() {
                s.set_positions(ids[b], &deformed(m, b, frame)).unwrap();
            }
        }
        let g = refit.detect(Pairs::Overlapping).unwrap();
        let r = rebuild.detect(Pairs::Overlapping).unwrap();
        let c = cpu.detect(Pairs::Overlapping).unwrap();
        let want = if frame == 0 { BvhAction::Rebuilt } else { BvhAction::Refitted };
        assert_eq!((g.stats.bvh.action, c.stats.bvh.action), (want, want), "frame {frame}");
        assert!(!g.contacts.is_empty());
        assert_eq!(g.contacts, r.contacts, "frame {frame}: GPU refit against GPU rebuild");
        assert_same(&format!("frame {frame}"), &g.contacts, &c.contacts);
        if frame > 0 {
            for s in [Stage::Morton, Stage::Sort, Stage::Hierarchy] {
                assert_eq!(g.stats.get(s).unwrap().dispatches, 0, "frame {frame}: {s} in a refit");
            }
            assert!(g.stats.dispatches() < r.stats.dispatches());
            // A refit allocates what a rebuild does (the readback follows the contact count).
            assert_eq!(g.stats.buffers_allocated, r.stats.buffers_allocated);
        }
        // The trees of frame 0's rebuild are binned-SAH trees from frame 1 on (refitted, the
        // same leaves and boxes as the CPU backend's refitted LBVHs: `assert_same_frame`).
        let (gf, cf) = (refit.frame_data().unwrap(), cpu.frame_data().unwrap());
        assert_eq!(gf.sah_trees, [frame > 0; 3], "frame {frame}: binned-SAH trees");
        assert_same_frame(&format!("frame {frame}:"), &gf, &cf, refit.packing());
    }
}

/// A detection after an update, nothing changed in between (an engine that queries rays, then
/// detects), keeps the update's normals, boxes and trees: it reports them kept, records no stage
/// of theirs (on the GPU no dispatch, on the CPU backend no stage time) and finds the contacts
/// of a detection that brought them up to date itself, on both backends and under each policy.
#[test]
fn a_detection_after_an_update_casts_its_rays_and_nothing_more() {
    let meshes = bodies();
    let tree = [Stage::Normals, Stage::Bounds, Stage::Morton, Stage::Sort, Stage::Hierarchy, Stage::Fit];
    for gpu in [true, false] {
        for policy in [BvhUpdate::Rebuild, BvhUpdate::Refit] {
            let [(mut updated, ids), (mut alone, _)] = [0, 1].map(|_| scene(gpu, policy));
            for frame in 0..3 {
                for s in [&mut updated, &mut alone] {
                    for (b, (m, _)) in meshes.iter().enumerate() {
                        s.set_positions(ids[b], &deformed(m, b, frame)).unwrap();
                    }
                }
                let what = format!("{} {policy:?} frame {frame}", if gpu { "GPU" } else { "CPU" });
                let update = updated.update().unwrap();
                assert_ne!(update.bvh.action, BvhAction::Kept, "{what}: the update");
                let after = updated.detect(Pairs::Overlapping).unwrap();
                let own = alone.detect(Pairs::Overlapping).unwrap();
                assert_eq!(after.stats.bvh.action, BvhAction::Kept, "{what}: the detection's trees");
                assert!(!after.contacts.is_empty(), "{what}: contacts");
                assert_eq!(after.contacts, own.contacts, "{what}: the contacts");
                let ran = |st: &raycontact::FrameStats, s: Stage| {
                    st.get(s).is_some_and(|t| t.dispatches > 0 || t.cpu_ns.is_some())
                };
                for s in tree {
                    assert!(!ran(&after.stats, s), "{what}: {s} recorded after the update");
                }
                assert!(ran(&own.stats, Stage::Normals), "{what}: the detection alone updates");
                assert!(ran(&after.stats, Stage::Rays), "{what}: the rays");
            }
        }
    }
}

#[test]
fn gpu_auto_decides_as_the_cpu_backend_and_finds_a_rebuilds_contacts() {
    let meshes = bodies();
    let policy = BvhUpdate::Auto { max_degradation: 1.08 };
    let (mut gpu, ids) = scene(true, policy);
    let (mut cpu, _) = scene(false, policy);
    let (mut rebuild, _) = scene(true, BvhUpdate::Rebuild);
    let mut actions = Vec::new();
    for frame in 0..16 {
        for s in [&mut gpu, &mut cpu, &mut rebuild] {
            for (b, (m, _)) in meshes.iter().enumerate() {
                s.set_positions(ids[b], &deformed(m, b, frame)).unwrap();
            }
        }
        let g = gpu.detect(Pairs::Overlapping).unwrap();
        let c = cpu.detect(Pairs::Overlapping).unwrap();
        let r = rebuild.detect(Pairs::Overlapping).unwrap();
        let (gb, cb) = (g.stats.bvh, c.stats.bvh);
        assert_eq!((gb.action, gb.degradation), (cb.action, cb.degradation), "frame {frame}");
        assert!(gb.host_ns.is_some());
        assert_eq!(g.contacts, r.contacts, "frame {frame}: Auto against a rebuild");
        actions.push(gb.action);
    }
    let rebuilt = actions.iter().filter(|a| **a == BvhAction::Rebuilt).count();
    assert!(rebuilt >= 3 && rebuilt < actions.len() - 3, "{actions:?}");
}

#[test]
fn bodies_left_still_keep_their_frame_data_on_the_gpu() {
    // A body whose positions are not set again is marked BODY_KEEP (in a rebuild, once its
    // tree is a rebuild at its positions): the frame's kernels skip it and its normals, boxes,
    // keys and tree stay. They must equal what the CPU twins compute again for every body
    // (`set_wide_bvh(false)`), frame after frame, under each policy, with the contacts.
    let meshes = bodies();
    let policies = [BvhUpdate::Rebuild, BvhUpdate::Refit, BvhUpdate::Auto { max_degradation: 1.05 }];
    for policy in policies {
        let (mut gpu, ids) = scene(true, policy);
        let (mut twins, _) = scene(false, policy);
        twins.set_wide_bvh(false);
        for frame in 0..10 {
            // Body 0 moves but every fourth frame, body 1 every third, the sheet twice.
            let moves = [frame % 4 != 3, frame % 3 == 0, frame == 2 || frame == 7];
            for s in [&mut gpu, &mut twins] {
                for (b, (m, _)) in meshes.iter().enumerate() {
                    if moves[b] {
                        s.set_positions(ids[b], &deformed(m, b, frame)).unwrap();
                    }
                }
            }
            let what = format!("{policy:?} frame {frame}");
            let g = gpu.detect(Pairs::Overlapping).unwrap();
            let c = twins.detect(Pairs::Overlapping).unwrap();
            let (gb, cb) = (g.stats.bvh, c.stats.bvh);
            assert_eq!(gb.action, cb.action, "{what}");
            if matches!(policy, BvhUpdate::Auto { .. }) {
                // The GPU's mirror refits and measures only the bodies that moved, the twins
                // every body (the GPU measures under `Auto` alone: `BvhStats::degradation`).
                assert_eq!(gb.degradation, cb.degradation, "{what}");
            }
            assert!(!g.contacts.is_empty(), "{what}");
            assert_same(&what, &g.contacts, &c.contacts);
            let (gf, cf) = (gpu.frame_data().unwrap(), twins.frame_data().unwrap());
            assert_same_frame(&format!("{what}:"), &gf, &cf, gpu.packing());
        }
    }
}

#[test]
fn positions_set_to_those_a_body_has_change_nothing() {
    // An engine that hands over every body's positions each step, those of its bodies at rest
    // too: a body set to the positions it has is left as if none were set, on both backends,
    // under each policy; the contacts are those of a scene whose still bodies are not set.
    let meshes = bodies();
    for gpu in [true, false] {
        for policy in [BvhUpdate::Rebuild, BvhUpdate::Refit, BvhUpdate::auto()] {
            let (mut all, ids) = scene(gpu, policy);
            let (mut moved, _) = scene(gpu, policy);
            let what = |frame: usize| format!("gpu {gpu}, {policy:?}, frame {frame}");
            for frame in 0..4 {
                // Every body moves in frame 0; then the first torus alone, but in frame 2.
                for (b, (m, _)) in meshes.iter().enumerate() {
                    let moves = frame == 0 || (b == 0 && frame != 2);
                    let p =
                        if moves { deformed(m, b, frame) } else { all.positions(ids[b]).unwrap().to_vec() };
                    all.set_positions(ids[b], &p).unwrap();
                    if moves {
                        moved.set_positions(ids[b], &p).unwrap();
                    }
                }
                let a = all.detect(Pairs::Overlapping).unwrap();
                let m = moved.detect(Pairs::Overlapping).unwrap();
                assert_eq!(a.stats.bvh.action, m.stats.bvh.action, "{}", what(frame));
                if frame == 2 {
                    assert_eq!(a.stats.bvh.action, BvhAction::Kept, "{}: nothing changed", what(frame));
                    let normals = a.stats.get(Stage::Normals);
                    let ran = normals.is_some_and(|t| t.dispatches > 0 || t.cpu_ns.is_some());
                    assert!(!ran, "{}: the normals", what(frame));
                }
                assert!(!a.contacts.is_empty(), "{}", what(frame));
                assert_same(&what(frame), &a.contacts, &m.contacts);
            }
        }
    }
}
