//! The CPU backend's 4-wide tree built straight from a body's sorted keys on every thread
//! (`WideTree::build_from_keys_parallel`, what a rebuild makes of a large moving body alone in
//! its build) against the serial build
//! (`WideTree::build_from_keys`): the same wide nodes, lane for lane (the binary node, box and
//! kind of every lane, and every leaf's triangle record), read in the same depth-first order
//! from the root of each, the same records in the same order and the same root box, on one
//! thread, two and four, on bodies too small to split and large enough for many parts, a body
//! that is not the packing's first, and a tree built again over a smaller body; and a rebuild
//! takes the parallel build exactly for a large body alone in its build, on two threads or more.

use raycontact::BodyKind;
use raycontact::internals::wide_bvh::{BodyTree, PARALLEL_BODY_LEAVES, SortedLeaves, WideTree};

use crate::reference::Packed;
use crate::wide_collapse::{canonical, small_and_large_meshes};

/// Body `b`'s sorted leaves and its tree's inputs in `p` (the twins' keys and values).
fn inputs(p: &Packed, b: usize) -> (SortedLeaves<'_>, BodyTree<'_>) {
    let leaves = p.frame.body_state[b].leaf_count;
    let first = p.packing.bodies[b].tri_offset as usize;
    let range = first..first + leaves as usize;
    let sorted = SortedLeaves {
        keys: &p.frame.keys[range.clone()],
        values: &p.frame.values[range],
        tri_boxes: &p.frame.tri_boxes,
    };
    (sorted, BodyTree::new(&p.packing, b, &[], leaves, &p.positions))
}

#[test]
fn the_parallel_build_from_keys_makes_the_serial_builds_wide_nodes() {
    let meshes = small_and_large_meshes();
    let turned = &meshes[6].1;
    let pools = [1, 2, 4].map(|t| (t, rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()));
    for (what, mesh) in &meshes {
        // The mesh as the second body, after the turned torus: triangles from an offset.
        let p = Packed::new(&[(turned, BodyKind::Volumetric), (mesh, BodyKind::Volumetric)]);
        let (leaves, body) = inputs(&p, 1);
        let mut serial = WideTree::default();
        let root = serial.build_from_keys(leaves, body);
        assert_eq!(root.is_some(), body.leaves >= 2, "{what}: a root for two leaves or more");
        let want = canonical(&serial);
        for (threads, pool) in &pools {
            // Twice into the same tree: the second reuses the first's memory and scratch.
            let mut parallel = WideTree::default();
            for round in 0..2 {
                let got = pool.install(|| parallel.build_from_keys_parallel(leaves, body));
                let at = format!("{what}, {threads} threads, round {round}");
                assert_eq!(got, root, "{at}: the root's box");
                assert_eq!(parallel.nodes.len(), serial.nodes.len(), "{at}: nodes");
                assert!(parallel.tris == serial.tris, "{at}: the records");
                assert!(canonical(&parallel) == want, "{at}: another tree");
            }
        }
    }
    // A tree built over a smaller body after a larger one: nothing left of the larger one.
    let big = Packed::new(&[(&meshes[4].1, BodyKind::Volumetric)]);
    let small = Packed::new(&[(&meshes[3].1, BodyKind::Volumetric)]);
    let mut tree = WideTree::default();
    for p in [&big, &small] {
        let (leaves, body) = inputs(p, 0);
        pools[2].1.install(|| tree.build_from_keys_parallel(leaves, body));
    }
    let (leaves, body) = inputs(&small, 0);
    let mut serial = WideTree::default();
    serial.build_from_keys(leaves, body);
    assert!(canonical(&tree) == canonical(&serial), "after a larger body");
    assert!(tree.tris == serial.tris, "after a larger body: the records");
}

#[test]
fn a_rebuild_builds_on_every_thread_only_a_large_body_alone() {
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        for leaves in [2, PARALLEL_BODY_LEAVES - 1, PARALLEL_BODY_LEAVES, 1 << 20] {
            for alone in [false, true] {
                let chosen = pool.install(|| WideTree::builds_from_keys_in_parallel(leaves, alone));
                let wanted = leaves >= PARALLEL_BODY_LEAVES && alone && threads >= 2;
                assert_eq!(chosen, wanted, "{leaves} leaves, alone {alone}, {threads} threads");
            }
        }
    }
}
