//! Ray queries recorded into the caller's encoder over the caller's buffers: what they write is
//! what the scene's own queries return, several queries with different bodies go into one
//! submission after the frame's update, nothing is allocated by a steady frame, and a buffer
//! that cannot serve is refused by name before anything is recorded.

use glam::Vec3;
use raycontact::{
    AllHits, BufferProblem, Error, GpuOutput, GpuRays, Ray, RayHit, RayHitCount, RayHitTotals,
    RayIntersection, Scene, wgpu,
};
use raycontact_tests::ctx;

use crate::ray_queries::{Setup, bodies, rays};

fn buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test"),
        size,
        usage,
        mapped_at_creation: false,
    })
}

/// The bytes of a `MAP_READ` buffer once the device is idle.
fn read(b: &wgpu::Buffer) -> Vec<u8> {
    let slice = b.slice(..);
    slice.map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    ctx().device().poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let bytes = slice.get_mapped_range().unwrap().to_vec();
    b.unmap();
    bytes
}

const OUT: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC);

#[test]
fn recorded_queries_write_what_the_scene_returns() {
    let meshes = bodies();
    let mut s = Setup::new(&meshes);
    let scene = &mut s.gpu;
    let rays = rays(&meshes, 44);
    let n = rays.len() as u64;
    let d = ctx().device();
    let use_ = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
    let rays_buf = buffer(d, 256 + 32 * n, use_);
    ctx().queue().write_buffer(&rays_buf, 256, bytemuck::cast_slice(&rays));
    let gpu_rays = GpuRays { buffer: &rays_buf, offset: 256, count: n as u32 };
    let list = [s.ids[2], s.ids[0], s.ids[1]];
    let (closest, one, any) = (buffer(d, 32 * n, OUT), buffer(d, 32 * n, OUT), buffer(d, 32 * n, OUT));
    // The counts and the hits of the all-hits query share one buffer.
    let cap = 6u32;
    let counts_bytes = 16 + 16 * n;
    let hits_at = counts_bytes.next_multiple_of(256);
    let hits_bytes = 20 * cap as u64 * n;
    let shared = buffer(d, hits_at + hits_bytes, OUT | wgpu::BufferUsages::COPY_DST);
    let readback = |size| buffer(d, size, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
    let reads = [readback(32 * n), readback(32 * n), readback(32 * n), readback(hits_at + hits_bytes)];

    // Two frames: the ball moves, the update and every query of the frame in one encoder.
    let ball = meshes[1].positions.clone();
    let mut allocated = 0;
    for frame in 0..2 {
        let moved: Vec<Vec3> = ball.iter().map(|p| *p + Vec3::Z * 0.05 * (frame + 1) as f32).collect();
        scene.set_positions(s.ids[1], &moved).unwrap();
        let mut enc = d.create_command_encoder(&Default::default());
        scene.record_update(&mut enc).unwrap();
        scene.record_cast_rays(&mut enc, &list, gpu_rays, (&closest).into()).unwrap();
        scene.record_cast_rays(&mut enc, s.ids[1], gpu_rays, (&one).into()).unwrap();
        scene.record_cast_rays_anyhit(&mut enc, &list, gpu_rays, (&any).into()).unwrap();
        let counts = GpuOutput { buffer: &shared, offset: 0 };
        let hits = GpuOutput { buffer: &shared, offset: hits_at };
        scene.record_cast_rays_all(&mut enc, &list, gpu_rays, cap, counts, hits).unwrap();
        for (src, dst) in [&closest, &one, &any, &shared].into_iter().zip(&reads) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, None);
        }
        ctx().queue().submit([enc.finish()]);
        let hits_of = |b: &wgpu::Buffer| bytemuck::pod_collect_to_vec::<u8, RayHit>(&read(b));
        let (got_closest, got_one, got_any) = (hits_of(&reads[0]), hits_of(&reads[1]), hits_of(&reads[2]));
        let bytes = read(&reads[3]);
        let totals: RayHitTotals = bytemuck::pod_read_unaligned(&bytes[..16]);
        let counts: Vec<RayHitCount> = bytemuck::pod_collect_to_vec(&bytes[16..counts_bytes as usize]);
        let slots: Vec<RayIntersection> = bytemuck::pod_collect_to_vec(&bytes[hits_at as usize..]);
        let got_all = AllHits::from_slots(cap, totals, counts, &slots).unwrap();

        // The scene's own queries over the same frame (the update recorded above) agree bit for bit.
        assert_eq!(got_closest, scene.cast_rays(&list, &rays).unwrap(), "frame {frame}: closest");
        assert_eq!(got_one, scene.cast_rays(s.ids[1], &rays).unwrap(), "frame {frame}: closest, one body");
        assert_eq!(got_any, scene.cast_rays_anyhit(&list, &rays).unwrap(), "frame {frame}: any");
        assert_eq!(got_all, scene.cast_rays_all(&list, &rays, cap).unwrap(), "frame {frame}: all");
        assert!(got_one.iter().any(|h| h.is_hit()) && got_one != got_closest);
        assert!(got_all.overflow() > 0, "cap {cap} overflows on some rays");
        if frame == 0 {
            allocated = scene.buffer_allocations();
        }
    }
    assert_eq!(scene.buffer_allocations(), allocated, "buffers created by a steady frame's queries");
}

