//! Criterion benchmarks of the stages of a detection frame on two interpenetrating deforming tori
//! of 12.8k triangles each (the `mesh-scaling` pair of `raycontact-bench`): the per-frame rebuild
//! (normals and BVHs of both bodies), the rays (broad phase and narrow phase of Hermann et al.
//! 2008), the readback of the contacts, and the whole frame. GPU work is recorded into an
//! encoder, submitted, and waited for with `device.poll(PollType::Wait)` inside the timed part;
//! the CPU reference runs the same stage with rayon.
//!
//! Throughput: triangles for `rebuild` and `frame`, rays launched (one per source vertex and
//! direction) for `rays`, contacts for `readback`, contacts re-cast for `walking`.
//!
//! `walking` (iterative detection, Lehericey et al. 2013): the rays of the same contacts (last
//! frame's, found by a full pass) re-cast after the pair moved, by walking the triangle adjacency
//! from last frame's triangles (`cpu::walk_contacts` with the drop fallback: `cpu-walk`) and
//! through the BVH (the same classification with `BvhTracer`: `cpu-bvh`); on the GPU, whole
//! frames of `Scene::detect` with iterative passes (`gpu-iterative-frame`: normals and walks) and
//! without (`gpu-full-frame`).
//!
//! Run with `scripts/with-gpu cargo bench -p raycontact-benches --bench stages`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Affine3A, Quat, Vec3};
use raycontact::internals::contact_parts::ContactParts;
use raycontact::internals::cpu::{self, BvhTracer, FrameData, Narrow, Rays, WalkTracer};
use raycontact::internals::layout::{BodyPair, ContactGpu, NONE, WALK_FALLBACK_DROP, contact_flags};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, GpuContext, Iterative, Pairs, Scene, WalkFallback};
use rayon::prelude::*;

/// The pair of tori: B in the xz plane, its centre 0.5 along x, as in `hermann-tori`.
fn tori() -> (TriMesh, TriMesh) {
    let a = meshes::torus(1.0, 0.35, 160, 40);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.5, 0.0, 0.0),
    ));
    (a, b)
}

/// A few frames of B turning about its centre with a ripple.
fn frames(b: &TriMesh) -> Vec<Vec<Vec3>> {
    let centre = Vec3::new(0.5, 0.0, 0.0);
    (0..4)
        .map(|f| {
            let rot = Quat::from_rotation_y(0.01 * f as f32);
            b.positions
                .iter()
                .map(|p| centre + rot * (*p - centre) + Vec3::Y * 0.01 * (5.0 * p.x + f as f32).sin())
                .collect()
        })
        .collect()
}

fn gpu() -> Option<GpuContext> {
    match GpuContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("raycontact benches: no GPU adapter, CPU reference only ({e})");
            None
        }
    }
}

fn wait(ctx: &GpuContext) {
    ctx.device().poll(wgpu::PollType::wait_indefinitely()).expect("poll");
}

/// A scene with both tori, updated once.
fn scene(mut s: Scene, a: &TriMesh, b: &TriMesh) -> Scene {
    s.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).expect("body");
    s.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).expect("body");
    s.detect(Pairs::Overlapping).expect("detect");
    s
}

fn rebuild(c: &mut Criterion) {
    let ctx = gpu();
    let (a, b) = tori();
    let frames = frames(&b);
    let mut group = c.benchmark_group("stage_rebuild");
    group.throughput(Throughput::Elements((a.triangles.len() + b.triangles.len()) as u64));
    let n = a.triangles.len() + b.triangles.len();
    if let Some(ctx) = &ctx {
        let mut s = scene(Scene::new(ctx), &a, &b);
        let id = s.bodies().nth(1).expect("B");
        let mut f = 0;
        group.bench_function(BenchmarkId::new("gpu", n), |bench| {
            bench.iter(|| {
                f = (f + 1) % frames.len();
                s.set_positions(id, &frames[f]).expect("positions");
                let mut enc = ctx.device().create_command_encoder(&Default::default());
                s.record_update(&mut enc).expect("record");
                ctx.queue().submit([enc.finish()]);
                wait(ctx);
            })
        });
    }
    let mut s = scene(Scene::new_cpu(None).expect("CPU scene"), &a, &b);
    let id = s.bodies().nth(1).expect("B");
    let mut f = 0;
    group.bench_function(BenchmarkId::new("cpu-rayon", n), |bench| {
        bench.iter(|| {
            f = (f + 1) % frames.len();
            s.set_positions(id, &frames[f]).expect("positions");
            s.update().expect("update")
        })
    });
    group.finish();
}

