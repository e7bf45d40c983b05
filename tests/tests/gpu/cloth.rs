//! Cloth, predictions and inversions (Lehericey et al. 2015) on the GPU against the CPU
//! reference and analytic cases. Every test states the class it expects.

use std::f32::consts::PI;

use glam::{Affine3A, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, Contact, GpuContext, Pairs, Scene, SelfCollision};
use raycontact_tests::{assert_unique_keys, ctx, grouped, key_surplus, other_tuning_ctx};

const E: f32 = 0.02;

fn cloth(e: f32) -> BodyKind {
    BodyKind::Cloth { half_thickness: e }
}

fn translated(m: &TriMesh, t: Vec3) -> TriMesh {
    m.transformed(Affine3A::from_translation(t))
}

/// The scene on both backends, with this prediction distance.
fn scenes(bodies: &[(&TriMesh, BodyKind)], prediction: f32) -> [(Scene, Vec<BodyId>); 2] {
    scenes_in(ctx(), bodies, prediction)
}

/// [`scenes`] with the GPU's scene in `context`.
pub(crate) fn scenes_in(
    context: &GpuContext,
    bodies: &[(&TriMesh, BodyKind)],
    prediction: f32,
) -> [(Scene, Vec<BodyId>); 2] {
    [true, false].map(|gpu| {
        let mut s = if gpu { Scene::new(context) } else { Scene::new_cpu(None).unwrap() };
        s.set_prediction_distance(prediction).unwrap();
        let ids = bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
        (s, ids)
    })
}

/// GPU and CPU contacts as multisets: the same (source, vertex, target, ray) keys, each at
/// most once, and for each the same flags, triangle, and points within 1e-4.
fn assert_same(what: &str, gpu: &[Contact], cpu: &[Contact]) {
    assert_unique_keys(&format!("{what} (GPU)"), gpu);
    assert_unique_keys(&format!("{what} (CPU)"), cpu);
    assert_eq!(key_surplus(gpu, cpu), (vec![], vec![]), "{what}: contact keys");
    assert_eq!(gpu.len(), cpu.len(), "{what}: contact counts");
    let c = grouped(cpu);
    for (k, g) in grouped(gpu) {
        let (cg, cc) = (g[0], c[&k][0]);
        assert_eq!((cg.flags, cg.target_triangle), (cc.flags, cc.target_triangle), "{what}: {k:?}");
        assert!((cg.depth - cc.depth).abs() < 1e-4, "{what}: depth {cg:?} vs {cc:?}");
        assert!(cg.normal.distance(cc.normal) < 1e-4, "{what}: normal {cg:?} vs {cc:?}");
        assert!(cg.target_point.distance(cc.target_point) < 1e-4, "{what}: point {cg:?} vs {cc:?}");
    }
}

/// One detection on both backends; the GPU's contacts, checked against the CPU's.
fn detect(what: &str, scenes: &mut [(Scene, Vec<BodyId>); 2], pairs: Pairs<'_>) -> Vec<Contact> {
    let g = scenes[0].0.detect(pairs).unwrap().contacts;
    let c = scenes[1].0.detect(pairs).unwrap().contacts;
    assert_same(what, &g, &c);
    g
}

fn class(c: &Contact) -> &'static str {
    match (c.is_collision(), c.is_prediction()) {
        (true, false) => "collision",
        (false, true) => "prediction",
        _ => "bad flags",
    }
}

