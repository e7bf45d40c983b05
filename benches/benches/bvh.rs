//! Criterion benchmarks of raycontact's stages on a deforming torus of 100k triangles: the
//! per-frame BVH rebuild (GPU and CPU backend), closest-hit ray casts through the BVH, and the
//! GPU radix sort. GPU work is measured with the device polled to completion inside the timed
//! part (`Scene::update` and the queries block until the GPU is done).
//!
//! Run with `scripts/with-gpu cargo bench -p raycontact-benches`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use rand::{Rng, SeedableRng};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, GpuContext, GpuRadixSort, Ray, Scene};

fn mesh() -> TriMesh {
    meshes::torus(1.0, 0.35, 316, 158)
}

fn wave(mesh: &TriMesh, phase: f32) -> Vec<Vec3> {
    mesh.positions.iter().map(|p| *p + Vec3::Z * 0.03 * (6.0 * p.x + 4.0 * p.y + phase).sin()).collect()
}

fn rays(n: usize) -> Vec<Ray> {
    let mut r = rand_pcg::Pcg64::seed_from_u64(5);
    (0..n)
        .map(|_| {
            let o = Vec3::new(r.random_range(-2.0..2.0), r.random_range(-2.0..2.0), 2.0);
            let t = Vec3::new(r.random_range(-1.3..1.3), r.random_range(-1.3..1.3), 0.0);
            Ray::new(o, t - o)
        })
        .collect()
}

fn scenes(ctx: &Option<GpuContext>) -> Vec<(&'static str, Scene)> {
    let mut out = vec![
        ("cpu-1", Scene::new_cpu(Some(1)).expect("CPU scene")),
        ("cpu-rayon", Scene::new_cpu(None).expect("CPU scene")),
    ];
    if let Some(c) = ctx {
        out.insert(0, ("gpu", Scene::new(c)));
    }
    out
}

fn gpu() -> Option<GpuContext> {
    match GpuContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("raycontact benches: no GPU adapter, CPU backend only ({e})");
            None
        }
    }
}

fn rebuild(c: &mut Criterion) {
    let ctx = gpu();
    let m = mesh();
    let frames: Vec<Vec<Vec3>> = (0..4).map(|f| wave(&m, f as f32)).collect();
    let mut group = c.benchmark_group("rebuild");
    group.throughput(Throughput::Elements(m.triangles.len() as u64));
    for (name, mut scene) in scenes(&ctx) {
        let id = scene.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).expect("body");
        scene.update().expect("update");
        let mut f = 0;
        group.bench_function(BenchmarkId::new(name, m.triangles.len()), |b| {
            b.iter(|| {
                f = (f + 1) % frames.len();
                scene.set_positions(id, &frames[f]).expect("positions");
                scene.update().expect("update")
            })
        });
    }
    group.finish();
}

fn ray_casts(c: &mut Criterion) {
    let ctx = gpu();
    let m = mesh();
    let rays = rays(100_000);
    let mut group = c.benchmark_group("rays");
    group.throughput(Throughput::Elements(rays.len() as u64));
    for (name, mut scene) in scenes(&ctx) {
        let id = scene.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).expect("body");
        scene.update().expect("update");
        group.bench_function(BenchmarkId::new(name, rays.len()), |b| {
            b.iter(|| scene.cast_rays(id, &rays).expect("rays"))
        });
    }
    group.finish();
}

fn sort(c: &mut Criterion) {
    let Some(ctx) = gpu() else { return };
    let n = 1 << 20;
    let mut r = rand_pcg::Pcg64::seed_from_u64(1);
    let keys: Vec<u32> = (0..n).map(|_| r.random::<u32>() >> 2).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    let mut sorter = GpuRadixSort::new(&ctx, n);
    let mut group = c.benchmark_group("radix_sort");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("gpu", n), |b| {
        b.iter(|| sorter.sort(&keys, &values).expect("sort"))
    });
    group.bench_function(BenchmarkId::new("cpu", n), |b| {
        b.iter(|| {
            let (mut k, mut v) = (keys.clone(), values.clone());
            raycontact::internals::cpu::radix_sort_segment(&mut k, &mut v);
            k
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    targets = rebuild, ray_casts, sort
}
criterion_main!(benches);
