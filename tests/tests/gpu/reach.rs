//! The rays classified by their re-projected length are not cast where they cannot reach
//! (`may_reach` in `shared/classify.wgsl`; `twins/reach.rs` checks the queries and the casts on
//! the CPU twins): on the GPU, a coarse cloth's self pair asks its BVH (`other_near`) and finds
//! the CPU backend's contacts; the sources that other bodies' leaf boxes turn away, counted as
//! the CPU backend counts them.

use glam::{Affine3A, Vec3};
use raycontact::meshes;
use raycontact::{BodyKind, Iterative, Pairs};
use raycontact_tests::{ctx, folded_sheet, other_tuning_ctx};

use crate::cloth::scenes_in;
use crate::narrow::assert_same;

#[test]
fn a_coarse_cloths_self_pair_casts_only_where_it_can_reach_and_finds_the_cpus_contacts() {
    // Cells of 0.1 against a reach of 0.02: the self pair asks `may_reach` (`other_near` on the
    // BVH) before casting a vertex's rays (`twins/reach.rs` checks that it then casts those of
    // the layers' overlap alone). The layers 0.012 apart touch over their overlap, 0.03 apart
    // not at all; both tunings (rays walked together or one by one), moved a little each frame.
    for context in [ctx(), other_tuning_ctx()] {
        for gap in [0.012, 0.03] {
            let sheet = folded_sheet(16, 10, 11, 0.1, gap);
            let mut s = scenes_in(context, &[(&sheet, BodyKind::Cloth { half_thickness: 0.004 })], 0.02);
            for frame in 0..3 {
                let shift = Vec3::new(0.01, -0.02, 0.005) * frame as f32;
                let at: Vec<Vec3> = sheet.positions.iter().map(|p| *p + shift).collect();
                for (scene, ids) in &mut s {
                    scene.set_positions(ids[0], &at).unwrap();
                }
                let what = format!("{:?}, gap {gap}, frame {frame}", context.tuning());
                let (gpu, cpu) =
                    (s[0].0.detect(Pairs::Overlapping).unwrap(), s[1].0.detect(Pairs::Overlapping).unwrap());
                let found = gpu.contacts;
                assert_same(&what, &found, &cpu.contacts);
                // The kernel's answers, seen through its count of the sources they turned away
                // (`twins/reach.rs` counts the same on the CPU twins): all but those of the
                // layers' overlap (at most 12 columns of 11 rows and the fold's), or at 0.03
                // every vertex.
                assert_eq!(gpu.stats.unreached, cpu.stats.unreached, "{what}: sources turned away");
                let (n, u) = (sheet.positions.len() as u32, gpu.stats.unreached);
                // The self pair lists every vertex of the sheet.
                assert_eq!((gpu.stats.sources, cpu.stats.sources), (n, n), "{what}: sources");
                if gap < 0.02 {
                    assert!(u >= n - (12 * 11 + 11) && u < n, "{what}: {u} of {n} sources turned away");
                    assert!(found.len() > 50, "{what}: {} contacts between the layers", found.len());
                    // The upper layer spans x from 0.633 to 1.1 (shifted with the sheet).
                    let x0 = 0.6 + shift.x;
                    let outside = found.iter().find(|c| c.source_point.x < x0);
                    assert!(outside.is_none(), "{what}: a contact off the layers' overlap: {outside:?}");
                } else {
                    assert_eq!(u, n, "{what}: every source turned away");
                    assert!(found.is_empty(), "{what}: {} contacts", found.len());
                }
            }
        }
    }
}

#[test]
fn the_sources_turned_away_are_counted_as_on_the_cpu_and_an_iterative_pass_counts_none() {
    // A ball under two sheets 0.01 and 0.1 above it, with a reach of 0.02: the ball's vertices
    // ask each sheet's leaf boxes (`other_near` without its triangle test) and most are turned
    // away, as are the far sheet's vertices at the ball and the near sheet; the sheets' self
    // pairs (cells of 0.05, coarse next to the reach) ask their triangles. Then iterative
    // frames, which cast or walk every remembered ray and turn none away.
    let ball = meshes::icosphere(0.5, 3);
    let sheet =
        |z: f32| meshes::grid_sheet(1.2, 1.2, 24, 24).transformed(Affine3A::from_translation(Vec3::Z * z));
    let (near, far) = (sheet(0.51), sheet(0.61));
    let cloth = BodyKind::Cloth { half_thickness: 0.004 };
    let bodies = [(&ball, BodyKind::Volumetric), (&near, cloth), (&far, cloth)];
    for context in [ctx(), other_tuning_ctx()] {
        let mut s = scenes_in(context, &bodies, 0.02);
        for (scene, _) in &mut s {
            scene.set_iterative(Some(Iterative { full_pass_every: 3, ..Iterative::new(0.05) })).unwrap();
        }
        let mut kinds = [0, 0];
        for frame in 0..4 {
            let shift = Vec3::new(0.002, -0.001, 0.0) * frame as f32;
            for (scene, ids) in &mut s {
                for ((m, _), id) in bodies.iter().zip(ids.iter()) {
                    let at: Vec<Vec3> = m.positions.iter().map(|p| *p + shift).collect();
                    scene.set_positions(*id, &at).unwrap();
                }
            }
            let what = format!("{:?}, frame {frame}", context.tuning());
            let (gpu, cpu) =
                (s[0].0.detect(Pairs::Overlapping).unwrap(), s[1].0.detect(Pairs::Overlapping).unwrap());
            assert_same(&what, &gpu.contacts, &cpu.contacts);
            assert_eq!(gpu.stats.iterative, cpu.stats.iterative, "{what}");
            assert_eq!(gpu.stats.unreached, cpu.stats.unreached, "{what}: sources turned away");
            assert_eq!(gpu.stats.sources, cpu.stats.sources, "{what}: sources");
            assert!(gpu.stats.unreached <= gpu.stats.sources, "{what}");
            kinds[usize::from(gpu.stats.iterative)] += 1;
            if gpu.stats.iterative {
                assert_eq!((gpu.stats.sources, gpu.stats.unreached), (0, 0), "{what}: an iterative pass");
            } else {
                assert!(gpu.stats.unreached > 500, "{what}: {} sources turned away", gpu.stats.unreached);
                assert!(!gpu.contacts.is_empty(), "{what}: the near sheet touches the ball");
            }
        }
        assert_eq!(kinds, [2, 2], "{:?}: full and iterative frames", context.tuning());
    }
}
