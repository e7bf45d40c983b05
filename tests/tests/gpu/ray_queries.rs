//! The ray queries on the GPU — closest, any and all hits, against one body or a list — against
//! their CPU twins over the GPU's own frame (the same triangles and bodies, `t` within 1e-5
//! relative, the same nodes visited) and against the CPU backend, on three interpenetrating
//! bodies (so that one ray's hits interleave across bodies) with rays through vertices and
//! shared edges; analytic cases; the typed errors of bad lists.

use glam::{Affine3A, Vec3};
use rand::Rng;
use raycontact::internals::FrameData;
use raycontact::internals::cpu::{self, QueryScene};
use raycontact::internals::layout::NONE;
use raycontact::meshes::{self, TriMesh};
use raycontact::{AllHits, BodyId, BodyKind, Error, Ray, RayHit, RayHitTotals, Scene};
use raycontact_tests::{ctx, random_unit, rng};

/// A torus, a ball through its tube and a bunny beside them.
pub(crate) fn bodies() -> Vec<TriMesh> {
    let ball = meshes::icosphere(0.6, 4).transformed(Affine3A::from_translation(Vec3::new(0.8, 0.2, 0.3)));
    let bunny = raycontact_tests::bunny();
    let lo = bunny.positions.iter().fold(Vec3::MAX, |a, p| a.min(*p));
    let hi = bunny.positions.iter().fold(Vec3::MIN, |a, p| a.max(*p));
    let fit = Affine3A::from_scale(Vec3::splat(1.6 / (hi - lo).max_element()))
        * Affine3A::from_translation(-(lo + hi) * 0.5);
    let bunny = bunny.transformed(Affine3A::from_translation(Vec3::new(-1.2, 0.4, 0.0)) * fit);
    vec![meshes::torus(1.0, 0.3, 64, 32), ball, bunny]
}

/// 8000 seeded rays over the bodies' box: from outside towards a point inside, from inside in
/// any direction, through vertices and through edge midpoints; every fifth a segment.
pub(crate) fn rays(meshes: &[TriMesh], seed: u64) -> Vec<Ray> {
    let mut r = rng(seed);
    let all: Vec<Vec3> = meshes.iter().flat_map(|m| m.positions.iter().copied()).collect();
    let lo = all.iter().fold(Vec3::MAX, |a, p| a.min(*p));
    let hi = all.iter().fold(Vec3::MIN, |a, p| a.max(*p));
    let (centre, radius) = ((lo + hi) * 0.5, (hi - lo).length());
    let inside = |r: &mut rand_pcg::Pcg64| lo + (hi - lo) * Vec3::new(r.random(), r.random(), r.random());
    (0..8000)
        .map(|i| {
            let m = &meshes[r.random_range(0..meshes.len())];
            let o = centre + random_unit(&mut r) * radius;
            let mut ray = match i % 4 {
                0 => Ray::new(o, inside(&mut r) - o),
                1 => Ray::new(inside(&mut r), random_unit(&mut r)),
                2 => Ray::new(o, m.positions[r.random_range(0..m.positions.len())] - o),
                _ => {
                    let t = m.triangles[r.random_range(0..m.triangles.len())];
                    let e = r.random_range(0..3);
                    let mid = (m.positions[t[e] as usize] + m.positions[t[(e + 1) % 3] as usize]) * 0.5;
                    Ray::new(o, mid - o)
                }
            };
            if i % 5 == 0 {
                (ray.tmin, ray.tmax) = (r.random_range(0.0..0.4), r.random_range(0.5..1.2));
            }
            ray
        })
        .collect()
}

/// The same bodies on the GPU and on the CPU backend, updated, and the GPU's frame.
pub(crate) struct Setup {
    pub gpu: Scene,
    pub cpu: Scene,
    pub ids: Vec<BodyId>,
    pub frame: FrameData,
    pub positions: Vec<Vec3>,
}

impl Setup {
    pub fn new(meshes: &[TriMesh]) -> Self {
        let (mut gpu, mut cpu) = (Scene::new(ctx()), Scene::new_cpu(None).unwrap());
        let mut ids = Vec::new();
        for m in meshes {
            ids.push(gpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap());
            assert_eq!(
                cpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap(),
                ids[ids.len() - 1]
            );
        }
        gpu.update().unwrap();
        cpu.update().unwrap();
        let frame = gpu.frame_data().unwrap();
        let positions =
            gpu.packing().ids.iter().flat_map(|id| gpu.positions(*id).unwrap().to_vec()).collect();
        Setup { gpu, cpu, ids, frame, positions }
    }

