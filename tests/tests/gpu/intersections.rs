//! Edge–triangle crossings, the contour and global intersection analysis (issue 13) on the GPU:
//! the analytic scenes of the issue, each also against the CPU twins, and 100 random placements
//! of the bunny, a torus and a sheet against the twins.

use std::collections::BTreeSet;

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::meshes::{self, TriMesh};
use raycontact::{
    BodyId, BodyKind, ContactFlags, Contacts, Error, IntersectionMode, OverflowPolicy, Pairs, Scene,
};
use raycontact_tests::intersect::{self, CLOTH, compare};
use raycontact_tests::{bunny, ctx, other_tuning_ctx, random_unit, rng};

/// `s` with `mode` and the bodies added; their ids.
fn with_bodies(mut s: Scene, bodies: &[(TriMesh, BodyKind)], mode: IntersectionMode) -> (Scene, Vec<BodyId>) {
    s.set_intersections(mode);
    let ids = bodies.iter().map(|(m, k)| s.add_body(&m.positions, &m.triangles, *k).unwrap()).collect();
    (s, ids)
}

/// The bodies on the GPU and on the CPU backend, with `mode`.
fn scenes(bodies: &[(TriMesh, BodyKind)], mode: IntersectionMode) -> ([Scene; 2], Vec<BodyId>) {
    let (gpu, ids) = with_bodies(Scene::new(ctx()), bodies, mode);
    let (cpu, _) = with_bodies(Scene::new_cpu(None).unwrap(), bodies, mode);
    ([gpu, cpu], ids)
}

/// One full-analysis detection on both backends, checked to agree, and on the GPU with the other
/// tuning (its walks, whose untangling rays go through the BVH, through the child pairs on a
/// software adapter: `Tuning::child_pairs`), checked against the same twin; the GPU's.
fn detect(what: &str, bodies: &[(TriMesh, BodyKind)]) -> (Contacts, Vec<BodyId>) {
    let ([mut g, mut c], ids) = scenes(bodies, IntersectionMode::Full);
    let found = g.detect(Pairs::Overlapping).unwrap();
    let twin = c.detect(Pairs::Overlapping).unwrap();
    compare(what, &found, &twin, 1e-4).unwrap();
    let (mut other, _) = with_bodies(Scene::new(other_tuning_ctx()), bodies, IntersectionMode::Full);
    let theirs = other.detect(Pairs::Overlapping).unwrap();
    compare(&format!("{what} (the other tuning)"), &theirs, &twin, 1e-4).unwrap();
    (found, ids)
}

/// Whether vertex `v` of a `grid_sheet` of `n × n` quads is on its border.
fn on_border(n: u32, v: u32) -> bool {
    let (i, j) = (v % (n + 1), v / (n + 1));
    i == 0 || j == 0 || i == n || j == n
}

