//! The fan words of `fit` (its twin `cpu::fit_fans`) and the walks that pass the ignored
//! vertex's fan (`cpu::closest_hit`, `cpu::closest_hits_line_binary`, the twins of the
//! kernels' walks): against a brute-force intersection of the triangles' vertex sets, and against
//! the walks that pass none: the same hits, fewer nodes at a fan's centre. The GPU's fan words
//! equal the twin's in every frame of `gpu/bvh.rs` (`assert_same_frame`).

use glam::Vec3;
use rand::Rng;
use raycontact::internals::cpu;
use raycontact::internals::layout::{LEAF_BIT, NONE, Node, Ray};
use raycontact::{BodyKind, meshes};
use raycontact_tests::{random_unit, rng};

use crate::reference::Packed;

/// Every leaf under `n`, by the child and escape links.
fn leaves_under(nodes: &[Node], n: u32, out: &mut Vec<u32>) {
    let nd = &nodes[n as usize];
    if nd.child & LEAF_BIT != 0 {
        out.push(nd.child & !LEAF_BIT);
    } else {
        leaves_under(nodes, nd.child, out);
        leaves_under(nodes, nodes[nd.child as usize].escape, out);
    }
}

#[test]
fn fan_words_are_the_lowest_vertex_every_triangle_under_a_node_uses() {
    // Caps of 96 triangles around one vertex each, and a torus, whose subtrees share a vertex
    // only near the leaves.
    let cylinder = meshes::cylinder(1.0, 1.0, 96);
    let torus = meshes::torus(1.0, 0.3, 32, 12);
    let p = Packed::new(&[(&cylinder, BodyKind::Volumetric), (&torus, BodyKind::Volumetric)]);
    for b in 0..2 {
        let body = &p.packing.bodies[b];
        let nodes = p.frame.body_nodes(&p.packing, b);
        let fans = cpu::fit_fans(body, nodes, &p.packing.triangles);
        // One word per internal node: the nodes before the leaves.
        let internal = nodes.iter().take_while(|nd| nd.child & LEAF_BIT == 0).count();
        assert_eq!(fans.len(), internal);
        assert!(nodes[internal..].iter().all(|nd| nd.child & LEAF_BIT != 0));
        let mut fan_nodes = 0;
        for n in 0..internal as u32 {
            let mut tris = Vec::new();
            leaves_under(nodes, n, &mut tris);
            let corners = |t: u32| {
                let g = 3 * (body.tri_offset + t) as usize;
                [p.packing.triangles[g], p.packing.triangles[g + 1], p.packing.triangles[g + 2]]
            };
            let mut shared: Vec<u32> = corners(tris[0]).to_vec();
            for &t in &tris[1..] {
                shared.retain(|v| corners(t).contains(v));
            }
            let lowest = shared.iter().copied().min().unwrap_or(NONE);
            assert_eq!(fans[n as usize], lowest, "body {b} node {n}: shared {shared:?}");
            fan_nodes += usize::from(tris.len() > 2 && !shared.is_empty());
        }
        if b == 0 {
            assert!(fan_nodes > 20, "the caps' fans hold subtrees of more than two triangles");
        }
    }
}

#[test]
fn walks_that_pass_the_ignored_vertexs_fan_find_the_same_hits_with_fewer_nodes_from_its_centre() {
    let segments = 256;
    let cylinder = meshes::cylinder(1.0, 1.0, segments);
    let p = Packed::new(&[(&cylinder, BodyKind::Volumetric)]);
    let body = &p.packing.bodies[0];
    let nodes = p.frame.body_nodes(&p.packing, 0);
    let fans = cpu::fit_fans(body, nodes, &p.packing.triangles);
    let (pos, tris) = (&p.positions, &p.packing.triangles);
    let mut r = rng(0xfa9);
    let (mut before, mut after) = (0u64, 0u64);
    // From the top cap's centre (the fan) and from random rim and side vertices, in random
    // directions and along the axis into the other cap's centre.
    let centre = body.vertex_offset + 2 * segments + 1;
    let mut origins = vec![centre; 40];
    origins.extend((0..40).map(|_| body.vertex_offset + r.random_range(0..2 * segments)));
    for (k, &v) in origins.iter().enumerate() {
        let dir = if k == 0 { Vec3::NEG_Z } else { random_unit(&mut r) };
        let ray = Ray { origin: pos[v as usize], tmin: 0.0, dir, tmax: f32::INFINITY };
        for ignore in [v, NONE] {
            let plain = cpu::closest_hit(body, nodes, pos, tris, &ray, ignore, &[]);
            let passed = cpu::closest_hit(body, nodes, pos, tris, &ray, ignore, &fans);
            assert_eq!((passed.t.to_bits(), passed.triangle), (plain.t.to_bits(), plain.triangle));
            assert_eq!((passed.u.to_bits(), passed.v.to_bits()), (plain.u.to_bits(), plain.v.to_bits()));
            assert!(passed.nodes_visited <= plain.nodes_visited);
            let line = cpu::closest_hits_line_binary(body, nodes, pos, tris, &ray, ignore, &[]);
            let both = cpu::closest_hits_line_binary(body, nodes, pos, tris, &ray, ignore, &fans);
            for s in 0..2 {
                assert_eq!((both[s].t.to_bits(), both[s].triangle), (line[s].t.to_bits(), line[s].triangle));
            }
            assert!(both[0].nodes_visited <= line[0].nodes_visited);
            if v == centre && ignore == v {
                (before, after) =
                    (before + u64::from(plain.nodes_visited), after + u64::from(passed.nodes_visited));
            }
        }
    }
    // Every fan triangle's box holds the centre: a plain walk from it enters all of them.
    assert!(before > 40 * u64::from(segments), "plain walks from the centre: {before} nodes");
    assert!(after * 4 < before, "from the centre, fan passed: {after} nodes against {before}");
}
