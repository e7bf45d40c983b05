//! Per-frame stages (normals, boxes, Morton codes, hierarchy, fit) against their CPU twins, and
//! the validity of the BVH on regular and degenerate inputs.

use glam::Vec3;
use rand::Rng;
use raycontact::internals::layout::{
    BODY_FANS, LEAF_BIT, NONE, Node, PairGrid, SHORT_KEY_TILES, SHORT_SORT_PASSES, SORT_PASSES, TILE,
    TINY_KEY_TRIANGLES, TINY_SORT_PASSES,
};
use raycontact::internals::sah_tree::{sah_tree, tree_parents};
use raycontact::internals::{FrameData, Packing, cpu};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, GpuContext, Scene};
use raycontact_tests::{ctx, other_tuning_ctx, rng};

/// Builds the frame on the GPU and the CPU twins, and checks they agree: normals within 1e-5,
/// everything else exactly.
fn gpu_vs_cpu(meshes: &[TriMesh]) -> (Scene, FrameData) {
    gpu_vs_cpu_on(ctx(), meshes)
}

/// [`gpu_vs_cpu`] on a given context.
fn gpu_vs_cpu_on(ctx: &GpuContext, meshes: &[TriMesh]) -> (Scene, FrameData) {
    let mut gpu = Scene::new(ctx);
    let mut cpu = Scene::new_cpu(None).unwrap();
    for m in meshes {
        gpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
        cpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
    }
    gpu.update().unwrap();
    cpu.update().unwrap();
    let g = gpu.frame_data().unwrap();
    let c = cpu.frame_data().unwrap();
    assert_same_frame("", &g, &c, gpu.packing());
    (gpu, g)
}

/// Checks that two frames of the same packing agree: normals within 1e-5, everything else
/// (triangle boxes, body states, each body's sorted keys and triangles, nodes and parents)
/// exactly, but that where `g` holds a body's binned-SAH tree (a GPU body at rest) it is the
/// one over the leaves of `c`'s LBVH (`sah_tree`); and `g`'s fan words (a GPU frame's, which
/// `fit`, or the scene for a body at rest, writes for the bodies with `BODY_FANS` where the
/// tuning passes fans) are the twin's of its tree (`cpu::fit_fans`), and its child pairs (which
/// `hierarchy` and `fit`, or the scene for a body at rest, write where the tuning keeps them)
/// the twin's of its tree (`cpu::child_pairs`) in the grid stored with them, that of the body's
/// box (or, at rest, of the tree's root box). `what` names the case in the messages.
pub fn assert_same_frame(what: &str, g: &FrameData, c: &FrameData, p: &Packing) {
    assert_eq!(g.normals.len(), c.normals.len(), "{what}");
    for (v, (a, b)) in g.normals.iter().zip(&c.normals).enumerate() {
        assert!((*a - *b).abs().max_element() <= 1e-5, "{what} normal of vertex {v}: GPU {a} vs CPU {b}");
    }
    assert_eq!(g.tri_boxes, c.tri_boxes, "{what} triangle boxes");
    assert_eq!(g.body_state, c.body_state, "{what} body boxes and counts");
    for (b, body) in p.bodies.iter().enumerate() {
        let r = body.tri_offset as usize..(body.tri_offset + body.tri_count) as usize;
        assert_eq!(g.keys[r.clone()], c.keys[r.clone()], "{what} sorted Morton codes of body {b}");
        assert_eq!(g.values[r.clone()], c.values[r], "{what} sorted triangles of body {b}");
        if g.sah_trees.get(b).is_some_and(|&sah| sah) {
            // A body at rest on the GPU: the binned-SAH tree over the leaves of `c`'s LBVH, or
            // under a refitting policy such a tree refitted since.
            let mut tree = Vec::new();
            sah_tree(c.body_nodes(p, b), c.body_state[b].leaf_count, &mut tree);
            if g.body_nodes(p, b) != tree {
                assert_refitted(&format!("{what} body {b}"), g.body_nodes(p, b), c, p, b);
            }
            let mut parents = Vec::new();
            tree_parents(g.body_nodes(p, b), &mut parents);
            assert_eq!(g.body_parents(p, b), &parents[..], "{what} binned-SAH parents of body {b}");
        } else {
            assert_eq!(g.body_nodes(p, b), c.body_nodes(p, b), "{what} nodes of body {b}");
            assert_eq!(g.body_parents(p, b), c.body_parents(p, b), "{what} parents of body {b}");
        }
        if body.flags & BODY_FANS != 0 && !g.fans.is_empty() {
            let fans = cpu::fit_fans(body, g.body_nodes(p, b), &p.triangles);
            assert_eq!(g.body_fans(p, b), &fans[..], "{what} fan words of body {b}");
        }
        if !g.child_pairs.is_empty() {
            // In the grid of the body's box (`fit`'s), or for a tree the scene wrote over a
            // body's and the GPU has not refitted since, of the tree's root box.
            let nodes = g.body_nodes(p, b);
            let at_rest = g.sah_trees.get(b).is_some_and(|&sah| sah);
            let of_body = g.body_state[b].bounds().map(|(lo, hi)| PairGrid::of_box(lo, hi));
            let of_root = nodes.first().map(|r| PairGrid::of_box(r.min, r.max));
            let grid = g.body_pair_grid(p, b).expect("a grid where the frame has pairs");
            if nodes.len() > 1 {
                assert!(
                    Some(grid) == of_body || (at_rest && Some(grid) == of_root),
                    "{what} child pairs' grid of body {b}: {grid:?}, not of its box {of_body:?}"
                );
            }
            let mut pairs = Vec::new();
            cpu::child_pairs(nodes, &grid, &mut pairs);
            assert_eq!(g.body_child_pairs(p, b), &pairs[..], "{what} child pairs of body {b}");
        }
    }
}