#[test]
fn tilted_sheets_cross_along_one_straight_open_contour() {
    let bodies = intersect::tilted_sheets();
    let (found, ids) = detect("tilted sheets", &bodies);
    let x = &found.intersections;
    assert_eq!(x.loops.len(), 1, "one contour: {:?}", x.loops);
    let l = &x.loops[0];
    assert!(!l.closed, "open: both sheets' borders cut it");
    assert_eq!(l.crossings.len(), x.crossings.len(), "every crossing on it");
    // Straight: every point on both planes (A's z = 0, B's through its own vertices).
    let bn = (bodies[1].0.positions[1] - bodies[1].0.positions[0])
        .cross(bodies[1].0.positions[13] - bodies[1].0.positions[0])
        .normalize();
    for c in &x.crossings {
        assert!(c.point.z.abs() < 1e-5 && (c.point - bodies[1].0.positions[0]).dot(bn).abs() < 1e-5, "{c:?}");
    }
    // Its ends are edges on B's border.
    for &end in [l.crossings[0], *l.crossings.last().unwrap()].iter() {
        let c = &x.crossings[end as usize];
        assert!(c.edge_body == ids[1] && c.edge_vertices.iter().all(|&v| on_border(12, v)), "end {c:?}");
    }
    assert!(
        (l.length
            - x.crossings[l.crossings[0] as usize]
                .point
                .distance(x.crossings[*l.crossings.last().unwrap() as usize].point))
        .abs()
            < 1e-4
    );
    // Both ends are on B's border (A reaches past B along the line): B is cut in two, and its
    // smaller part is on the wrong side of A; A stays whole.
    let whole = x.regions_of(ids[0]).expect("A's regions");
    assert_eq!((whole.regions.len(), whole.regions[0].wrong_side_of), (1, None), "{whole:?}");
    let cut = x.regions_of(ids[1]).expect("B's regions");
    assert_eq!(cut.regions.len(), 2, "{cut:?}");
    let area: f32 = cut.regions.iter().map(|g| g.area).sum();
    assert!((area - bodies[1].0.surface_area()).abs() < 1e-3 * area, "areas sum to the sheet's");
    let (small, large) = if cut.regions[0].area < cut.regions[1].area { (0, 1) } else { (1, 0) };
    assert_eq!(cut.regions[small].wrong_side_of, Some(ids[0]));
    assert_eq!(cut.regions[large].wrong_side_of, None);
    assert_eq!(l.sides[1].map(|s| BTreeSet::from([s.front, s.back])), Some(BTreeSet::from([0, 1])));
    // Edge contacts, and an untangling contact for every vertex on a wrong side (both sheets'
    // rays reach the other sheet here).
    let untangle = found.contacts.iter().filter(|c| c.flags.contains(ContactFlags::UNTANGLE)).count();
    assert!(found.contacts.iter().any(|c| c.flags.contains(ContactFlags::EDGE)));
    assert!(untangle > 0 && untangle as u32 <= x.counts.wrong_side_vertices, "{:?}", x.counts);
}

#[test]
fn a_sphere_through_a_sheet_makes_one_closed_loop_around_its_waist() {
    let bodies = intersect::sphere_through_sheet();
    let (found, ids) = detect("sphere through a sheet", &bodies);
    let x = &found.intersections;
    assert_eq!(x.loops.len(), 1, "{:?}", x.loops);
    let l = &x.loops[0];
    assert!(l.closed);
    // Around the waist: every point in the sheet's plane, at the sphere's radius there.
    let waist = (0.5f32 * 0.5 - (0.4f32 - 0.1013).powi(2)).sqrt();
    for &i in &l.crossings {
        let p = x.crossings[i as usize].point;
        assert!((p.z - 0.1013).abs() < 1e-5);
        let r = p.truncate().length();
        assert!(r > 0.9 * waist && r < 1.01 * waist, "radius {r} vs {waist}");
    }
    assert!((l.length - 2.0 * std::f32::consts::PI * waist).abs() < 0.05 * l.length);
    // The sheet's inner disc (inside the sphere) and the sphere's cap below the sheet are the
    // small regions, each on the wrong side.
    let sheet = x.regions_of(ids[0]).unwrap();
    let sphere = x.regions_of(ids[1]).unwrap();
    for (r, other, what) in [(sheet, ids[1], "sheet"), (sphere, ids[0], "sphere")] {
        assert_eq!(r.regions.len(), 2, "{what}: {r:?}");
        let small = if r.regions[0].area < r.regions[1].area { 0 } else { 1 };
        assert_eq!(r.regions[small].wrong_side_of, Some(other), "{what}");
        assert_eq!(r.regions[1 - small].wrong_side_of, None, "{what}");
    }
    let disc = sheet.regions.iter().find(|g| g.wrong_side_of.is_some()).unwrap();
    assert!((disc.area - std::f32::consts::PI * waist * waist).abs() < 0.25 * disc.area, "{disc:?}");
    for (v, &g) in sheet.vertex_region.iter().enumerate() {
        let inside = bodies[0].0.positions[v].distance(Vec3::new(0.0, 0.0, 0.4)) < 0.5;
        assert_eq!(sheet.regions[g as usize].wrong_side_of.is_some(), inside, "sheet vertex {v}");
    }
    for (v, &g) in sphere.vertex_region.iter().enumerate() {
        let below = bodies[1].0.positions[v].z < 0.1013;
        assert_eq!(sphere.regions[g as usize].wrong_side_of.is_some(), below, "sphere vertex {v}");
    }
}

