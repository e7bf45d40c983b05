//! Iterative ray casts (`walk.wgsl`, Lehericey et al. 2013): for small displacements the walk
//! from the previous hit finds the BVH's hit; a ray trapped in a concavity (the paper's
//! Figure 3) falls back to the BVH; a boundary edge ends the walk; every outcome is counted; the
//! GPU equals its CPU twin on the triangle, the outcome and the steps.

use glam::Vec3;
use rand::Rng;
use raycontact::internals::layout::{
    NONE, WALK_BOUNDARY, WALK_HIT, WALK_LOOP, WALK_NO_START, WALK_PARALLEL, WALK_RANGE, WALK_STEPS,
};
use raycontact::max_walk_steps as max_steps;
use raycontact::meshes::{self, TriMesh};
use raycontact::{
    BodyId, BodyKind, Error, Ray, RayHit, Scene, WalkCounts, WalkFallback, WalkHit, WalkOptions,
};
use raycontact_tests::{ctx, random_unit, rng};

/// A GPU scene and a CPU-backend scene holding a small decoy body first (so that the walked
/// body's triangles and vertices do not start at 0) and then `mesh`.
fn scenes(mesh: &TriMesh, kind: BodyKind) -> [(Scene, BodyId); 2] {
    let decoy = meshes::icosphere(0.5, 1).transformed(glam::Affine3A::from_translation(Vec3::splat(50.0)));
    [Scene::new(ctx()), Scene::new_cpu(None).unwrap()].map(|mut s| {
        s.add_body(&decoy.positions, &decoy.triangles, BodyKind::Volumetric).unwrap();
        let id = s.add_body(&mesh.positions, &mesh.triangles, kind).unwrap();
        s.update().unwrap();
        (s, id)
    })
}

fn close(a: f32, b: f32) -> bool {
    a == b || (a - b).abs() <= 1e-5 * b.abs().max(1e-3)
}

/// The GPU and its twin agree: triangle, outcome, steps, last triangle and fallback exactly;
/// t, u, v within 1e-5. Each backend's counters are those of its results.
fn assert_twins(what: &str, gpu: &raycontact::WalkResult, cpu: &raycontact::WalkResult) {
    assert_eq!(gpu.hits.len(), cpu.hits.len());
    for (i, (g, c)) in gpu.hits.iter().zip(&cpu.hits).enumerate() {
        assert_eq!(
            (g.triangle, g.outcome, g.steps, g.last, g.bvh),
            (c.triangle, c.outcome, c.steps, c.last, c.bvh),
            "{what}: ray {i}: GPU {g:?} vs CPU {c:?}"
        );
        assert!(close(g.t, c.t) && close(g.u, c.u) && close(g.v, c.v), "{what}: ray {i}: {g:?} vs {c:?}");
    }
    assert_eq!(gpu.counts, WalkCounts::of(&gpu.hits), "{what}: GPU counters");
    assert_eq!(cpu.counts, WalkCounts::of(&cpu.hits), "{what}: CPU counters");
    assert_eq!(gpu.counts, cpu.counts, "{what}: counters");
}

/// The walk's result equals the BVH's closest hit: same triangle, t within 1e-5.
fn assert_same_as_bvh(what: &str, walked: &[WalkHit], bvh: &[RayHit]) {
    for (i, (w, b)) in walked.iter().zip(bvh).enumerate() {
        assert_eq!(w.triangle, b.triangle, "{what}: ray {i}: walk {w:?} vs BVH {b:?}");
        if b.is_hit() {
            assert!(close(w.t, b.t), "{what}: ray {i}: t {} vs {}", w.t, b.t);
        }
    }
}

/// Rays that hit `mesh` near-perpendicularly: from `offset × mean size` above a random point of
/// a random triangle, along the inward face normal tilted by up to ~0.3 rad.
fn surface_rays(mesh: &TriMesh, mean: f32, offset: f32, n: usize, seed: u64) -> Vec<Ray> {
    let mut r = rng(seed);
    (0..n)
        .map(|_| {
            let tri = mesh.triangles[r.random_range(0..mesh.triangles.len())];
            let [a, b, c] = tri.map(|i| mesh.positions[i as usize]);
            let (mut s, mut t): (f32, f32) = (r.random(), r.random());
            if s + t > 1.0 {
                (s, t) = (1.0 - s, 1.0 - t);
            }
            let p = a + s * (b - a) + t * (c - a);
            let normal = (b - a).cross(c - a).normalize();
            let dir = -normal + 0.3 * random_unit(&mut r);
            Ray::new(p - offset * mean * dir.normalize(), dir)
        })
        .collect()
}