/// Checks that `tree`, packed body `b`'s binary tree in a GPU frame, is a refitted tree over
/// the leaves of its LBVH in frame `c`: the same triangles, each leaf's box its triangle's, each
/// internal node's box the union of its children's (a zero of either sign as +0, as `fit`).
fn assert_refitted(what: &str, tree: &[Node], c: &FrameData, p: &Packing, b: usize) {
    let lbvh = c.body_nodes(p, b);
    assert_eq!(tree.len(), lbvh.len(), "{what}: nodes");
    let internal = tree.len() / 2;
    let triangles = |t: &[Node]| {
        let mut tris: Vec<u32> = t[internal..].iter().map(|l| l.child & !LEAF_BIT).collect();
        tris.sort_unstable();
        tris
    };
    assert_eq!(triangles(tree), triangles(lbvh), "{what}: the leaves' triangles");
    let boxes = &c.tri_boxes[p.bodies[b].tri_offset as usize..];
    for (j, leaf) in tree[internal..].iter().enumerate() {
        let t = &boxes[(leaf.child & !LEAF_BIT) as usize];
        assert_eq!((leaf.min, leaf.max), (t.min, t.max), "{what}: leaf {j}'s box");
    }
    for (k, node) in tree[..internal].iter().enumerate() {
        let (l, r) = (&tree[node.child as usize], &tree[tree[node.child as usize].escape as usize]);
        let union = (l.min.min(r.min) + Vec3::ZERO, l.max.max(r.max) + Vec3::ZERO);
        assert_eq!((node.min, node.max), union, "{what}: node {k}'s box");
    }
}

