//! Bad input returns a typed error naming the body and the element; nothing panics or hangs.

use glam::Vec3;
use raycontact::meshes;
use raycontact::{BodyKind, ContextOptions, Error, GpuContext, Scene};
use raycontact_tests::ctx;

fn scenes() -> Vec<Scene> {
    vec![Scene::new(ctx()), Scene::new_cpu(Some(1)).unwrap()]
}

#[test]
fn bad_bodies_are_rejected() {
    let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
    for mut s in scenes() {
        let e = s.add_body(&tri, &[[0, 1, 3]], BodyKind::Volumetric).unwrap_err();
        assert!(matches!(e, Error::IndexOutOfRange { triangle: 0, index: 3, vertex_count: 3, .. }), "{e}");
        assert!(e.to_string().contains("triangle 0") && e.to_string().contains("vertex 3"), "{e}");

        let bad = [Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), Vec3::Y];
        let e = s.add_body(&bad, &[[0, 1, 2]], BodyKind::Volumetric).unwrap_err();
        assert!(matches!(e, Error::NonFinite { vertex: 1, .. }), "{e}");
        let inf = [Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::INFINITY, 0.0)];
        assert!(matches!(
            s.add_body(&inf, &[[0, 1, 2]], BodyKind::Volumetric),
            Err(Error::NonFinite { vertex: 2, .. })
        ));

        assert!(matches!(s.add_body(&tri, &[], BodyKind::Volumetric), Err(Error::NoTriangles { .. })));
        for t in [-0.1, f32::NAN, f32::INFINITY] {
            let e = s.add_body(&tri, &[[0, 1, 2]], BodyKind::Cloth { half_thickness: t }).unwrap_err();
            assert!(matches!(e, Error::BadThickness { .. }), "{e}");
        }
        // A zero thickness is a valid (infinitely thin) cloth.
        let id = s.add_body(&tri, &[[0, 1, 2]], BodyKind::Cloth { half_thickness: 0.0 }).unwrap();
        assert!(e_names_body(&s.set_positions(id, &tri[..2]).unwrap_err(), id));
        assert!(matches!(
            s.set_positions(id, &tri[..2]),
            Err(Error::WrongVertexCount { got: 2, expected: 3, .. })
        ));
        assert!(matches!(s.set_positions(id, &bad), Err(Error::NonFinite { vertex: 1, .. })));
        s.remove_body(id).unwrap();
        assert!(matches!(s.set_positions(id, &tri), Err(Error::UnknownBody { .. })));
        assert!(matches!(s.remove_body(id), Err(Error::UnknownBody { .. })));
        // The slot is reused, the old id stays dead.
        let id2 = s.add_body(&tri, &[[0, 1, 2]], BodyKind::Volumetric).unwrap();
        assert_eq!(id2.index(), id.index());
        assert_ne!(id2, id);
        assert!(matches!(s.positions(id), Err(Error::UnknownBody { .. })));
        s.update().unwrap();
    }
}

fn e_names_body(e: &Error, id: raycontact::BodyId) -> bool {
    e.to_string().contains(&id.to_string())
}

#[test]
fn bodies_over_the_device_limits_are_rejected() {
    let ctx = ctx();
    let max = ctx.device().limits().max_storage_buffer_binding_size;
    // The node buffer takes 64 bytes per triangle, 96 with the child pairs: one past what a
    // binding can hold.
    let per_triangle = if ctx.tuning().child_pairs { 96 } else { 64 };
    let n = (max / per_triangle + 1) as usize;
    let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let triangles = vec![[0u32, 1, 2]; n];
    let mut s = Scene::new(ctx);
    let e = s.add_body(&tri, &triangles, BodyKind::Volumetric).unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("raycontact.nodes"), "{e}");
    // The scene is still usable.
    let m = meshes::uv_sphere(1.0, 8, 4);
    s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
    s.update().unwrap();
}

#[test]
fn removing_a_body_keeps_the_others_right() {
    let a = meshes::torus(1.0, 0.3, 24, 12);
    let b = meshes::uv_sphere(1.0, 16, 8);
    let c = meshes::cuboid(Vec3::ONE, 4);
    let mut gpu = Scene::new(ctx());
    let mut cpu = Scene::new_cpu(None).unwrap();
    for s in [&mut gpu, &mut cpu] {
        let ids: Vec<_> = [&a, &b, &c]
            .iter()
            .map(|m| s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap())
            .collect();
        s.update().unwrap();
        s.remove_body(ids[1]).unwrap();
        assert!(matches!(s.cast_rays(ids[0], &[]), Err(Error::StaleBvh)));
        s.update().unwrap();
        assert_eq!(s.bodies().count(), 2);
        assert_eq!(s.packing().params.tri_count as usize, a.triangles.len() + c.triangles.len());
    }
    let g = gpu.frame_data().unwrap();
    let c2 = cpu.frame_data().unwrap();
    let p = gpu.packing().clone();
    for body in 0..2 {
        assert_eq!(g.body_nodes(&p, body), c2.body_nodes(&p, body));
    }
}