#[test]
fn a_sheet_over_a_box_collides_within_e_predicts_within_the_distance() {
    let prediction = 0.1;
    let cube = meshes::cuboid(Vec3::new(1.0, 1.0, 0.5), 8);
    for (h, expected) in [(0.01, Some("collision")), (0.05, Some("prediction")), (0.2, None)] {
        let sheet = translated(&meshes::grid_sheet(1.6, 1.6, 16, 16), Vec3::new(0.013, 0.007, 0.5 + h));
        let mut s = scenes(&[(&cube, BodyKind::Volumetric), (&sheet, cloth(E))], prediction);
        let found = detect(&format!("h = {h}"), &mut s, Pairs::Overlapping);
        let Some(expected) = expected else {
            assert!(found.is_empty(), "h = {h} is beyond the prediction distance: {found:?}");
            continue;
        };
        let (box_id, sheet_id) = (s[0].1[0], s[0].1[1]);
        let from_sheet = found.iter().filter(|c| c.source_body == sheet_id).count();
        let from_box = found.iter().filter(|c| c.source_body == box_id).count();
        // Every sheet vertex is over the box top; the box's top vertices under the sheet (the
        // inner 7 x 7 of its 9 x 9 lattice) reach it with their outward rays.
        assert_eq!(from_sheet, 17 * 17, "h = {h}: one contact per sheet vertex");
        assert_eq!(from_box, 49, "h = {h}: the box's top vertices under the sheet");
        for c in &found {
            assert_eq!(class(c), expected, "h = {h}: {c:?}");
            assert!(c.target_body != c.source_body, "a flat sheet has no self contact");
            // The sheet is pushed up, the box down; depth = e - h along the re-projected ray.
            let up = if c.source_body == sheet_id { 1.0 } else { -1.0 };
            assert!(c.normal.distance(Vec3::Z * up) < 1e-4, "h = {h}: normal of {c:?}");
            assert!((c.depth - (E - h)).abs() < 1e-4, "h = {h}: depth of {c:?}");
            assert!((c.ray_length - h).abs() < 1e-4);
            // The points lie on the outer surfaces: the sheet's moved by e towards the box.
            assert!(((c.target_point - c.source_point).dot(c.normal) - c.depth).abs() < 1e-4);
        }
    }
}

#[test]
fn a_sheet_cutting_through_a_sphere() {
    let (r, z0, e) = (1.0, 0.3, 0.01);
    let ball = meshes::icosphere(r, 4);
    let sheet = translated(&meshes::grid_sheet(3.0, 3.0, 30, 30), Vec3::new(0.011, 0.013, z0));
    let mut s = scenes(&[(&ball, BodyKind::Volumetric), (&sheet, cloth(e))], 0.0);
    let found = detect("sheet through sphere", &mut s, Pairs::Overlapping);
    let (ball_id, sheet_id) = (s[0].1[0], s[0].1[1]);
    // Cloth -> volumetric: every sheet vertex inside the ball has exactly one contact, a
    // collision by the shorter ray (re-projected): upwards (the sheet is above the centre),
    // with the normal of the sphere where the ray leaves it.
    for (vi, p) in sheet.positions.iter().enumerate() {
        let mine: Vec<_> =
            found.iter().filter(|c| c.source_body == sheet_id && c.source_vertex == vi as u32).collect();
        if p.length() < r - 0.02 {
            assert_eq!(mine.len(), 1, "sheet vertex {vi} inside the ball: {mine:?}");
            let c = mine[0];
            assert!(c.is_collision() && c.is_outward() && c.normal.z > 0.0, "{c:?}");
            let hit = c.target_point; // a volumetric target: on its surface
            assert!(c.normal.distance(hit.normalize()) < 0.05, "normal along the sphere's: {c:?}");
            let exit = (r * r - p.x * p.x - p.y * p.y).sqrt() - p.z;
            assert!((c.ray_length - exit).abs() < 0.02, "ray {} vs exit {exit}", c.ray_length);
            assert!((c.depth - (c.ray_length * c.weight + e)).abs() < 1e-4);
        } else if p.length() > r + 0.02 {
            assert!(mine.is_empty(), "sheet vertex {vi} outside the ball: {mine:?}");
        }
    }
    // Volumetric -> cloth: inward rays of ball vertices above the sheet reach it before half
    // their exit distance; those below would cross the centre first.
    let from_ball: Vec<_> = found.iter().filter(|c| c.source_body == ball_id).collect();
    assert!(from_ball.len() > 50, "{} ball contacts", from_ball.len());
    for c in from_ball {
        if c.is_outward() {
            // A ball vertex within the sheet's thickness, its slanted outward ray landing
            // beyond e (issue 12, item 6): a collision pushing it away from the sheet.
            let below = c.source_point.z < z0;
            assert!(c.is_collision() && (c.source_point.z - z0).abs() < e, "{c:?}");
            assert!((c.normal.z < -0.99) == below && c.normal.z.abs() > 0.99, "{c:?}");
            continue;
        }
        assert!(c.is_collision(), "{c:?}");
        assert!(c.source_point.z > z0, "ball vertex below the sheet: {c:?}");
        assert!(c.normal.z < -0.5, "the ball is pushed down across the sheet: {c:?}");
        assert!(c.ray_length <= 0.5 * 2.0 * r + 1e-3);
    }
}

