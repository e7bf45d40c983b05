//! The CPU backend's binned-SAH wide trees built in the background (`Scene::set_background_trees`,
//! `crate::wide_background` in the library): under every policy, a scene that builds them in the
//! background finds the contacts of one that builds them in the frame, frame after frame; while
//! the builds are held its bodies keep their LBVHs' collapses; and each tree put in place is the
//! one the frame-built scene walks at that frame (built from the same leaves, refitted since).

use glam::{Affine3A, Quat, Vec3};
use raycontact::internals::FrameData;
use raycontact::internals::background_trees::{
    MAX_WAITING_BUILDS, hold_background_trees, wait_background_trees,
};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, BvhStats, BvhUpdate, Pairs, Scene};

/// A torus that moves every frame, a ball that moves in frames 0 and 1 and then rests, a cloth
/// sheet that moves in frames 0 and 2, and a static ground.
fn bodies() -> Vec<(TriMesh, BodyKind)> {
    let torus = meshes::torus(1.0, 0.35, 48, 24);
    let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(1.0, 0.2, 0.0)));
    let sheet = meshes::grid_sheet(3.0, 3.0, 30, 30)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.3, 0.0)));
    let ground = meshes::cuboid(Vec3::new(4.0, 0.2, 4.0), 6)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, -0.4, 0.0)));
    vec![
        (torus, BodyKind::Volumetric),
        (ball, BodyKind::Volumetric),
        (sheet, BodyKind::Cloth { half_thickness: 0.01 }),
        (ground, BodyKind::Volumetric),
    ]
}

/// Which bodies move in `frame`.
fn moves(frame: usize) -> [bool; 4] {
    [true, frame <= 1, frame == 0 || frame == 2, false]
}

/// Body `b` of `m` at `frame`: turned and shifted a little more each frame.
fn at(m: &TriMesh, b: usize, frame: usize) -> Vec<Vec3> {
    let k = frame as f32 * 0.05;
    let turn = Quat::from_rotation_y(k * (1.0 + b as f32));
    m.positions.iter().map(|p| turn * *p + Vec3::new(0.01 * k, 0.02 * k, 0.0)).collect()
}

/// A CPU scene of [`bodies`] under `policy`, building its trees in the background or not.
fn scene(policy: BvhUpdate, background: bool) -> (Scene, Vec<BodyId>) {
    let mut s = Scene::new_cpu(Some(2)).unwrap();
    s.set_background_trees(background);
    assert_eq!(s.background_trees(), background);
    s.set_bvh_update(policy).unwrap();
    s.set_prediction_distance(0.05).unwrap();
    let ids: Vec<BodyId> =
        bodies().iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    s.set_static(ids[3], true).unwrap();
    (s, ids)
}

/// One frame of both scenes (in the frame, then in the background): the bodies [`moves`] moves
/// set, a detection each, the same contacts. Returns each scene's tree stats and frame.
fn frame(scenes: [&mut (Scene, Vec<BodyId>); 2], f: usize, what: &str) -> [(BvhStats, FrameData); 2] {
    let meshes = bodies();
    let mut out = Vec::new();
    let mut contacts = Vec::new();
    for (s, ids) in scenes {
        for (b, (m, _)) in meshes.iter().enumerate().filter(|&(b, _)| moves(f)[b]) {
            s.set_positions(ids[b], &at(m, b, f)).unwrap();
        }
        let d = s.detect(Pairs::Overlapping).unwrap();
        contacts.push(d.contacts);
        out.push((d.stats.bvh, s.frame_data().unwrap()));
    }
    assert!(!contacts[0].is_empty(), "{what}: contacts");
    let (a, b) = (&contacts[0], &contacts[1]);
    assert!(a == b, "{what}: {} contacts, {} with the trees built in the frame", b.len(), a.len());
    out.try_into().map_err(|_| ()).unwrap()
}

/// (rest trees, refit trees started or built, refit trees put in place) of a frame's stats.
fn counts(s: &BvhStats) -> (u32, u32, u32) {
    (s.rest_trees, s.refit_trees, s.refit_trees_written)
}

