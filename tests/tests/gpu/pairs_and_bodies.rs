//! Pair lists and bodies at the edges of the rules, GPU against the CPU backend and the
//! analytic expectation: per-pair prediction distances (`Pairs::WithDistance`), an empty pair
//! list, one-triangle bodies, bodies whose triangles are all degenerate, and static bodies.

use glam::{Affine3A, Vec3};
use raycontact::internals::layout::{
    SHORT_KEY_TILES, SHORT_SORT_PASSES, SORT_PASSES, TILE, TINY_KEY_TRIANGLES, TINY_SORT_PASSES,
};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, Contact, Contacts, Pairs, Scene};
use raycontact_tests::{assert_unique_keys, ctx, grouped, key_surplus};

const VOLUME: BodyKind = BodyKind::Volumetric;

/// The same bodies in a GPU scene and a CPU-backend scene.
fn both(bodies: &[(&TriMesh, BodyKind)]) -> [(Scene, Vec<BodyId>); 2] {
    [true, false].map(|gpu| {
        let mut s = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
        let ids = bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
        (s, ids)
    })
}

/// GPU and CPU detections agree: pair count, keys as multisets (each at most once), flags,
/// and floats within 1e-4; the triangle too, but for a ray through an edge or a vertex (the
/// GPU's normals differ from the CPU's by up to 1e-5), where the depth must then agree.
fn assert_twins(what: &str, g: &Contacts, c: &Contacts) {
    assert_eq!(g.pairs, c.pairs, "{what}: pairs");
    assert_unique_keys(&format!("{what} (GPU)"), &g.contacts);
    assert_unique_keys(&format!("{what} (CPU)"), &c.contacts);
    assert_eq!(key_surplus(&g.contacts, &c.contacts), (vec![], vec![]), "{what}: contact keys");
    assert_eq!(g.contacts.len(), c.contacts.len(), "{what}: contact counts");
    let cc = grouped(&c.contacts);
    for (k, gg) in grouped(&g.contacts) {
        let (a, b) = (gg[0], cc[&k][0]);
        assert_eq!(a.flags, b.flags, "{what}: {k:?}");
        assert!(
            a.target_triangle == b.target_triangle || (a.depth - b.depth).abs() < 1e-5,
            "{what}: {k:?}: {a:?} vs {b:?}"
        );
        assert!(
            (a.depth - b.depth).abs() < 1e-4 && a.normal.distance(b.normal) < 1e-4,
            "{what}: {a:?} vs {b:?}"
        );
    }
}

/// One detection on both backends, checked against each other; the GPU's result.
fn detect(what: &str, s: &mut [(Scene, Vec<BodyId>); 2], pairs: Pairs<'_>) -> Contacts {
    let g = s[0].0.detect(pairs).unwrap();
    let c = s[1].0.detect(pairs).unwrap();
    assert_twins(what, &g, &c);
    g
}

fn big_box() -> TriMesh {
    meshes::cuboid(Vec3::ONE, 4)
}

/// A box of half-size 0.1 whose face towards the big box lies at x = `face` (0.013 and 0.007
/// off the big box's lattice in y and z).
fn small_box(face: f32, side: f32) -> TriMesh {
    let centre = Vec3::new(side * (face.abs() + 0.1), 0.013, 0.007);
    meshes::cuboid(Vec3::splat(0.1), 2).transformed(Affine3A::from_translation(centre))
}