    /// What the twins read: the GPU's packing and frame.
    pub fn twin(&self) -> QueryScene<'_> {
        QueryScene { packing: self.gpu.packing(), frame: &self.frame, positions: &self.positions }
    }

    /// The packed indices of `ids`.
    pub fn packed(&self, ids: &[BodyId]) -> Vec<u32> {
        ids.iter().map(|id| self.gpu.packing().index_of(*id).unwrap() as u32).collect()
    }
}

/// The same hits: the same body and triangle, `t`, `u`, `v` within 1e-5 (relative for `t`).
pub(crate) fn assert_same(
    what: &str,
    i: usize,
    got: (u32, u32, f32, f32, f32),
    want: (u32, u32, f32, f32, f32),
) {
    assert_eq!((got.0, got.1), (want.0, want.1), "{what}: ray {i}: {got:?} vs {want:?}");
    assert!(
        (got.2 - want.2).abs() <= 1e-5 * want.2.abs().max(1e-2),
        "{what}: ray {i}: t {got:?} vs {want:?}"
    );
    assert!(
        (got.3 - want.3).abs() <= 1e-4 && (got.4 - want.4).abs() <= 1e-4,
        "{what}: ray {i}: barycentrics"
    );
}

fn key(h: &RayHit) -> (u32, u32, f32, f32, f32) {
    if h.is_hit() { (h.body, h.triangle, h.t, h.u, h.v) } else { (h.body, h.triangle, 0.0, 0.0, 0.0) }
}

#[test]
fn closest_and_any_hits_equal_their_twins_and_the_cpu_backend() {
    let meshes = bodies();
    let mut s = Setup::new(&meshes);
    let rays = rays(&meshes, 41);
    let lists = [vec![s.ids[2], s.ids[0], s.ids[1]], vec![s.ids[1]]];
    for list in &lists {
        let packed = s.packed(list);
        let what = format!("bodies {packed:?}");
        let gpu = s.gpu.cast_rays(list, &rays).unwrap();
        let twin = cpu::raycast(&s.twin(), &packed, &rays);
        let backend = s.cpu.cast_rays(list, &rays).unwrap();
        for i in 0..rays.len() {
            assert_same(&format!("closest, {what}, GPU vs twin"), i, key(&gpu[i]), key(&twin[i]));
            assert_same(&format!("closest, {what}, CPU backend"), i, key(&backend[i]), key(&twin[i]));
            assert_eq!(
                (gpu[i].nodes_visited, gpu[i].fallback),
                (twin[i].nodes_visited, twin[i].fallback),
                "ray {i}"
            );
        }
        let hits = gpu.iter().filter(|h| h.is_hit()).count();
        let any = s.gpu.cast_rays_anyhit(list, &rays).unwrap();
        let twin_any = cpu::raycast_anyhit(&s.twin(), &packed, &rays);
        let backend_any = s.cpu.cast_rays_anyhit(list, &rays).unwrap();
        for i in 0..rays.len() {
            assert_same(&format!("any, {what}, GPU vs twin"), i, key(&any[i]), key(&twin_any[i]));
            assert_eq!(key(&backend_any[i]), key(&twin_any[i]), "any, {what}: CPU backend, ray {i}");
            let (g, t) = (&any[i], &twin_any[i]);
            assert_eq!(
                (g.nodes_visited, g.triangles_tested),
                (t.nodes_visited, t.triangles_tested),
                "ray {i}"
            );
            assert_eq!(g.is_hit(), gpu[i].is_hit(), "any, {what}: ray {i} hits iff its closest hit exists");
        }
        let nodes = |h: &[RayHit]| h.iter().map(|h| h.nodes_visited as f64).sum::<f64>() / h.len() as f64;
        eprintln!(
            "{what}: {hits} of {} rays hit; nodes per ray: closest {:.1}, any {:.1}",
            rays.len(),
            nodes(&gpu),
            nodes(&any)
        );
        assert!(hits > rays.len() / 5, "{what}: {hits} hits: the test rays are off");
    }
}