#[test]
fn trees_built_in_the_background_are_put_in_place_as_the_frame_would_have_built_them() {
    // Per policy, the counts of the frame-built scene and the background one in frames 0, 1 and
    // 2 (the builds held), then from frame 3 on (every build started done before each frame):
    // under `Refit` the three moving bodies' refit trees and the static ground's tree are made
    // in frame 0 and put in place in frame 3. Under `Rebuild` the trees of bodies at rest: the
    // ground's in frame 0; the sheet's in frame 1, dropped when it moves in frame 2 and made
    // again in frame 3 (put in place in frame 4); the ball's in frame 2. Later frames make none.
    type Counts = [(u32, u32, u32); 2];
    let none = [(0, 0, 0); 2];
    let cases: [(BvhUpdate, [Counts; 5]); 2] = [
        (BvhUpdate::Refit, [[(1, 3, 0), (0, 3, 0)], none, none, [(0, 0, 0), (1, 0, 3)], none]),
        (
            BvhUpdate::Rebuild,
            [
                [(1, 0, 0), (0, 0, 0)],
                [(1, 0, 0), (0, 0, 0)],
                [(1, 0, 0), (0, 0, 0)],
                [(1, 0, 0), (2, 0, 0)],
                [(0, 0, 0), (1, 0, 0)],
            ],
        ),
    ];
    for (policy, want) in cases {
        let mut built = scene(policy, false);
        let mut later = scene(policy, true);
        let mut hold = Some(hold_background_trees());
        for f in 0..7 {
            if f == 3 {
                hold = None;
            }
            if f >= 3 {
                wait_background_trees();
            }
            let what = format!("{policy:?}, frame {f}");
            let [(sa, fa), (sb, fb)] = frame([&mut built, &mut later], f, &what);
            let expected = want.get(f).copied().unwrap_or(none);
            assert_eq!([counts(&sa), counts(&sb)], expected, "{what}: the trees' counts");
            for b in 0..4 {
                let (ta, tb) = (fa.body_wide(b).unwrap(), fb.body_wide(b).unwrap());
                if f < 3 && !ta.sah.is_empty() {
                    // Held: the body walks its LBVH's collapse (or, at rest, keeps its tree).
                    assert!(tb.sah.is_empty(), "{what}: body {b}'s tree put in place while held");
                    assert!(!tb.nodes.is_empty(), "{what}: body {b} has a tree");
                }
                // From frame 3 a tree put in place is the frame-built scene's, and from frame 4
                // every tree is.
                if f >= 4 || f == 3 && !tb.sah.is_empty() {
                    assert!(ta == tb, "{what}: body {b}'s tree is the frame-built scene's");
                }
            }
        }
        assert!(hold.is_none());
    }
}

#[test]
fn auto_finds_the_same_contacts_with_its_trees_built_in_the_background() {
    // A tight bound rebuilds the moving bodies often, dropping their builds as it goes; the
    // builds run free, so they are done, or not, by any frame: the contacts never depend on it.
    for bound in [1.0001, 1.5] {
        let policy = BvhUpdate::Auto { max_degradation: bound };
        let mut built = scene(policy, false);
        let mut later = scene(policy, true);
        for f in 0..10 {
            let what = format!("{policy:?}, frame {f}");
            let [(_, fa), (_, fb)] = frame([&mut built, &mut later], f, &what);
            for b in 0..4 {
                let (ta, tb) = (fa.body_wide(b).unwrap(), fb.body_wide(b).unwrap());
                if !tb.sah.is_empty() && !ta.sah.is_empty() && ta.sah == tb.sah {
                    assert!(ta == tb, "{what}: body {b}'s tree put in place, refitted as the frame's");
                }
            }
        }
        wait_background_trees();
    }
}

#[test]
fn builds_past_the_waiting_limit_start_in_a_later_frame() {
    // More small bodies come to rest at once than builds may wait for the trees' thread.
    builds_past_the_waiting_limit(BvhUpdate::Rebuild);
}

