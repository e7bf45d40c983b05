//! The CPU backend's one-pass tree build (`internals::tree_build`) against the kernels' twins it
//! replaces, `cpu::hierarchy` then `cpu::fit`: the same nodes (links, boxes bit for bit) and
//! parents, on meshes whose keys are all distinct, repeated, all equal, partly degenerate, of
//! sizes around the one where the build turns from its top-down search to its bottom-up pass,
//! and large enough that the build runs its subtrees in parallel.

use glam::{Affine3A, Vec3};
use rand::Rng;
use raycontact::BodyKind;
use raycontact::internals::layout::{NONE, Node};
use raycontact::internals::{cpu, tree_build};
use raycontact::meshes::{self, TriMesh};
use raycontact_tests::rng;

use crate::reference::Packed;

/// Builds the trees of `bodies` both ways from the same keys and boxes and compares them.
fn same_trees(what: &str, bodies: &[(&TriMesh, BodyKind)]) {
    let p = Packed::new(bodies);
    let f = &p.frame;
    let (mut nodes, mut parents) = (vec![Node::default(); f.nodes.len()], vec![NONE; f.parents.len()]);
    cpu::hierarchy(&p.packing, &f.body_state, &f.keys, &f.values, &mut nodes, &mut parents);
    cpu::fit(&p.packing, &f.body_state, &f.tri_boxes, &mut nodes, &[]);
    let (mut fused, mut fused_parents) = (vec![Node::default(); f.nodes.len()], vec![NONE; f.parents.len()]);
    tree_build::build_trees(
        &p.packing,
        &f.body_state,
        &f.keys,
        &f.values,
        &f.tri_boxes,
        &mut fused,
        &mut fused_parents,
        &[],
    );
    let bits = |n: &Node| {
        (n.min.to_array().map(f32::to_bits), n.child, n.max.to_array().map(f32::to_bits), n.escape)
    };
    for (b, body) in p.packing.bodies.iter().enumerate() {
        let n = f.body_state[b].leaf_count as usize;
        let used = (2 * n).saturating_sub(1);
        let range = body.node_offset as usize..body.node_offset as usize + used;
        for i in range.clone() {
            let j = i - body.node_offset as usize;
            assert_eq!(bits(&fused[i]), bits(&nodes[i]), "{what}, body {b} ({n} leaves): node {j}");
        }
        assert_eq!(fused_parents[range.clone()], parents[range.clone()], "{what}, body {b}: parents");
        // And the frame's own trees (the CPU backend's rebuild) are these.
        assert_eq!(f.nodes[range.clone()], nodes[range.clone()], "{what}, body {b}: the frame's nodes");
        assert_eq!(f.parents[range.clone()], parents[range], "{what}, body {b}: the frame's parents");
    }
}

const VOLUME: BodyKind = BodyKind::Volumetric;
const CLOTH: BodyKind = BodyKind::Cloth { half_thickness: 0.01 };

/// A soup of `n` random triangles in a cube of side `side` (sizes from tiny to large, so many
/// triangles share a Morton cell when `side` is small).
fn soup(seed: u64, n: usize, side: f32) -> TriMesh {
    let mut r = rng(seed);
    let mut positions = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let c = Vec3::new(r.random(), r.random(), r.random()) * side;
        let s = 10f32.powf(r.random_range(-3.0..0.0));
        for _ in 0..3 {
            positions.push(c + Vec3::new(r.random(), r.random(), r.random()) * s);
        }
    }
    let triangles = (0..n as u32).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
    TriMesh { positions, triangles }
}

#[test]
fn one_pass_build_equals_hierarchy_then_fit_on_meshes() {
    let ball = meshes::icosphere(1.0, 3);
    let torus = meshes::torus(1.0, 0.3, 40, 16).transformed(Affine3A::from_translation(Vec3::X));
    let sheet = meshes::grid_sheet(2.0, 2.0, 30, 30);
    let cube = meshes::cuboid(Vec3::new(1.0, 0.5, 2.0), 3);
    same_trees("meshes", &[(&ball, VOLUME), (&torus, VOLUME), (&sheet, CLOTH), (&cube, VOLUME)]);
}

