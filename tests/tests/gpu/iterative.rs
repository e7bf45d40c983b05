//! Iterative detection (Lehericey et al. 2013, IRTCD) in `Scene::detect`: walked contacts
//! against a full traversal at the same positions, GPU against the CPU twin, the decision
//! between full and iterative passes, and the counters.

use glam::{Affine3A, Quat, Vec3};
use raycontact::internals::layout::{WALK_HIT, WALK_NO_START, WALK_OUTCOMES, WALK_STEPS};
use raycontact::meshes::{self, TriMesh};
use raycontact::{
    BodyId, BodyKind, Contact, ContactFlags, Contacts, Error, GpuContext, Iterative, Pairs, Ray, Scene,
    Stage, WalkFallback,
};
use raycontact_tests::{assert_unique_keys, ctx, grouped, key_surplus, other_tuning_ctx};

/// Three scenes over the same bodies: GPU iterative, CPU iterative, CPU full traversal.
struct Trio {
    scenes: [Scene; 3],
    ids: Vec<BodyId>,
}

impl Trio {
    fn new(bodies: &[(&TriMesh, BodyKind)], it: Iterative, prediction: f32) -> Self {
        Self::on(ctx(), bodies, it, prediction)
    }

    /// The trio with its GPU scene on `gpu`.
    fn on(gpu: &GpuContext, bodies: &[(&TriMesh, BodyKind)], it: Iterative, prediction: f32) -> Self {
        let scenes = [0, 1, 2].map(|i| {
            let mut s = if i == 0 { Scene::new(gpu) } else { Scene::new_cpu(None).unwrap() };
            s.set_prediction_distance(prediction).unwrap();
            if i < 2 {
                s.set_iterative(Some(it)).unwrap();
            }
            s
        });
        let mut trio = Trio { scenes, ids: Vec::new() };
        for s in &mut trio.scenes {
            trio.ids =
                bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
        }
        trio
    }

    fn set_positions(&mut self, body: usize, positions: &[Vec3]) {
        for s in &mut self.scenes {
            s.set_positions(self.ids[body], positions).unwrap();
        }
    }

    /// One detection on the three scenes: (GPU iterative, CPU iterative, CPU full).
    fn detect(&mut self, pairs: Pairs<'_>) -> [Contacts; 3] {
        let [g, c, f] = &mut self.scenes;
        [g.detect(pairs).unwrap(), c.detect(pairs).unwrap(), f.detect(pairs).unwrap()]
    }
}

/// GPU and CPU iterative passes agree exactly (keys as multisets, triangles, flags; floats
/// within 1e-4), and on the counters.
fn assert_twins(what: &str, g: &Contacts, c: &Contacts) {
    assert_eq!(g.stats.iterative, c.stats.iterative, "{what}: pass kind");
    assert_eq!(g.stats.walked, c.stats.walked, "{what}: contacts walked");
    assert_eq!(g.stats.walk, c.stats.walk, "{what}: walk counters");
    assert_eq!(g.pairs, c.pairs, "{what}: pairs");
    assert_unique_keys(&format!("{what} (GPU)"), &g.contacts);
    assert_unique_keys(&format!("{what} (CPU)"), &c.contacts);
    assert_eq!(key_surplus(&g.contacts, &c.contacts), (vec![], vec![]), "{what}: contact keys");
    assert_eq!(g.contacts.len(), c.contacts.len(), "{what}: contact counts");
    let kc = grouped(&c.contacts);
    for (k, ga) in grouped(&g.contacts) {
        let mut ga = ga;
        let mut gb = kc[&k].clone();
        for group in [&mut ga, &mut gb] {
            group.sort_by_key(|c| (c.target_triangle, c.flags));
        }
        for (a, b) in ga.iter().zip(&gb) {
            assert_eq!((a.target_triangle, a.flags), (b.target_triangle, b.flags), "{what}: {k:?}");
            assert!(
                (a.depth - b.depth).abs() < 1e-4 && a.normal.distance(b.normal) < 1e-4,
                "{what}: {a:?} vs {b:?}"
            );
        }
    }
}