/// Frame 0: rays cast through the BVH give each ray its start triangle. Frame 1: every origin
/// moves by up to `displacement × mean size` (the direction stays); the walk (BVH fallback)
/// must equal the BVH exactly, and nearly all walks must hit on their own.
///
/// The walk cannot see a surface that comes between the origin and the walked hit: an origin
/// that moves into a thin part of the bunny (or next to one) makes the BVH find a nearer hit
/// than the walk. The paper tolerates it (rays are short and displacements small); the test
/// keeps the bunny's origins within one mean triangle size of the surface and its
/// displacements within half of one.
fn small_displacements(name: &str, mesh: &TriMesh, seed: u64, offset: f32, displacement: f32) {
    let mut sc = scenes(mesh, BodyKind::Volumetric);
    let id = sc[0].1;
    let mean = sc[0].0.mean_triangle_size(id).unwrap();
    let rays0 = surface_rays(mesh, mean, offset, 4000, seed);
    let starts: Vec<u32> = sc[0].0.cast_rays(id, &rays0).unwrap().iter().map(|h| h.triangle).collect();
    let mut r = rng(seed + 100);
    let rays1: Vec<Ray> = rays0
        .iter()
        .map(|ray| {
            let d = random_unit(&mut r) * mean * r.random_range(0.0..displacement);
            Ray { origin: ray.origin + d, ..*ray }
        })
        .collect();
    // Eq. 1 with a displacement threshold of 2 mean sizes and a confidence of 3.
    let options =
        WalkOptions { max_steps: max_steps(3.0, 2.0 * mean, mean).unwrap(), fallback: WalkFallback::Bvh };
    assert_eq!(options.max_steps, 6);
    let bvh = sc[0].0.cast_rays(id, &rays1).unwrap();
    let [(gpu, g), (cpu, c)] = &mut sc;
    let got = gpu.walk(*g, &rays1, &starts, &options).unwrap();
    let twin = cpu.walk(*c, &rays1, &starts, &options).unwrap();
    assert_twins(name, &got, &twin);
    assert_same_as_bvh(name, &got.hits, &bvh);
    assert_same_as_bvh(&format!("{name} CPU"), &twin.hits, &bvh);
    let n = rays1.len() as u32;
    let counts = got.counts;
    let moved = got.hits.iter().filter(|h| h.outcome == WALK_HIT && h.steps > 0).count();
    let far = got.hits.iter().filter(|h| h.outcome == WALK_HIT && h.steps > 2).count();
    eprintln!(
        "{name}: {} triangles, mean size {mean}, outcomes {:?}, fallback casts {} (hits {}), {moved} walks moved, {far} more than 2 steps",
        mesh.triangles.len(),
        counts.outcomes,
        counts.fallback_casts,
        counts.fallback_hits
    );
    assert_eq!(counts.total(), n);
    assert!(counts.outcome(WALK_HIT) >= n * 95 / 100, "{name}: most walks hit: {:?}", counts.outcomes);
    assert!(moved > n as usize / 4 && far > 0, "{name}: the walks move ({moved} moved, {far} far)");
    assert_eq!(counts.fallback_casts, n - counts.outcome(WALK_HIT));
    // Walked hits come from the walk, the others from the BVH.
    assert!(got.hits.iter().all(|h| (h.outcome == WALK_HIT) == (h.bvh == 0)));

    // Dropping instead: the same walks, the rays that did not hit stay misses.
    let drop = WalkOptions { fallback: WalkFallback::Drop, ..options };
    let dropped = gpu.walk(*g, &rays1, &starts, &drop).unwrap();
    assert_twins(&format!("{name} drop"), &dropped, &cpu.walk(*c, &rays1, &starts, &drop).unwrap());
    assert_eq!(dropped.counts.outcomes, counts.outcomes);
    assert_eq!((dropped.counts.fallback_casts, dropped.counts.fallback_hits), (0, 0));
    for (d, w) in dropped.hits.iter().zip(&got.hits) {
        assert_eq!((d.outcome, d.steps, d.last, d.bvh), (w.outcome, w.steps, w.last, 0));
        if d.outcome == WALK_HIT {
            assert_eq!(d, w);
        } else {
            assert_eq!(d.triangle, NONE);
        }
    }
}

