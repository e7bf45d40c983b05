//! WebGPU's default limits: every kernel fits them, by the kernel table and by naga's reflection
//! of each assembled kernel, and the README's table is the kernel table; `required_limits()`
//! asks no more than `wgpu::Limits::default()` and is derived from the table; the shared context
//! runs on a default-limits device; a device with only the required limits, one with the
//! adapter's own, and an async context built with the other tuning
//! (`GpuContext::from_device_async_with`) detect what the CPU backend does; with timestamps, GPU
//! times are those of the stages that ran.

use naga::AddressSpace;
use raycontact::internals::kernels::{Binding, Kernel, KernelLimits, MAX_STORAGE_BUFFERS};
use raycontact::internals::layout::{WG_SIZE, workgroup_var_bytes};
use raycontact::{
    BodyKind, BvhAction, BvhUpdate, ContextOptions, GpuContext, IntersectionMode, Iterative, Pairs, Scene,
    Stage, Tuning, WalkFallback, meshes, wgpu,
};
use raycontact_tests::{ctx, key_surplus};

use crate::reflection::module_with;

/// What kernel `k` uses of a device's limits, from naga's reflection of its assembled WGSL: its
/// bindings by address space, the size of its uniform, the workgroup memory its entry point uses
/// (as WebGPU counts it: each variable rounded up to 16 bytes) and its workgroup size.
fn reflected(k: Kernel, tuning: &Tuning) -> KernelLimits {
    let m = module_with(k, tuning);
    let info =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&m)
            .expect("validates");
    let ep = m.entry_points.iter().position(|e| e.name == "main").expect("a main entry point");
    let uses = info.get_entry_point(ep);
    let mut out = KernelLimits {
        invocations: m.entry_points[ep].workgroup_size.iter().product(),
        ..Default::default()
    };
    for (h, g) in m.global_variables.iter() {
        let size = m.types[g.ty].inner.size(m.to_ctx());
        match g.space {
            AddressSpace::Storage { .. } => out.storage_buffers += 1,
            AddressSpace::Uniform => {
                out.uniform_buffers += 1;
                out.uniform_bytes = out.uniform_bytes.max(size);
            }
            AddressSpace::WorkGroup if !uses[h].is_empty() => {
                out.workgroup_bytes += workgroup_var_bytes(size)
            }
            _ => {}
        }
        out.bindings += u32::from(g.binding.is_some());
    }
    // WGSL does not say which uniform is bound with a dynamic offset: the table does.
    out.dynamic_uniform_buffers =
        k.bindings().iter().filter(|b| **b == Binding::UniformDynamic).count() as u32;
    out
}

#[test]
fn every_kernel_fits_webgpu_default_limits() {
    let d = wgpu::Limits::default();
    assert_eq!(MAX_STORAGE_BUFFERS, d.max_storage_buffers_per_shader_stage);
    for k in Kernel::ALL {
        let table = k.limits();
        for tuning in [Tuning::SOFTWARE, Tuning::GPU] {
            let with = k.limits_with(&tuning);
            assert_eq!(
                reflected(k, &tuning),
                with,
                "{}: the kernel table against naga's reflection",
                k.name()
            );
            // limits() is the most of any tuning (what a device is asked for).
            assert!(with.workgroup_bytes <= table.workgroup_bytes && with.invocations <= table.invocations);
        }
        assert_eq!(table, k.limits_with(&Tuning::GPU), "{}: the widest tuning's", k.name());
        let fits = [
            (
                "max_storage_buffers_per_shader_stage",
                table.storage_buffers,
                d.max_storage_buffers_per_shader_stage,
            ),
            (
                "max_uniform_buffers_per_shader_stage",
                table.uniform_buffers,
                d.max_uniform_buffers_per_shader_stage,
            ),
            (
                "max_dynamic_uniform_buffers_per_pipeline_layout",
                table.dynamic_uniform_buffers,
                d.max_dynamic_uniform_buffers_per_pipeline_layout,
            ),
            ("max_bindings_per_bind_group", table.bindings, d.max_bindings_per_bind_group),
            (
                "max_buffers_and_acceleration_structures_per_shader_stage",
                table.storage_buffers + table.uniform_buffers,
                d.max_buffers_and_acceleration_structures_per_shader_stage,
            ),
            (
                "max_uniform_buffer_binding_size",
                table.uniform_bytes,
                d.max_uniform_buffer_binding_size as u32,
            ),
            (
                "max_compute_workgroup_storage_size",
                table.workgroup_bytes,
                d.max_compute_workgroup_storage_size,
            ),
            (
                "max_compute_invocations_per_workgroup",
                table.invocations,
                d.max_compute_invocations_per_workgroup,
            ),
            ("max_compute_workgroup_size_x", table.invocations, d.max_compute_workgroup_size_x),
        ];
        for (limit, used, default) in fits {
            assert!(used <= default, "{}: {limit} {used} > WebGPU's default {default}", k.name());
        }
        eprintln!("{:>16}: {table:?}", k.name());
    }
}