/// How far the iterative contacts are from a full traversal's, as multisets by key: (walked
/// contacts without a full-pass contact of the same key and triangle, full-pass contacts
/// without a walked one of the same key).
fn difference(walked: &[Contact], full: &[Contact]) -> (usize, usize) {
    let (w, f) = (grouped(walked), grouped(full));
    let mut wrong = 0;
    for (k, cs) in &w {
        let mut triangles: Vec<u32> =
            f.get(k).map_or(Vec::new(), |d| d.iter().map(|c| c.target_triangle).collect());
        for c in cs {
            match triangles.iter().position(|&t| t == c.target_triangle) {
                Some(i) => {
                    triangles.swap_remove(i);
                }
                None => wrong += 1,
            }
        }
    }
    let missing = f.iter().map(|(k, cs)| cs.len().saturating_sub(w.get(k).map_or(0, Vec::len))).sum();
    (wrong, missing)
}

/// The `WALKED` flag of an iterative pass (`g`, with the BVH fallback when `bvh_fallback`): a
/// contact is flagged exactly when the trace that found it walked, so there are at most as
/// many flagged contacts as walks that hit, at most as many unflagged ones as fallback casts
/// that hit (none with the drop fallback), and some of each kind when the counters say so.
fn assert_walked_flags(what: &str, g: &Contacts, bvh_fallback: bool) {
    assert!(g.stats.iterative, "{what}: an iterative pass");
    let walked = g.contacts.iter().filter(|c| c.flags.contains(ContactFlags::WALKED)).count() as u32;
    let cast = g.contacts.len() as u32 - walked;
    let w = &g.stats.walk;
    assert!(
        walked <= w.outcome(WALK_HIT),
        "{what}: {walked} WALKED contacts, {} walks hit",
        w.outcome(WALK_HIT)
    );
    let fallback_hits = if bvh_fallback { w.fallback_hits } else { 0 };
    assert!(cast <= fallback_hits, "{what}: {cast} contacts not walked, {fallback_hits} fallback hits");
    assert!(walked > 0, "{what}: no contact is flagged WALKED");
}

/// No contact of a full pass is flagged `WALKED`.
fn assert_none_walked(what: &str, cs: &[Contact]) {
    assert!(cs.iter().all(|c| !c.flags.contains(ContactFlags::WALKED)), "{what}: a full pass walked");
}

fn torus_pair() -> (TriMesh, TriMesh) {
    let a = meshes::torus(1.0, 0.3, 40, 20);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(0.2),
        Vec3::new(1.85, 0.05, 0.02),
    ));
    (a, b)
}

#[test]
fn small_displacements_walk_to_the_full_traversals_contacts() {
    let (a, b) = torus_pair();
    let it = Iterative { full_pass_every: 100, ..Iterative::new(0.1) };
    let mut t = Trio::new(&[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], it, 0.0);
    let first = t.detect(Pairs::Overlapping);
    assert!(!first[0].stats.iterative && !first[1].stats.iterative, "the first detection is a full pass");
    assert_twins("full pass", &first[0], &first[1]);
    assert!(first[0].contacts.len() > 20, "{} contacts", first[0].contacts.len());
    for (i, f) in first.iter().enumerate() {
        assert_none_walked(&format!("first detection, scene {i}"), &f.contacts);
    }
    for frame in 1..=6 {
        let step = Vec3::new(0.002, -0.001, 0.0015) * frame as f32;
        let moved: Vec<Vec3> = b.positions.iter().map(|p| *p + step).collect();
        t.set_positions(1, &moved);
        let [g, c, f] = t.detect(Pairs::Overlapping);
        assert!(g.stats.iterative, "frame {frame}: displacement {} is under the threshold", step.length());
        assert_twins(&format!("frame {frame}"), &g, &c);
        assert_walked_flags(&format!("frame {frame}"), &g, true);
        assert!(!f.stats.iterative);
        assert_none_walked(&format!("frame {frame}, full pass"), &f.contacts);
        // Every remembered contact was re-cast: one walk per target trace at least.
        assert!(g.stats.walked > 0 && g.stats.walk.outcome(WALK_HIT) >= g.contacts.len() as u32 / 2);
        let (wrong, missing) = difference(&g.contacts, &f.contacts);
        let n = f.contacts.len();
        // The walk finds the hit connected to last frame's: a surface that moved in front of it
        // is not seen until the next full pass (the paper: at most 2.9% wrong pairs).
        assert!(
            wrong * 100 <= 3 * n,
            "frame {frame}: {wrong} of {n} walked contacts differ from the full pass"
        );
        assert!(
            missing * 10 <= n,
            "frame {frame}: {missing} of {n} contacts missed (found at the next full pass)"
        );
    }
}