#[test]
fn walk_sphere() {
    small_displacements("sphere", &meshes::icosphere(1.0, 4), 1, 2.0, 2.0);
}

#[test]
fn walk_torus() {
    small_displacements("torus", &meshes::torus(1.0, 0.35, 64, 32), 2, 2.0, 2.0);
}

#[test]
fn walk_bunny() {
    small_displacements("bunny", &raycontact_tests::bunny(), 3, 1.0, 0.5);
}

/// A profile in the xz plane extruded along y (from -1 to 1, `ny` segments): a sheet whose
/// profile segments are each split into `split` pieces.
fn extruded(profile: &[(f32, f32)], split: u32, ny: u32) -> TriMesh {
    let mut pts = Vec::new();
    for w in profile.windows(2) {
        for k in 0..split {
            let s = k as f32 / split as f32;
            pts.push((w[0].0 + s * (w[1].0 - w[0].0), w[0].1 + s * (w[1].1 - w[0].1)));
        }
    }
    pts.push(*profile.last().unwrap());
    let row = pts.len() as u32;
    let mut m = TriMesh::default();
    for j in 0..=ny {
        let y = -1.0 + 2.0 * j as f32 / ny as f32;
        m.positions.extend(pts.iter().map(|&(x, z)| Vec3::new(x, y, z)));
    }
    for j in 0..ny {
        for i in 0..row - 1 {
            let (a, b, c, d) = (j * row + i, j * row + i + 1, (j + 1) * row + i + 1, (j + 1) * row + i);
            m.triangles.push([a, b, c]);
            m.triangles.push([a, c, d]);
        }
    }
    m
}

#[test]
fn walk_trapped_in_a_concavity_falls_back() {
    // The paper's Figure 3: flat ground, then a pit whose left wall overhangs. A vertical ray
    // that hit the ground moves over the pit: its walk goes down the wall and under the overhang
    // (the wall seen from above turns back there) and bounces between the two faces of that
    // fold; the BVH finds the pit's floor.
    let profile = [(-2.0, 0.0), (0.0, 0.0), (0.5, -1.0), (-0.5, -1.5), (1.5, -2.0), (2.0, 0.0), (3.0, 0.0)];
    let mesh = extruded(&profile, 4, 8);
    assert_eq!(mesh.non_manifold_edge_count(), 0);
    let mut sc = scenes(&mesh, BodyKind::Cloth { half_thickness: 0.0 });
    let id = sc[0].1;
    let before = Ray::new(Vec3::new(-1.0, 0.03, 3.0), -Vec3::Z);
    let start = sc[0].0.cast_rays(id, &[before]).unwrap()[0];
    assert!(start.is_hit() && close(start.t, 3.0));
    let rays = [
        // Over the pit: trapped.
        Ray::new(Vec3::new(1.0, 0.03, 3.0), -Vec3::Z),
        // Still over the ground: walks there.
        Ray::new(Vec3::new(-0.3, 0.03, 3.0), -Vec3::Z),
    ];
    let starts = [start.triangle; 2];
    let bvh = sc[0].0.cast_rays(id, &rays).unwrap();
    assert!(bvh[0].is_hit() && close(bvh[0].t, 3.0 + 1.875), "the BVH hits the floor: {:?}", bvh[0]);
    for fallback in [WalkFallback::Bvh, WalkFallback::Drop] {
        let options = WalkOptions { max_steps: 64, fallback };
        let [(gpu, g), (cpu, c)] = &mut sc;
        let got = gpu.walk(*g, &rays, &starts, &options).unwrap();
        assert_twins("concavity", &got, &cpu.walk(*c, &rays, &starts, &options).unwrap());
        let h = got.hits[0];
        assert_eq!(h.outcome, WALK_LOOP, "trapped: {h:?}");
        assert!(h.steps > 4, "the walk went some way first: {h:?}");
        assert_eq!(got.hits[1].outcome, WALK_HIT);
        assert_eq!(got.hits[1].bvh, 0);
        match fallback {
            WalkFallback::Bvh => {
                assert_eq!(h.bvh, 1);
                assert_same_as_bvh("concavity", &got.hits, &bvh);
                assert_eq!((got.counts.fallback_casts, got.counts.fallback_hits), (1, 1));
            }
            WalkFallback::Drop => {
                assert_eq!((h.triangle, h.bvh), (NONE, 0));
                assert_eq!((got.counts.fallback_casts, got.counts.fallback_hits), (0, 0));
            }
        }
        assert_eq!(got.counts.outcome(WALK_LOOP), 1);
        assert_eq!(got.counts.outcome(WALK_HIT), 1);
    }
}

