//! The host's steps around a GPU frame's work (`FrameStats::host`): a detection that reads its
//! contacts back records, submits, waits for them, reads the counters and orders them (in the
//! readback's mapping, or copied out of it where they outgrew the frame's copy); an update alone
//! reads nothing back; the CPU backend only orders.

use raycontact::{HostTimes, Pairs, Scene, Stage};
use raycontact_tests::{ctx, key_surplus};

use crate::limits::{drift, scene};

#[test]
fn a_gpu_detection_times_its_host_steps_and_an_update_reads_nothing_back() {
    let (mut gpu, mut cpu) = (Scene::new(ctx()), Scene::new_cpu(Some(1)).unwrap());
    scene(&mut gpu);
    scene(&mut cpu);
    for frame in 0..3 {
        drift(&mut gpu, frame);
        let found = gpu.detect(Pairs::Overlapping).unwrap();
        assert!(!found.contacts.is_empty(), "frame {frame}");
        let h = found.stats.host;
        for (step, ns) in [("record", h.record_ns), ("submit", h.submit_ns), ("wait", h.wait_ns)] {
            assert!(ns > 0.0, "frame {frame}: {step} {h:?}");
        }
        assert!(h.copy_ns > 0.0 && h.order_ns > 0.0, "frame {frame}: counters read, contacts ordered, {h:?}");
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

/// Contacts that outgrew the frame's copy (more than 64 in the first detection, far more than
/// the frame before in the second) are read back by a second copy and copied out of its
/// mapping; the frames after read them in the frame's own copy's mapping, in place (which must
/// then be unmapped before the next frame copies into it): either way the CPU backend's
/// contacts (by key, as `limits` compares them), frame after frame.
#[test]
fn contacts_read_after_a_second_copy_or_in_place_are_the_cpu_backends() {
    let (mut gpu, mut cpu) = (Scene::new(ctx()), Scene::new_cpu(Some(1)).unwrap());
    scene(&mut gpu);
    scene(&mut cpu);
    let b = gpu.bodies().nth(1).unwrap();
    let start = gpu.positions(b).unwrap().to_vec();
    let copies = |s: &raycontact::FrameStats| s.get(Stage::Readback).map_or(0, |r| r.copies);
    let mut first = 0;
    for frame in 0..5 {
        // Frame 0 with the second torus far away; then back, overlapping the first and the
        // sheet: many more contacts than frame 0's plus the margin the frame's copy holds.
        let shift = if frame == 0 { glam::Vec3::X * 10.0 } else { glam::Vec3::X * 0.01 * frame as f32 };
        let p: Vec<_> = start.iter().map(|p| *p + shift).collect();
        for s in [&mut gpu, &mut cpu] {
            s.set_positions(b, &p).unwrap();
        }
        let (g, c) = (gpu.detect(Pairs::Overlapping).unwrap(), cpu.detect(Pairs::Overlapping).unwrap());
        assert_eq!(key_surplus(&g.contacts, &c.contacts), (vec![], vec![]), "frame {frame}");
        // The frame's copy of the counters and contacts, and a second copy of them all in frames
        // 0 (the first detection's copy holds 64) and 1.
        assert_eq!(copies(&g.stats), if frame < 2 { 2 } else { 1 }, "frame {frame}: copies");
        let n = c.contacts.len();
        if frame == 1 {
            // Past the frame's copy: frame 0's count, a quarter more and 64.
            assert!(n > first + first / 4 + 64, "frame 1: {n} contacts after {first}");
        }
        first = if frame == 0 { n } else { first };
    }
}