/// The README's table of what each kernel uses (its rows `| `name` | storage | uniform |
/// workgroup bytes | invocations |`) is the kernel table's: one row per kernel, each its figures.
#[test]
fn the_readmes_kernel_table_is_the_kernel_tables() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).expect("README.md");
    let start = readme.find("| kernel | storage buffers |").expect("the README's kernel table");
    let rows: Vec<Vec<String>> = readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().replace(',', "")).collect())
        .collect();
    let mut names: Vec<&str> = rows.iter().map(|r| r[0].trim_matches('`')).collect();
    let mut kernels: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
    names.sort_unstable();
    kernels.sort_unstable();
    assert_eq!(names, kernels, "the README's rows: one per kernel");
    let mut wrong = Vec::new();
    for k in Kernel::ALL {
        let row = rows.iter().find(|r| r[0] == format!("`{}`", k.name())).expect("a row");
        let t = k.limits();
        let uniform = match t.dynamic_uniform_buffers {
            0 => t.uniform_buffers.to_string(),
            _ => format!("{} (dynamic offset)", t.uniform_buffers),
        };
        let want = [
            t.storage_buffers.to_string(),
            uniform,
            t.workgroup_bytes.to_string(),
            t.invocations.to_string(),
        ];
        if row[1..] != want {
            wrong.push(format!("{}: README {:?}, kernel table {want:?}", k.name(), &row[1..]));
        }
    }
    assert!(wrong.is_empty(), "README rows:\n{}", wrong.join("\n"));
}

#[test]
fn required_limits_are_the_most_any_kernel_uses_and_within_the_defaults() {
    let r = raycontact::required_limits();
    let most = |f: fn(&KernelLimits) -> u32| Kernel::ALL.iter().map(|k| f(&k.limits())).max().unwrap();
    assert_eq!(r.max_storage_buffers_per_shader_stage, most(|l| l.storage_buffers));
    assert_eq!(r.max_storage_buffers_per_shader_stage, MAX_STORAGE_BUFFERS);
    assert_eq!(r.max_uniform_buffers_per_shader_stage, most(|l| l.uniform_buffers));
    assert_eq!(r.max_bindings_per_bind_group, most(|l| l.bindings));
    assert_eq!(r.max_compute_workgroup_storage_size, most(|l| l.workgroup_bytes));
    assert!(r.max_compute_workgroup_storage_size <= 16 * 1024);
    assert_eq!(r.max_compute_invocations_per_workgroup, WG_SIZE);
    assert_eq!(r.max_bind_groups, 1);
    let mut over = Vec::new();
    r.check_limits_with_fail_fn(&wgpu::Limits::default(), false, |name, need, default| {
        over.push((name, need, default))
    });
    assert!(over.is_empty(), "required_limits() above WebGPU's defaults: {over:?}");
    assert!(raycontact::required_features().is_empty());
}