#[test]
fn walk_outcomes_on_a_sheet() {
    // An 8 × 8 sheet of 2 × 2 at z = 0 (coordinates exact in binary), rays down the z axis.
    let mesh = meshes::grid_sheet(2.0, 2.0, 8, 8);
    let mut sc = scenes(&mesh, BodyKind::Cloth { half_thickness: 0.01 });
    let id = sc[0].1;
    let down = |x: f32, y: f32| Ray::new(Vec3::new(x, y, 1.0), -Vec3::Z);
    let start = sc[0].0.cast_rays(id, &[down(0.7, 0.21)]).unwrap()[0].triangle;
    assert_ne!(start, NONE);
    let short = Ray { tmax: 0.5, ..down(0.7, 0.21) };
    let rays = [
        down(0.6, 0.4),                                              // moved a little: HIT
        down(1.4, 0.3),                                              // off the sheet: BOUNDARY, BVH misses
        short,                                                       // the plane beyond tmax: RANGE
        Ray::new(Vec3::new(-3.0, 0.125, 0.5), Vec3::X),              // parallel to the sheet: PARALLEL
        down(-0.3, 0.2),                                             // no start: the BVH alone
        down(-0.9, -0.9),                                            // far across: out of steps
        Ray { origin: Vec3::new(0.6, 0.4, -1.0), ..down(0.0, 0.0) }, // sheet behind the origin
    ];
    let starts = [start, start, start, start, NONE, start, start];
    let want = [WALK_HIT, WALK_BOUNDARY, WALK_RANGE, WALK_PARALLEL, WALK_NO_START, WALK_STEPS, WALK_RANGE];
    let bvh = sc[0].0.cast_rays(id, &rays).unwrap();
    let options = WalkOptions { max_steps: 8, fallback: WalkFallback::Bvh };
    let [(gpu, g), (cpu, c)] = &mut sc;
    let got = gpu.walk(*g, &rays, &starts, &options).unwrap();
    assert_twins("sheet", &got, &cpu.walk(*c, &rays, &starts, &options).unwrap());
    let outcomes: Vec<u32> = got.hits.iter().map(|h| h.outcome).collect();
    assert_eq!(outcomes, want, "{:#?}", got.hits);
    assert_same_as_bvh("sheet", &got.hits, &bvh);
    let h = &got.hits;
    assert!(h[0].steps > 0 && h[0].bvh == 0 && close(h[0].t, 1.0));
    assert!(h[1].steps > 0 && !h[1].is_hit() && h[1].bvh == 1, "{:?}", h[1]);
    // The boundary walk stopped on a triangle of the sheet's border at x = 1.
    let [a, b, c] = mesh.triangles[h[1].last as usize].map(|i| mesh.positions[i as usize]);
    assert!([a, b, c].iter().filter(|p| p.x == 1.0).count() == 2, "on the border: {:?}", [a, b, c]);
    assert_eq!((h[2].steps, h[2].last), (0, start));
    assert!(!h[2].is_hit());
    assert_eq!((h[4].steps, h[4].last, h[4].bvh), (0, NONE, 1));
    assert!(h[4].is_hit() && close(h[4].t, 1.0));
    assert_eq!(h[5].steps, 8);
    assert!(h[5].is_hit() && h[5].bvh == 1);
    assert!(!h[6].is_hit() && h[6].steps > 0);
    let mut counts = WalkCounts::default();
    for (o, n) in [
        (WALK_HIT, 1),
        (WALK_BOUNDARY, 1),
        (WALK_RANGE, 2),
        (WALK_PARALLEL, 1),
        (WALK_NO_START, 1),
        (WALK_STEPS, 1),
    ] {
        counts.outcomes[o as usize] = n;
    }
    counts.fallback_casts = 6;
    counts.fallback_hits = 2;
    assert_eq!(got.counts, counts);

    // With room enough, the far ray walks all the way.
    let far = gpu.walk(*g, &rays[5..6], &[start], &WalkOptions { max_steps: 64, ..options }).unwrap();
    assert_eq!(far.hits[0].outcome, WALK_HIT);
    assert_eq!(far.hits[0].triangle, bvh[5].triangle);
    assert!(far.hits[0].steps > 8);
}