#[test]
fn all_hits_equal_their_twin_and_the_cpu_backend() {
    let meshes = bodies();
    let mut s = Setup::new(&meshes);
    let rays = rays(&meshes, 42);
    let list = [s.ids[2], s.ids[0], s.ids[1]];
    let packed = s.packed(&list);
    for cap in [1, 4, 32] {
        let gpu = s.gpu.cast_rays_all(&list, &rays, cap).unwrap();
        let (totals, counts, slots) = cpu::raycast_all(&s.twin(), &packed, &rays, cap);
        let twin = AllHits::from_slots(cap, totals, counts, &slots).unwrap();
        let backend = s.cpu.cast_rays_all(&list, &rays, cap).unwrap();
        assert_eq!(backend, twin, "cap {cap}: the CPU backend runs the twin");
        assert_eq!(gpu.counts, twin.counts, "cap {cap}: counts per ray (found, stored, nodes, triangles)");
        assert_eq!(gpu.totals, twin.totals, "cap {cap}: the kernel's totals");
        assert_eq!(gpu.totals, RayHitTotals::of(&gpu.counts), "cap {cap}: the totals sum the counts");
        for i in 0..rays.len() {
            for (g, t) in gpu.ray(i).iter().zip(twin.ray(i)) {
                assert_same(
                    &format!("all, cap {cap}"),
                    i,
                    (g.body, g.triangle, g.t, g.u, g.v),
                    (t.body, t.triangle, t.t, t.u, t.v),
                );
            }
        }
        let found = gpu.counts.iter().map(|c| c.found as f64).sum::<f64>() / rays.len() as f64;
        let nodes = gpu.counts.iter().map(|c| c.nodes_visited as f64).sum::<f64>() / rays.len() as f64;
        eprintln!(
            "all hits, cap {cap}: {found:.2} hits found per ray, {nodes:.1} nodes per ray, overflow {} on {} rays",
            gpu.overflow(),
            gpu.totals.rays_overflowed
        );
        assert!(gpu.totals.found > rays.len() as u32, "cap {cap}: the rays cross the bodies");
        if cap == 1 {
            assert!(gpu.overflow() > 0 && gpu.totals.rays_overflowed > 0, "cap 1 overflows");
        }
    }
}

#[test]
fn analytic_cases_on_the_gpu() {
    // Ten squares at z = 0 .. 9 (two triangles each); down the z axis off the diagonal, one hit
    // per square at t = 20 - z.
    let mut m = TriMesh::default();
    for z in 0..10u32 {
        let (o, zf) = (4 * z, z as f32);
        m.positions
            .extend([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(x, y)| Vec3::new(x, y, zf)));
        m.triangles.extend([[o, o + 1, o + 2], [o, o + 2, o + 3]]);
    }
    let mut scene = Scene::new(ctx());
    let planes = scene.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
    let ball = meshes::icosphere(1.0, 3);
    let high = ball.transformed(Affine3A::from_translation(Vec3::new(5.0, 0.0, 3.0)));
    let low = ball.transformed(Affine3A::from_translation(Vec3::new(5.0, 0.0, 0.0)));
    let hi = scene.add_body(&high.positions, &high.triangles, BodyKind::Volumetric).unwrap();
    let lo = scene.add_body(&low.positions, &low.triangles, BodyKind::Volumetric).unwrap();
    let twin = scene.add_body(&low.positions, &low.triangles, BodyKind::Volumetric).unwrap();
    scene.update().unwrap();

    let down = Ray::new(Vec3::new(0.3, -0.2, 20.0), -Vec3::Z);
    let all = scene.cast_rays_all(planes, &[down], 4).unwrap();
    assert_eq!(all.ray(0).iter().map(|h| h.t).collect::<Vec<_>>(), [11.0, 12.0, 13.0, 14.0]);
    assert_eq!((all.counts[0].found, all.counts[0].stored, all.counts[0].overflow()), (10, 4, 6));
    assert_eq!(all.totals, RayHitTotals { found: 10, stored: 4, rays_hit: 1, rays_overflowed: 1 });
    // Through the diagonal the two triangles of each square tie: both listed, by index.
    let diag = Ray::new(Vec3::new(0.25, 0.25, 20.0), -Vec3::Z);
    let all = scene.cast_rays_all(planes, &[diag], 32).unwrap();
    assert_eq!(all.counts[0].found, 20);
    for (k, pair) in all.ray(0).chunks(2).enumerate() {
        assert_eq!((pair[0].t, pair[1].t), (11.0 + k as f32, 11.0 + k as f32));
        assert_eq!((pair[0].triangle, pair[1].triangle), (18 - 2 * k as u32, 19 - 2 * k as u32));
    }
    // Segments: the planes at z = 7 .. 4 lie in [12.5, 16.5]; none before t = 10.5.
    let seg = Ray { tmin: 12.5, tmax: 16.5, ..down };
    let all = scene.cast_rays_all(planes, &[seg], 16).unwrap();
    assert_eq!(all.ray(0).iter().map(|h| h.t).collect::<Vec<_>>(), [13.0, 14.0, 15.0, 16.0]);
    let any = scene.cast_rays_anyhit(planes, &[seg, Ray { tmax: 10.5, ..down }]).unwrap();
    assert!(any[0].is_hit() && (13.0..=16.0).contains(&any[0].t) && any[0].body == 0);
    assert_eq!((any[1].triangle, any[1].body), (NONE, NONE));

    // Two balls on the line x = 5: from above the high one is hit first whatever the order of
    // the list; the hit names it by its position.
    // (Off the balls' axis: through no vertex or edge.)
    let from_above = [Ray::new(Vec3::new(5.13, 0.071, 10.0), -Vec3::Z)];
    for (list, pos) in [([hi, lo], 0), ([lo, hi], 1)] {
        let h = scene.cast_rays(&list, &from_above).unwrap()[0];
        assert_eq!(h.body, pos, "{list:?}");
        assert!((h.t - 6.0).abs() < 0.05, "t {}", h.t);
        let all = scene.cast_rays_all(&list, &from_above, 8).unwrap();
        let bodies: Vec<u32> = all.ray(0).iter().map(|h| h.body).collect();
        assert_eq!(bodies, [pos, pos, 1 - pos, 1 - pos], "enter and leave each ball, nearest first");
    }
    // Two copies of one ball: every hit ties, and the earlier body of the list wins.
    for list in [[lo, twin], [twin, lo]] {
        let h = scene.cast_rays(&list, &from_above).unwrap()[0];
        assert_eq!(h.body, 0, "a tie goes to the earlier body");
        let all = scene.cast_rays_all(&list, &from_above, 8).unwrap();
        let bodies: Vec<u32> = all.ray(0).iter().map(|h| h.body).collect();
        assert_eq!(bodies, [0, 1, 0, 1]);
    }
    let normals = scene.cast_rays_and_get_normal(&[hi, lo], &from_above).unwrap();
    assert!(normals[0].1.dot(Vec3::Z) > 0.99, "the top of the high ball faces up: {:?}", normals[0].1);
}

