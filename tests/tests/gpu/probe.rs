//! The probe of every ray that is classified by its re-projected length L = t |cos α|: a hit
//! counts when its L is within the limit (a thickness or the prediction distance); a hit within
//! the pair's reach r along the ray (t <= r, the length of the paper's rays) as it is, a hit
//! beyond it only when the straight ray from the vertex towards the hit triangle's plane (up to
//! r) hits the body, and then by that ray's hit (issue 12, item 6: a slanted vertex within the
//! thickness is found; issue 11, item 3: a grazing hit far away, with a tiny L, is not).
//! Slanted rays from a pyramid's apex and from the vertices of a sphere lying across a plane,
//! for volumetric → cloth, cloth → cloth and volumetric → volumetric (predictions), the straight
//! ray's own triangle, and a cloth vertex grazing a ball; GPU = CPU twin, and the analytic depth
//! and class.

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, Contact, ContactFlags, Pairs, Scene};
use raycontact_tests::{assert_unique_keys, ctx, grouped, key_surplus};

/// The sheet's half-thickness.
const EB: f32 = 0.05;
/// The source cloth's half-thickness.
const EA: f32 = 0.02;
/// The prediction distance of the volumetric pair.
const D: f32 = 0.1;

fn cloth(e: f32) -> BodyKind {
    BodyKind::Cloth { half_thickness: e }
}

/// What the source is tested against: a cloth sheet in z = 0 (normal +z), or a volumetric box
/// whose top face is z = 0, with the pair's prediction distance and the limit on L.
#[derive(Clone, Copy, Debug)]
enum Target {
    Sheet,
    Box,
}

fn target_mesh(t: Target) -> (TriMesh, BodyKind) {
    match t {
        Target::Sheet => (meshes::grid_sheet(16.0, 16.0, 32, 32), cloth(EB)),
        Target::Box => (
            meshes::cuboid(Vec3::new(8.0, 8.0, 1.0), 16)
                .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, -1.0))),
            BodyKind::Volumetric,
        ),
    }
}

/// The pair's reach max(d, e_A + e_B): how far along the ray a hit counts.
fn reach(source: BodyKind, target: Target) -> f32 {
    let ea = match source {
        BodyKind::Cloth { half_thickness } => half_thickness,
        _ => 0.0,
    };
    match target {
        Target::Sheet => ea + EB,
        Target::Box => D.max(ea),
    }
}

/// The contact's class and depth for a source vertex at L from the plane, for a source of this
/// kind against this target: (flag, touch distance the depth is measured from), or None when
/// L is beyond the limit.
fn expected(source: BodyKind, target: Target, l: f32) -> Option<(ContactFlags, f32)> {
    let ea = match source {
        BodyKind::Cloth { half_thickness } => half_thickness,
        _ => 0.0,
    };
    match target {
        Target::Sheet if l < ea + EB => Some((ContactFlags::COLLISION, ea + EB)),
        Target::Box if l < D => Some((ContactFlags::PREDICTION, 0.0)),
        _ => None,
    }
}

/// The source and the target on both backends; one detection of the pair source → target.
fn detect_both(source: &TriMesh, kind: BodyKind, target: Target) -> Vec<Contact> {
    let (tm, tk) = target_mesh(target);
    let prediction = if matches!(target, Target::Box) { D } else { 0.0 };
    let [g, c] = [true, false].map(|gpu| {
        let mut s = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
        let a = s.add_body(&source.positions, &source.triangles, kind).unwrap();
        let b = s.add_body(&tm.positions, &tm.triangles, tk).unwrap();
        let pairs: [(BodyId, BodyId, f32); 1] = [(a, b, prediction)];
        let found = s.detect(Pairs::WithDistance(&pairs)).unwrap().contacts;
        found.into_iter().filter(|c| c.source_body == a).collect::<Vec<_>>()
    });
    assert_same(&format!("{kind:?} → {target:?}"), &g, &c);
    g
}

