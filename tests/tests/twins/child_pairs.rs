//! The compact child pairs (`layout::PairGrid`, `cpu::child_pairs`, the twins of `pair_grid`,
//! `pair_steps` and `fit`'s pair words) and the walk that reads them (`cpu::closest_hit_paired`,
//! the twin of `closest_hit` with the pairs): every stored box holds its child's box within one
//! step a side, the steps fit their 14 bits and the words read as normal floats, on bodies near
//! and far from the origin, tiny and huge; and the walk through the pairs finds the walk
//! through the nodes' own boxes' hits, bit for bit. The GPU's pairs equal the twin's in every
//! frame of `gpu/bvh.rs` (`assert_same_frame`).

use glam::Vec3;
use rand::Rng;
use raycontact::BodyKind;
use raycontact::internals::cpu;
use raycontact::internals::layout::{LEAF_BIT, Node, PAIR_Q_MAX, PairGrid, Ray, pair_boxes, pair_word};
use raycontact::meshes;
use raycontact_tests::{random_unit, rng};

use crate::reference::Packed;

/// Boxes of bodies of every kind of scale and place: (corner, size).
fn bodies() -> Vec<(Vec3, Vec3)> {
    vec![
        (Vec3::splat(-1.0), Vec3::splat(2.0)),
        (Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)),
        (Vec3::new(1.0e4, -2.0e4, 3.0e4), Vec3::new(1.0, 0.5, 0.25)),
        (Vec3::new(-3.0e6, 5.0e6, 7.0), Vec3::splat(1.0e-3)),
        (Vec3::splat(1.0e-6), Vec3::splat(1.0e-6)),
        (Vec3::splat(-1.0e20), Vec3::splat(3.0e20)),
        (Vec3::new(-0.3, -1.0e-9, 2.0), Vec3::new(0.6, 1.0e-9, 1.0e-7)),
    ]
}

/// A box component stored in steps reads back on the box's outer side of it, within one step,
/// for components spread over the body's box, at its ends, and just below and above a whole
/// number of steps (where `v / step - corner` would round to that number).
#[test]
fn stored_components_hold_their_box_within_a_step() {
    let mut r = rng(2013);
    for (corner, size) in bodies() {
        let (lo, hi) = (corner, corner + size);
        let g = PairGrid::of_box(lo, hi);
        assert!(g.step > 0.0 && g.step.to_bits() & 0x7f_ffff == 0, "{g:?}: a power of two");
        assert_eq!(g.origin, g.origin.floor(), "{g:?}: whole steps");
        for d in 0..3 {
            let mut values = vec![lo[d], hi[d]];
            for _ in 0..2000 {
                values.push(lo[d] + r.random::<f32>() * (hi[d] - lo[d]));
            }
            // Around whole steps: the next floats below and above each.
            for k in [0.0, 1.0, 2.0, 4095.0] {
                let w = (g.origin[d] + k) * g.step;
                values.extend([
                    f32::from_bits(w.to_bits().wrapping_sub(1)),
                    w,
                    f32::from_bits(w.to_bits() + 1),
                ]);
            }
            for v in values.into_iter().filter(|v| (lo[d]..=hi[d]).contains(v)) {
                let (down, up) = (g.steps(d, v, false), g.steps(d, v, true));
                assert!(down <= PAIR_Q_MAX && up <= PAIR_Q_MAX, "{g:?} axis {d}: {v} in {down}, {up} steps");
                let (a, b) = (g.value(d, down), g.value(d, up));
                assert!(a <= v && v <= b, "{g:?} axis {d}: {v} read back as {a} and {b}");
                assert!(v - a <= g.step && b - v <= g.step, "{g:?} axis {d}: {v} within a step of {a}, {b}");
            }
        }
    }
}

/// A pair's box words hold both children's steps and read as normal positive floats (the node
/// holds them as floats), whatever the steps.
#[test]
fn pair_words_are_normal_floats_holding_both_children() {
    for (l, r) in [(0, 0), (PAIR_Q_MAX, PAIR_Q_MAX), (PAIR_Q_MAX, 0), (0, PAIR_Q_MAX), (4097, 12)] {
        let w = pair_word(l, r);
        let f = f32::from_bits(w);
        assert!(f.is_normal() && f > 0.0, "{l}, {r}: {f}");
        let g = PairGrid::ONE_LEAF;
        let p = Node { min: Vec3::splat(f), child: 0, max: Vec3::splat(f), escape: 0 };
        let [(lmin, _), (rmin, _)] = pair_boxes(&g, &p);
        assert_eq!((lmin.x, rmin.x), (l as f32, r as f32));
    }
}