#[test]
fn two_parallel_sheets() {
    let (e1, e2, prediction) = (0.01, 0.015, 0.1);
    let lower = meshes::grid_sheet(2.0, 2.0, 20, 20);
    for (gap, expected) in [(0.02, Some("collision")), (0.06, Some("prediction")), (0.15, None)] {
        let upper = translated(&lower, Vec3::new(0.013, 0.007, gap));
        let mut s = scenes(&[(&lower, cloth(e1)), (&upper, cloth(e2))], prediction);
        let found = detect(&format!("gap {gap}"), &mut s, Pairs::Overlapping);
        let Some(expected) = expected else {
            assert!(found.is_empty(), "gap {gap}: {found:?}");
            continue;
        };
        assert!(found.len() > 600, "gap {gap}: {} contacts", found.len());
        for c in &found {
            assert_eq!(class(c), expected, "gap {gap}: {c:?}");
            assert_ne!(c.source_body, c.target_body);
            assert!((c.depth - (e1 + e2 - gap)).abs() < 1e-4, "gap {gap}: {c:?}");
            // Each sheet is pushed away from the other.
            let lower_source = c.source_body == s[0].1[0];
            assert!(c.normal.distance(if lower_source { -Vec3::Z } else { Vec3::Z }) < 1e-4, "{c:?}");
            assert_eq!(c.is_outward(), lower_source, "the lower sheet's normal points at the upper");
        }
    }
}