/// Checks one body's BVH: the escape walk from the root that always descends visits every node
/// once in depth-first order and every leaf (triangle) exactly once, in Morton order; parents and
/// children agree; every box encloses its children's and each leaf's its triangle.
fn check_bvh(data: &FrameData, scene: &Scene, b: usize, mesh: &TriMesh) {
    let p = scene.packing();
    let nodes = data.body_nodes(p, b);
    let parents = data.body_parents(p, b);
    let n = data.body_state[b].leaf_count as usize;
    assert_eq!(nodes.len(), (2 * n).saturating_sub(1));
    if n == 0 {
        return;
    }
    // Depth-first walk through child and escape links.
    let mut order = Vec::new();
    let mut node = 0u32;
    let mut steps = 0;
    while node != NONE {
        steps += 1;
        assert!(steps <= nodes.len(), "escape walk loops");
        order.push(node);
        let nd = &nodes[node as usize];
        node = if nd.child & LEAF_BIT != 0 { nd.escape } else { nd.child };
    }
    assert_eq!(order.len(), nodes.len(), "the walk visits every node once");
    let mut seen = vec![false; nodes.len()];
    for &o in &order {
        assert!(!seen[o as usize], "node {o} visited twice");
        seen[o as usize] = true;
    }
    let leaves: Vec<u32> = order.iter().filter(|&&o| nodes[o as usize].is_leaf()).copied().collect();
    assert_eq!(leaves, ((n - 1) as u32..(2 * n - 1) as u32).collect::<Vec<_>>(), "leaves in sorted order");
    let mut tris: Vec<u32> = leaves.iter().map(|&l| nodes[l as usize].triangle().unwrap()).collect();
    tris.sort_unstable();
    tris.dedup();
    assert_eq!(tris.len(), n, "every non-degenerate triangle once");
    // Depth-first order: a node's subtree is the contiguous run of the walk that follows it,
    // ending where its escape link points.
    let pos: Vec<usize> = {
        let mut pos = vec![0; nodes.len()];
        for (i, &o) in order.iter().enumerate() {
            pos[o as usize] = i;
        }
        pos
    };
    let enclose = |outer: &Node, lo: Vec3, hi: Vec3| outer.min.cmple(lo).all() && outer.max.cmpge(hi).all();
    for (i, nd) in nodes.iter().enumerate() {
        let end = if nd.escape == NONE { order.len() } else { pos[nd.escape as usize] };
        assert!(end > pos[i], "escape of node {i} points forward");
        if let Some(t) = nd.triangle() {
            let [a, bb, c] = mesh.triangles[t as usize].map(|v| mesh.positions[v as usize]);
            assert!(enclose(nd, a.min(bb).min(c), a.max(bb).max(c)), "leaf {i} encloses triangle {t}");
            assert_eq!(end, pos[i] + 1);
        } else {
            let left = nd.child as usize;
            let right = nodes[left].escape as usize;
            assert_eq!(pos[left], pos[i] + 1, "left child follows its parent");
            assert_eq!(parents[left], i as u32);
            assert_eq!(parents[right], i as u32);
            for c in [left, right] {
                assert!(enclose(nd, nodes[c].min, nodes[c].max), "node {i} encloses child {c}");
            }
            let right_end =
                if nodes[right].escape == NONE { order.len() } else { pos[nodes[right].escape as usize] };
            assert_eq!(right_end, end, "node {i} and its right child end together");
        }
    }
    assert_eq!(parents[0], NONE);
}

fn check(meshes: &[TriMesh]) {
    let (scene, data) = gpu_vs_cpu(meshes);
    for (b, m) in meshes.iter().enumerate() {
        check_bvh(&data, &scene, b, m);
    }
}

fn random_soup(n: usize, seed: u64, centre: impl Fn(&mut rand_pcg::Pcg64) -> Vec3) -> TriMesh {
    let mut r = rng(seed);
    let mut m = TriMesh::default();
    for t in 0..n {
        let c = centre(&mut r);
        for _ in 0..3 {
            m.positions.push(
                c + Vec3::new(
                    r.random_range(-0.01..0.01),
                    r.random_range(-0.01..0.01),
                    r.random_range(-0.01..0.01),
                ),
            );
        }
        m.triangles.push([3 * t as u32, 3 * t as u32 + 1, 3 * t as u32 + 2]);
    }
    m
}

#[test]
fn bvh_small_counts() {
    for n in [1, 2, 3, 1000] {
        let m = random_soup(n, n as u64, |r| Vec3::new(r.random(), r.random(), r.random()));
        check(&[m]);
    }
}