#[test]
fn a_torus_through_a_slab_makes_two_loops() {
    let bodies = intersect::torus_through_slab();
    let (found, ids) = detect("torus through a slab", &bodies);
    let x = &found.intersections;
    assert_eq!(x.loops.len(), 2, "{:?}", x.loops);
    assert!(x.loops.iter().all(|l| l.closed && l.bodies == [ids[0], ids[1]]));
    // One in each leg of the ring.
    let mean_x = |l: &raycontact::ContourLoop| {
        l.crossings.iter().map(|&i| x.crossings[i as usize].point.x).sum::<f32>() / l.crossings.len() as f32
    };
    let (a, b) = (mean_x(&x.loops[0]), mean_x(&x.loops[1]));
    assert!(a * b < 0.0, "{a} {b}");
    // The torus's arc below the slab's top is inside the slab; the slab's discs inside the tube.
    let torus = x.regions_of(ids[0]).unwrap();
    for (v, &g) in torus.vertex_region.iter().enumerate() {
        let inside = bodies[0].0.positions[v].z < 0.5013;
        assert_eq!(torus.regions[g as usize].wrong_side_of == Some(ids[1]), inside, "torus vertex {v}");
    }
    let slab = x.regions_of(ids[1]).unwrap();
    assert_eq!(slab.regions.iter().filter(|g| g.wrong_side_of == Some(ids[0])).count(), 2, "{slab:?}");
}

#[test]
fn boxes_edge_to_edge_are_found_by_crossings_not_by_vertex_rays() {
    let bodies = intersect::boxes_edge_to_edge();
    let (found, _) = detect("boxes edge to edge", &bodies);
    let rays = found.contacts.iter().filter(|c| !c.flags.intersects(ContactFlags::EDGE)).count();
    assert_eq!(rays, 0, "no vertex is inside the other box: {:?}", found.contacts);
    let x = &found.intersections;
    assert_eq!(x.crossings.len(), 4, "{:?}", x.crossings);
    assert_eq!(x.loops.len(), 1);
    assert!(x.loops[0].closed && x.loops[0].crossings.len() == 4);
    // Each crossing's edge passes through the other box: one contact each, pushing the edge
    // out along the crossed face's normal, as deep as the edge dips (0.05 at most).
    let edges: Vec<_> = found.contacts.iter().filter(|c| c.flags.contains(ContactFlags::EDGE)).collect();
    assert_eq!(edges.len(), 4, "{edges:?}");
    for c in edges {
        assert!(c.is_collision() && c.depth > 0.0 && c.depth < 0.08, "{c:?}");
        assert!((c.target_point - c.source_point).normalize().dot(c.normal) > 0.999);
    }
    // No vertex is on a wrong side: the boxes' regions are whole.
    assert!(x.regions.iter().all(|r| r.regions.len() == 1 && r.regions[0].wrong_side_of.is_none()));
}

#[test]
fn inside_vertices_of_two_spheres_are_hermanns_collisions() {
    let bodies = intersect::two_spheres();
    let (found, ids) = detect("two spheres", &bodies);
    for (k, &id) in ids.iter().enumerate() {
        let other = &bodies[1 - k].0;
        let centre = other.positions.iter().copied().sum::<Vec3>() / other.positions.len() as f32;
        let inside: BTreeSet<u32> =
            found.intersections.regions_of(id).unwrap().wrong_side_vertices().collect();
        let hermann: BTreeSet<u32> = found
            .contacts
            .iter()
            .filter(|c| c.source_body == id && c.is_collision() && !c.flags.intersects(ContactFlags::EDGE))
            .map(|c| c.source_vertex)
            .collect();
        assert!(!inside.is_empty());
        // Away from the other surface (the polyhedron lies between 0.985 r and r): the same sets.
        let clear = |v: &u32| {
            let d = bodies[k].0.positions[*v as usize].distance(centre);
            !(0.47..0.505).contains(&d)
        };
        let a: BTreeSet<u32> = inside.iter().copied().filter(clear).collect();
        let b: BTreeSet<u32> = hermann.iter().copied().filter(clear).collect();
        assert_eq!(a, b, "body {k}");
        assert!(a.len() > 10);
    }
}