#[test]
fn per_pair_prediction_distances_predict_only_where_positive() {
    // Two small boxes 0.02 outside the big box's faces x = 1 and x = -1. With a distance of
    // 0.1 for (big, right) and 0 for (big, left): the right pair's facing vertices (9 of the
    // small box's face, the big box's (1, 0, 0)) are predictions of depth -0.02; the left pair
    // has none; the scene's own prediction distance (0) plays no part.
    let (big, right, left) = (big_box(), small_box(1.02, 1.0), small_box(1.02, -1.0));
    let mut s = both(&[(&big, VOLUME), (&right, VOLUME), (&left, VOLUME)]);
    let ids = s[0].1.clone();
    let list = [(ids[0], ids[1], 0.1), (ids[0], ids[2], 0.0)];
    let found = detect("with distance", &mut s, Pairs::WithDistance(&list));
    assert_eq!(found.pairs, 2);
    assert_eq!(found.contacts.len(), 10, "{:?}", found.contacts);
    for c in &found.contacts {
        assert!(c.is_prediction() && c.is_outward(), "{c:?}");
        assert!(c.source_body != ids[2] && c.target_body != ids[2], "the pair with distance 0: {c:?}");
        assert!((c.depth + 0.02).abs() < 1e-5, "{c:?}");
        let away = if c.source_body == ids[1] { Vec3::X } else { -Vec3::X };
        assert!(c.normal.distance(away) < 1e-5, "{c:?}");
    }
    // Both distances 0: nothing, as the list with the scene's distance 0; both 0.1: both
    // sides, mirrored.
    let zero = [(ids[0], ids[1], 0.0), (ids[0], ids[2], 0.0)];
    assert!(detect("zero", &mut s, Pairs::WithDistance(&zero)).contacts.is_empty());
    assert!(detect("list", &mut s, Pairs::List(&[(ids[0], ids[1]), (ids[0], ids[2])])).contacts.is_empty());
    let far = [(ids[0], ids[1], 0.1), (ids[0], ids[2], 0.1)];
    let all = detect("both 0.1", &mut s, Pairs::WithDistance(&far));
    assert_eq!(all.contacts.len(), 20);
    assert_eq!(
        all.contacts.iter().filter(|c| c.source_body == ids[2] || c.target_body == ids[2]).count(),
        10
    );
}

#[test]
fn an_empty_pair_list_finds_nothing() {
    let ball = meshes::icosphere(1.0, 3);
    let moved = ball.transformed(Affine3A::from_translation(Vec3::new(1.0, 0.13, 0.07)));
    let mut s = both(&[(&ball, VOLUME), (&moved, VOLUME)]);
    for round in 0..2 {
        let empty = detect("empty list", &mut s, Pairs::List(&[]));
        assert!(empty.contacts.is_empty() && empty.pairs == 0, "round {round}: {empty:?}");
        let empty = detect("empty distances", &mut s, Pairs::WithDistance(&[]));
        assert!(empty.contacts.is_empty() && empty.pairs == 0, "round {round}");
        // The scene is unharmed: the overlapping pair is found next.
        let found = detect("overlapping", &mut s, Pairs::Overlapping);
        assert_eq!(found.pairs, 1);
        assert!(found.contacts.len() > 20, "round {round}: {} contacts", found.contacts.len());
    }
}

/// One triangle over (-0.3, -0.3) .. (0.4, 0.4) at height `z`, facing +z.
fn one_triangle(z: f32) -> TriMesh {
    TriMesh {
        positions: vec![Vec3::new(-0.3, -0.3, z), Vec3::new(0.4, -0.2, z), Vec3::new(0.0, 0.4, z)],
        triangles: vec![[0, 1, 2]],
    }
}

#[test]
fn a_one_triangle_cloth_rests_on_a_box() {
    // A single-triangle cloth 0.01 over the box top, half-thickness 0.02: its 3 vertices
    // collide with depth e - h = 0.01 (pushed up), and the box's top vertex (0, 0, 1) under
    // it collides (pushed down). Its self pair finds nothing.
    let (e, h) = (0.02, 0.01);
    let (big, tri) = (big_box(), one_triangle(1.0 + h));
    let mut s = both(&[(&big, VOLUME), (&tri, BodyKind::Cloth { half_thickness: e })]);
    let ids = s[0].1.clone();
    let found = detect("one-triangle cloth", &mut s, Pairs::Overlapping);
    assert_eq!(found.pairs, 2, "the pair and the cloth's self pair");
    let mut sources: Vec<(u32, u32)> =
        found.contacts.iter().map(|c| (c.source_body.index(), c.source_vertex)).collect();
    sources.sort();
    let top = big.positions.iter().position(|p| *p == Vec3::Z).unwrap() as u32;
    assert_eq!(sources, [(0, top), (1, 0), (1, 1), (1, 2)]);
    for c in &found.contacts {
        assert!(c.is_collision(), "{c:?}");
        assert!((c.depth - (e - h)).abs() < 1e-5, "{c:?}");
        let up = if c.source_body == ids[1] { Vec3::Z } else { -Vec3::Z };
        assert!(c.normal.distance(up) < 1e-5, "{c:?}");
    }
    assert!(detect("self pair", &mut s, Pairs::List(&[(ids[1], ids[1])])).contacts.is_empty());
}