/// The iterative pass's counters (the walk outcomes, the fallback casts and their hits, the
/// contacts walked) are the twin's whether the kernel tallies them per workgroup (the GPU
/// tuning, `Tuning::workgroup_tallies`) or adds each with an atomic (the software tuning), on
/// walks long enough that some run out of steps and fall back to the BVH.
#[test]
fn the_walk_counters_are_the_twins_whether_tallied_per_workgroup_or_not() {
    let contexts = [ctx(), other_tuning_ctx()];
    assert_ne!(contexts[0].tuning().workgroup_tallies, contexts[1].tuning().workgroup_tallies);
    // Finer tori than `torus_pair`'s: over 256 remembered contacts, so that several workgroups
    // add their tallies.
    let a = meshes::torus(1.0, 0.3, 80, 40);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(0.2),
        Vec3::new(1.85, 0.05, 0.02),
    ));
    // The shortest reach (confidence 1): the walks of the larger steps below run out of edges.
    let it = Iterative { confidence: 1.0, full_pass_every: 100, ..Iterative::new(0.1) };
    for gpu in contexts {
        let what = if gpu.tuning().workgroup_tallies { "tallied" } else { "one atomic a count" };
        let mut t = Trio::on(gpu, &[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], it, 0.0);
        let first = t.detect(Pairs::Overlapping);
        assert_twins(&format!("{what}, full pass"), &first[0], &first[1]);
        let (mut outcomes, mut casts) = ([0u32; WALK_OUTCOMES as usize], 0);
        for frame in 1..=4 {
            let step = Vec3::new(0.012, -0.008, 0.01) * frame as f32;
            let moved: Vec<Vec3> = b.positions.iter().map(|p| *p + step).collect();
            t.set_positions(1, &moved);
            let [g, c, _] = t.detect(Pairs::Overlapping);
            assert!(g.stats.iterative, "{what}, frame {frame}: an iterative pass");
            assert_twins(&format!("{what}, frame {frame}"), &g, &c);
            for (o, n) in outcomes.iter_mut().zip(g.stats.walk.outcomes) {
                *o += n;
            }
            casts += g.stats.walk.fallback_casts;
            assert!(g.stats.walked > 256, "{what}, frame {frame}: {} contacts walked", g.stats.walked);
        }
        // Every counter the tally adds was exercised: hits, walks out of steps, fallback casts.
        assert!(outcomes[WALK_HIT as usize] > 0, "{what}: outcomes {outcomes:?}");
        assert!(outcomes[WALK_STEPS as usize] > 0, "{what}: outcomes {outcomes:?}");
        assert!(casts > 0, "{what}: no fallback cast");
    }
}