#[test]
fn the_shared_context_has_webgpu_default_limits_and_no_features() {
    let device = ctx().device();
    assert_eq!(device.limits(), wgpu::Limits::default());
    assert_eq!(device.features(), wgpu::Features::empty());
    assert!(!ctx().has_timestamps());
}

/// Two interpenetrating tori and a folded cloth over them: contacts of every class.
pub(crate) fn scene(s: &mut Scene) {
    let torus = meshes::torus(1.0, 0.35, 32, 16);
    let moved = torus.transformed(glam::Affine3A::from_translation(glam::Vec3::new(0.6, 0.1, 0.2)));
    let cloth = meshes::grid_sheet(3.0, 3.0, 24, 24)
        .transformed(glam::Affine3A::from_translation(glam::Vec3::new(0.0, 0.0, 0.3)));
    s.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap();
    s.add_body(&moved.positions, &moved.triangles, BodyKind::Volumetric).unwrap();
    s.add_body(&cloth.positions, &cloth.triangles, BodyKind::Cloth { half_thickness: 0.02 }).unwrap();
    s.set_prediction_distance(0.05).unwrap();
}

/// Moves [`scene`]'s second body along x by a hundredth times `frame`, so that each frame has
/// work.
pub(crate) fn drift(s: &mut Scene, frame: usize) {
    let b = s.bodies().nth(1).unwrap();
    let p: Vec<_> =
        s.positions(b).unwrap().iter().map(|p| *p + glam::Vec3::X * 0.01 * frame as f32).collect();
    s.set_positions(b, &p).unwrap();
}

/// The contacts of [`scene`] on `ctx`, compared with the CPU backend's, over two frames (the
/// second an iterative pass).
fn detects_as_the_cpu_backend(ctx: &GpuContext, what: &str) {
    let mut gpu = Scene::new(ctx);
    let mut cpu = Scene::new_cpu(Some(1)).unwrap();
    for s in [&mut gpu, &mut cpu] {
        scene(s);
        s.set_iterative(Some(raycontact::walk::Iterative::new(0.5))).unwrap();
    }
    for frame in 0..2 {
        let g = gpu.detect(Pairs::Overlapping).unwrap();
        let c = cpu.detect(Pairs::Overlapping).unwrap();
        assert!(!c.contacts.is_empty());
        assert_eq!(g.stats.iterative, frame == 1, "{what}: frame {frame}");
        assert_eq!(key_surplus(&g.contacts, &c.contacts), (vec![], vec![]), "{what}: frame {frame}");
    }
}

#[test]
fn a_device_with_only_the_required_limits_detects_as_the_cpu_backend() {
    let adapter = ContextOptions::from_env().adapter().expect("an adapter");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: raycontact::required_features(),
        required_limits: raycontact::required_limits(),
        ..Default::default()
    }))
    .expect("a device with raycontact's required limits");
    assert_eq!(device.limits(), raycontact::required_limits());
    let ctx = GpuContext::from_device(device, queue, adapter.get_info()).unwrap();
    detects_as_the_cpu_backend(&ctx, "required limits");
}