/// GPU and CPU contacts are the same multiset: the same keys, flags and triangles, and floats
/// within 1e-5 (the ray–triangle arithmetic differs by an ulp between lavapipe and the CPU;
/// the classification adds no operation of its own).
fn assert_same(what: &str, gpu: &[Contact], cpu: &[Contact]) {
    assert_unique_keys(&format!("{what} (GPU)"), gpu);
    assert_unique_keys(&format!("{what} (CPU)"), cpu);
    assert_eq!(key_surplus(gpu, cpu), (vec![], vec![]), "{what}: contact keys");
    let c = grouped(cpu);
    for (k, g) in grouped(gpu) {
        let (x, y) = (g[0], c[&k][0]);
        assert_eq!(
            (x.flags, x.target_triangle),
            (y.flags, y.target_triangle),
            "{what}: {k:?}: {x:?} vs {y:?}"
        );
        let floats = |c: &Contact| {
            let mut v = vec![c.depth, c.weight, c.ray_length, c.barycentric.x, c.barycentric.y];
            for p in [c.normal, c.source_point, c.target_point] {
                v.extend(p.to_array());
            }
            v
        };
        for (a, b) in floats(x).into_iter().zip(floats(y)) {
            assert!((a - b).abs() <= 1e-5 * a.abs().max(1.0), "{what}: {k:?}: GPU {x:?} vs CPU {y:?}");
        }
    }
}

/// A closed square pyramid with its apex (vertex 0) at the origin and its axis along `axis`
/// (unit): base half-size 0.1 at distance 1 behind the apex. By symmetry the apex's normal is
/// `axis`.
fn pyramid(axis: Vec3) -> TriMesh {
    let s = 0.1;
    let positions = vec![
        Vec3::ZERO,
        Vec3::new(s, s, -1.0),
        Vec3::new(-s, s, -1.0),
        Vec3::new(-s, -s, -1.0),
        Vec3::new(s, -s, -1.0),
    ];
    let triangles = vec![[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1], [1, 4, 3], [1, 3, 2]];
    let m = TriMesh { positions, triangles };
    assert!(m.signed_volume() > 0.0, "the pyramid is outward-oriented");
    m.transformed(Affine3A::from_quat(Quat::from_rotation_arc(Vec3::Z, axis)))
}

/// The apex's contact with the plane, for a source vertex at height `h` whose ray to the
/// plane is slanted `angle`: one contact, outward, of the expected class and depth; made from
/// the slanted ray itself when its hit lies within the reach (t <= r), else from the straight
/// ray towards the plane (t = L = h, cos α = 1). Returns it.
fn apex_contact(found: &[Contact], kind: BodyKind, target: Target, h: f32, angle: f32) -> Contact {
    let what = format!("{kind:?} → {target:?} at h = {h}, {}°", angle.to_degrees());
    let at_apex: Vec<_> = found.iter().filter(|c| c.source_vertex == 0).collect();
    let (flag, touch) = expected(kind, target, h).unwrap();
    assert_eq!(at_apex.len(), 1, "{what}: one contact at the apex: {found:?}");
    let c = *at_apex[0];
    assert_eq!(c.flags, flag | ContactFlags::OUTWARD_RAY, "{what}: {c:?}");
    let (t, cos) =
        if h / angle.cos() <= reach(kind, target) { (h / angle.cos(), angle.cos()) } else { (h, 1.0) };
    assert!((c.ray_length - t).abs() < 1e-4, "{what}: t = {}, expected {t}", c.ray_length);
    assert!((c.weight - cos).abs() < 1e-4, "{what}: cos α = {}, expected {cos}", c.weight);
    assert!((c.depth - (touch - h)).abs() < 1e-5, "{what}: depth {} for L = {h}", c.depth);
    assert!(c.normal.distance(Vec3::Z) < 1e-5, "{what}: normal {}", c.normal);
    c
}

/// The three pairs whose rays towards the plane are classified by L.
fn by_length_cases() -> [(BodyKind, Target); 3] {
    [(BodyKind::Volumetric, Target::Sheet), (cloth(EA), Target::Sheet), (BodyKind::Volumetric, Target::Box)]
}