fn rays(c: &mut Criterion) {
    let ctx = gpu();
    let (a, b) = tori();
    // One invocation (an inward ray) per source vertex and direction.
    let launched = (a.positions.len() + b.positions.len()) as u64;
    let mut group = c.benchmark_group("stage_rays");
    group.throughput(Throughput::Elements(launched));
    if let Some(ctx) = &ctx {
        let mut s = scene(Scene::new(ctx), &a, &b);
        s.update().expect("update");
        group.bench_function(BenchmarkId::new("gpu", launched), |bench| {
            bench.iter(|| {
                let mut enc = ctx.device().create_command_encoder(&Default::default());
                s.record_detect(&mut enc, Pairs::Overlapping).expect("record");
                ctx.queue().submit([enc.finish()]);
                wait(ctx);
            })
        });
    }
    let mut s = scene(Scene::new_cpu(None).expect("CPU scene"), &a, &b);
    s.update().expect("update");
    let frame = s.frame_data().expect("frame");
    let packing = s.packing().clone();
    let positions: Vec<Vec3> = a.positions.iter().chain(&b.positions).copied().collect();
    let pairs = [BodyPair { a: 0, b: 1, prediction: 0.0, pad: 0 }];
    let cx = raycontact::internals::cpu::Narrow {
        packing: &packing,
        frame: &frame,
        positions: &positions,
        previous: &positions,
        remember_exit: false,
        inversions: true,
    };
    group.bench_function(BenchmarkId::new("cpu-rayon", launched), |bench| {
        bench.iter(|| raycontact::internals::cpu::narrow_phase(&cx, &pairs))
    });
    group.finish();
}

fn readback(c: &mut Criterion) {
    let Some(ctx) = gpu() else { return };
    let (a, b) = tori();
    let mut s = scene(Scene::new(&ctx), &a, &b);
    s.update().expect("update");
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    s.record_detect(&mut enc, Pairs::Overlapping).expect("record");
    ctx.queue().submit([enc.finish()]);
    let bufs = s.contact_buffers().expect("GPU scene");
    let read = |src: &wgpu::Buffer, bytes: u64, staging: &wgpu::Buffer| -> Vec<u8> {
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, 0, staging, 0, bytes);
        ctx.queue().submit([enc.finish()]);
        let slice = staging.slice(..bytes);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        wait(&ctx);
        let out = slice.get_mapped_range().expect("mapped").to_vec();
        staging.unmap();
        out
    };
    let staging_for = |bytes: u64| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench.readback"),
            size: bytes.max(16),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    let state = read(bufs.state, 16, &staging_for(16));
    let count = u32::from_le_bytes(state[8..12].try_into().expect("4 bytes")) as u64;
    let bytes = count * std::mem::size_of::<raycontact::internals::layout::ContactGpu>() as u64;
    let staging = staging_for(bytes);
    let mut group = c.benchmark_group("stage_readback");
    group.throughput(Throughput::Elements(count));
    group.bench_function(BenchmarkId::new("gpu", count), |bench| {
        bench.iter(|| read(bufs.contacts, bytes, &staging))
    });
    group.finish();
}

fn frame(c: &mut Criterion) {
    let ctx = gpu();
    let (a, b) = tori();
    let frames = frames(&b);
    let n = a.triangles.len() + b.triangles.len();
    let mut group = c.benchmark_group("stage_frame");
    group.throughput(Throughput::Elements(n as u64));
    let mut scenes = vec![
        ("cpu-1", Scene::new_cpu(Some(1)).expect("CPU scene")),
        ("cpu-rayon", Scene::new_cpu(None).expect("CPU scene")),
    ];
    if let Some(ctx) = &ctx {
        scenes.insert(0, ("gpu", Scene::new(ctx)));
    }
    for (name, s) in scenes {
        let mut s = scene(s, &a, &b);
        let id = s.bodies().nth(1).expect("B");
        let mut f = 0;
        group.bench_function(BenchmarkId::new(name, n), |bench| {
            bench.iter(|| {
                f = (f + 1) % frames.len();
                s.set_positions(id, &frames[f]).expect("positions");
                s.detect(Pairs::Overlapping).expect("detect")
            })
        });
    }
    group.finish();
}