#[test]
fn the_walk_keeps_the_cloth_classes_and_inversions() {
    // A sheet sinking onto a box: predictions become collisions while walking; then it is
    // pushed through another sheet: inversions, as in the full pass.
    let e = 0.01;
    let cube = meshes::cuboid(Vec3::new(1.0, 1.0, 0.5), 8);
    let sheet = meshes::grid_sheet(1.6, 1.6, 16, 16)
        .transformed(Affine3A::from_translation(Vec3::new(0.013, 0.007, 0.56)));
    let it = Iterative { full_pass_every: 100, ..Iterative::new(0.2) };
    let cloth = BodyKind::Cloth { half_thickness: e };
    let mut t = Trio::new(&[(&cube, BodyKind::Volumetric), (&sheet, cloth)], it, 0.1);
    let first = t.detect(Pairs::Overlapping);
    assert!(first[0].contacts.iter().all(Contact::is_prediction));
    for frame in 1..=5 {
        let down: Vec<Vec3> = sheet.positions.iter().map(|p| *p - Vec3::Z * 0.011 * frame as f32).collect();
        t.set_positions(1, &down);
        let [g, c, f] = t.detect(Pairs::Overlapping);
        assert!(g.stats.iterative);
        assert_twins(&format!("sinking frame {frame}"), &g, &c);
        assert_walked_flags(&format!("sinking frame {frame}"), &g, true);
        assert_eq!(g.contacts.len(), f.contacts.len(), "sinking frame {frame}");
        let (wrong, missing) = difference(&g.contacts, &f.contacts);
        assert_eq!((wrong, missing), (0, 0), "sinking frame {frame}: the walk equals the full pass");
        for (x, y) in g.contacts.iter().zip(&f.contacts) {
            assert_eq!(x.flags.without(ContactFlags::WALKED), y.flags, "frame {frame}");
            assert!((x.depth - y.depth).abs() < 1e-4);
        }
    }
    let gap = 0.56 - 0.011 * 5.0 - 0.5;
    assert!(gap < e, "the sheet now touches the box ({gap})");

    let lower = meshes::grid_sheet(2.0, 2.0, 16, 16);
    let upper = lower.transformed(Affine3A::from_translation(Vec3::new(0.013, 0.007, 0.03)));
    let it = Iterative { full_pass_every: 100, ..Iterative::new(0.2) };
    let mut t = Trio::new(&[(&lower, cloth), (&upper, cloth)], it, 0.1);
    t.detect(Pairs::Overlapping);
    let through: Vec<Vec3> = upper.positions.iter().map(|p| *p - Vec3::Z * 0.06).collect();
    t.set_positions(1, &through);
    let [g, c, f] = t.detect(Pairs::Overlapping);
    assert!(g.stats.iterative);
    assert_twins("through", &g, &c);
    assert_walked_flags("through", &g, true);
    assert!(!g.contacts.is_empty() && g.contacts.iter().all(|c| c.is_inverted() && c.is_collision()));
    assert_eq!(difference(&g.contacts, &f.contacts), (0, 0));
}

#[test]
fn a_displacement_over_the_threshold_or_the_nth_frame_runs_a_full_pass() {
    let (a, b) = torus_pair();
    let it = Iterative { full_pass_every: 4, ..Iterative::new(0.05) };
    let mut t = Trio::new(&[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], it, 0.0);
    let mut kinds = Vec::new();
    let mut offset = Vec3::ZERO;
    for step in [0.0, 0.01, 0.01, 0.04, 0.01, 0.01, 0.01, 0.01, 0.01] {
        offset += Vec3::X * step;
        let moved: Vec<Vec3> = b.positions.iter().map(|p| *p + offset).collect();
        t.set_positions(1, &moved);
        let [g, c, _] = t.detect(Pairs::List(&[(t.ids[0], t.ids[1])]));
        assert_twins("decision", &g, &c);
        kinds.push(g.stats.iterative);
        let d = t.scenes[0].displacement(t.ids[1]).unwrap();
        assert!(d <= 0.05 + 1e-6, "after a detection the displacement is within the threshold: {d}");
    }
    // Frame 0: first; frame 3: 0.06 since the last full pass > 0.05; frame 7: the 4th after
    // the full pass of frame 3.
    assert_eq!(kinds, [false, true, true, false, true, true, true, false, true]);
    // Changing the pairs, or the settings, or the bodies, also asks for a full pass.
    let [g, ..] = t.detect(Pairs::Overlapping);
    assert!(!g.stats.iterative);
}