#[test]
fn bvh_100k_triangles() {
    let m = random_soup(100_000, 7, |r| Vec3::new(r.random(), r.random(), r.random()) * 10.0);
    check(&[m]);
}

#[test]
fn bvh_degenerate_distributions() {
    // All centroids equal: every Morton code ties, the index breaks the ties.
    let same = {
        let mut m = TriMesh::default();
        for t in 0..5000u32 {
            let s = 1.0 + t as f32 * 1e-3;
            m.positions.extend([Vec3::new(-s, -1.0, 0.0), Vec3::new(s, -1.0, 0.0), Vec3::new(0.0, 2.0, 0.0)]);
            m.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
        }
        m
    };
    let sheet = meshes::grid_sheet(4.0, 4.0, 60, 60);
    let strip = meshes::grid_sheet(1000.0, 0.01, 2000, 1);
    let clusters = random_soup(4000, 3, |r| {
        let far = if r.random::<bool>() { Vec3::splat(1.0e4) } else { Vec3::ZERO };
        far + Vec3::new(r.random(), r.random(), r.random())
    });
    check(std::slice::from_ref(&same));
    check(std::slice::from_ref(&sheet));
    check(std::slice::from_ref(&strip));
    check(std::slice::from_ref(&clusters));
    // And all of them at once, packed into one frame with a torus.
    check(&[same, sheet, strip, clusters, meshes::torus(1.0, 0.3, 40, 20)]);
}

/// The sort's segments of one tile (a part-full tile's invocations past the end skip the element
/// loops) and of several tiles side by side in one frame, each body's sorted Morton codes and
/// triangles equal to the CPU twin's bit for bit (`gpu_vs_cpu`): bodies of exactly `TILE` and
/// `TILE + 1` triangles, one short of a tile, one triangle, a few hundred, several tiles with a
/// part-full last one, and one whose centroids sit at four points (runs of nearly equal codes).
#[test]
fn sort_mixes_one_tile_and_multi_tile_bodies() {
    let tile = TILE as usize;
    let short_tiles = SHORT_KEY_TILES as usize;
    let cube = |r: &mut rand_pcg::Pcg64| Vec3::new(r.random(), r.random(), r.random());
    let four =
        |r: &mut rand_pcg::Pcg64| Vec3::new(r.random_range(0..2) as f32, r.random_range(0..2) as f32, 0.0);
    let meshes = [
        random_soup(900, 21, cube),
        random_soup(tile, 22, cube),
        random_soup(1, 23, cube),
        random_soup(tile + 1, 24, cube),
        random_soup(3 * tile + 5, 25, cube),
        random_soup(tile - 1, 26, cube),
        random_soup(2 * tile, 27, four),
        random_soup(17, 28, four),
        random_soup(tile + 1, 29, four),
        // The largest body with short keys, and the smallest without (`SHORT_KEY_TILES`).
        random_soup(short_tiles * tile, 30, cube),
        random_soup(short_tiles * tile + 1, 31, cube),
        // The largest body with tiny keys, and the smallest with short ones.
        random_soup(TINY_KEY_TRIANGLES as usize, 32, cube),
        random_soup(TINY_KEY_TRIANGLES as usize + 1, 33, cube),
    ];
    check(&meshes);
}

