//! Criterion benchmarks of the stages of a detection frame on two interpenetrating deforming tori
//! of 12.8k triangles each (the `mesh-scaling` pair of `raycontact-bench`): the per-frame rebuild
//! (normals and BVHs of both bodies), the rays (broad phase and narrow phase of Hermann et al.
//! 2008), the readback of the contacts, and the whole frame. GPU work is recorded into an
//! encoder, submitted, and waited for with `device.poll(PollType::Wait)` inside the timed part;
//! the CPU reference runs the same stage with rayon.
//!
//! Throughput: triangles for `rebuild` and `frame`, rays launched (one per source vertex and
//! direction) for `rays`, contacts for `readback`. The iterative detection's walking stage
//! (Lehericey et al. 2013) gets its bench when the library has it.
//!
//! Run with `scripts/with-gpu cargo bench -p raycontact-benches --bench stages`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Affine3A, Quat, Vec3};
use raycontact::layout::BodyPair;
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, GpuContext, Pairs, Scene};

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
    let cx = raycontact::cpu::Narrow {
        packing: &packing,
        frame: &frame,
        positions: &positions,
        previous: &positions,
        remember_exit: false,
    };
    group.bench_function(BenchmarkId::new("cpu-rayon", launched), |bench| {
        bench.iter(|| raycontact::cpu::narrow_phase(&cx, &pairs))
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
    let bytes = count * std::mem::size_of::<raycontact::layout::ContactGpu>() as u64;
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

criterion_group! {
    name = stages;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = rebuild, rays, readback, frame
}
criterion_main!(stages);