#[test]
fn a_one_triangle_volumetric_body_goes_through_detection() {
    // Not a closed surface, but the rules apply: its vertices inside the box cast their
    // inward rays (no own triangle to leave first). Whatever they give, both backends agree.
    let big = big_box();
    let mut tilted = one_triangle(0.0);
    tilted.positions = tilted.positions.iter().map(|p| Vec3::new(p.x + 1.0, p.y, p.x * 0.5 + 0.8)).collect();
    let mut s = both(&[(&big, VOLUME), (&tilted, VOLUME)]);
    let found = detect("one-triangle body", &mut s, Pairs::Overlapping);
    assert_eq!(found.pairs, 1);
    let ids = s[0].1.clone();
    detect("self pair", &mut s, Pairs::List(&[(ids[1], ids[1])]));
    s[0].0.set_self_collision(raycontact::SelfCollision::All);
    s[1].0.set_self_collision(raycontact::SelfCollision::All);
    detect("all self pairs", &mut s, Pairs::Overlapping);
}

/// A body whose triangles are all degenerate: points along a line through the scene, each
/// triangle three consecutive (collinear) points, one repeated index too.
fn degenerate_line() -> TriMesh {
    let positions: Vec<Vec3> = (0..12).map(|i| Vec3::new(-1.5 + 0.25 * i as f32, 0.1, 0.05)).collect();
    let mut triangles: Vec<[u32; 3]> = (0..10).map(|i| [i, i + 1, i + 2]).collect();
    triangles.push([3, 3, 4]);
    TriMesh { positions, triangles }
}

#[test]
fn a_body_of_degenerate_triangles_has_no_contacts_and_changes_nothing() {
    let a = meshes::icosphere(1.0, 3);
    let b = a.transformed(Affine3A::from_translation(Vec3::new(1.2, 0.2, 0.0)));
    let line = degenerate_line();
    let mut plain = both(&[(&a, VOLUME), (&b, VOLUME)]);
    let expected = detect("two spheres", &mut plain, Pairs::Overlapping);
    for kind in [VOLUME, BodyKind::Cloth { half_thickness: 0.05 }] {
        // The line runs through both spheres; it is added last, so the spheres keep their ids.
        let mut s = both(&[(&a, VOLUME), (&b, VOLUME), (&line, kind)]);
        let ids = s[0].1.clone();
        let found = detect(&format!("{kind:?}"), &mut s, Pairs::Overlapping);
        assert_eq!(found.pairs, expected.pairs, "{kind:?}: a body without leaves has no box to pair");
        assert_eq!(strip(&found.contacts), strip(&expected.contacts), "{kind:?}: the spheres' contacts");
        let named = [(ids[0], ids[2]), (ids[2], ids[1]), (ids[2], ids[2])];
        let listed = detect(&format!("{kind:?}, listed"), &mut s, Pairs::List(&named));
        assert_eq!(listed.pairs, 3);
        assert!(listed.contacts.is_empty(), "{kind:?}: {:?}", listed.contacts);
        for (scene, ids) in &mut s {
            let state = scene.body_state(ids[2]).unwrap();
            assert_eq!(state.degenerate_count as usize, line.triangles.len(), "{kind:?}");
            assert_eq!(state.leaf_count, 0);
        }
    }
}

/// Each contact's identity, triangle and flags: what a body without leaves must not change.
fn strip(cs: &[Contact]) -> Vec<(u32, u32, u32, u32, raycontact::ContactFlags)> {
    cs.iter()
        .map(|c| (c.source_body.index(), c.source_vertex, c.target_body.index(), c.target_triangle, c.flags))
        .collect()
}

/// A row of `count` balls, each overlapping its neighbours (with one cloth in every seventh
/// place, so that every pair case occurs).
fn row_of_balls(count: usize) -> Vec<(TriMesh, BodyKind)> {
    (0..count)
        .map(|i| {
            let at = Affine3A::from_translation(Vec3::new(0.5 * i as f32, 0.01 * (i % 3) as f32, 0.0));
            let kind = if i % 7 == 3 { BodyKind::Cloth { half_thickness: 0.01 } } else { VOLUME };
            (meshes::icosphere(0.3, 1).transformed(at), kind)
        })
        .collect()
}

