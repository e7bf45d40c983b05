//! The `tori` example at a small size: the response pushes two interpenetrating tori apart, on
//! the GPU and on the CPU backend, to the same contact counts frame by frame.

use raycontact_examples::tori::{self, RESOLVED, Settings};

#[test]
fn the_response_pushes_the_tori_apart_on_both_backends() {
    let settings = Settings { frames: 150, ..Settings::default() };
    let ctx = super::ctx();
    let gpu = tori::run(Some(ctx), settings, |_, _| {}).unwrap();
    let cpu = tori::run(None, settings, |_, _| {}).unwrap();
    for frames in [&gpu, &cpu] {
        assert!(
            frames[0].depth > 0.15 && frames[0].contacts > 10,
            "they start interpenetrating: {:?}",
            frames[0]
        );
        let last = frames.last().unwrap();
        assert!(last.depth <= RESOLVED, "still interpenetrating: {last:?}");
        assert!(last.distance > frames[0].distance + 0.2, "pushed apart: {last:?}");
        // The contact readback follows the count while it rises in the first frames; then no
        // buffer is created.
        assert!(
            frames[20..].iter().all(|f| f.buffers == last.buffers),
            "a GPU buffer created after frame 20"
        );
    }
    // The two backends' frames agree (the forces differ by at most a few fixed-point steps).
    for (g, c) in gpu.iter().zip(&cpu).take(20) {
        assert!((g.distance - c.distance).abs() < 1e-3, "{g:?} {c:?}");
    }
}
