//! Criterion benchmarks of the ray queries on a torus of 100k triangles and a ball of 20k
//! through its tube: 100k rays from above, closest hit against the torus and against both
//! bodies, any hit (occlusion) against both, and all hits (up to 8 a ray) against both; on the
//! GPU (each query one submission and one readback, the device polled to completion inside the
//! timed part) and on the CPU backend (one thread and rayon), beside parry3d's `TriMesh` doing
//! the same closest-hit and any-hit work (`cast_local_ray`, `intersects_local_ray`; one thread and
//! rayon; parry has no all-hits query on a mesh). Before timing, the machine-independent figures
//! of each query: nodes visited and triangles tested per ray, hits found per ray, and the bytes
//! read back; and the rays that parry hits, which must be those the scene hits.
//!
//! Run with `scripts/with-gpu cargo bench -p raycontact-benches --bench queries`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Affine3A, Vec3};
use parry3d::query::{Ray as ParryRay, RayCast};
use rand::{Rng, SeedableRng};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyId, BodyKind, GpuContext, Ray, Scene};
use rayon::prelude::*;

const RAYS: usize = 100_000;
const MAX_HITS: u32 = 8;

fn meshes() -> [TriMesh; 2] {
    let ball = meshes::icosphere(0.5, 5).transformed(Affine3A::from_translation(Vec3::new(1.0, 0.0, 0.2)));
    [meshes::torus(1.0, 0.35, 316, 158), ball]
}

/// From above, towards a point in the bodies' box: about two thirds hit.
fn rays() -> Vec<Ray> {
    let mut r = rand_pcg::Pcg64::seed_from_u64(5);
    (0..RAYS)
        .map(|_| {
            let o = Vec3::new(r.random_range(-2.0..2.0), r.random_range(-2.0..2.0), 2.0);
            let t = Vec3::new(r.random_range(-1.4..1.6), r.random_range(-1.4..1.4), 0.0);
            Ray::new(o, t - o)
        })
        .collect()
}

fn scenes() -> Vec<(&'static str, Scene)> {
    let mut out = vec![
        ("cpu-1", Scene::new_cpu(Some(1)).expect("CPU scene")),
        ("cpu-rayon", Scene::new_cpu(None).expect("CPU scene")),
    ];
    match GpuContext::new() {
        Ok(c) => out.insert(0, ("gpu", Scene::new(&c))),
        Err(e) => eprintln!("raycontact benches: no GPU adapter, CPU backend only ({e})"),
    }
    out
}