/// The pairs of a tree in the grid of its body's box: each internal node's two children, their
/// words and their boxes rounded outwards.
#[test]
fn child_pairs_hold_each_childs_box_and_word() {
    let mesh =
        meshes::torus(1.0, 0.3, 40, 16).transformed(glam::Affine3A::from_translation(Vec3::splat(250.0)));
    let p = Packed::new(&[(&mesh, BodyKind::Volumetric)]);
    let nodes = p.frame.body_nodes(&p.packing, 0);
    let (lo, hi) = p.frame.body_state[0].bounds().unwrap();
    let g = PairGrid::of_box(lo, hi);
    let mut pairs = Vec::new();
    cpu::child_pairs(nodes, &g, &mut pairs);
    assert_eq!(pairs.len(), nodes.len() / 2, "one pair per internal node");
    for (n, pair) in pairs.iter().enumerate() {
        let left = nodes[n].child;
        let right = nodes[left as usize].escape;
        for (c, word, (min, max)) in
            [(left, pair.child, pair_boxes(&g, pair)[0]), (right, pair.escape, pair_boxes(&g, pair)[1])]
        {
            let child = &nodes[c as usize];
            let want = if child.child & LEAF_BIT != 0 { child.child } else { c };
            assert_eq!(word, want, "node {n}: child {c}'s word");
            assert!(min.cmple(child.min).all() && child.max.cmple(max).all(), "node {n}: child {c}'s box");
            assert!((child.min - min).max_element() <= g.step && (max - child.max).max_element() <= g.step);
        }
    }
}

/// Rays from every vertex along random directions (each ignoring its vertex) and from outside:
/// the walk through the pairs finds the walk through the nodes' hits, bit for bit, on a body far
/// from the origin and on a small one.
#[test]
fn the_walk_through_the_pairs_finds_the_same_hits() {
    let mut r = rng(2025);
    let far = raycontact_tests::bunny()
        .transformed(glam::Affine3A::from_translation(Vec3::new(-4.0e3, 17.0, 9.0e2)));
    let small = meshes::uv_sphere(1.0e-3, 24, 12);
    for (name, mesh) in [("far bunny", &far), ("small sphere", &small)] {
        let p = Packed::new(&[(mesh, BodyKind::Volumetric)]);
        let (body, nodes) = (&p.packing.bodies[0], p.frame.body_nodes(&p.packing, 0));
        let (lo, hi) = p.frame.body_state[0].bounds().unwrap();
        let grid = PairGrid::of_box(lo, hi);
        let mut pairs = Vec::new();
        cpu::child_pairs(nodes, &grid, &mut pairs);
        let (centre, size) = ((lo + hi) * 0.5, (hi - lo).max_element());
        let tris = &p.packing.triangles;
        let (mut hits, mut nodes_plain, mut nodes_paired) = (0, 0u64, 0u64);
        for (v, x) in mesh.positions.iter().enumerate() {
            let outside = centre + random_unit(&mut r) * 2.0 * size;
            for (ray, ignore) in [
                (Ray::new(*x, random_unit(&mut r)), v as u32),
                (Ray::new(outside, (*x - outside).normalize()), u32::MAX),
            ] {
                let a = cpu::closest_hit(body, nodes, &p.positions, tris, &ray, ignore, &[]);
                let b = cpu::closest_hit_paired(
                    body,
                    nodes,
                    (&pairs, grid),
                    &p.positions,
                    tris,
                    &ray,
                    ignore,
                    &[],
                );
                let key = |h: &raycontact::internals::layout::RayHit| {
                    (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits())
                };
                assert_eq!(key(&a), key(&b), "{name}: vertex {v}");
                hits += usize::from(a.is_hit());
                nodes_plain += a.nodes_visited as u64;
                nodes_paired += b.nodes_visited as u64;
            }
        }
        eprintln!(
            "{name}: {hits} hits; nodes visited {nodes_plain} through the nodes, {nodes_paired} through the pairs"
        );
        assert!(hits > mesh.positions.len(), "{name}: the rays hit");
    }
}