/// `GpuContext::from_device_async_with` (the web's way to choose the kernels' tuning) builds the
/// kernels for the tuning it is given, not the adapter kind's, and they detect what the CPU
/// backend does; a tuning the kernels cannot be built with is refused.
#[test]
fn an_async_context_on_a_device_builds_the_tuning_it_is_given() {
    let adapter = ContextOptions::from_env().adapter().expect("an adapter");
    let own = Tuning::for_device_type(adapter.get_info().device_type);
    let other = if own == Tuning::GPU { Tuning::SOFTWARE } else { Tuning::GPU };
    let device = || {
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_features: raycontact::required_features(),
            required_limits: raycontact::required_limits(),
            ..Default::default()
        }))
        .expect("a device with raycontact's required limits")
    };
    let (d, q) = device();
    let options = ContextOptions { tuning: Some(other), ..ContextOptions::default() };
    let ctx =
        pollster::block_on(GpuContext::from_device_async_with(d, q, adapter.get_info(), &options)).unwrap();
    assert_eq!(ctx.tuning(), other);
    detects_as_the_cpu_backend(&ctx, "the other tuning, from_device_async_with");
    let (d, q) = device();
    let bad = ContextOptions { tuning: Some(Tuning { items: 3, ..other }), ..ContextOptions::default() };
    let refused = pollster::block_on(GpuContext::from_device_async_with(d, q, adapter.get_info(), &bad));
    assert!(matches!(refused, Err(raycontact::Error::InvalidInput { .. })), "{:?}", refused.err());
}

#[test]
fn a_context_with_the_adapters_own_limits_detects_as_the_cpu_backend() {
    // `GpuContext::new` asks for every limit the adapter has, and timestamps when it has them.
    let ctx = GpuContext::new().expect("an adapter");
    assert_eq!(ctx.device().limits(), ContextOptions::from_env().adapter().unwrap().limits());
    detects_as_the_cpu_backend(&ctx, "adapter limits");
    let mut s = Scene::new(&ctx);
    scene(&mut s);
    let found = s.detect(Pairs::Overlapping).unwrap();
    let timed = found.stats.stages.iter().any(|(_, st)| st.gpu_ns.is_some());
    assert_eq!(timed, ctx.has_timestamps(), "per-stage GPU times exactly when the device has timestamps");
}

/// With timestamps, a frame's stage has a GPU time exactly when it ran (dispatched a kernel): a
/// stage that does not run records no pass, and its time is neither read nor reported (the
/// bounds of a rebuild, the tree stages of a refit and of an iterative pass, the pairs of an
/// iterative pass, the intersection stages when off and the contour's with crossings alone; the
/// upload and readback never have one). The times are the frame's: each above zero, and
/// together within the wall time of the call that ran it (a detection reads them with its
/// contacts, an update on its own).
#[test]
fn gpu_times_are_those_of_the_stages_that_ran() {
    let ctx = GpuContext::new().expect("an adapter");
    if !ctx.has_timestamps() {
        return;
    }
    let check = |(stats, wall_ns): (raycontact::FrameStats, f64), what: &str, ran: &[Stage]| {
        for (stage, st) in &stats.stages {
            assert_eq!(st.gpu_ns.is_some(), st.dispatches > 0, "{what}: {stage}'s GPU time");
            assert_eq!(st.dispatches > 0, ran.contains(stage), "{what}: whether {stage} ran");
        }
        let times: Vec<f64> = stats.stages.iter().filter_map(|(_, st)| st.gpu_ns).collect();
        let total: f64 = times.iter().sum();
        assert!(
            times.iter().all(|t| t.is_finite() && *t > 0.0),
            "{what}: every stage that ran took time: {times:?}"
        );
        assert!(total <= wall_ns, "{what}: GPU times {total} ns within the call's {wall_ns} ns");
    };
    // The frame's figures and the wall time of the call that ran it.
    let timed = |run: &mut dyn FnMut() -> raycontact::FrameStats| {
        let start = std::time::Instant::now();
        let stats = run();
        (stats, start.elapsed().as_nanos() as f64)
    };
    let mut s = Scene::new(&ctx);
    scene(&mut s);
    // A body's positions set again, one coordinate a float further (the very positions it has
    // would change nothing): the next frame brings the trees up to date.
    let touch = |s: &mut Scene| {
        let b = s.bodies().nth(1).unwrap();
        let mut p = s.positions(b).unwrap().to_vec();
        p[0].x = p[0].x.next_up();
        s.set_positions(b, &p).unwrap();
    };
    let tree = [Stage::Normals, Stage::Morton, Stage::Sort, Stage::Hierarchy, Stage::Fit];
    let detect = |s: &mut Scene| timed(&mut || s.detect(Pairs::Overlapping).unwrap().stats);
    check(detect(&mut s), "a rebuild", &[&tree[..], &[Stage::Pairs, Stage::Rays]].concat());
    // Nothing changed since: the frame keeps the trees and records none of their stages.
    let kept = timed(&mut || s.update().unwrap());
    assert_eq!(kept.0.bvh.action, BvhAction::Kept);
    check(kept, "an update with nothing changed", &[]);
    touch(&mut s);
    check(timed(&mut || s.update().unwrap()), "an update", &tree);
    s.set_bvh_update(BvhUpdate::Refit).unwrap();
    touch(&mut s);
    let refit = [Stage::Normals, Stage::Bounds, Stage::Fit, Stage::Pairs, Stage::Rays];
    check(detect(&mut s), "a refit", &refit);
    // The intersection stages: crossings alone have no contour stage (no empty pass).
    let intersect = |s: &mut Scene, mode: IntersectionMode, ran: &[Stage], what: &str| {
        s.set_intersections(mode);
        touch(s);
        check(detect(s), what, &[&refit[..], ran].concat());
    };
    intersect(&mut s, IntersectionMode::Crossings, &[Stage::Crossings, Stage::Analysis], "crossings");
    let all = [Stage::Crossings, Stage::Contour, Stage::Analysis];
    intersect(&mut s, IntersectionMode::Full, &all, "the full intersection stages");
    s.set_intersections(IntersectionMode::Off);
    // Walks that miss are dropped: the pass needs no BVH, so the trees are left as they are.
    s.set_iterative(Some(Iterative { fallback: WalkFallback::Drop, ..Iterative::new(0.1) })).unwrap();
    assert!(!s.detect(Pairs::Overlapping).unwrap().stats.iterative);
    let found = detect(&mut s);
    assert!(found.0.iterative, "the bodies did not move: an iterative pass");
    check(found, "an iterative pass", &[Stage::Rays]);
}