/// The bodies on the CPU backend, on the twins' binary trees (`set_wide_bvh(false)`, which cast
/// as the kernels do) and on the GPU with both tunings: (name, scene, ids).
fn every_backend(bodies: &[(&TriMesh, BodyKind)]) -> [(&'static str, Scene, Vec<BodyId>); 4] {
    let scene = |mut s: Scene| {
        let ids: Vec<BodyId> =
            bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
        (s, ids)
    };
    let (cpu, ids) = scene(Scene::new_cpu(None).unwrap());
    let (mut twins, _) = scene(Scene::new_cpu(None).unwrap());
    twins.set_wide_bvh(false);
    let (software, _) = scene(Scene::new(ctx()));
    let (other, _) = scene(Scene::new(other_tuning_ctx()));
    [
        ("CPU backend", cpu, ids.clone()),
        ("twins' trees", twins, ids.clone()),
        ("GPU (software tuning)", software, ids.clone()),
        ("GPU (other tuning)", other, ids),
    ]
}

#[test]
fn a_sphere_through_three_sheets_finds_each_within_half_its_exit_distance() {
    // Each sphere vertex's exit trace (its inward ray through the sphere, to where it leaves)
    // is asked by the three volumetric -> cloth pairs: the kernel casts it once a pass and
    // answers the others from its exit memo, as the twins' binary trees do; the CPU backend's
    // wide trees answer them from their own memo. The same contacts on each, on both kernel
    // tunings, and each sheet found exactly where half the exit distance reaches it.
    let (r, e) = (1.0, 0.01);
    let ball = meshes::icosphere(r, 4);
    let heights = [-0.45, 0.1, 0.55];
    let sheet = meshes::grid_sheet(3.0, 3.0, 30, 30);
    let sheets: Vec<TriMesh> =
        heights.iter().map(|&z| translated(&sheet, Vec3::new(0.011, 0.013, z))).collect();
    let mut bodies = vec![(&ball, BodyKind::Volumetric)];
    bodies.extend(sheets.iter().map(|m| (m, cloth(e))));
    let mut all = every_backend(&bodies);
    let expected = all[0].1.detect(Pairs::Overlapping).unwrap().contacts;
    for (what, s, ids) in &mut all[1..] {
        let found = s.detect(Pairs::Overlapping).unwrap().contacts;
        assert_same(&format!("three sheets, {what}"), &found, &expected);
        let (ball_id, ids) = (ids[0], &ids[1..]);
        for (i, (&z, id)) in heights.iter().zip(ids).enumerate() {
            // A ball vertex's inward ray runs radially through the centre to the far side (2r):
            // it meets sheet z at t = r (p.z - z) / p.z, a collision when t <= r (half the exit).
            let (mut near, mut found_near) = (0, 0);
            for (vi, p) in ball.positions.iter().enumerate() {
                let inward = found.iter().find(|c| {
                    c.source_body == ball_id
                        && c.target_body == *id
                        && c.source_vertex == vi as u32
                        && !c.is_outward()
                });
                let t = r * (p.z - z) / p.z;
                if t > 0.0 && t < 0.95 * r {
                    near += 1;
                    found_near += usize::from(inward.is_some());
                } else if !(0.0..1.05 * r).contains(&t) {
                    assert!(inward.is_none(), "sheet {i} at z {z}, ball vertex {vi} (t {t}): {inward:?}");
                }
                if let Some(c) = inward {
                    assert!(
                        c.is_collision() && c.ray_length <= 1.05 * r,
                        "sheet {i}, ball vertex {vi}: {c:?}"
                    );
                }
            }
            assert!(
                near > 50 && found_near == near,
                "sheet {i}: {found_near} of {near} ball vertices found it"
            );
        }
    }
}

#[test]
fn an_exit_memo_keeps_the_exits_of_a_body_that_did_not_move_and_traces_a_moved_one_again() {
    // The kernels keep a body's exit traces over frames while it does not move. Body A is two
    // boxes in one mesh, the upper one around z 1..2 above a sheet at z 0.9: a top vertex's exit
    // is the upper box's bottom (t 1), so its inward ray reaches half as far, not the sheet.
    // Then the upper box's bottom is pulled below the lower box (z -2): the first hit down is
    // the lower box's top (t 2), the old exit (now at t 4) still on the ray; half of 2 still
    // misses the sheet (t 1.1), half of 4 would not. A sphere to the side, under a sheet of its
    // own, never moves. Every frame as the CPU backend finds it, on both tunings and on the
    // twins' trees.
    let upper =
        meshes::cuboid(Vec3::splat(0.5), 6).transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, 1.5)));
    let lower = meshes::cuboid(Vec3::splat(0.5), 6)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, -0.5)));
    let mut boxes = upper.clone();
    let n = boxes.positions.len() as u32;
    boxes.positions.extend(&lower.positions);
    boxes.triangles.extend(lower.triangles.iter().map(|t| t.map(|i| i + n)));
    let stretched: Vec<Vec3> = boxes
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| if (i as u32) < n && p.z < 1.01 { Vec3::new(p.x, p.y, -2.0) } else { *p })
        .collect();
    let ball = translated(&meshes::icosphere(0.6, 3), Vec3::new(4.0, 0.0, 0.0));
    let sheet = meshes::grid_sheet(1.6, 1.6, 16, 16);
    let sheets =
        [translated(&sheet, Vec3::new(0.011, 0.013, 0.9)), translated(&sheet, Vec3::new(4.011, 0.013, 0.25))];
    let e = 0.01;
    let mut bodies = vec![(&boxes, BodyKind::Volumetric), (&ball, BodyKind::Volumetric)];
    bodies.extend(sheets.iter().map(|m| (m, cloth(e))));
    let mut all = every_backend(&bodies);
    for frame in 0..4 {
        let found: Vec<Vec<Contact>> = all
            .iter_mut()
            .map(|(_, s, ids)| {
                if frame == 2 {
                    s.set_positions(ids[0], &stretched).unwrap();
                }
                if frame == 3 {
                    // The sheets move, the bodies do not.
                    for (id, m) in ids[2..].iter().zip(&sheets) {
                        let lifted: Vec<Vec3> =
                            m.positions.iter().map(|p| *p + Vec3::new(0.0, 0.0, 0.02)).collect();
                        s.set_positions(*id, &lifted).unwrap();
                    }
                }
                s.detect(Pairs::Overlapping).unwrap().contacts
            })
            .collect();
        for ((what, ..), f) in all.iter().zip(&found).skip(1) {
            assert_same(&format!("frame {frame}, {what}"), f, &found[0]);
        }
        // Body A's top vertices above the sheet reach it in no frame (half their exit falls short).
        let ids = &all[2].2;
        let reach =
            found[2].iter().filter(|c| c.source_body == ids[0] && c.target_body == ids[2] && !c.is_outward());
        let top: Vec<_> = reach.filter(|c| c.source_point.z > 1.99).collect();
        assert!(top.is_empty(), "frame {frame}: top vertices of A reach the sheet: {:?}", top.first());
    }
}