#[test]
fn the_drop_fallback_skips_the_bvh_and_counts_its_losses() {
    let (a, b) = torus_pair();
    let it = Iterative { fallback: WalkFallback::Drop, full_pass_every: 100, ..Iterative::new(0.1) };
    let mut t = Trio::new(&[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], it, 0.0);
    t.detect(Pairs::Overlapping);
    let moved: Vec<Vec3> = b.positions.iter().map(|p| *p + Vec3::new(0.01, 0.0, 0.005)).collect();
    t.set_positions(1, &moved);
    let [g, c, f] = t.detect(Pairs::Overlapping);
    assert!(g.stats.iterative);
    assert_twins("drop", &g, &c);
    assert_walked_flags("drop", &g, false);
    // No stage of the frame ran: no sort, no hierarchy, not even the normals (the walk computes
    // its sources' normals itself); no fallback cast.
    let sort = g.stats.get(Stage::Sort).unwrap();
    assert_eq!((sort.dispatches, g.stats.get(Stage::Hierarchy).unwrap().dispatches), (0, 0));
    assert_eq!(g.stats.get(Stage::Normals).map_or(0, |s| s.dispatches), 0);
    assert_eq!(g.stats.walk.fallback_casts, 0);
    let w = &g.stats.walk;
    let lost: u32 = (1..8).map(|o| w.outcome(o)).sum();
    assert_eq!(w.outcome(WALK_NO_START), 0, "every remembered volumetric contact has its exit triangle");
    assert!(g.stats.walked as usize >= g.contacts.len());
    let (wrong, missing) = difference(&g.contacts, &f.contacts);
    let n = f.contacts.len();
    assert!(
        wrong * 100 <= 3 * n && missing * 10 <= n,
        "{wrong} wrong, {missing} missing of {n}; {lost} walks lost"
    );
    // The BVHs are last frame's: ray queries wait for an update.
    let ray = Ray::new(Vec3::new(1.0, 0.0, 2.0), -Vec3::Z);
    assert!(matches!(t.scenes[0].cast_rays(t.ids[0], &[ray]), Err(Error::StaleBvh)));
    assert!(matches!(t.scenes[1].cast_rays(t.ids[0], &[ray]), Err(Error::StaleBvh)));
}

#[test]
fn rigid_poses_bound_the_displacement_by_translation_and_angle() {
    let ball = meshes::icosphere(0.5, 3);
    let mut s = Scene::new_cpu(Some(1)).unwrap();
    let id = s.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric).unwrap();
    s.set_iterative(Some(Iterative::new(0.1))).unwrap();
    s.detect(Pairs::Overlapping).unwrap();
    let angle = 0.02;
    let pose = Affine3A::from_rotation_translation(Quat::from_rotation_z(angle), Vec3::new(0.03, 0.0, 0.0));
    s.set_pose(id, Affine3A::IDENTITY).unwrap();
    s.detect(Pairs::Overlapping).unwrap(); // a full pass: no pair remembered, the pose is the reference
    s.set_pose(id, pose).unwrap();
    let d = s.displacement(id).unwrap();
    assert!((d - (0.03 + angle * 0.5)).abs() < 1e-4, "translation + angle x radius: {d}");
    let moved = s.positions(id).unwrap()[0];
    assert!(moved.distance(pose.transform_point3(ball.positions[0])) < 1e-6);
    assert!(matches!(
        s.set_pose(id, Affine3A::from_scale(Vec3::splat(2.0))),
        Err(Error::InvalidInput { .. })
    ));
    let bad = Iterative { confidence: 0.5, ..Iterative::new(0.1) };
    assert!(matches!(s.set_iterative(Some(bad)), Err(Error::InvalidInput { .. })));
}

/// A contact with its body ids replaced by their ranks among the live bodies of its scene.
type Ranked = (usize, usize, u32, u32, glam::Vec2, Vec3, Vec3, Vec3, f32, f32, f32, ContactFlags);

