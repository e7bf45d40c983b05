//! The parallel collapse of an LBVH into the CPU backend's 4-wide tree
//! (`WideTree::collapse_lbvh`, the one the backend uses for bodies that move) against the
//! serial collapse (`WideTree::collapse`): the same wide nodes, lane for lane (the binary node,
//! box and kind of every lane, and every leaf's triangle record), read in the same depth-first
//! order from the root of each, on one thread and on four, on bodies small and large enough for
//! the parallel split (a subtree of 4096 leaves or more); `WideTree::collapse_lbvh` takes the
//! parallel collapse exactly for large bodies in pools of four threads, or of two when the body
//! is alone; and `WideBvh::splits_collapse` says it is alone exactly when fewer large bodies than
//! threads collapse their LBVH in a build.

use glam::{Affine3A, Quat, Vec3};
use rand::Rng;
use raycontact::BodyKind;
use raycontact::internals::layout::{BODY_STATIC, LEAF_BIT, NONE, Node};
use raycontact::internals::sah_tree::half_area;
use raycontact::internals::wide_bvh::{
    BodyTree, Motion, PARALLEL_BODY_LEAVES, PARALLEL_THREADS, TriRecord, WideBvh, WideTree,
};
use raycontact::meshes::{self, TriMesh};
use raycontact_tests::{random_unit, rng};

use crate::reference::Packed;

/// One lane as read from the root: its binary node, its box and its child (a leaf's record).
#[derive(Debug, PartialEq)]
pub(crate) enum Lane {
    Node { source: u32, lo: [f32; 3], hi: [f32; 3] },
    Leaf { source: u32, lo: [f32; 3], hi: [f32; 3], record: TriRecord },
}

/// The tree read depth first from the root: per wide node, its lanes in order, each internal
/// lane followed by its subtree. Checks every node and record is reached exactly once.
pub(crate) fn canonical(tree: &WideTree) -> Vec<Vec<Lane>> {
    let mut out = Vec::new();
    let mut seen_nodes = vec![false; tree.nodes.len()];
    let mut seen_tris = vec![false; tree.tris.len()];
    let mut stack = vec![0u32];
    while let Some(w) = stack.pop() {
        assert!(!std::mem::replace(&mut seen_nodes[w as usize], true), "node {w} reached twice");
        let (n, src) = (&tree.nodes[w as usize], &tree.source[w as usize]);
        let mut lanes = Vec::new();
        let mut kids = Vec::new();
        for (i, &source) in src.iter().enumerate().take(n.count as usize) {
            let (lo, hi) = ([0, 1, 2].map(|a| n.lo[a][i]), [0, 1, 2].map(|a| n.hi[a][i]));
            let c = n.child[i];
            assert_eq!(n.leaves >> i & 1 == 1, c & LEAF_BIT != 0, "leaf bit of lane {i} of node {w}");
            if c & LEAF_BIT != 0 {
                let r = (c & !LEAF_BIT) as usize;
                assert!(!std::mem::replace(&mut seen_tris[r], true), "record {r} reached twice");
                lanes.push(Lane::Leaf { source, lo, hi, record: tree.tris[r] });
            } else {
                lanes.push(Lane::Node { source, lo, hi });
                kids.push(c);
            }
        }
        assert!(n.child[n.count as usize..].iter().chain(&src[n.count as usize..]).all(|&c| c == NONE));
        out.push(lanes);
        stack.extend(kids.into_iter().rev());
    }
    assert!(seen_nodes.iter().all(|&s| s), "a node not reached from the root");
    assert!(seen_tris.iter().all(|&s| s), "a record not reached from the root");
    out
}

