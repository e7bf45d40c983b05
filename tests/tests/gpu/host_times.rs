//! The host's steps around a GPU frame's work (`FrameStats::host`): a detection that reads its
//! contacts back records, submits, waits for and copies them, and orders them; an update alone
//! reads nothing back; the CPU backend only orders.

use raycontact::{BodyKind, GpuContext, HostTimes, Pairs, Scene, meshes};

/// Two interpenetrating tori.
fn tori(s: &mut Scene) {
    let torus = meshes::torus(1.0, 0.35, 32, 16);
    let moved = torus.transformed(glam::Affine3A::from_translation(glam::Vec3::new(0.6, 0.1, 0.2)));
    s.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap();
    s.add_body(&moved.positions, &moved.triangles, BodyKind::Volumetric).unwrap();
}

/// Moves the second body a little, so that each frame has work.
fn drift(s: &mut Scene, frame: usize) {
    let b = s.bodies().nth(1).unwrap();
    let p: Vec<_> =
        s.positions(b).unwrap().iter().map(|p| *p + glam::Vec3::X * 0.01 * frame as f32).collect();
    s.set_positions(b, &p).unwrap();
}

#[test]
fn a_gpu_detection_times_its_host_steps_and_an_update_reads_nothing_back() {
    let ctx = GpuContext::new().expect("an adapter");
    let (mut gpu, mut cpu) = (Scene::new(&ctx), Scene::new_cpu(Some(1)).unwrap());
    tori(&mut gpu);
    tori(&mut cpu);
    for frame in 0..3 {
        drift(&mut gpu, frame);
        let found = gpu.detect(Pairs::Overlapping).unwrap();
        assert!(!found.contacts.is_empty(), "frame {frame}");
        let h = found.stats.host;
        for (step, ns) in [("record", h.record_ns), ("submit", h.submit_ns), ("wait", h.wait_ns)] {
            assert!(ns > 0.0, "frame {frame}: {step} {h:?}");
        }
        assert!(h.copy_ns > 0.0 && h.order_ns > 0.0, "frame {frame}: contacts copied and ordered, {h:?}");
        drift(&mut cpu, frame);
        let on_cpu = cpu.detect(Pairs::Overlapping).unwrap().stats.host;
        assert!(on_cpu.order_ns > 0.0, "frame {frame}: the CPU backend orders its contacts");
        let HostTimes { record_ns, submit_ns, wait_ns, copy_ns, .. } = on_cpu;
        assert_eq!([record_ns, submit_ns, wait_ns, copy_ns], [0.0; 4], "frame {frame}: nothing on a GPU");
    }
    // An update alone reads nothing back: no step of a detection.
    drift(&mut gpu, 3);
    assert_eq!(gpu.update().unwrap().host, HostTimes::default());
}