/// The contacts of `s` with each body id replaced by its rank among the live bodies: two
/// scenes holding the same bodies in the same order then compare field by field.
fn by_rank(s: &Scene, cs: &[Contact]) -> Vec<Ranked> {
    let live: Vec<BodyId> = s.bodies().collect();
    let rank = |id: BodyId| live.iter().position(|&l| l == id).unwrap();
    cs.iter()
        .map(|c| {
            (
                rank(c.source_body),
                rank(c.target_body),
                c.source_vertex,
                c.target_triangle,
                c.barycentric,
                c.source_point,
                c.target_point,
                c.normal,
                c.depth,
                c.ray_length,
                c.weight,
                c.flags,
            )
        })
        .collect()
}

#[test]
fn adding_or_removing_a_body_makes_the_next_detection_a_full_pass() {
    // Two tori walked for a few frames; then a ball is added through one of them, walked
    // again, and a torus removed. After each change the detection is a full pass and equals a
    // fresh scene's over the same bodies (no iterative detection), on each backend.
    let (a, b) = torus_pair();
    let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(1.0, 0.0, 0.2)));
    let it = Iterative { full_pass_every: 100, ..Iterative::new(0.1) };
    let mut t = Trio::new(&[(&a, BodyKind::Volumetric), (&b, BodyKind::Volumetric)], it, 0.0);
    let mut b_now = b.positions.clone();
    let step = |t: &mut Trio, b_now: &mut Vec<Vec3>, frame: u32, expect_iterative: bool| {
        for p in b_now.iter_mut() {
            *p += Vec3::new(0.002, 0.001, -0.001);
        }
        t.set_positions(1, b_now);
        let [g, c, f] = t.detect(Pairs::Overlapping);
        assert_eq!(
            (g.stats.iterative, c.stats.iterative),
            (expect_iterative, expect_iterative),
            "frame {frame}"
        );
        assert_twins(&format!("frame {frame}"), &g, &c);
        [g, c, f]
    };
    step(&mut t, &mut b_now, 0, false);
    step(&mut t, &mut b_now, 1, true);
    step(&mut t, &mut b_now, 2, true);

    // Add the ball to the iterative scenes (the full-pass scene too).
    for s in &mut t.scenes {
        t.ids.truncate(2);
        t.ids.push(s.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric).unwrap());
    }
    let check_fresh =
        |what: &str, t: &Trio, got: &[Contacts; 3], bodies: &[&[Vec3]], triangles: &[&TriMesh]| {
            for (i, gpu) in [(0, true), (1, false)] {
                let mut fresh = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
                for (p, m) in bodies.iter().zip(triangles) {
                    fresh.add_body(p, &m.triangles, BodyKind::Volumetric).unwrap();
                }
                let want = fresh.detect(Pairs::Overlapping).unwrap();
                assert!(!got[i].stats.iterative, "{what}: a full pass after the change (scene {i})");
                assert_none_walked(what, &got[i].contacts);
                assert_eq!(got[i].pairs, want.pairs, "{what}: pairs (scene {i})");
                assert_eq!(
                    by_rank(&t.scenes[i], &got[i].contacts),
                    by_rank(&fresh, &want.contacts),
                    "{what}: the fresh scene's contacts (scene {i})"
                );
            }
        };
    let got = t.detect(Pairs::Overlapping);
    assert_twins("after adding", &got[0], &got[1]);
    assert!(got[0].contacts.iter().any(|c| c.source_body == t.ids[2]), "the ball touches a torus");
    check_fresh("after adding", &t, &got, &[&a.positions, &b_now, &ball.positions], &[&a, &b, &ball]);
    step(&mut t, &mut b_now, 3, true);

    // Remove torus a: the ball and torus b remain, in slots 1 and 2.
    for s in &mut t.scenes {
        s.remove_body(t.ids[0]).unwrap();
    }
    let got = t.detect(Pairs::Overlapping);
    assert_twins("after removing", &got[0], &got[1]);
    check_fresh("after removing", &t, &got, &[&b_now, &ball.positions], &[&b, &ball]);
    // And walking resumes.
    for p in &mut b_now {
        *p += Vec3::new(0.002, 0.001, -0.001);
    }
    t.set_positions(1, &b_now);
    let [g, c, _] = t.detect(Pairs::Overlapping);
    assert!(g.stats.iterative && c.stats.iterative, "walking after the full pass");
    assert_twins("walking after removing", &g, &c);
}