/// The rays of remembered contact `m` as the iterative pass casts them (`walk_contacts`'s).
fn rays_of(m: &ContactGpu) -> Rays {
    let outward = m.flags & contact_flags::OUTWARD_RAY != 0;
    Rays {
        sides: if outward { 2 } else { 1 },
        hint_in: if outward { NONE } else { m.target_triangle },
        hint_out: if outward { m.target_triangle } else { NONE },
        hint_exit: m.exit_triangle,
    }
}

fn walking(c: &mut Criterion) {
    let ctx = gpu();
    let (a, b) = tori();
    let frames = frames(&b);
    let mut s = Scene::new_cpu(None).expect("CPU scene");
    s.add_body(&a.positions, &a.triangles, BodyKind::Volumetric).expect("body");
    s.add_body(&b.positions, &b.triangles, BodyKind::Volumetric).expect("body");
    s.update().expect("update");
    let packing = s.packing().clone();
    let at = |f: usize| -> Vec<Vec3> { a.positions.iter().chain(&frames[f]).copied().collect() };
    let (before, after) = (at(0), at(1));
    let pairs = [BodyPair { a: 0, b: 1, prediction: 0.0, pad: 0 }];
    // Last frame's contacts, remembering where each ray leaves its source body.
    let frame0 = FrameData::build(&packing, &before);
    let cx0 = Narrow {
        packing: &packing,
        frame: &frame0,
        positions: &before,
        previous: &before,
        remember_exit: true,
        inversions: true,
    };
    let memory = cpu::narrow_phase(&cx0, &pairs);
    let frame1 = FrameData::build(&packing, &after);
    let cx = Narrow {
        packing: &packing,
        frame: &frame1,
        positions: &after,
        previous: &before,
        remember_exit: true,
        inversions: true,
    };
    // Confidence 2 x a displacement threshold of 0.05.
    let tracer = WalkTracer { fallback: WALK_FALLBACK_DROP, reach: 0.1 };
    let n = memory.len() as u64;
    let mut group = c.benchmark_group("walking");
    group.throughput(Throughput::Elements(n));
    let (mut parts, mut found) = (ContactParts::default(), Vec::new());
    group.bench_function(BenchmarkId::new("cpu-walk", n), |bench| {
        bench.iter(|| cpu::walk_contacts(&cx, &tracer, &pairs, &memory, &mut parts, &mut found))
    });
    group.bench_function(BenchmarkId::new("cpu-bvh", n), |bench| {
        bench.iter(|| {
            memory
                .par_iter()
                .with_min_len(256)
                .fold(Vec::new, |mut acc, m| {
                    let id = (m.source_body as usize, m.source_vertex, m.target_body as usize, m.pair);
                    cpu::classify(&cx, &BvhTracer, id, 0.0, rays_of(m), &mut acc);
                    acc
                })
                .reduce(Vec::new, |mut x, mut y| {
                    x.append(&mut y);
                    x
                })
        })
    });
    if let Some(ctx) = &ctx {
        let iterative = Iterative {
            displacement_threshold: 1.0,
            confidence: 2.0,
            full_pass_every: u32::MAX,
            fallback: WalkFallback::Drop,
        };
        for (name, it) in [("gpu-full-frame", None), ("gpu-iterative-frame", Some(iterative))] {
            let mut s = Scene::new(ctx);
            s.set_iterative(it).expect("iterative");
            let mut s = scene(s, &a, &b);
            let id = s.bodies().nth(1).expect("B");
            let mut f = 0;
            group.bench_function(BenchmarkId::new(name, n), |bench| {
                bench.iter(|| {
                    f = (f + 1) % frames.len();
                    s.set_positions(id, &frames[f]).expect("positions");
                    let found = s.detect(Pairs::Overlapping).expect("detect");
                    assert_eq!(found.stats.iterative, it.is_some());
                    found
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = stages;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = rebuild, rays, readback, frame, walking
}
criterion_main!(stages);