#[test]
fn an_apex_slanted_80_or_85_degrees_within_the_limit_is_found_by_its_straight_ray() {
    // Issue 12, item 6: the apex at height h over the plane, its normal slanted 80° (85°) from
    // the plane's normal and pointing at it: the outward ray hits at t = h / cos α ≈ 5.76 h
    // (11.5 h) with L = h. At h = 0.03, t ≈ 0.17 (0.34) is beyond every reach (e_B = 0.05,
    // e_A + e_B = 0.07, d = 0.1) while L is within every limit: the straight ray from the apex
    // down to the plane confirms it, and the contact is made from that ray (t = L = h, cos α
    // = 1). At h = 0.008, t ≈ 0.046 (80°) is within all the reaches: the slanted ray's own
    // contact (at 85°, t ≈ 0.092 is within the box pair's only).
    // At h = 0.12, L is beyond every limit: nothing.
    for degrees in [80f32, 85.0] {
        let angle = degrees.to_radians();
        let axis = Vec3::new(angle.sin(), 0.0, -angle.cos());
        for (kind, target) in by_length_cases() {
            for h in [0.03, 0.008] {
                let mesh = pyramid(axis).transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, h)));
                assert!(h == 0.008 || h / angle.cos() > reach(kind, target));
                apex_contact(&detect_both(&mesh, kind, target), kind, target, h, angle);
            }
            let far = pyramid(axis).transformed(Affine3A::from_translation(Vec3::new(0.3, 0.2, 0.12)));
            assert!(expected(kind, target, 0.12).is_none());
            let found = detect_both(&far, kind, target);
            assert!(
                found.iter().all(|c| c.source_vertex != 0),
                "{kind:?} → {target:?}: L beyond the limit: {found:?}"
            );
        }
    }
}

#[test]
fn the_straight_ray_makes_the_contact_from_the_triangle_it_hits() {
    // The slanted ray from (0.4, 0.2, 0.03) lands 0.17 further along x, at x ≈ 0.57, in the
    // sheet's next cell (cells of 0.5 from x = -8): the straight ray, down to (0.4, 0.2), hits
    // a triangle of another cell, and the contact is made from that triangle (its barycentrics
    // put the target point right under the apex).
    let angle = 80f32.to_radians();
    let axis = Vec3::new(angle.sin(), 0.0, -angle.cos());
    let apex = Vec3::new(0.4, 0.2, 0.03);
    let slanted = apex + axis * (apex.z / angle.cos());
    let cell = |x: f32, y: f32| ((y + 8.0) / 0.5).floor() as u32 * 32 + ((x + 8.0) / 0.5).floor() as u32;
    assert_ne!(cell(slanted.x, slanted.y), cell(apex.x, apex.y));
    let mesh = pyramid(axis).transformed(Affine3A::from_translation(apex));
    for kind in [BodyKind::Volumetric, cloth(EA)] {
        let found = detect_both(&mesh, kind, Target::Sheet);
        let c = apex_contact(&found, kind, Target::Sheet, apex.z, angle);
        assert_eq!(
            c.target_triangle / 2,
            cell(apex.x, apex.y),
            "{kind:?}: the straight ray's triangle: {c:?}"
        );
        let under = apex - Vec3::Z * apex.z + c.normal * EB;
        assert!(
            c.target_point.distance(under) < 1e-5,
            "{kind:?}: target point {} vs {under}",
            c.target_point
        );
    }
}

