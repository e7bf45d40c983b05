//! The host's steps around a GPU frame's work (`FrameStats::host`): a detection that reads its
//! contacts back records, submits, waits for and copies them, and orders them; an update alone
//! reads nothing back; the CPU backend only orders.

use raycontact::{HostTimes, Pairs, Scene};
use raycontact_tests::ctx;

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