/// The broad phase on either side of `BROAD_IN_TILES_BODIES` (64): up to there `pair_tiles`
/// runs it in its one workgroup and `broad_phase` is not dispatched, beyond it `broad_phase`
/// runs as a dispatch of its own. The same pairs and contacts as the CPU backend either way,
/// and one dispatch fewer for the smaller scene.
#[test]
fn the_broad_phase_in_pair_tiles_and_in_its_own_dispatch_find_the_same_pairs() {
    let mut dispatches = Vec::new();
    for count in [64, 65] {
        let balls = row_of_balls(count);
        let bodies: Vec<(&TriMesh, BodyKind)> = balls.iter().map(|(m, k)| (m, *k)).collect();
        let mut s = both(&bodies);
        s[0].0.set_prediction_distance(0.05).unwrap();
        s[1].0.set_prediction_distance(0.05).unwrap();
        let found = detect(&format!("{count} balls"), &mut s, Pairs::Overlapping);
        // Neighbours, and each cloth with itself.
        let cloths = (0..count).filter(|i| i % 7 == 3).count();
        assert_eq!(found.pairs as usize, count - 1 + cloths, "{count} balls: neighbours only");
        assert!(found.contacts.len() > count, "{count} balls: {} contacts", found.contacts.len());
        dispatches.push(found.stats.get(raycontact::Stage::Pairs).map_or(0, |s| s.dispatches));
    }
    // pair_tiles, ray_sources, source_args; broad_phase before them beyond 64 bodies.
    assert_eq!(dispatches, [3, 4], "broad_phase dispatched beyond 64 bodies only");
}

/// Static bodies (`Scene::set_static`) on either side of `BROAD_IN_TILES_BODIES`: the broad
/// phase pairs no two of them (nor a static cloth with itself), the GPU as the CPU backend; a
/// listed pair of two static bodies is still tested, and unmarking one pairs it again.
#[test]
fn static_bodies_are_paired_only_with_moving_ones() {
    for count in [64, 65] {
        let balls = row_of_balls(count);
        let bodies: Vec<(&TriMesh, BodyKind)> = balls.iter().map(|(m, k)| (m, *k)).collect();
        let mut s = both(&bodies);
        // The first half static: its neighbour pairs and its cloths' self pairs go.
        let half = count / 2;
        for (scene, ids) in &mut s {
            scene.set_prediction_distance(0.05).unwrap();
            for &id in &ids[..half] {
                scene.set_static(id, true).unwrap();
            }
            assert!(scene.is_static(ids[0]).unwrap() && !scene.is_static(ids[half]).unwrap());
        }
        let what = format!("{count} balls, {half} static");
        let found = detect(&what, &mut s, Pairs::Overlapping);
        let moving_cloths = (half..count).filter(|i| i % 7 == 3).count();
        assert_eq!(found.pairs as usize, count - half + moving_cloths, "{what}: pairs");
        let ids = s[0].1.clone();
        let fixed = |b: BodyId| ids[..half].contains(&b);
        assert!(
            found.contacts.iter().all(|c| !(fixed(c.source_body) && fixed(c.target_body))),
            "{what}: a contact between two static bodies"
        );
        assert!(found.contacts.iter().any(|c| fixed(c.source_body) || fixed(c.target_body)));
        // Listed, two static neighbours are tested.
        let listed = [(ids[0], ids[1])];
        let found = detect(&format!("{what}, listed"), &mut s, Pairs::List(&listed));
        assert_eq!(found.pairs, 1, "{what}: the listed pair");
        assert!(!found.contacts.is_empty(), "{what}: the listed static pair's contacts");
        // Unmarked, ball 0 pairs with ball 1 again.
        for (scene, ids) in &mut s {
            scene.set_static(ids[0], false).unwrap();
        }
        let found = detect(&format!("{what}, ball 0 moving"), &mut s, Pairs::Overlapping);
        assert_eq!(found.pairs as usize, count - half + 1 + moving_cloths, "{what}: ball 0 moving");
    }
}

/// `ray_sources` on both tunings (16 source vertices per invocation on a software adapter, one
/// on a GPU; `pair_tiles` lays its workgroups out to match): the same contacts as the CPU
/// backend, with a source body that spans several workgroups of either (10,242 vertices: three
/// of 4,096, forty-one of 256) against smaller ones, a cloth among them, every direction.
#[test]
fn ray_sources_on_both_tunings_lists_the_same_vertices() {
    use raycontact_tests::other_tuning_ctx;
    let big = meshes::icosphere(1.0, 5);
    // Off the big sphere's lattice (no ray through a vertex or an edge of the other body).
    let small = |at: Vec3| {
        let turn = glam::Quat::from_euler(glam::EulerRot::XYZ, 0.31, 0.17, 0.23);
        meshes::icosphere(0.3, 2).transformed(Affine3A::from_rotation_translation(turn, at))
    };
    let (a, b, c) = (
        small(Vec3::new(1.1, 0.013, 0.007)),
        small(Vec3::new(-0.8, 0.61, 0.011)),
        small(Vec3::new(0.017, -1.2, 0.009)),
    );
    let bodies = [(&big, VOLUME), (&a, VOLUME), (&b, BodyKind::Cloth { half_thickness: 0.01 }), (&c, VOLUME)];
    assert!(big.positions.len() > 2 * 4096, "{} vertices", big.positions.len());
    let mut cpu = Scene::new_cpu(None).unwrap();
    for (m, k) in bodies {
        cpu.add_body(&m.positions, &m.triangles, k).unwrap();
    }
    cpu.set_prediction_distance(0.05).unwrap();
    let want = cpu.detect(Pairs::Overlapping).unwrap();
    assert!(want.contacts.len() > 200, "{} contacts", want.contacts.len());
    for (name, context) in [("this tuning", ctx()), ("the other tuning", other_tuning_ctx())] {
        let mut gpu = Scene::new(context);
        for (m, k) in bodies {
            gpu.add_body(&m.positions, &m.triangles, k).unwrap();
        }
        gpu.set_prediction_distance(0.05).unwrap();
        let got = gpu.detect(Pairs::Overlapping).unwrap();
        assert_twins(&format!("{name} ({:?})", context.tuning()), &got, &want);
    }
}

