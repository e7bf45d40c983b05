//! The `untangle` example: two sheets that start interpenetrating are untangled by global
//! intersection analysis on both backends, to the same figures frame by frame, and stay tangled
//! with inversion handling alone.

use raycontact_examples::untangle::{self, Settings};

#[test]
fn the_analysis_untangles_the_sheets_and_inversions_alone_do_not() {
    let ctx = raycontact::GpuContext::new().expect("the GPU tests need an adapter");
    let settings = Settings { frames: 30, inversion_only: false };
    let gpu = untangle::run(Some(&ctx), settings, |_, _| {}).unwrap();
    let cpu = untangle::run(None, settings, |_, _| {}).unwrap();
    assert!(gpu[0].crossings > 50 && gpu[0].wrong.1 > 0, "they start tangled: {:?}", gpu[0]);
    assert_eq!(gpu[0].collisions.1, 0, "no inversion: no untangled previous frame");
    assert_eq!(gpu.last().unwrap().crossings, 0, "untangled: {:?}", gpu.last());
    // The first frames agree exactly (later ones may drift by rounding in the positions).
    assert_eq!(gpu[..5], cpu[..5]);
    assert_eq!(cpu.last().unwrap().crossings, 0);
    let alone = untangle::run(None, Settings { frames: 30, inversion_only: true }, |_, _| {}).unwrap();
    assert!(alone.iter().all(|f| f.crossings > 50), "still tangled: {:?}", alone.last());
    assert_eq!(alone.iter().map(|f| f.collisions.1).sum::<usize>(), 0, "inversion handling finds nothing");
}