/// The queries: name, and what it runs.
type Query = (&'static str, fn(&mut Scene, &[BodyId], &[Ray]) -> usize);

const QUERIES: [Query; 4] = [
    ("closest-1", |s, b, r| s.cast_rays(b[0], r).expect("closest").len()),
    ("closest-2", |s, b, r| s.cast_rays(b, r).expect("closest").len()),
    ("anyhit-2", |s, b, r| s.cast_rays_anyhit(b, r).expect("any").len()),
    ("all8-2", |s, b, r| s.cast_rays_all(b, r, MAX_HITS).expect("all").len()),
];

/// Nodes and triangles per ray, hits per ray, bytes read back, of each query (on `scene`).
fn figures(scene: &mut Scene, bodies: &[BodyId], rays: &[Ray]) {
    let n = rays.len() as f64;
    let per_ray = |x: u64| x as f64 / n;
    let sum = |f: &dyn Fn(&raycontact::RayHit) -> u32, h: &[raycontact::RayHit]| {
        h.iter().map(|h| f(h) as u64).sum()
    };
    for (name, hits) in [
        ("closest-1", scene.cast_rays(bodies[0], rays).expect("closest")),
        ("closest-2", scene.cast_rays(bodies, rays).expect("closest")),
        ("anyhit-2", scene.cast_rays_anyhit(bodies, rays).expect("any")),
    ] {
        eprintln!(
            "{name}: {:.1} nodes, {:.2} triangles per ray, {:.3} hits per ray, {} bytes read back",
            per_ray(sum(&|h| h.nodes_visited, &hits)),
            per_ray(sum(&|h| h.triangles_tested, &hits)),
            per_ray(hits.iter().filter(|h| h.is_hit()).count() as u64),
            32 * rays.len()
        );
    }
    let all = scene.cast_rays_all(bodies, rays, MAX_HITS).expect("all");
    eprintln!(
        "all8-2: {:.1} nodes, {:.2} triangles per ray, {:.3} hits found per ray, overflow {} on {} rays, {} bytes read back",
        per_ray(all.counts.iter().map(|c| c.nodes_visited as u64).sum()),
        per_ray(all.counts.iter().map(|c| c.triangles_tested as u64).sum()),
        per_ray(all.totals.found as u64),
        all.overflow(),
        all.totals.rays_overflowed,
        16 + 16 * rays.len() + 20 * MAX_HITS as usize * rays.len()
    );
}

/// parry3d's meshes of the bodies.
fn parry_meshes(ms: &[TriMesh]) -> Vec<parry3d::shape::TriMesh> {
    ms.iter()
        .map(|m| parry3d::shape::TriMesh::new(m.positions.clone(), m.triangles.clone()).expect("parry mesh"))
        .collect()
}

/// parry3d's closest hit of `r` on `meshes` (`t`), as `Scene::cast_rays` over the same list.
fn parry_closest(meshes: &[parry3d::shape::TriMesh], r: &Ray) -> Option<f32> {
    let ray = ParryRay::new(r.origin, r.dir);
    meshes.iter().filter_map(|m| m.cast_local_ray(&ray, r.tmax, false)).min_by(f32::total_cmp)
}

/// parry3d's occlusion test of `r` on `meshes`, as `Scene::cast_rays_anyhit`.
fn parry_any(meshes: &[parry3d::shape::TriMesh], r: &Ray) -> bool {
    let ray = ParryRay::new(r.origin, r.dir);
    meshes.iter().any(|m| m.intersects_local_ray(&ray, r.tmax))
}

/// The parry3d peer's queries: name, and what it runs on the meshes (one thread or rayon).
type ParryQuery = (&'static str, fn(&[parry3d::shape::TriMesh], &[Ray], bool) -> usize);

const PARRY: [ParryQuery; 3] = [
    ("closest-1", |m, r, par| run_parry(r, par, |r| parry_closest(&m[..1], r).is_some())),
    ("closest-2", |m, r, par| run_parry(r, par, |r| parry_closest(m, r).is_some())),
    ("anyhit-2", |m, r, par| run_parry(r, par, |r| parry_any(m, r))),
];

/// Rays for which `hit` holds, on one thread or on rayon's pool.
fn run_parry(rays: &[Ray], par: bool, hit: impl Fn(&Ray) -> bool + Sync) -> usize {
    if par {
        rays.par_iter().with_min_len(64).filter(|r| hit(r)).count()
    } else {
        rays.iter().filter(|r| hit(r)).count()
    }
}

fn queries(c: &mut Criterion) {
    let ms = meshes();
    let rays = rays();
    let mut group = c.benchmark_group("queries");
    group.throughput(Throughput::Elements(rays.len() as u64));
    for (backend, mut scene) in scenes() {
        let bodies: Vec<BodyId> = ms
            .iter()
            .map(|m| scene.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).expect("body"))
            .collect();
        scene.update().expect("update");
        eprintln!("{backend} ({}):", scene.backend());
        figures(&mut scene, &bodies, &rays);
        let hit = |h: Vec<raycontact::RayHit>| h.iter().filter(|h| h.is_hit()).count();
        let ours = [
            hit(scene.cast_rays(bodies[0], &rays).expect("closest")),
            hit(scene.cast_rays(&bodies, &rays).expect("closest")),
            hit(scene.cast_rays_anyhit(&bodies, &rays).expect("any")),
        ];
        eprintln!("  rays hit (closest-1, closest-2, anyhit-2): {ours:?}");
        for (name, run) in QUERIES {
            group.bench_function(BenchmarkId::new(name, backend), |b| {
                b.iter(|| run(&mut scene, &bodies, &rays))
            });
        }
    }
    let parry = parry_meshes(&ms);
    let theirs: Vec<usize> = PARRY.iter().map(|(_, run)| run(&parry, &rays, true)).collect();
    eprintln!("parry3d: rays hit (closest-1, closest-2, anyhit-2): {theirs:?}");
    for (name, run) in PARRY {
        for (backend, par) in [("parry-1", false), ("parry-rayon", true)] {
            group.bench_function(BenchmarkId::new(name, backend), |b| b.iter(|| run(&parry, &rays, par)));
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = queries
}
criterion_main!(benches);