#[test]
fn crossings_only_finds_crossings_and_edge_contacts() {
    let bodies = intersect::tilted_sheets();
    let ([mut g, mut c], _) = scenes(&bodies, IntersectionMode::Crossings);
    let found = g.detect(Pairs::Overlapping).unwrap();
    compare("crossings only", &found, &c.detect(Pairs::Overlapping).unwrap(), 1e-4).unwrap();
    let x = &found.intersections;
    assert_eq!(x.mode, IntersectionMode::Crossings);
    assert!(!x.crossings.is_empty() && x.loops.is_empty() && x.regions.is_empty());
    assert!(found.contacts.iter().any(|c| c.flags.contains(ContactFlags::EDGE)));
    assert!(!found.contacts.iter().any(|c| c.flags.contains(ContactFlags::UNTANGLE)));
    // Off: nothing, and no stage dispatched.
    g.set_intersections(IntersectionMode::Off);
    let off = g.detect(Pairs::Overlapping).unwrap();
    assert_eq!(off.intersections, Default::default());
    assert!(off.contacts.iter().all(|c| !c.flags.intersects(ContactFlags::EDGE | ContactFlags::UNTANGLE)));
    assert_eq!(off.stats.get(raycontact::Stage::Crossings).map_or(0, |s| s.dispatches), 0);
}

#[test]
fn the_crossing_capacity_grows_or_overflows_as_the_policy_says() {
    let bodies = intersect::sphere_through_sheet();
    let ([mut g, mut c], _) = scenes(&bodies, IntersectionMode::Full);
    let all = g.detect(Pairs::Overlapping).unwrap().intersections.crossings.len() as u64;
    for s in [&mut g, &mut c] {
        s.set_crossing_capacity(7);
        s.set_overflow_policy(OverflowPolicy::Error);
        match s.detect(Pairs::Overlapping) {
            Err(Error::CrossingOverflow { needed, capacity: 7 }) => assert_eq!(needed, all),
            other => panic!("{other:?}"),
        }
        s.set_overflow_policy(OverflowPolicy::Grow);
        let found = s.detect(Pairs::Overlapping).unwrap();
        assert_eq!(found.intersections.crossings.len() as u64, all);
        assert!(s.crossing_capacity() >= all);
    }
    // Steady state: no buffer created in a frame once the capacities fit.
    let again = g.detect(Pairs::Overlapping).unwrap();
    assert_eq!(again.stats.buffers_allocated, 0);
}

#[test]
fn a_detection_that_fills_most_of_the_crossing_capacity_grows_it_for_the_next_without_running_twice() {
    let bodies = intersect::sphere_through_sheet();
    let ([mut g, mut c], _) = scenes(&bodies, IntersectionMode::Full);
    let all = g.detect(Pairs::Overlapping).unwrap();
    let n = all.intersections.crossings.len() as u64;
    assert!(n > 8, "{n} crossings");
    let runs = |f: &Contacts| f.stats.get(raycontact::Stage::Crossings).map_or(0, |s| s.dispatches);
    for (s, what) in [(&mut g, "GPU"), (&mut c, "CPU backend")] {
        // Room for exactly the crossings found: no overflow, but past three quarters of it.
        s.set_crossing_capacity(n);
        s.set_overflow_policy(OverflowPolicy::Grow);
        let first = s.detect(Pairs::Overlapping).unwrap();
        assert_eq!(first.intersections.crossings.len() as u64, n, "{what}");
        assert_eq!(s.crossing_capacity(), 2 * n + 256, "{what}: grown for the next detection");
        if what == "GPU" {
            assert_eq!(runs(&first), runs(&all), "{what}: the crossings traced once");
        }
        // Under the Error policy the capacity stays as set.
        s.set_crossing_capacity(n);
        s.set_overflow_policy(OverflowPolicy::Error);
        s.detect(Pairs::Overlapping).unwrap();
        assert_eq!(s.crossing_capacity(), n, "{what}: kept under the Error policy");
    }
}