#[test]
fn bad_buffers_are_refused_by_name() {
    let meshes = bodies();
    let mut s = Setup::new(&meshes);
    let scene = &mut s.gpu;
    let d = ctx().device();
    let n = 100u32;
    let storage = wgpu::BufferUsages::STORAGE;
    let rays_buf = buffer(d, 32 * n as u64 + 256, storage | wgpu::BufferUsages::COPY_DST);
    let rays = GpuRays { buffer: &rays_buf, offset: 0, count: n };
    let hits = buffer(d, 32 * n as u64, storage);
    let small = buffer(d, 32 * n as u64 - 4, storage);
    let no_copy = buffer(d, 16 + 16 * n as u64, storage);
    let counts = buffer(d, 16384, storage | wgpu::BufferUsages::COPY_DST);
    let big_hits = buffer(d, 20 * 4 * n as u64, storage);
    let a = s.ids[0];
    let mut enc = d.create_command_encoder(&Default::default());
    let problem = |r: raycontact::Result<()>| match r {
        Err(Error::QueryBuffer { buffer, problem, .. }) => (buffer, problem),
        other => panic!("expected a QueryBuffer error, got {other:?}"),
    };
    let misaligned = GpuRays { offset: 4, ..rays };
    assert_eq!(
        problem(scene.record_cast_rays(&mut enc, a, misaligned, (&hits).into())),
        ("rays", BufferProblem::Misaligned { offset: 4, alignment: 256 })
    );
    assert_eq!(
        problem(scene.record_cast_rays(&mut enc, a, rays, (&small).into())),
        ("hits", BufferProblem::TooSmall { offset: 0, needed: 32 * n as u64, size: 32 * n as u64 - 4 })
    );
    let past_end = GpuRays { offset: 256, count: n + 1, ..rays };
    assert!(matches!(
        problem(scene.record_cast_rays_anyhit(&mut enc, a, past_end, (&hits).into())),
        ("rays", BufferProblem::TooSmall { .. })
    ));
    assert!(matches!(
        problem(scene.record_cast_rays_all(&mut enc, a, rays, 4, (&no_copy).into(), (&big_hits).into())),
        ("counts", BufferProblem::Usage { .. })
    ));
    assert_eq!(
        problem(scene.record_cast_rays(&mut enc, a, rays, GpuOutput { buffer: &rays_buf, offset: 0 })),
        ("hits", BufferProblem::Overlaps { other: "rays" })
    );
    let overlapping = GpuOutput { buffer: &counts, offset: 0 };
    let hits_in_counts = GpuOutput { buffer: &counts, offset: 1024 };
    assert_eq!(
        problem(scene.record_cast_rays_all(&mut enc, a, rays, 4, overlapping, hits_in_counts)),
        ("counts", BufferProblem::Overlaps { other: "hits" })
    );
    let huge = 1 + (wgpu::Limits::default().max_storage_buffer_binding_size / 20) as u32;
    assert!(matches!(
        problem(scene.record_cast_rays_all(
            &mut enc,
            a,
            GpuRays { count: 1, ..rays },
            huge,
            (&counts).into(),
            (&big_hits).into()
        )),
        ("hits", BufferProblem::OverBindingLimit { .. })
    ));
    assert!(matches!(
        scene.record_cast_rays_all(&mut enc, a, rays, 0, (&counts).into(), (&big_hits).into()),
        Err(Error::InvalidInput { .. })
    ));
    // Zero rays record nothing and need no room.
    let none = GpuRays { count: 0, ..rays };
    scene.record_cast_rays(&mut enc, a, none, (&small).into()).unwrap();
    // Nothing refused was recorded: the encoder still records and submits without an error.
    scene.record_cast_rays(&mut enc, a, rays, (&hits).into()).unwrap();
    let scope = d.push_error_scope(wgpu::ErrorFilter::Validation);
    ctx().queue().submit([enc.finish()]);
    d.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    assert!(pollster::block_on(scope.pop()).is_none(), "the encoder stayed valid");

    let mut cpu = Scene::new_cpu(Some(1)).unwrap();
    let m = &meshes[0];
    let c = cpu.add_body(&m.positions, &m.triangles, raycontact::BodyKind::Volumetric).unwrap();
    cpu.update().unwrap();
    let mut enc = d.create_command_encoder(&Default::default());
    assert!(matches!(
        cpu.record_cast_rays(&mut enc, c, rays, (&hits).into()),
        Err(Error::InvalidInput { .. })
    ));
    let _ = Ray::default();
}