fn soup(r: &mut rand_pcg::Pcg64, count: u32) -> TriMesh {
    let mut m = TriMesh::default();
    for t in 0..count {
        let c = Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
        for _ in 0..3 {
            m.positions.push(c + random_unit(r) * r.random_range(0.001..0.05));
        }
        m.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    m
}

/// Bodies too small for any split and large enough for many: soups of 2, 3, 1,000, 5,000 and
/// 40,000 triangles (in that order, first), a torus, the torus turned, and the bunny.
pub(crate) fn small_and_large_meshes() -> Vec<(String, TriMesh)> {
    let mut r = rng(5151);
    let torus = meshes::torus(1.0, 0.35, 160, 40);
    let turned = torus.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(1.0),
        Vec3::new(0.3, 0.0, 0.0),
    ));
    vec![
        ("two triangles".into(), soup(&mut r, 2)),
        ("a soup of 3".into(), soup(&mut r, 3)),
        ("a soup of 1000".into(), soup(&mut r, 1000)),
        ("a soup of 5000".into(), soup(&mut r, 5000)),
        ("a soup of 40000".into(), soup(&mut r, 40_000)),
        ("a torus of 12800".into(), torus),
        ("a turned torus".into(), turned),
        ("the bunny".into(), raycontact_tests::bunny()),
    ]
}

#[test]
fn the_parallel_collapse_makes_the_serial_collapses_wide_nodes() {
    let meshes = small_and_large_meshes();
    let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    for (what, mesh) in &meshes {
        let p = Packed::new(&[(mesh, BodyKind::Volumetric)]);
        let lbvh = p.frame.body_nodes(&p.packing, 0);
        let leaves = p.frame.body_state[0].leaf_count;
        let body = BodyTree::new(&p.packing, 0, lbvh, leaves, &p.positions);
        let mut serial = WideTree::default();
        serial.collapse(body);
        let want = canonical(&serial);
        for (threads, pool) in [(1, &one), (2, &two), (4, &four)] {
            // Twice into the same tree: the second reuses the first's memory and scratch.
            let mut parallel = WideTree::default();
            for round in 0..2 {
                pool.install(|| parallel.collapse_lbvh_parallel(body));
                assert_eq!(
                    parallel.nodes.len(),
                    serial.nodes.len(),
                    "{what}, {threads} threads, round {round}"
                );
                assert_eq!(parallel.tris.len(), serial.tris.len(), "{what}: records");
                assert!(
                    canonical(&parallel) == want,
                    "{what}, {threads} threads, round {round}: another tree"
                );
            }
            if leaves >= 2 {
                // Records in leaf order: leaf j's triangle in record j.
                let internal = leaves as usize - 1;
                assert!(
                    parallel
                        .tris
                        .iter()
                        .zip(&lbvh[internal..])
                        .all(|(r, l)| LEAF_BIT | r.triangle == l.child)
                );
            }
            // What the backend calls: the parallel collapse for a large body on 4 threads, or
            // on 2 when it is alone, the serial one (numbered as it numbers) otherwise.
            for alone in [false, true] {
                let mut chosen = WideTree::default();
                pool.install(|| chosen.collapse_lbvh(body, alone));
                let parallel_wanted =
                    leaves >= PARALLEL_BODY_LEAVES && (threads >= PARALLEL_THREADS || alone && threads >= 2);
                let like = if parallel_wanted { &parallel } else { &serial };
                assert!(
                    chosen == *like,
                    "{what}, {threads} threads, alone {alone}: collapse_lbvh chose otherwise"
                );
            }
        }
    }
    // A tree over a smaller body after a larger one: nothing left of the larger one.
    let big = Packed::new(&[(&meshes[4].1, BodyKind::Volumetric)]);
    let small = Packed::new(&[(&meshes[2].1, BodyKind::Volumetric)]);
    let mut tree = WideTree::default();
    for p in [&big, &small] {
        let (lbvh, leaves) = (p.frame.body_nodes(&p.packing, 0), p.frame.body_state[0].leaf_count);
        four.install(|| {
            tree.collapse_lbvh_parallel(BodyTree::new(&p.packing, 0, lbvh, leaves, &p.positions))
        });
    }
    let mut serial = WideTree::default();
    let (lbvh, leaves) = (small.frame.body_nodes(&small.packing, 0), small.frame.body_state[0].leaf_count);
    serial.collapse(BodyTree::new(&small.packing, 0, lbvh, leaves, &small.positions));
    assert!(canonical(&tree) == canonical(&serial), "after a larger body");
}