/// A random rigid placement of `m` with its centre within `spread` of the origin.
fn placed(m: &TriMesh, r: &mut impl Rng, spread: f32) -> Vec<Vec3> {
    let turn = Quat::from_axis_angle(random_unit(r), r.random_range(0.0..std::f32::consts::TAU));
    let at = random_unit(r) * r.random_range(0.0..spread);
    m.positions.iter().map(|p| turn * *p + at).collect()
}

#[test]
fn random_placements_of_the_bunny_a_torus_and_a_sheet_match_the_twins() {
    let b = bunny();
    let centre = b.positions.iter().copied().sum::<Vec3>() / b.positions.len() as f32;
    let size = b.positions.iter().map(|p| p.distance(centre)).fold(0.0, f32::max);
    let bunny = b.transformed(Affine3A::from_scale_rotation_translation(
        Vec3::splat(0.5 / size),
        Quat::IDENTITY,
        -centre * 0.5 / size,
    ));
    let torus = meshes::torus(0.35, 0.1, 32, 12);
    let sheet = meshes::grid_sheet(1.0, 1.0, 20, 20);
    let bodies = [(bunny, BodyKind::Volumetric), (torus, BodyKind::Volumetric), (sheet, CLOTH)];
    let ([mut g, mut c], ids) = scenes(&bodies, IntersectionMode::Full);
    let mut r = rng(13);
    let (mut crossings, mut loops) = (0, 0);
    for placement in 0..100 {
        for (k, (m, _)) in bodies.iter().enumerate() {
            let p = placed(m, &mut r, 0.3);
            g.set_positions(ids[k], &p).unwrap();
            c.set_positions(ids[k], &p).unwrap();
        }
        let found = g.detect(Pairs::Overlapping).unwrap();
        let twin = c.detect(Pairs::Overlapping).unwrap();
        compare(&format!("placement {placement}"), &found, &twin, 1e-4).unwrap();
        crossings += found.intersections.crossings.len();
        loops += found.intersections.loops.len();
    }
    assert!(crossings > 1000 && loops > 100, "{crossings} crossings, {loops} loops");
}

/// A strip (2.4 × 0.6, 48 × 6 quads) bent along Gerono's lemniscate `(sin s, sin s cos s)` for
/// s in [-0.43, π + 0.61], widening along its length (so that the two passes' vertices neither
/// mirror each other nor share rows where they meet): it passes through itself near the y axis,
/// where its first pass (s = 0) is narrower than its second (s = π).
fn folded_strip() -> TriMesh {
    let mut m = meshes::grid_sheet(2.4, 0.6, 48, 6);
    for p in &mut m.positions {
        let u = p.x / 2.4 + 0.5;
        let s = -0.43 + u * (std::f32::consts::PI + 1.04);
        *p = Vec3::new(
            0.6 * s.sin() + 0.0031,
            (p.y + 0.0123) * (1.0 + 0.1 * u),
            0.6 * s.sin() * s.cos() + 0.0023,
        );
    }
    m
}