/// A strip of width 1 along x, folded over a hairpin bend of radius `rho`: a lower layer at z = 0
/// (normals +z) and an upper layer at z = 2 rho (normals -z), `len` long each.
fn folded_strip(len: f32, rho: f32) -> TriMesh {
    let mut s: Vec<(f32, f32)> = Vec::new(); // (x, z) along the strip
    let n = 40;
    for i in 0..=n {
        s.push((len * i as f32 / n as f32, 0.0));
    }
    let bend = 12;
    for i in 1..bend {
        let a = PI * i as f32 / bend as f32;
        s.push((len + rho * a.sin(), rho - rho * a.cos()));
    }
    for i in 0..=n {
        s.push((len - len * i as f32 / n as f32, 2.0 * rho));
    }
    let ny = 8;
    let mut positions = Vec::new();
    for j in 0..=ny {
        for &(x, z) in &s {
            positions.push(Vec3::new(x, j as f32 / ny as f32 - 0.5, z));
        }
    }
    let w = s.len() as u32;
    let mut triangles = Vec::new();
    for j in 0..ny {
        for i in 0..w - 1 {
            let (a, b) = (j * w + i, j * w + i + 1);
            let (c, d) = (a + w, b + w);
            triangles.push([a, b, d]);
            triangles.push([a, d, c]);
        }
    }
    TriMesh { positions, triangles }
}

#[test]
fn a_folded_sheet_touches_itself_and_a_flat_or_gently_curved_one_does_not() {
    let (rho, e) = (0.01, 0.015);
    let strip = folded_strip(1.5, rho);
    let mut s = scenes(&[(&strip, cloth(e))], 0.05);
    let found = detect("folded", &mut s, Pairs::Overlapping);
    let id = s[0].1[0];
    assert!(found.iter().all(|c| c.source_body == id && c.target_body == id));
    // Every lower-layer vertex away from the bend and the edges touches the upper layer:
    // collision (2 rho < 2e), pushed down, through its outward ray.
    let layer = 41 + 11 + 41; // vertices per row: lower layer, bend, upper layer
    for j in 1..8u32 {
        for i in 1..35u32 {
            let v = j * layer + i;
            let c = found
                .iter()
                .find(|c| c.source_vertex == v && c.is_outward())
                .unwrap_or_else(|| panic!("lower vertex {v} has no self contact"));
            assert!(c.is_collision() && !c.is_inverted(), "{c:?}");
            assert!((c.depth - (2.0 * e - 2.0 * rho)).abs() < 1e-4, "{c:?}");
            assert!(c.normal.distance(-Vec3::Z) < 1e-4, "{c:?}");
            let hit = c.target_point - e * c.normal; // back on the mid-surface
            assert!(hit.z > rho, "target on the upper layer: {c:?}");
        }
    }
    // A flat sheet and a gently curved one (radius 2, 60 degrees) alone: nothing, with or
    // without a prediction distance: the triangles around each vertex are ignored, and no
    // other part of the sheet lies along a vertex normal.
    let flat = meshes::grid_sheet(2.0, 2.0, 24, 24);
    let curved = TriMesh {
        positions: flat
            .positions
            .iter()
            .map(|p| {
                let a = p.x / 2.0 * (PI / 3.0);
                Vec3::new(2.0 * a.sin(), p.y, 2.0 - 2.0 * a.cos())
            })
            .collect(),
        triangles: flat.triangles.clone(),
    };
    for (what, m) in [("flat", &flat), ("curved", &curved)] {
        let mut s = scenes(&[(m, cloth(e))], 0.2);
        let found = detect(what, &mut s, Pairs::Overlapping);
        assert!(found.is_empty(), "{what} sheet alone: {found:?}");
        let id = s[0].1[0];
        let found = detect(what, &mut s, Pairs::List(&[(id, id)]));
        assert!(found.is_empty(), "{what} sheet as an explicit self pair: {found:?}");
    }
    // Self pairs off: the folded strip reports nothing through Overlapping.
    let mut s = scenes(&[(&strip, cloth(e))], 0.05);
    for (scene, _) in &mut s {
        scene.set_self_collision(SelfCollision::None);
    }
    assert!(detect("folded, no self", &mut s, Pairs::Overlapping).is_empty());
}