/// The frame's sort is one dispatch, which sorts each body's keys whole in its workgroup, when
/// no body has more than `TILE` (4096) triangles and there are at most
/// `Tuning::whole_sort_tiles` of them; else one dispatch a pass: four passes of tiny keys
/// (`TINY_SORT_PASSES`, bodies of at most `TINY_KEY_TRIANGLES` triangles), six of short keys
/// (`SHORT_SORT_PASSES`, bodies of at most `SHORT_KEY_TILES` tiles), eight where a body has
/// more. The same contacts as the CPU backend in every case, with either tuning.
#[test]
fn a_sort_of_bodies_of_one_tile_is_one_dispatch() {
    let mut with_large = row_of_balls(3);
    // 5120 triangles: two tiles.
    with_large.push((
        meshes::icosphere(0.3, 4).transformed(Affine3A::from_translation(Vec3::new(1.23, 0.011, 0.007))),
        VOLUME,
    ));
    let mut with_larger = row_of_balls(3);
    // 81,920 triangles: 20 tiles, more than SHORT_KEY_TILES.
    with_larger.push((
        meshes::icosphere(0.3, 6).transformed(Affine3A::from_translation(Vec3::new(1.23, 0.011, 0.007))),
        VOLUME,
    ));
    for gpu in [ctx(), raycontact_tests::other_tuning_ctx()] {
        let limit = gpu.tuning().whole_sort_tiles;
        for (what, balls) in [
            ("3 balls", row_of_balls(3)),
            ("6 balls", row_of_balls(6)),
            // One tile each, more of them than the software tuning sorts in one dispatch.
            ("20 balls", row_of_balls(20)),
            ("3 balls and a large one", with_large.clone()),
            ("3 balls and a larger one", with_larger.clone()),
        ] {
            let bodies: Vec<(&TriMesh, BodyKind)> = balls.iter().map(|(m, k)| (m, *k)).collect();
            let mut s = [Scene::new(gpu), Scene::new_cpu(None).unwrap()].map(|mut s| {
                for (m, k) in &bodies {
                    s.add_body(&m.positions, &m.triangles, *k).unwrap();
                }
                s.set_prediction_distance(0.05).unwrap();
                s
            });
            let g = s[0].detect(Pairs::Overlapping).unwrap();
            let c = s[1].detect(Pairs::Overlapping).unwrap();
            let what = format!("{what}, {:?}", gpu.tuning());
            assert_twins(&what, &g, &c);
            assert!(!g.contacts.is_empty(), "{what}: contacts");
            let body_tiles: Vec<u32> =
                bodies.iter().map(|(m, _)| m.triangles.len().div_ceil(TILE as usize) as u32).collect();
            let tiles: u32 = body_tiles.iter().sum();
            let one_tile_each = body_tiles.iter().all(|&t| t <= 1);
            let tiny = bodies.iter().all(|(m, _)| m.triangles.len() <= TINY_KEY_TRIANGLES as usize);
            let short = body_tiles.iter().all(|&t| t <= SHORT_KEY_TILES);
            let expected = match (one_tile_each && tiles <= limit, tiny, short) {
                (true, _, _) => 1,
                (false, true, _) => TINY_SORT_PASSES,
                (false, false, true) => SHORT_SORT_PASSES,
                (false, false, false) => SORT_PASSES,
            };
            assert_eq!(g.stats.get(raycontact::Stage::Sort).map_or(0, |s| s.dispatches), expected, "{what}");
        }
    }
}