/// With the GPU stage times off, no stage has a GPU time or writes a timestamp and nothing more
/// is read back, the contacts and the work are those of a timed scene, and turning them off and
/// on again, even between an update and its detection, creates no buffer and times only what it
/// wrote. A timed scene's frame and detection recorded into the caller's encoder write none.
#[test]
fn gpu_stage_times_turned_off_write_no_timestamp_and_change_no_contact() {
    let ctx = GpuContext::new().expect("an adapter");
    if !ctx.has_timestamps() {
        return;
    }
    let (mut timed, mut plain) = (Scene::new(&ctx), Scene::new(&ctx));
    for s in [&mut timed, &mut plain] {
        scene(s);
    }
    plain.set_gpu_timestamps(false);
    assert!(timed.gpu_timestamps() && !plain.gpu_timestamps());
    let untimed = |stats: &raycontact::FrameStats| stats.stages.iter().all(|(_, st)| st.gpu_ns.is_none());
    for frame in 0..3 {
        drift(&mut timed, frame);
        drift(&mut plain, frame);
        let (t, p) = (timed.detect(Pairs::Overlapping).unwrap(), plain.detect(Pairs::Overlapping).unwrap());
        assert!(!t.contacts.is_empty());
        assert_eq!(key_surplus(&t.contacts, &p.contacts), (vec![], vec![]), "frame {frame}");
        assert!(!untimed(&t.stats), "frame {frame}: the timed scene's stages have GPU times");
        assert!(untimed(&p.stats), "frame {frame}: no GPU time with the timestamps off");
        for (stage, st) in &t.stats.stages {
            let written = if st.gpu_ns.is_some() { 2 } else { 0 };
            assert_eq!(st.timestamps, written, "frame {frame}: {stage}'s timestamps, as read");
        }
        assert_eq!(p.stats.timestamps(), 0, "frame {frame}: none written with the timestamps off");
        assert_eq!(t.stats.dispatches(), p.stats.dispatches(), "frame {frame}: the same work");
        assert!(p.stats.bytes_read_back < t.stats.bytes_read_back, "frame {frame}: no timestamps read");
    }
    // Turned on and off between an update and its detection: each times what it wrote.
    let buffers = plain.buffer_allocations();
    plain.set_gpu_timestamps(true);
    drift(&mut plain, 3);
    let update = plain.update().unwrap();
    assert!(update.stages.iter().any(|(_, st)| st.gpu_ns.is_some()), "the update timed");
    plain.set_gpu_timestamps(false);
    assert!(untimed(&plain.detect(Pairs::Overlapping).unwrap().stats), "its detection not");
    drift(&mut plain, 4);
    plain.update().unwrap();
    plain.set_gpu_timestamps(true);
    let found = plain.detect(Pairs::Overlapping).unwrap();
    for (stage, st) in &found.stats.stages {
        let ray_stage = matches!(stage, Stage::Pairs | Stage::Rays);
        assert_eq!(st.gpu_ns.is_some(), ray_stage && st.dispatches > 0, "{stage}: timed as it was recorded");
    }
    assert_eq!(plain.buffer_allocations(), buffers, "no buffer for turning them off and on");
    // Recorded into the caller's encoder, where nothing resolves or reads them: none written,
    // though the scene times its own frames (the next detection's stages still are).
    drift(&mut timed, 5);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let update = timed.record_update(&mut enc).unwrap();
    let detect = timed.record_detect(&mut enc, Pairs::Overlapping).unwrap();
    ctx.queue().submit([enc.finish()]);
    assert!(update.dispatches() > 0 && detect.dispatches() > 0, "recorded the work");
    assert_eq!((update.timestamps(), detect.timestamps()), (0, 0), "no timestamps recorded");
    assert!(untimed(&update) && untimed(&detect));
    assert!(timed.gpu_timestamps(), "the setting is the scene's, unchanged");
    drift(&mut timed, 6);
    let found = timed.detect(Pairs::Overlapping).unwrap();
    assert!(found.stats.timestamps() > 0 && !untimed(&found.stats), "its own frames still timed");
}