#[test]
fn bad_lists_and_caps_are_typed_errors() {
    let ball = meshes::icosphere(1.0, 2);
    for mut scene in [Scene::new(ctx()), Scene::new_cpu(Some(1)).unwrap()] {
        let a = scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric).unwrap();
        let ray = [Ray::new(Vec3::new(0.13, 0.071, 3.0), -Vec3::Z)];
        assert!(matches!(scene.cast_rays_anyhit(a, &ray), Err(Error::StaleBvh)));
        scene.update().unwrap();
        let b = scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric).unwrap();
        scene.remove_body(b).unwrap();
        scene.update().unwrap();
        assert!(matches!(scene.cast_rays(&[a, b], &ray), Err(Error::UnknownBody { body }) if body == b));
        assert!(matches!(scene.cast_rays(&[a, a], &ray), Err(Error::InvalidInput { .. })));
        assert!(matches!(scene.cast_rays(&[] as &[BodyId], &ray), Err(Error::InvalidInput { .. })));
        assert!(matches!(scene.cast_rays_all(a, &ray, 0), Err(Error::InvalidInput { .. })));
        assert!(scene.cast_rays_all(a, &[], 4).unwrap().is_empty());
        assert!(scene.cast_rays_anyhit(a, &[]).unwrap().is_empty());
        assert!(scene.cast_rays_all(a, &ray, 4).unwrap().ray(0).len() == 2);
    }
}

#[test]
fn queries_allocate_nothing_at_a_steady_size() {
    let meshes = bodies();
    let mut s = Setup::new(&meshes);
    let rays = rays(&meshes, 43);
    let list = [s.ids[0], s.ids[2]];
    let round = |scene: &mut Scene| {
        scene.cast_rays(&list, &rays).unwrap();
        scene.cast_rays(s.ids[1], &rays[..100]).unwrap();
        scene.cast_rays_anyhit(&list, &rays).unwrap();
        scene.cast_rays_all(&list, &rays, 8).unwrap();
    };
    round(&mut s.gpu);
    let allocated = s.gpu.buffer_allocations();
    for _ in 0..3 {
        round(&mut s.gpu);
        s.gpu.update().unwrap();
    }
    assert_eq!(s.gpu.buffer_allocations(), allocated, "buffers created by queries at a steady size");
}