#[test]
fn no_adapter_message_says_how_to_get_one() {
    // An adapter name that matches nothing gives NoAdapter with the install hint.
    let options = ContextOptions { adapter_name: Some("no-such-adapter-7f3a".into()), ..Default::default() };
    let e = GpuContext::with_options(options).unwrap_err();
    assert!(matches!(e, Error::NoAdapter { .. }), "{e}");
    assert!(e.to_string().contains("apt-get install mesa-vulkan-drivers"), "{e}");
    assert!(e.to_string().contains("no-such-adapter-7f3a"), "{e}");
}

#[test]
fn runs_on_a_callers_device() {
    // A renderer's device: created by the caller with the adapter's own limits, then wrapped.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .expect("an adapter (install mesa-vulkan-drivers)");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("caller's device"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .expect("device");
    let ctx = GpuContext::from_device(device.clone(), queue.clone(), adapter.get_info()).unwrap();
    let m = meshes::torus(1.0, 0.3, 24, 12);
    let mut s = Scene::new(&ctx);
    let id = s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
    // The caller records the frame into its own encoder and submits it.
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    let stats = s.record_update(&mut encoder).unwrap();
    assert!(stats.dispatches() > 0);
    queue.submit([encoder.finish()]);
    let hits = s.cast_rays(id, &[raycontact::Ray::new(Vec3::new(1.0, 0.0, 2.0), -Vec3::Z)]).unwrap();
    assert!(hits[0].is_hit());
    assert!((hits[0].t - 1.7).abs() < 1e-3, "{}", hits[0].t);

    // A device with fewer storage buffers per stage than the kernels bind is refused with an
    // error that names the limit, the value needed and the device's.
    let limits = wgpu::Limits { max_storage_buffers_per_shader_stage: 7, ..wgpu::Limits::default() };
    let (small, small_queue) = pollster::block_on(
        adapter.request_device(&wgpu::DeviceDescriptor { required_limits: limits, ..Default::default() }),
    )
    .unwrap();
    let e = GpuContext::from_device(small, small_queue, adapter.get_info()).unwrap_err();
    match &e {
        Error::Limit { limit, needed, device, .. } => {
            assert_eq!((*limit, *needed, *device), ("max_storage_buffers_per_shader_stage", 8, 7), "{e}");
        }
        other => panic!("expected Error::Limit, got {other:?}"),
    }
    assert!(e.to_string().contains("max_storage_buffers_per_shader_stage = 7, raycontact needs 8"), "{e}");
}

/// A context of its own (the shared one must survive a test that breaks it), and a scene of two
/// overlapping spheres on it that has detected once (with contacts): the context, the scene, the
/// second sphere and its positions.
fn own_context_scene() -> (GpuContext, Scene, raycontact::BodyId, Vec<Vec3>) {
    let ctx = GpuContext::new().expect("an adapter");
    let mut s = Scene::new(&ctx);
    let m = meshes::icosphere(1.0, 2);
    let moved = m.transformed(glam::Affine3A::from_translation(Vec3::X));
    s.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
    let b = s.add_body(&moved.positions, &moved.triangles, BodyKind::Volumetric).unwrap();
    assert!(!s.detect(raycontact::Pairs::Overlapping).unwrap().contacts.is_empty());
    (ctx, s, b, moved.positions)
}

#[test]
fn a_lost_device_is_a_typed_error_from_the_next_call() {
    // Destroy the device mid-run.
    let (ctx, mut s, b, positions) = own_context_scene();
    ctx.device().destroy();
    s.set_positions(b, &positions).unwrap();
    let err = s.detect(raycontact::Pairs::Overlapping).expect_err("a destroyed device cannot detect");
    assert!(matches!(err, raycontact::Error::Gpu { .. } | raycontact::Error::Readback { .. }), "{err:?}");
    assert!(s.contact_forces().is_err());
    assert!(s.update().is_err());
}

#[test]
fn an_uncaptured_gpu_error_is_reported_by_the_next_detection() {
    // An error raised on the device outside raycontact's error scopes (here a buffer both mapped
    // for reading and for writing, which is invalid) is taken by the next detection's readback,
    // whose contacts are then not returned as if nothing had happened.
    let (ctx, mut s, _, _) = own_context_scene();
    let _invalid = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("invalid"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::MAP_WRITE,
        mapped_at_creation: false,
    });
    let err = s.detect(raycontact::Pairs::Overlapping).expect_err("the error is reported");
    assert!(matches!(err, raycontact::Error::Gpu { .. }), "{err:?}");
    // Reported once: the next detection is clean.
    assert!(!s.detect(raycontact::Pairs::Overlapping).unwrap().contacts.is_empty());
}

/// How a CPU scene's workers wait is a CPU scene's setting: a GPU scene has none and refuses it.
#[test]
fn a_gpu_scene_has_no_workers_to_keep_awake() {
    let mut s = Scene::new(ctx());
    assert_eq!(s.workers_awake(), None);
    let e = s.set_workers_awake(raycontact::WorkersAwake::Off).unwrap_err();
    assert!(matches!(e, Error::InvalidInput { .. }) && e.to_string().contains("CPU scene"), "{e}");
}