/// The lanes of the wide node rooted at binary internal node `b` by the rule written plainly:
/// its two children, then, while fewer than four, the internal lane of largest half area (the
/// first of equal ones) replaced by its two children.
fn lanes_by_the_rule(binary: &[Node], internal: u32, b: u32) -> Vec<u32> {
    let children = |c: u32| {
        let l = binary[c as usize].child;
        [l, binary[l as usize].escape]
    };
    let mut kids = children(b).to_vec();
    while kids.len() < 4 {
        let area = |c: u32| {
            let n = &binary[c as usize];
            (c < internal).then(|| half_area(n.min, n.max))
        };
        let mut open: Option<(usize, f32)> = None;
        for (i, &k) in kids.iter().enumerate() {
            if let Some(a) = area(k) {
                if open.is_none_or(|(_, best)| a > best) {
                    open = Some((i, a));
                }
            }
        }
        let Some((i, _)) = open else { break };
        let k = kids[i];
        kids.splice(i..=i, children(k));
    }
    kids
}

/// The serial collapse (`lanes` and `wide_node` in `wide_collapse.rs`, written out for the
/// two openings a node takes): every wide node's lanes are those the rule chooses, each lane's
/// box is its binary node's, bit for bit, each internal lane's wide node is rooted at the
/// lane's binary node, and each record is its leaf's triangle with that triangle's vertices and
/// corners; collapsing a smaller body into a tree that held a larger one, or the same body
/// again, leaves nothing of the first.
#[test]
fn every_wide_node_opens_the_largest_internal_lane_first() {
    let mut r = rng(5252);
    let meshes: Vec<(String, TriMesh)> = vec![
        ("a soup of 3".into(), soup(&mut r, 3)),
        ("a soup of 5000".into(), soup(&mut r, 5000)),
        ("a torus".into(), meshes::torus(1.0, 0.35, 60, 20)),
        ("the bunny".into(), raycontact_tests::bunny()),
        // A flat grid of equal squares: subtrees of equal boxes, half areas tied exactly.
        ("a grid".into(), meshes::grid_sheet(8.0, 8.0, 64, 64)),
        ("a cube".into(), meshes::cuboid(Vec3::ONE, 8)),
    ];
    let mut reused = WideTree::default();
    for (what, mesh) in meshes.iter().rev() {
        let p = Packed::new(&[(mesh, BodyKind::Volumetric)]);
        let lbvh = p.frame.body_nodes(&p.packing, 0);
        let leaves = p.frame.body_state[0].leaf_count;
        let internal = leaves - 1;
        let body = BodyTree::new(&p.packing, 0, lbvh, leaves, &p.positions);
        let mut tree = WideTree::default();
        tree.collapse(body);
        let mut stack = vec![(0u32, 0u32)];
        let mut records = 0;
        while let Some((w, b)) = stack.pop() {
            let (n, src) = (&tree.nodes[w as usize], &tree.source[w as usize]);
            let want = lanes_by_the_rule(lbvh, internal, b);
            assert_eq!(&src[..n.count as usize], &want[..], "{what}: wide node {w}");
            for (i, &k) in want.iter().enumerate() {
                let bn = &lbvh[k as usize];
                let (lo, hi) = ([0, 1, 2].map(|a| n.lo[a][i]), [0, 1, 2].map(|a| n.hi[a][i]));
                assert_eq!(lo.map(f32::to_bits), bn.min.to_array().map(f32::to_bits), "{what}: {w} lane {i}");
                assert_eq!(hi.map(f32::to_bits), bn.max.to_array().map(f32::to_bits), "{what}: {w} lane {i}");
                let c = n.child[i];
                if k < internal {
                    stack.push((c, k));
                    continue;
                }
                records += 1;
                let rec = &tree.tris[(c & !LEAF_BIT) as usize];
                assert_eq!(LEAF_BIT | rec.triangle, bn.child, "{what}: {w} lane {i}");
                let tri: [u32; 3] = p.packing.triangles[3 * rec.triangle as usize..][..3].try_into().unwrap();
                assert_eq!(rec.vertices, tri, "{what}: record of lane {i} of {w}");
                assert_eq!(rec.corners, tri.map(|v| p.positions[v as usize]), "{what}");
            }
            for lane in n.count as usize..4 {
                assert!([0, 1, 2].iter().all(|&a| n.lo[a][lane] == 0.0 && n.hi[a][lane] == 0.0));
            }
        }
        assert_eq!(records, tree.tris.len(), "{what}: a record per leaf");
        reused.collapse(body);
        assert!(reused == tree, "{what}: collapsed into a tree that held another body");
        reused.collapse(body);
        assert!(reused == tree, "{what}: collapsed twice");
    }
}