/// Bodies of at most `SHORT_KEY_TILES` tiles are sorted by short keys (`SHORT_KEY_BITS`), in
/// `SHORT_SORT_PASSES` passes when every body a rebuild sorts has them, and bodies of at most
/// `TINY_KEY_TRIANGLES` triangles by tiny keys (`TINY_KEY_BITS`), in `TINY_SORT_PASSES` passes
/// when every body has them. A larger body that stays still is kept after its first frame (its
/// segment empty), so the frames after sort the moving small bodies in fewer passes (tiny or
/// short ones as their largest body says); moved again, it is sorted in all `SORT_PASSES`. Every
/// frame's sorted keys, triangles and trees equal the CPU twins', on both tunings.
#[test]
fn a_still_large_body_leaves_the_others_to_fewer_sort_passes() {
    let cube = |r: &mut rand_pcg::Pcg64| Vec3::new(r.random(), r.random(), r.random());
    let large = random_soup((SHORT_KEY_TILES * TILE) as usize + 900, 31, cube);
    let tiny = [random_soup(900, 32, cube), random_soup(300, 33, cube)];
    let short = [random_soup(TINY_KEY_TRIANGLES as usize + 1, 34, cube), random_soup(300, 33, cube)];
    for (small, fewer) in [(&tiny, TINY_SORT_PASSES), (&short, SHORT_SORT_PASSES)] {
        for ctx in [ctx(), other_tuning_ctx()] {
            let mut gpu = Scene::new(ctx);
            let mut cpu = Scene::new_cpu(None).unwrap();
            for m in std::iter::once(&large).chain(small) {
                gpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
                cpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
            }
            let ids: Vec<_> = gpu.bodies().collect();
            let cpu_ids: Vec<_> = cpu.bodies().collect();
            for frame in 0..5 {
                let shift = Vec3::new(0.01 * frame as f32, 0.0, 0.0);
                // The small bodies move every frame; the large one in frame 3 only.
                let moving = if frame == 3 { 0..3 } else { 1..3 };
                for b in moving.filter(|_| frame > 0) {
                    let m = if b == 0 { &large } else { &small[b - 1] };
                    let moved: Vec<Vec3> = m.positions.iter().map(|p| *p + shift).collect();
                    gpu.set_positions(ids[b], &moved).unwrap();
                    cpu.set_positions(cpu_ids[b], &moved).unwrap();
                }
                let stats = gpu.update().unwrap();
                cpu.update().unwrap();
                let what = format!("{:?}, frame {frame}, {fewer} passes", ctx.tuning());
                let expected = if frame == 0 || frame == 3 { SORT_PASSES } else { fewer };
                let sort = stats.get(raycontact::Stage::Sort).map_or(0, |s| s.dispatches);
                assert_eq!(sort, expected, "{what}: sort passes");
                let (g, c) = (gpu.frame_data().unwrap(), cpu.frame_data().unwrap());
                assert_same_frame(&what, &g, &c, gpu.packing());
            }
        }
    }
}

/// The other tuning (one triangle per invocation on lavapipe: 16 workgroups per tile, each
/// writing and combining its share of the tile) builds the same frame, bit for bit: soups across
/// several tiles, a tile boundary inside a body, bodies of one and two triangles.
#[test]
fn bvh_is_the_same_with_the_other_tuning() {
    let other = other_tuning_ctx();
    assert_ne!(other.tuning(), ctx().tuning());
    let soup = random_soup(20_000, 11, |r| Vec3::new(r.random(), r.random(), r.random()) * 3.0);
    let meshes = [
        random_soup(1, 1, |r| Vec3::new(r.random(), r.random(), r.random())),
        soup,
        random_soup(2, 2, |r| Vec3::new(r.random(), r.random(), r.random())),
        meshes::grid_sheet(4.0, 4.0, 60, 60),
        meshes::torus(1.0, 0.3, 40, 20),
    ];
    let (scene, data) = gpu_vs_cpu_on(other, &meshes);
    for (b, m) in meshes.iter().enumerate() {
        check_bvh(&data, &scene, b, m);
    }
}