#[test]
fn an_iterative_pass_that_overflows_grows_and_runs_again_on_last_frames_contacts() {
    // A sheet 0.03 above a flat closed box of cloth (0.05 thick): every sheet vertex's inward
    // ray predicts the box's top. Pushed 0.05 down, into the box, each remembered ray's walk
    // ends behind the vertex: the BVH fallback finds the bottom face (a prediction) and the ray
    // cast the other way finds the top crossed (an inversion): two contacts where one was
    // remembered. Under `Grow` with a capacity of 1.5 times the first full pass's count (which
    // fills less than three quarters of it, so it stays), the iterative pass overflows it, grows
    // the contact buffers (last frame's contacts, which it reads, are carried over) and runs
    // again: the GPU equals the CPU backend, with no contact lost or doubled.
    let e = 0.005;
    let cloth = BodyKind::Cloth { half_thickness: e };
    let slab = meshes::cuboid(Vec3::new(1.0, 1.0, 0.025), 8);
    let sheet = meshes::grid_sheet(1.6, 1.6, 32, 32)
        .transformed(Affine3A::from_translation(Vec3::new(0.013, 0.007, 0.055)));
    let it = Iterative { full_pass_every: 100, ..Iterative::new(0.2) };
    let bodies = [(&slab, cloth), (&sheet, cloth)];
    // The first full pass's count, from scenes of their own.
    let n = {
        let mut probe = Trio::new(&bodies, it, 0.1);
        let pair = [(probe.ids[0], probe.ids[1])];
        probe.detect(Pairs::List(&pair))[0].contacts.len() as u64
    };
    assert!(n > 1000, "{n} contacts");
    let mut t = Trio::new(&bodies, it, 0.1);
    for s in &mut t.scenes {
        s.set_overflow_policy(raycontact::OverflowPolicy::Grow);
        s.set_contact_capacity(n + n / 2);
    }
    let pair = [(t.ids[0], t.ids[1])];
    let first = t.detect(Pairs::List(&pair));
    assert!(!first[0].stats.iterative);
    assert_twins("first", &first[0], &first[1]);
    assert_eq!(first[0].contacts.len() as u64, n);
    let grown = t.scenes[0].contact_capacity();
    assert_eq!(grown, n + n / 2, "filled under three quarters: the capacity stays");
    assert_eq!(t.scenes[1].contact_capacity(), grown, "both backends alike");

    let inside: Vec<Vec3> = sheet.positions.iter().map(|p| *p - Vec3::Z * 0.05).collect();
    t.set_positions(1, &inside);
    let [g, c, _] = t.detect(Pairs::List(&pair));
    assert!(g.stats.iterative && c.stats.iterative, "an iterative pass");
    assert_eq!(g.stats.walked as u64, n, "every remembered contact was re-cast");
    let m = g.contacts.len() as u64;
    assert!(m > grown, "the iterative pass found {m} contacts, over the capacity {grown}");
    assert!(t.scenes[0].contact_capacity() >= m, "and grew it");
    assert_eq!(t.scenes[0].contact_capacity(), t.scenes[1].contact_capacity());
    assert_twins("pushed inside", &g, &c);
    let inverted = g.contacts.iter().filter(|c| c.is_inverted()).count();
    let predicted = g.contacts.iter().filter(|c| c.is_prediction()).count();
    assert!(inverted > 1000 && predicted > 1000, "{inverted} inverted, {predicted} predictions");

    // The next frame walks from what the re-run left: still equal.
    let deeper: Vec<Vec3> = inside.iter().map(|p| *p - Vec3::Z * 0.002).collect();
    t.set_positions(1, &deeper);
    let [g, c, _] = t.detect(Pairs::List(&pair));
    assert!(g.stats.iterative);
    assert_twins("deeper", &g, &c);
}