#[test]
fn a_device_short_of_a_required_limit_is_refused_by_name() {
    let adapter = ContextOptions::from_env().adapter().expect("an adapter");
    let r = raycontact::required_limits();
    let (storage, memory) = (r.max_storage_buffers_per_shader_stage, r.max_compute_workgroup_storage_size);
    let short = [
        (
            "max_storage_buffers_per_shader_stage",
            (storage, storage - 1),
            wgpu::Limits { max_storage_buffers_per_shader_stage: storage - 1, ..r.clone() },
        ),
        (
            "max_compute_workgroup_storage_size",
            (memory, memory - 16),
            wgpu::Limits { max_compute_workgroup_storage_size: memory - 16, ..r.clone() },
        ),
        (
            "max_compute_invocations_per_workgroup",
            (WG_SIZE, WG_SIZE / 2),
            wgpu::Limits { max_compute_invocations_per_workgroup: WG_SIZE / 2, ..r.clone() },
        ),
    ];
    for (name, (need, has), limits) in short {
        let (device, queue) = pollster::block_on(
            adapter.request_device(&wgpu::DeviceDescriptor { required_limits: limits, ..Default::default() }),
        )
        .unwrap();
        match GpuContext::from_device(device, queue, adapter.get_info()) {
            Err(e @ raycontact::Error::Limit { .. }) => {
                let raycontact::Error::Limit { limit, needed, device, .. } = &e else { unreachable!() };
                assert_eq!((*limit, *needed, *device), (name, need as u64, has as u64), "{e}");
                assert!(e.to_string().contains(&format!("{name} = {has}, raycontact needs {need}")), "{e}");
            }
            other => panic!("{name}: expected Error::Limit, got {other:?}"),
        }
    }
}