#[test]
fn a_sheet_that_passed_through_another_is_inverted() {
    let (e, prediction) = (0.01, 0.2);
    let lower = meshes::grid_sheet(2.0, 2.0, 16, 16);
    let above = translated(&lower, Vec3::new(0.013, 0.007, 0.05));
    let mut s = scenes(&[(&lower, cloth(e)), (&above, cloth(e))], prediction);
    let before = detect("before", &mut s, Pairs::Overlapping);
    assert!(!before.is_empty() && before.iter().all(|c| c.is_prediction() && !c.is_inverted()));
    // One step later the upper sheet is 0.05 below the lower one: a prediction by distance
    // (0.05 > 2e), but every vertex crossed the other sheet: collision, inverted, normal flipped
    // (towards the other sheet, back to the side it came from).
    let below: Vec<Vec3> = above.positions.iter().map(|p| *p - Vec3::Z * 0.1).collect();
    for (scene, ids) in &mut s {
        scene.set_positions(ids[1], &below).unwrap();
    }
    let after = detect("after", &mut s, Pairs::Overlapping);
    assert!(after.len() >= before.len() - 40, "{} contacts after, {} before", after.len(), before.len());
    let upper_id = s[0].1[1];
    for c in &after {
        assert!(c.is_collision() && c.is_inverted(), "{c:?}");
        let back = if c.source_body == upper_id { Vec3::Z } else { -Vec3::Z };
        assert!(c.normal.distance(back) < 1e-4, "{c:?}");
        assert!((c.depth - (0.05 + 2.0 * e)).abs() < 1e-4, "{c:?}");
    }
    // A second step without motion: the crossing is the previous frame's, no longer an
    // inversion: back to predictions (the response was not applied here).
    for (scene, ids) in &mut s {
        scene.set_positions(ids[1], &below).unwrap();
    }
    let settled = detect("settled", &mut s, Pairs::Overlapping);
    assert_eq!(settled.len(), after.len(), "the same rays find the same sheets, now as predictions");
    for c in &settled {
        assert!(c.is_prediction() && !c.is_inverted(), "{c:?}");
        // Each sheet is pushed away from the other: the upper one (now below) down.
        let away = if c.source_body == upper_id { -Vec3::Z } else { Vec3::Z };
        assert!(c.normal.distance(away) < 1e-4, "{c:?}");
        assert!((c.depth - (2.0 * e - 0.05)).abs() < 1e-4, "{c:?}");
    }
}

/// `Scene::set_inversion_handling(false)`: the crossing of `a_sheet_that_passed_through_another_is_inverted`
/// is classified by length alone, on the GPU as by the CPU twin, in a full pass and in an
/// iterative pass (the walk kernel shares the classification): no `INVERTED` contact, and the
/// normals hold each sheet on the side it reached.
#[test]
fn without_inversion_handling_a_crossing_is_classified_by_length() {
    let (e, prediction) = (0.01, 0.2);
    let lower = meshes::grid_sheet(2.0, 2.0, 16, 16);
    let above = translated(&lower, Vec3::new(0.013, 0.007, 0.05));
    let below: Vec<Vec3> = above.positions.iter().map(|p| *p - Vec3::Z * 0.1).collect();
    for iterative in [false, true] {
        let what = if iterative { "iterative" } else { "full" };
        let mut s = scenes(&[(&lower, cloth(e)), (&above, cloth(e))], prediction);
        for (scene, _) in &mut s {
            assert!(scene.inversion_handling(), "on by default");
            scene.set_inversion_handling(false);
            if iterative {
                let it = raycontact::Iterative { full_pass_every: 100, ..raycontact::Iterative::new(0.5) };
                scene.set_iterative(Some(it)).unwrap();
            }
        }
        let before = detect(what, &mut s, Pairs::Overlapping);
        assert!(!before.is_empty() && before.iter().all(|c| c.is_prediction()), "{what}");
        for (scene, ids) in &mut s {
            scene.set_positions(ids[1], &below).unwrap();
        }
        let g = s[0].0.detect(Pairs::Overlapping).unwrap();
        let c = s[1].0.detect(Pairs::Overlapping).unwrap();
        assert_eq!(g.stats.iterative, iterative, "{what}: pass kind");
        assert_eq!(c.stats.iterative, iterative, "{what}: pass kind (CPU)");
        assert_same(what, &g.contacts, &c.contacts);
        assert!(
            g.contacts.len() >= before.len() - 40,
            "{what}: {} after, {} before",
            g.contacts.len(),
            before.len()
        );
        let upper_id = s[0].1[1];
        for c in &g.contacts {
            assert!(c.is_prediction() && !c.is_inverted(), "{what}: {c:?}");
            let away = if c.source_body == upper_id { -Vec3::Z } else { Vec3::Z };
            assert!(c.normal.distance(away) < 1e-4, "{what}: {c:?}");
            assert!((c.depth - (2.0 * e - 0.05)).abs() < 1e-4, "{what}: {c:?}");
        }
        // Switched back on, the same crossing (one frame later, so none) and a new one are seen.
        for (scene, ids) in &mut s {
            scene.set_inversion_handling(true);
            scene.set_positions(ids[1], &above.positions).unwrap();
        }
        let back = detect(what, &mut s, Pairs::Overlapping);
        assert!(!back.is_empty() && back.iter().all(|c| c.is_inverted()), "{what}: inversions on again");
    }
}