/// `WideBvh::splits_collapse`: a build splits the collapse of its large bodies exactly when
/// fewer of them than the pool's threads collapse their LBVH (a body that keeps its tree, a
/// static one and one under a refitting policy collapse a binned-SAH tree instead), and
/// `WideBvh::build` then makes the same wide trees as the serial collapse would.
#[test]
fn a_build_splits_the_collapse_of_fewer_large_bodies_than_threads() {
    let mut r = rng(77);
    let large = soup(&mut r, PARALLEL_BODY_LEAVES);
    let small = soup(&mut r, 500);
    let p = Packed::new(&[
        (&large, BodyKind::Volumetric),
        (&small, BodyKind::Volumetric),
        (&large, BodyKind::Volumetric),
        (&large, BodyKind::Volumetric),
    ]);
    // Body 3 static (as `Scene::set_static` marks it).
    let mut packing = p.packing.clone();
    packing.bodies[3].flags |= BODY_STATIC;
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let mut wide = WideBvh::default();
    wide.prepare(p.packing.bodies.len());
    let (packing, state) = (&packing, &p.frame.body_state);
    // Bodies 0 and 2 collapse their LBVH (the static one and the small one do not count).
    let moving = |b: usize| b == 0 || b == 2;
    let moved = |_| Motion::Moved;
    assert!(!two.install(|| wide.splits_collapse(packing, state, moved, false)));
    assert!(three.install(|| wide.splits_collapse(packing, state, moved, false)));
    // Body 2 resting (a new tree: collapsed from a binned-SAH tree), or nothing moved (every
    // tree kept): body 0 alone, or none.
    let resting = |still: bool| if still { Motion::Resting } else { Motion::Moved };
    assert!(two.install(|| wide.splits_collapse(packing, state, |b| resting(b == 2), false)));
    assert!(!two.install(|| wide.splits_collapse(packing, state, |b| resting(!moving(b)), false)));
    assert!(two.install(|| wide.splits_collapse(packing, state, |_| Motion::Unchanged, false)));
    // Refitting: every tree from a binned-SAH tree.
    assert!(two.install(|| wide.splits_collapse(packing, state, moved, true)));
    // The trees it builds on three threads (split) are the serial collapse's.
    let mut built = WideBvh::default();
    three.install(|| built.build(packing, state, &p.frame.nodes, &p.positions, &[]));
    for b in [0, 2] {
        let lbvh = p.frame.body_nodes(packing, b);
        let mut serial = WideTree::default();
        serial.collapse(BodyTree::new(packing, b, lbvh, state[b].leaf_count, &p.positions));
        assert!(canonical(&built.trees[b]) == canonical(&serial), "body {b}");
    }
}