#[test]
fn iterative_detection_walks_the_straight_ray_from_the_contacts_triangle() {
    // The confirmed contact of the test above, then the spike moved 1 cm along x and detected
    // iteratively (walks only: a walk that does not hit is dropped). The slanted ray walks from
    // the remembered triangle (the straight ray's, under the apex) to its landing in the next
    // cell, the straight ray from that same triangle: the contact again, walked, the same as
    // a full pass at the new position; GPU = CPU twin, walk counters included.
    let angle = 80f32.to_radians();
    let axis = Vec3::new(angle.sin(), 0.0, -angle.cos());
    let (sheet, sheet_kind) = target_mesh(Target::Sheet);
    let it = raycontact::Iterative {
        fallback: raycontact::WalkFallback::Drop,
        full_pass_every: 100,
        ..raycontact::Iterative::new(0.1)
    };
    let placed = |x: f32| pyramid(axis).transformed(Affine3A::from_translation(Vec3::new(x, 0.2, 0.03)));
    let [g, c, f] = [0, 1, 2].map(|i| {
        let mut s = if i == 0 { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
        if i < 2 {
            s.set_iterative(Some(it)).unwrap();
        }
        let spike = placed(0.4);
        let a = s.add_body(&spike.positions, &spike.triangles, BodyKind::Volumetric).unwrap();
        let b = s.add_body(&sheet.positions, &sheet.triangles, sheet_kind).unwrap();
        let pairs: [(BodyId, BodyId, f32); 1] = [(a, b, 0.0)];
        let first = s.detect(Pairs::WithDistance(&pairs)).unwrap();
        assert!(first.contacts.iter().any(|c| c.source_body == a && c.source_vertex == 0));
        s.set_positions(a, &placed(0.41).positions).unwrap();
        s.detect(Pairs::WithDistance(&pairs)).unwrap()
    });
    assert!(g.stats.iterative && c.stats.iterative && !f.stats.iterative);
    assert_eq!(g.stats.walk, c.stats.walk, "walk counters");
    assert_same("walked", &g.contacts, &c.contacts);
    let apex =
        |cs: &[Contact]| *cs.iter().find(|c| c.source_body.index() == 0 && c.source_vertex == 0).unwrap();
    let (w, full) = (apex(&g.contacts), apex(&f.contacts));
    assert!(w.flags.contains(ContactFlags::WALKED), "{w:?}");
    assert_eq!(w.flags, full.flags | ContactFlags::WALKED, "{w:?} vs {full:?}");
    assert_eq!(w.target_triangle, full.target_triangle);
    assert!((w.depth - full.depth).abs() < 1e-5 && (w.ray_length - 0.03).abs() < 1e-5, "{w:?}");
}

/// The area-weighted vertex normals of a mesh (the kernel's rule), in f64.
fn normals(m: &TriMesh) -> Vec<glam::DVec3> {
    let mut n = vec![glam::DVec3::ZERO; m.positions.len()];
    for t in &m.triangles {
        let [a, b, c] = t.map(|i| m.positions[i as usize].as_dvec3());
        let f = (b - a).cross(c - a);
        for i in t {
            n[*i as usize] += f;
        }
    }
    n.into_iter().map(|v| v.normalize()).collect()
}

#[test]
fn a_sphere_lying_across_the_plane_finds_every_vertex_within_the_limit() {
    // Issue 12, item 6's scan-like case: an icosphere (turned so that its vertices fall at
    // every height) whose centre is 0.2 over the plane. Every vertex within the limit of the
    // plane whose ray towards the plane lands on it must have that ray's contact with L = |z|,
    // also when the ray lands beyond the reach (t = |z| / |n_z| > r: then the straight ray's);
    // no contact is made from a hit beyond the reach.
    let sphere = meshes::icosphere(1.0, 5).transformed(Affine3A::from_rotation_translation(
        Quat::from_euler(glam::EulerRot::XYZ, 0.3, 0.7, 0.1),
        Vec3::new(0.01, -0.02, 0.2),
    ));
    let n = normals(&sphere);
    for (kind, target) in [
        (BodyKind::Volumetric, Target::Sheet),
        (cloth(EA), Target::Sheet),
        (BodyKind::Volumetric, Target::Box),
    ] {
        let what = format!("{kind:?} → {target:?}");
        let found = detect_both(&sphere, kind, target);
        let by_key = grouped(&found);
        let (mut expected_count, mut missing, mut beyond) = (0, Vec::new(), 0);
        for (v, p) in sphere.positions.iter().enumerate() {
            let z = p.z;
            // The ray towards the plane: outward when the normal points at it.
            let outward = n[v].z * f64::from(z) < 0.0;
            let is_cloth = matches!(kind, BodyKind::Cloth { .. });
            // A volumetric source classifies only its outward ray by L, and under a box top it
            // is inside the box.
            if (!outward && !is_cloth) || (!is_cloth && matches!(target, Target::Box) && z < 0.0) {
                continue;
            }
            let l = z.abs();
            // Where the ray lands on the plane: within the sheet (and the box top), well inside.
            let dir = if outward { n[v] } else { -n[v] };
            let t = -f64::from(z) / dir.z;
            let landing = p.as_dvec3() + dir * t;
            if landing.x.abs().max(landing.y.abs()) > 7.0 {
                continue;
            }
            let Some((flag, touch)) = expected(kind, target, l) else { continue };
            // Away from the thresholds by more than the float error of t |cos α|.
            if (l - touch).abs() < 1e-4 || (matches!(target, Target::Box) && (l - D).abs() < 1e-4) || l < 1e-4
            {
                continue;
            }
            expected_count += 1;
            if t > f64::from(reach(kind, target)) {
                beyond += 1;
            }
            let ray = if outward { ContactFlags::OUTWARD_RAY } else { ContactFlags::INWARD_RAY };
            let key = (0, v as u32, 1, (ray & ContactFlags::OUTWARD_RAY).bits());
            let Some(c) = by_key.get(&key).map(|g| g[0]) else {
                missing.push((v, z, n[v].z));
                continue;
            };
            assert_eq!(c.flags, flag | ray, "{what}: vertex {v} at z = {z}: {c:?}");
            assert!(
                (c.depth - (touch - l)).abs() < 2e-5,
                "{what}: vertex {v}: depth {} for L = {l}",
                c.depth
            );
            assert!((c.normal.z.abs() - 1.0).abs() < 1e-5, "{what}: vertex {v}: normal {}", c.normal);
        }
        assert!(expected_count > 20, "{what}: only {expected_count} vertices within the limit");
        assert!(beyond > 0, "{what}: no vertex's ray lands beyond the reach");
        eprintln!(
            "{what}: {expected_count} vertices within the limit, {beyond} of them hit beyond the reach"
        );
        let r = reach(kind, target);
        // (A volumetric source's inward ray is Hermann's, not classified by L.)
        let by_l = |c: &&Contact| matches!(kind, BodyKind::Cloth { .. }) || c.is_outward();
        let far: Vec<_> = found.iter().filter(by_l).filter(|c| c.ray_length > r).collect();
        assert!(far.is_empty(), "{what}: contacts beyond the reach {r}: {far:?}");
        assert!(
            missing.is_empty(),
            "{what}: {} of {expected_count} vertices within the limit have no contact (vertex, z, n_z): {missing:?}",
            missing.len()
        );
    }
}

#[test]
fn a_cloth_vertex_grazing_a_ball_far_away_is_no_collision() {
    // Issue 11, item 3 (found in `cloth_on_ball`): a cloth vertex 3.6 cm from a unit ball
    // (half-thickness 2 cm, no prediction: r = e = 2 cm), its normal nearly tangent to the
    // ball. Its outward ray enters the ball's outside at t ≈ 0.2 with |cos α| ≈ 0.09, so L ≈
    // 0.018 < e: classified by L alone, a collision with a ball 3.6 cm away. The straight ray
    // towards that triangle's plane (up to 2 cm) misses the ball: nothing. The vertex is the apex of a pyramid whose normal is that
    // direction (a cloth of any shape will do); the ray passes 5 mm inside the ball's surface
    // at its closest, deeper than the tessellation's sagitta, so that it surely hits.
    let e = 0.02;
    let ball = meshes::icosphere(1.0, 4);
    let dir = Vec3::new(0.01, 1.0, 0.0).normalize();
    let closest = Vec3::new(0.995, 0.0, 0.0);
    let apex = closest - 0.3 * dir;
    let gap = apex.length() - 1.0;
    assert!(gap > 0.03, "the vertex is {gap} from the ball");
    let cone = pyramid(dir).transformed(Affine3A::from_translation(apex));
    let [g, c] = [true, false].map(|gpu| {
        let mut s = if gpu { Scene::new(ctx()) } else { Scene::new_cpu(None).unwrap() };
        let a = s.add_body(&cone.positions, &cone.triangles, cloth(e)).unwrap();
        let b = s.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric).unwrap();
        let pairs: [(BodyId, BodyId, f32); 1] = [(a, b, 0.0)];
        let found = s.detect(Pairs::WithDistance(&pairs)).unwrap().contacts;
        // The ray itself, as a query: it hits the ball's outside beyond the reach, with L
        // within the limit (what made it a collision under L alone).
        let hit = s.cast_rays(b, &[raycontact::Ray::new(apex, dir)]).unwrap()[0];
        assert!(hit.triangle != u32::MAX && hit.t > 0.1 && hit.t < 0.3, "the ray hits the ball: {hit:?}");
        let [p0, p1, p2] = ball.triangles[hit.triangle as usize].map(|i| ball.positions[i as usize]);
        let m = (p1 - p0).cross(p2 - p0).normalize();
        assert!(dir.dot(m) < 0.0 && hit.t * dir.dot(m).abs() < e, "L within e: {hit:?}, cos {}", dir.dot(m));
        found.into_iter().filter(|c| c.source_body == a && c.source_vertex == 0).collect::<Vec<_>>()
    });
    assert_same("grazing", &g, &c);
    assert!(g.is_empty(), "a vertex {gap} from the ball has no contact with it: {g:?}");
}
