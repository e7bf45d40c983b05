//! The rays classified by their re-projected length are not cast where they cannot reach
//! (`may_reach` in `shared/classify.wgsl`; `twins/reach.rs` checks the queries and the casts on
//! the CPU twins): on the GPU, a coarse cloth's self pair asks its BVH (`other_near`) and finds
//! the CPU backend's contacts; the twin of that walk (`cpu::near_in`) through the compact child
//! pairs a GPU frame keeps says yes wherever the frame's nodes do.

use glam::Vec3;
use raycontact::internals::cpu;
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

#[test]
fn the_twin_of_the_walk_through_a_gpu_frames_pairs_says_yes_wherever_the_nodes_do() {
    // `cpu::near_in` on a frame read back from the GPU walks the pairs and grid its kernels
    // wrote (where the tuning keeps them; both tunings run): at every vertex of a coarse sheet
    // folded over itself (its self pair's question) and near it (another body's), yes wherever
    // the walk through the same frame's nodes says yes, and no in nearly all the other places.
    let sheet = folded_sheet(16, 10, 11, 0.1, 0.012);
    for context in [ctx(), other_tuning_ctx()] {
        let mut scene = Scene::new(context);
        let id = scene
            .add_body(&sheet.positions, &sheet.triangles, BodyKind::Cloth { half_thickness: 0.004 })
            .unwrap();
        scene.detect(Pairs::Overlapping).unwrap();
        let frame = scene.frame_data().unwrap();
        let packing = scene.packing().clone();
        let positions = scene.positions(id).unwrap().to_vec();
        let (body, nodes) = (&packing.bodies[0], frame.body_nodes(&packing, 0));
        let paired = frame.body_pair_grid(&packing, 0).is_some();
        assert_eq!(paired, context.tuning().child_pairs, "{:?}: the frame's pairs", context.tuning());
        let (mut yes, mut no, mut more) = (0, 0, 0);
        for (v, p) in positions.iter().enumerate() {
            for (q, ignore, reach) in
                [(*p, v as u32, 0.02), (*p + Vec3::new(0.013, -0.007, 0.03), u32::MAX, 0.025)]
            {
                let twin = cpu::near_in(&frame, &packing, 0, &positions, q, reach, ignore);
                let exact = if ignore == u32::MAX {
                    cpu::leaf_near(nodes, q, reach)
                } else {
                    cpu::other_near(body, nodes, &positions, &packing.triangles, q, reach, ignore)
                };
                assert!(twin || !exact, "{:?}: vertex {v}, point {q}", context.tuning());
                if exact {
                    yes += 1
                } else {
                    no += 1
                }
                more += usize::from(twin && !exact);
            }
        }
        eprintln!("{:?}: {yes} yes, {no} no, {more} more through the pairs", context.tuning());
        assert!(yes > 50 && no > 50, "{yes} yes, {no} no");
        assert!(more * 50 <= no, "{:?}: {more} of {no} more through the pairs", context.tuning());
    }
}