#[test]
fn a_cloth_vertex_inside_a_body_keeps_only_its_shorter_ray() {
    let e = 0.01;
    let cube = meshes::cuboid(Vec3::new(1.0, 1.0, 0.5), 6);
    for (z, up) in [(0.3, true), (-0.35, false)] {
        let sheet = translated(&meshes::grid_sheet(1.2, 1.2, 12, 12), Vec3::new(0.011, 0.017, z));
        let mut s = scenes(&[(&cube, BodyKind::Volumetric), (&sheet, cloth(e))], 0.0);
        let found = detect(&format!("z = {z}"), &mut s, Pairs::Overlapping);
        let sheet_id = s[0].1[1];
        let mine: Vec<_> = found.iter().filter(|c| c.source_body == sheet_id).collect();
        assert_eq!(mine.len(), sheet.positions.len(), "z = {z}: one contact per sheet vertex");
        let exit = 0.5 - z.abs();
        for c in mine {
            // The sheet's normal is +z: the outward ray goes up.
            assert!(c.is_collision() && c.is_outward() == up, "z = {z}: {c:?}");
            assert!(c.normal.distance(if up { Vec3::Z } else { -Vec3::Z }) < 1e-4, "{c:?}");
            assert!((c.ray_length - exit).abs() < 1e-4 && (c.depth - (exit + e)).abs() < 1e-4, "{c:?}");
        }
    }
}

/// A cloth vertex's two rays walked together (`Tuning::line_walks`: the GPU tuning) and one by
/// one (the software tuning) give the same contacts, the CPU twin's: every cloth case (cloth ->
/// volumetric with vertices inside and outside the body, cloth -> cloth within the thickness and
/// within the prediction distance, a cloth against itself), then a frame in which one sheet has
/// passed through the other (inversions).
#[test]
fn cloth_rays_walked_together_or_one_by_one_give_the_same_contacts() {
    use raycontact_tests::other_tuning_ctx;
    let e = 0.01;
    let ball = meshes::icosphere(1.0, 4);
    let lower = translated(&meshes::grid_sheet(3.0, 3.0, 30, 30), Vec3::new(0.011, 0.013, 0.3));
    let upper = translated(&meshes::grid_sheet(2.0, 2.0, 24, 24), Vec3::new(0.017, 0.005, 0.33));
    let strip = translated(&folded_strip(1.5, 0.01), Vec3::new(-0.4, 0.2, 1.2));
    let bodies =
        [(&ball, BodyKind::Volumetric), (&lower, cloth(e)), (&upper, cloth(0.015)), (&strip, cloth(e))];
    let contexts = [ctx(), other_tuning_ctx()];
    assert_ne!(contexts[0].tuning().line_walks, contexts[1].tuning().line_walks);
    let mut scenes: Vec<(Scene, Vec<BodyId>)> = contexts
        .iter()
        .map(|c| Some(*c))
        .chain([None])
        .map(|c| {
            let mut s = match c {
                Some(c) => Scene::new(c),
                None => Scene::new_cpu(None).unwrap(),
            };
            s.set_prediction_distance(0.05).unwrap();
            let ids =
                bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
            (s, ids)
        })
        .collect();
    // The upper sheet 0.05 lower in the second frame: through the lower one.
    let passed: Vec<Vec3> = upper.positions.iter().map(|p| *p - Vec3::new(0.0, 0.0, 0.05)).collect();
    for frame in 0..2 {
        if frame == 1 {
            for (s, ids) in &mut scenes {
                s.set_positions(ids[2], &passed).unwrap();
            }
        }
        let found: Vec<Vec<Contact>> =
            scenes.iter_mut().map(|(s, _)| s.detect(Pairs::Overlapping).unwrap().contacts).collect();
        for (k, c) in contexts.iter().enumerate() {
            assert_same(&format!("frame {frame}, {:?}", c.tuning()), &found[k], &found[2]);
        }
        let count = |f: &dyn Fn(&Contact) -> bool| found[2].iter().filter(|c| f(c)).count();
        let (ball_id, strip_id) = (scenes[2].1[0], scenes[2].1[3]);
        assert!(count(&|c| c.target_body == ball_id && c.is_collision()) > 50, "cloth -> volumetric");
        let between = |c: &Contact| {
            c.source_body != c.target_body && c.source_body != ball_id && c.target_body != ball_id
        };
        assert!(count(&|c| c.source_body == strip_id && c.target_body == strip_id) > 50, "self");
        if frame == 0 {
            assert!(count(&|c| between(c) && c.is_prediction()) > 500, "cloth -> cloth predictions");
        } else {
            assert!(count(&|c| between(c) && c.is_inverted()) > 500, "cloth -> cloth inversions");
        }
    }
}