#[test]
fn refit_trees_past_the_waiting_limit_start_in_a_later_frame() {
    // More small moving bodies are rebuilt at once under `Refit` than builds may wait for the
    // trees' thread: those that could not start then start in a later refit frame, not at the
    // next rebuild (which `Refit` may never make).
    builds_past_the_waiting_limit(BvhUpdate::Refit);
}

/// `MAX_WAITING_BUILDS + 6` small balls, under `policy`: under `Rebuild` the first moves every
/// frame and the others rest from frame 1; under `Refit` all move every frame. While the builds
/// are held, at most `MAX_WAITING_BUILDS` start (fewer when other tests' builds wait too); the
/// others wait in their bodies, keep their trees, and start in a later frame; every body (but
/// the first under `Rebuild`) gets its binned-SAH tree in the end, the frame-built scene's. The
/// contacts never change.
fn builds_past_the_waiting_limit(policy: BvhUpdate) {
    let ball = meshes::icosphere(0.1, 1);
    let count = MAX_WAITING_BUILDS + 6;
    let all_move = policy == BvhUpdate::Refit;
    let mut scenes = [false, true].map(|background| {
        let mut s = Scene::new_cpu(Some(2)).unwrap();
        s.set_background_trees(background);
        s.set_bvh_update(policy).unwrap();
        let mut ids = Vec::new();
        for i in 0..count {
            let at = Vec3::new(0.15 * (i % 10) as f32, 0.15 * (i / 10) as f32, 0.0);
            let p: Vec<Vec3> = ball.positions.iter().map(|p| *p + at).collect();
            ids.push(s.add_body(&p, &ball.triangles, BodyKind::Volumetric).unwrap());
        }
        (s, ids)
    });
    let first = usize::from(!all_move);
    let mut hold = Some(hold_background_trees());
    let mut done = false;
    for f in 0..20 {
        if f == 3 {
            hold = None;
        }
        if f >= 3 {
            wait_background_trees();
        }
        let mut results = Vec::new();
        for (s, ids) in &mut scenes {
            let moving = if all_move { count } else { 1 };
            for (i, &id) in ids.iter().enumerate().take(moving) {
                let at = Vec3::new(0.15 * (i % 10) as f32, 0.15 * (i / 10) as f32, 0.0);
                let shift = at + Vec3::splat(0.01 * f as f32);
                let p: Vec<Vec3> = ball.positions.iter().map(|p| *p + shift).collect();
                s.set_positions(id, &p).unwrap();
            }
            let d = s.detect(Pairs::Overlapping).unwrap();
            results.push((d.stats.bvh, d.contacts, s.frame_data().unwrap()));
        }
        let ((_, ca, fa), (sb, cb, fb)) = (&results[0], &results[1]);
        assert!(!ca.is_empty(), "frame {f}: contacts");
        assert!(ca == cb, "frame {f}: the contacts of the trees built in the frame");
        let sah = (first..count).filter(|&b| !fb.body_wide(b).unwrap().sah.is_empty()).count();
        if f < 3 {
            assert_eq!(sah, 0, "frame {f}: a tree put in place while held");
        }
        if f == 3 {
            // Those started while held (no more than may wait) are put in place; the others
            // start now.
            assert!(sah <= MAX_WAITING_BUILDS, "frame {f}: {sah} trees put in place");
        }
        let written = sb.rest_trees + sb.refit_trees_written;
        assert!(written as usize <= MAX_WAITING_BUILDS, "frame {f}: {written} put in place");
        if sah == count - first {
            for b in 0..count {
                let (ta, tb) = (fa.body_wide(b).unwrap(), fb.body_wide(b).unwrap());
                assert!(ta == tb, "frame {f}: body {b}'s tree is the frame-built scene's");
            }
            done = true;
            break;
        }
    }
    assert!(hold.is_none());
    assert!(done, "{policy:?}: every body has its binned-SAH tree within 20 frames");
}