#[test]
fn one_pass_build_equals_hierarchy_then_fit_on_repeated_and_equal_keys() {
    // Every triangle twice: every key repeated, the index breaking the ties.
    let mut twice = meshes::icosphere(0.4, 2);
    let copy = twice.triangles.clone();
    twice.triangles.extend(copy);
    // 3,000 copies of one triangle: all keys equal, the tree is the index's.
    let one = TriMesh { positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y], triangles: vec![[0, 1, 2]; 3000] };
    // Tiny triangles in a tiny cube: long runs of equal keys between distinct ones.
    let crowded = soup(3, 5000, 1e-3);
    same_trees("repeated keys", &[(&twice, VOLUME), (&one, VOLUME), (&crowded, VOLUME)]);
}

#[test]
fn one_pass_build_equals_hierarchy_then_fit_on_small_and_degenerate_bodies() {
    let single = TriMesh { positions: vec![Vec3::ZERO, Vec3::X, Vec3::Z], triangles: vec![[0, 1, 2]] };
    let pair = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::Y],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
    };
    // Half its triangles flat (a repeated corner): they are not leaves.
    let mut flat = soup(5, 400, 2.0);
    for t in flat.triangles.iter_mut().step_by(2) {
        t[2] = t[1];
    }
    // A body of degenerate triangles only: no tree.
    let empty = TriMesh { positions: vec![Vec3::ZERO, Vec3::X], triangles: vec![[0, 1, 1]; 3] };
    same_trees(
        "small bodies",
        &[(&single, VOLUME), (&pair, CLOTH), (&flat, VOLUME), (&empty, VOLUME), (&single, VOLUME)],
    );
}

#[test]
fn one_pass_build_equals_hierarchy_then_fit_on_bodies_built_in_parallel() {
    // Above the size where the build's subtrees run in parallel, with signed zeros in the boxes
    // (corners on the planes x = 0, y = 0, z = 0 of both signs).
    let mut big = soup(7, 40_000, 10.0).transformed(Affine3A::from_translation(Vec3::splat(-5.0)));
    let mut r = rng(8);
    for p in big.positions.iter_mut().step_by(5) {
        let k = r.random_range(0..3);
        p[k] = if r.random() { 0.0 } else { -0.0 };
    }
    let torus = meshes::torus(2.0, 0.5, 200, 60);
    let zero_sides = |m: &TriMesh| {
        let lo = m
            .positions
            .iter()
            .filter(|p| p.to_array().iter().any(|x| x.to_bits() == (-0.0f32).to_bits()))
            .count();
        assert!(lo > 1000, "{lo} corners with a -0");
    };
    zero_sides(&big);
    same_trees("large bodies", &[(&big, VOLUME), (&torus, VOLUME)]);
}

#[test]
fn one_pass_build_equals_hierarchy_then_fit_around_the_bottom_up_size() {
    // The build goes bottom-up below 8,192 leaves and splits by search above: bodies of 8,191,
    // 8,192 and 8,193 triangles (leaves, but for any the soup makes degenerate), crowded (long
    // runs of equal keys) and not.
    let sizes = [8191, 8192, 8193];
    let spread: Vec<TriMesh> = sizes.iter().map(|&n| soup(20 + n as u64, n, 10.0)).collect();
    let crowded: Vec<TriMesh> = sizes.iter().map(|&n| soup(30 + n as u64, n, 1e-3)).collect();
    let bodies: Vec<(&TriMesh, BodyKind)> = spread.iter().chain(&crowded).map(|m| (m, VOLUME)).collect();
    same_trees("bodies around 8,192 leaves", &bodies);
}
