//! The rays classified by their re-projected length are not cast where they cannot reach
//! (`may_reach` in `shared/classify.wgsl`; `twins/reach.rs` checks the queries and the casts on
//! the CPU twins): on the GPU, a coarse cloth's self pair asks its BVH (`other_near`) and finds
//! the CPU backend's contacts.

use glam::Vec3;
use raycontact::{BodyKind, Pairs, Scene};
use raycontact_tests::{ctx, folded_sheet, other_tuning_ctx};

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
            let mut s = [true, false].map(|gpu| {
                let mut scene = if gpu { Scene::new(context) } else { Scene::new_cpu(None).unwrap() };
                scene.set_prediction_distance(0.02).unwrap();
                let id = scene
                    .add_body(&sheet.positions, &sheet.triangles, BodyKind::Cloth { half_thickness: 0.004 })
                    .unwrap();
                (scene, id)
            });
            for frame in 0..3 {
                let shift = Vec3::new(0.01, -0.02, 0.005) * frame as f32;
                let at: Vec<Vec3> = sheet.positions.iter().map(|p| *p + shift).collect();
                for (scene, id) in &mut s {
                    scene.set_positions(*id, &at).unwrap();
                }
                let what = format!("{:?}, gap {gap}, frame {frame}", context.tuning());
                let found = s[0].0.detect(Pairs::Overlapping).unwrap().contacts;
                assert_same(&what, &found, &s[1].0.detect(Pairs::Overlapping).unwrap().contacts);
                if gap < 0.02 {
                    assert!(found.len() > 50, "{what}: {} contacts between the layers", found.len());
                    // The upper layer spans x from 0.633 to 1.1 (shifted with the sheet).
                    let x0 = 0.6 + shift.x;
                    let outside = found.iter().find(|c| c.source_point.x < x0);
                    assert!(outside.is_none(), "{what}: a contact off the layers' overlap: {outside:?}");
                } else {
                    assert!(found.is_empty(), "{what}: {} contacts", found.len());
                }
            }
        }
    }
}