#[test]
fn a_cloth_through_itself_crosses_along_its_self_pair() {
    let strip = folded_strip();
    let (found, ids) = detect("folded strip", &[(strip, CLOTH)]);
    let x = &found.intersections;
    assert!(
        !x.crossings.is_empty()
            && x.crossings.iter().all(|c| c.edge_body == ids[0] && c.triangle_body == ids[0])
    );
    // The crossings lie on the line where it passes through itself; the loop runs along it,
    // from border to border.
    assert!(
        x.crossings.iter().all(|c| c.point.x.abs() < 0.05 && c.point.z.abs() < 0.05),
        "{:?}",
        x.crossings
    );
    assert_eq!(x.loops.len(), 1, "{:?}", x.loops);
    assert!(!x.loops[0].closed && x.loops[0].bodies == [ids[0], ids[0]]);
    // Cut across its narrower pass (the wider one is only slit): the strip's end before it is
    // the smaller region, on the wrong side of the strip.
    let r = x.regions_of(ids[0]).unwrap();
    assert_eq!(r.regions.len(), 2, "{r:?}");
    let small = if r.regions[0].area < r.regions[1].area { 0 } else { 1 };
    assert_eq!(r.regions[small].wrong_side_of, Some(ids[0]), "{r:?}");
    assert_eq!(r.regions[1 - small].wrong_side_of, None, "{r:?}");
    assert_eq!(r.vertex_region[0], small as u32, "the end at s = -0.43");
}

#[test]
fn recorded_intersections_stay_on_the_gpu() {
    let bodies = intersect::sphere_through_sheet();
    let ([mut g, _], _) = scenes(&bodies, IntersectionMode::Full);
    let expected = g.detect(Pairs::Overlapping).unwrap();
    let device = ctx().device();
    let mut enc = device.create_command_encoder(&Default::default());
    g.record_update(&mut enc).unwrap();
    g.record_detect(&mut enc, Pairs::Overlapping).unwrap();
    ctx().queue().submit([enc.finish()]);
    let b = g.intersection_buffers().expect("intersection buffers");
    let state: raycontact::internals::layout::IntersectState = read(b.state, 32)[0];
    assert_eq!(state.crossings as usize, expected.intersections.crossings.len());
    assert_eq!(state.loops as usize, expected.intersections.loops.len());
    let contacts = g.contact_buffers().unwrap();
    let count: [u32; 4] = read(contacts.dispatch_args, 16)[0];
    assert_eq!(count[3] as usize, expected.contacts.len(), "contact_args counts the intersection contacts");
}

/// Reads the first `bytes` of `buffer` (which has `COPY_SRC` usage) as `T`s.
fn read<T: bytemuck::Pod>(buffer: &wgpu::Buffer, bytes: u64) -> Vec<T> {
    let device = ctx().device();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, Some(bytes));
    ctx().queue().submit([enc.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let out = bytemuck::pod_collect_to_vec(&staging.slice(..).get_mapped_range().unwrap());
    staging.unmap();
    out
}

#[test]
fn iterative_passes_keep_the_intersections_and_do_not_walk_their_contacts() {
    let bodies = intersect::tilted_sheets();
    let ([mut g, mut c], ids) = scenes(&bodies, IntersectionMode::Full);
    for s in [&mut g, &mut c] {
        s.set_iterative(Some(raycontact::Iterative::new(0.05))).unwrap();
    }
    let mut last = None;
    for frame in 0..3 {
        let moved: Vec<Vec3> =
            bodies[1].0.positions.iter().map(|p| *p + Vec3::Z * 0.002 * frame as f32).collect();
        g.set_positions(ids[1], &moved).unwrap();
        c.set_positions(ids[1], &moved).unwrap();
        let found = g.detect(Pairs::Overlapping).unwrap();
        let twin = c.detect(Pairs::Overlapping).unwrap();
        compare(&format!("frame {frame}"), &found, &twin, 1e-4).unwrap();
        assert_eq!(found.stats.iterative, frame > 0, "frame {frame}");
        assert!(!found.intersections.crossings.is_empty());
        let rays = found.contacts.len() - intersect::intersection_contacts(&found).len();
        assert_eq!(
            found.stats.walked as usize,
            if frame > 0 { last.unwrap() } else { 0 },
            "only ray contacts are walked"
        );
        last = Some(rays);
    }
}