/// A cloth vertex's two rays walked together through a tree deep enough to overflow the short
/// stack: 2^18 nested triangles stacked in z over a sheet (`stacked_triangles`, as in `rays.rs`'s
/// `short_stack_overflow_falls_back_without_missing_hits`). The sheet's outward rays reach the
/// bottom triangle, 19 levels deep, and the line walk finishes both rays with the stackless walk
/// (checked on its twin) and finds each ray's own closest hit; the GPU tuning's kernels (the
/// rays together) give the CPU's contacts.
#[test]
fn a_line_walk_whose_short_stack_overflows_finds_both_hits() {
    use raycontact::internals::cpu;
    use raycontact::internals::layout::{NONE, Ray as LayoutRay};
    use raycontact_tests::other_tuning_ctx;
    let stack = raycontact_tests::stacked_triangles(18);
    let sheet = translated(&meshes::grid_sheet(0.6, 0.6, 4, 4), Vec3::new(0.013, 0.021, -0.01));
    let bodies = [(&stack, BodyKind::Volumetric), (&sheet, cloth(0.02))];
    let scene = |c: Option<&raycontact::GpuContext>| {
        let mut s = match c {
            Some(c) => Scene::new(c),
            None => Scene::new_cpu(None).unwrap(),
        };
        let ids: Vec<BodyId> =
            bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
        (s, ids)
    };
    // The twin: each sheet vertex's two rays along +z through the stack's tree.
    let (mut cpu_scene, ids) = scene(None);
    cpu_scene.update().unwrap();
    let frame = cpu_scene.frame_data().unwrap();
    let packing = cpu_scene.packing();
    let b = packing.index_of(ids[0]).unwrap();
    let (body, nodes) = (&packing.bodies[b], frame.body_nodes(packing, b));
    let positions = cpu_scene.positions(ids[0]).unwrap().to_vec();
    let mut all = positions.clone();
    all.extend(cpu_scene.positions(ids[1]).unwrap());
    for (i, p) in sheet.positions.iter().enumerate() {
        let ray = LayoutRay { origin: *p, tmin: 0.0, dir: -Vec3::Z, tmax: f32::INFINITY };
        let back = LayoutRay { dir: Vec3::Z, ..ray };
        let [down, up] =
            cpu::closest_hits_line_binary(body, nodes, &all, &packing.triangles, &ray, NONE, &[]);
        let want =
            [ray, back].map(|r| cpu::closest_hit(body, nodes, &all, &packing.triangles, &r, NONE, &[]));
        assert_eq!((down.triangle, up.triangle), (want[0].triangle, want[1].triangle), "vertex {i}");
        assert_eq!((down.t.to_bits(), up.t.to_bits()), (want[0].t.to_bits(), want[1].t.to_bits()));
        assert!(up.triangle == 0 && down.triangle == NONE, "vertex {i}: {up:?} {down:?}");
        assert_eq!((down.fallback, up.fallback), (1, 1), "vertex {i}: the short stack overflows");
    }
    // The kernels with the rays together against the CPU backend.
    let line_ctx = if ctx().tuning().line_walks { ctx() } else { other_tuning_ctx() };
    let (mut gpu_scene, gpu_ids) = scene(Some(line_ctx));
    let pairs = [(gpu_ids[1], gpu_ids[0])];
    let g = gpu_scene.detect(Pairs::List(&pairs)).unwrap().contacts;
    let c = cpu_scene.detect(Pairs::List(&[(ids[1], ids[0])])).unwrap().contacts;
    assert_same("stacked triangles over a sheet", &g, &c);
    assert_eq!(c.iter().filter(|c| c.source_body == ids[1]).count(), sheet.positions.len(), "{c:?}");
}