#[test]
fn walk_stops_at_a_non_manifold_edge() {
    // Two squares side by side in z = 0 and a vertical fin on their shared edge x = 0: that
    // edge has three triangles, so the walk cannot cross it.
    let mesh = TriMesh {
        positions: vec![
            Vec3::new(-1.0, -1.0, 0.0),
            Vec3::new(0.0, -1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(-1.0, 1.0, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
        ],
        triangles: vec![[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2], [1, 2, 6]],
    };
    assert_eq!(mesh.non_manifold_edge_count(), 1);
    let mut sc = scenes(&mesh, BodyKind::Cloth { half_thickness: 0.0 });
    let down = |x: f32, y: f32| Ray::new(Vec3::new(x, y, 2.0), -Vec3::Z);
    let rays = [down(0.5, 0.3), down(-0.7, 0.6)];
    let starts = [0, 0];
    let options = WalkOptions::default();
    let bvh = sc[0].0.cast_rays(sc[0].1, &rays).unwrap();
    let [(gpu, g), (cpu, c)] = &mut sc;
    let got = gpu.walk(*g, &rays, &starts, &options).unwrap();
    assert_twins("non-manifold", &got, &cpu.walk(*c, &rays, &starts, &options).unwrap());
    assert_eq!((got.hits[0].outcome, got.hits[0].last, got.hits[0].bvh), (WALK_BOUNDARY, 0, 1));
    assert_eq!((got.hits[1].outcome, got.hits[1].triangle, got.hits[1].steps), (WALK_HIT, 1, 1));
    assert_same_as_bvh("non-manifold", &got.hits, &bvh);
    assert_eq!(got.counts.outcome(WALK_BOUNDARY), 1);
    assert_eq!((got.counts.fallback_casts, got.counts.fallback_hits), (1, 1));
}

#[test]
fn walk_rejects_bad_input() {
    let mesh = meshes::icosphere(1.0, 1);
    let mut s = Scene::new_cpu(Some(1)).unwrap();
    let id = s.add_body(&mesh.positions, &mesh.triangles, BodyKind::Volumetric).unwrap();
    let ray = Ray::new(Vec3::Z * 3.0, -Vec3::Z);
    let o = WalkOptions::default();
    assert!(matches!(s.walk_rays(id, &[ray], &[0], &o), Err(Error::StaleBvh)));
    s.update().unwrap();
    let n = mesh.triangles.len() as u32;
    assert!(matches!(s.walk_rays(id, &[ray], &[], &o), Err(Error::InvalidInput { .. })));
    assert!(matches!(s.walk_rays(id, &[ray], &[n], &o), Err(Error::InvalidInput { .. })));
    let too_many = WalkOptions { max_steps: raycontact::internals::layout::MAX_WALK_STEPS + 1, ..o };
    assert!(matches!(s.walk_rays(id, &[ray], &[0], &too_many), Err(Error::InvalidInput { .. })));
    assert!(s.walk_rays(id, &[], &[], &o).unwrap().is_empty());
    assert_eq!(s.walk_rays(id, &[ray], &[NONE], &o).unwrap()[0].outcome, WALK_NO_START);
    s.remove_body(id).unwrap();
    s.update().unwrap();
    assert!(matches!(s.walk_rays(id, &[ray], &[0], &o), Err(Error::UnknownBody { .. })));
}