/// The body boxes that `vertex_normals` reduces equal the twins' on both tunings when one
/// workgroup's vertices span many bodies (on lavapipe's tuning, 16 vertices an invocation: an
/// invocation's vertices then belong to several bodies, each added on its own, and most bodies
/// are past the workgroup's first two): 40 small balls of 42 and 12 vertices at random places,
/// with a body whose triangles are all degenerate among them (no box of its own) and one whose
/// vertices are not all used.
#[test]
fn body_boxes_of_many_small_bodies_equal_the_twins_on_both_tunings() {
    let mut r = rng(40);
    let mut meshes = Vec::new();
    for i in 0..40 {
        let ball = meshes::icosphere(0.1 + 0.01 * (i % 7) as f32, (i % 2) as u32);
        let at = Vec3::new(r.random_range(-5.0..5.0), r.random_range(-5.0..5.0), r.random_range(-5.0..5.0));
        meshes.push(ball.transformed(glam::Affine3A::from_translation(at)));
        if i == 17 {
            // Every triangle collapsed to a point: no live vertex, no box.
            let mut flat = meshes::icosphere(0.2, 0);
            flat.positions.iter_mut().for_each(|p| *p = Vec3::splat(1.0));
            meshes.push(flat);
        }
        if i == 29 {
            // A vertex far away that no triangle uses: not in the box.
            let mut extra = meshes::icosphere(0.2, 1);
            extra.positions.push(Vec3::splat(50.0));
            meshes.push(extra);
        }
    }
    for c in [ctx(), other_tuning_ctx()] {
        gpu_vs_cpu_on(c, &meshes);
    }
}

#[test]
fn bvh_shipped_meshes() {
    check(&[raycontact_tests::bunny(), meshes::torus(1.0, 0.3, 40, 20), meshes::uv_sphere(1.0, 32, 16)]);
}

#[test]
fn degenerate_triangles_are_counted_and_left_out() {
    let mut m = meshes::uv_sphere(1.0, 16, 8);
    let n = m.triangles.len();
    // A zero-area triangle (repeated vertex) and a collinear one.
    m.triangles.push([0, 0, 1]);
    m.positions.extend([Vec3::new(5.0, 0.0, 0.0), Vec3::new(6.0, 0.0, 0.0), Vec3::new(7.0, 0.0, 0.0)]);
    let k = m.positions.len() as u32;
    m.triangles.push([k - 3, k - 2, k - 1]);
    let (mut scene, data) = gpu_vs_cpu(std::slice::from_ref(&m));
    let id = scene.bodies().next().unwrap();
    let state = scene.body_state(id).unwrap();
    assert_eq!(state.degenerate_count, 2);
    assert_eq!(state.leaf_count as usize, n);
    check_bvh(&data, &scene, 0, &m);
    // The body box ignores the collinear triangle far away.
    let (_, hi) = state.bounds().unwrap();
    assert!(hi.x <= 1.0 + 1e-6);
}

#[test]
fn normals_match_analytic_sphere() {
    let m = meshes::uv_sphere(2.0, 64, 32);
    let (_, data) = gpu_vs_cpu(std::slice::from_ref(&m));
    for (p, n) in m.positions.iter().zip(&data.normals) {
        assert!((p.normalize() - *n).length() < 0.02, "normal {n} at {p}");
    }
}

#[test]
fn moving_bodies_keep_previous_positions_and_allocate_nothing() {
    let ctx = ctx();
    let mut scene = Scene::new(ctx);
    let torus = meshes::torus(1.0, 0.3, 40, 20);
    let sphere = meshes::uv_sphere(1.0, 32, 16);
    let a = scene.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap();
    let b = scene
        .add_body(&sphere.positions, &sphere.triangles, BodyKind::Cloth { half_thickness: 0.01 })
        .unwrap();
    scene.update().unwrap();
    let allocated = scene.buffer_allocations();
    let mut cpu = Scene::new_cpu(Some(1)).unwrap();
    let ca = cpu.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric).unwrap();
    let cb =
        cpu.add_body(&sphere.positions, &sphere.triangles, BodyKind::Cloth { half_thickness: 0.01 }).unwrap();
    cpu.update().unwrap();
    let mut last_torus = torus.positions.clone();
    for frame in 1..6 {
        let shift = Vec3::new(0.1 * frame as f32, 0.0, 0.05);
        let moved: Vec<Vec3> = torus.positions.iter().map(|p| *p + shift).collect();
        scene.set_positions(a, &moved).unwrap();
        cpu.set_positions(ca, &moved).unwrap();
        if frame % 2 == 0 {
            let squashed: Vec<Vec3> =
                sphere.positions.iter().map(|p| *p * Vec3::new(1.0, 1.0, 0.5)).collect();
            scene.set_positions(b, &squashed).unwrap();
            cpu.set_positions(cb, &squashed).unwrap();
        }
        let stats = scene.update().unwrap();
        cpu.update().unwrap();
        assert_eq!(stats.buffers_allocated, 0);
        assert_eq!(scene.previous_positions(a).unwrap(), last_torus, "previous positions on the GPU");
        assert_eq!(cpu.previous_positions(ca).unwrap(), last_torus, "previous positions on the CPU");
        last_torus = moved;
        let g = scene.frame_data().unwrap();
        let c = cpu.frame_data().unwrap();
        assert_same_frame(&format!("frame {frame}"), &g, &c, scene.packing());
    }
    // Only the debugging readbacks above may have grown the readback buffer (by design, not per
    // frame); frames themselves allocate nothing.
    let _ = allocated;
    let before = scene.buffer_allocations();
    for _ in 0..3 {
        scene.set_positions(a, &torus.positions).unwrap();
        scene.update().unwrap();
    }
    assert_eq!(scene.buffer_allocations(), before);
}

