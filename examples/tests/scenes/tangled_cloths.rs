//! The `tangled_cloths` example at a small size (16 x 16 vertices, 30 frames), with and without
//! inversion handling, on the GPU and on the CPU backend: separated with it, tangled without it;
//! and started tangled, separated by global intersection analysis, not by inversion handling
//! alone.

use raycontact_examples::tangled::{self, Frame, Settings, TangledCloths};

fn run(ctx: Option<&raycontact::GpuContext>, s: Settings) -> Vec<Frame> {
    let mut sim = TangledCloths::new(ctx, s).unwrap();
    (0..s.frames).map(|_| sim.step().unwrap()).collect()
}

#[test]
fn inversion_handling_separates_the_cloths_and_without_it_they_stay_tangled() {
    let ctx = super::ctx();
    for inversion in [true, false] {
        let s = Settings { size: 16, frames: 30, inversion, ..Settings::default() };
        let gpu = run(Some(ctx), s);
        let cpu = run(None, s);
        for (what, frames) in [("GPU", &gpu), ("CPU", &cpu)] {
            tangled::verdict(&s, frames).unwrap_or_else(|e| panic!("{what}, inversion {inversion}: {e}"));
            let (first, last) = (frames[0], frames.last().unwrap());
            if inversion {
                assert!(first.inverted > 20, "{what}: the crossing is seen as inversions: {first:?}");
                assert!(last.lead < 0.0, "{what}: A ends under B: {last:?}");
            } else {
                assert_eq!(first.inverted, 0, "{what}: no inversion without inversion handling");
                assert!(
                    first.tangled_total() > 20 && last.tangled_total() >= first.tangled_total() / 2,
                    "{what}: {first:?} {last:?}"
                );
                assert!(last.lead > 0.0, "{what}: A's middle stays over B's: {last:?}");
            }
        }
        // The same crossing on both backends; afterwards the forces, equal up to the
        // response's fixed-point rounding, keep the runs close.
        assert_eq!((gpu[0].inverted, gpu[0].tangled), (cpu[0].inverted, cpu[0].tangled), "the first frame");
        for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
            assert!((g.lead - c.lead).abs() < 2e-3, "frame {i}: {g:?} {c:?}");
        }
    }
}

#[test]
fn started_tangled_the_analysis_separates_them_and_inversion_handling_alone_does_not() {
    // Issue 13: the cloths start through each other (no untangled previous frame).
    let ctx = super::ctx();
    for analysis in [true, false] {
        let s = Settings { size: 16, frames: 30, ..Settings::started_tangled(analysis) };
        let gpu = run(Some(ctx), s);
        let cpu = run(None, s);
        for (what, frames) in [("GPU", &gpu), ("CPU", &cpu)] {
            tangled::verdict(&s, frames).unwrap_or_else(|e| panic!("{what}, analysis {analysis}: {e}"));
            let first = frames[0];
            assert_eq!(first.inverted, 0, "{what}: nothing crossed since a previous frame");
            if analysis {
                assert!(first.crossings > 20 && first.loops >= 1 && first.wrong > 20, "{what}: {first:?}");
                assert!(first.intersection_contacts.1 > 0, "{what}: untangling contacts: {first:?}");
            } else {
                assert!(frames.iter().all(|f| f.tangled_total() > 20), "{what}: still tangled");
            }
        }
        // The same intersections on both backends in the first frame.
        let key = |f: &Frame| (f.crossings, f.loops, f.wrong, f.intersection_contacts, f.tangled);
        assert_eq!(key(&gpu[0]), key(&cpu[0]), "analysis {analysis}: the first frame");
    }
}