#[test]
fn each_frame_takes_the_latest_positions_of_the_bodies_set_since_the_last() {
    // Four bodies moved in runs with gaps: the GPU gets a run of moved bodies in one write, which
    // goes on past still bodies of at most 4096 vertices in all (the icosphere of 162), not past
    // more (the torus of 4800, or it with the icosphere). The frame's previous positions and
    // its trees against the CPU backend's.
    let meshes = [
        meshes::icosphere(0.5, 1),
        meshes::torus(1.0, 0.3, 80, 60),
        meshes::icosphere(0.7, 2),
        meshes::grid_sheet(1.0, 1.0, 6, 5),
    ];
    let placed = |m: &TriMesh, k: u32| -> Vec<Vec3> {
        let shift =
            |i: usize| Vec3::new(0.02 * k as f32, 0.004 * ((i as u32 + k) % 7) as f32, -0.01 * k as f32);
        m.positions.iter().enumerate().map(|(i, p)| *p + shift(i)).collect()
    };
    let mut gpu = Scene::new(ctx());
    let mut cpu = Scene::new_cpu(Some(2)).unwrap();
    let ids: Vec<_> = meshes
        .iter()
        .map(|m| {
            let g = gpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
            let c = cpu.add_body(&m.positions, &m.triangles, BodyKind::Volumetric).unwrap();
            (g, c)
        })
        .collect();
    gpu.update().unwrap();
    cpu.update().unwrap();
    let mut at: Vec<Vec<Vec3>> = meshes.iter().map(|m| m.positions.clone()).collect();
    let plans: [&[usize]; 8] = [&[0, 1, 3], &[2], &[1, 2], &[3, 3, 0], &[0, 2], &[], &[0, 1, 2, 3], &[3]];
    for (f, plan) in plans.iter().enumerate() {
        let before = at.clone();
        for (n, &b) in plan.iter().enumerate() {
            at[b] = placed(&meshes[b], (10 * f + n + 1) as u32);
            gpu.set_positions(ids[b].0, &at[b]).unwrap();
            cpu.set_positions(ids[b].1, &at[b]).unwrap();
        }
        gpu.update().unwrap();
        cpu.update().unwrap();
        for (b, &(g, c)) in ids.iter().enumerate() {
            let previous = if plan.contains(&b) { &before[b] } else { &at[b] };
            assert_eq!(
                &gpu.previous_positions(g).unwrap(),
                previous,
                "frame {f}, body {b}: previous on the GPU"
            );
            assert_eq!(
                &cpu.previous_positions(c).unwrap(),
                previous,
                "frame {f}, body {b}: previous on the CPU"
            );
        }
        let (g, c) = (gpu.frame_data().unwrap(), cpu.frame_data().unwrap());
        assert_same_frame(&format!("frame {f}"), &g, &c, gpu.packing());
    }
}
