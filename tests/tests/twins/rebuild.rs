//! The per-frame twins (normals, Morton codes, sort, hierarchy, fit) against analytic values
//! and independent references.

use glam::{Affine3A, Vec3};
use rand::Rng;
use raycontact::internals::layout::{
    DEGENERATE_KEY, LEAF_BIT, NONE, SHORT_DEGENERATE_KEY, SHORT_KEY_BITS, SHORT_KEY_TILES, SortSegment, TILE,
    TINY_DEGENERATE_KEY, TINY_KEY_BITS, TINY_KEY_TRIANGLES, key_form,
};
use raycontact::internals::{FrameData, cpu};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Scene};
use raycontact_tests::rng;

use crate::reference::{Packed, bounds, interleave};

const VOLUME: BodyKind = BodyKind::Volumetric;

#[test]
fn vertex_normals_of_a_sphere_point_away_from_its_centre() {
    let (radius, centre) = (2.0, Vec3::new(0.3, -1.0, 4.0));
    let ball = meshes::icosphere(radius, 4).transformed(Affine3A::from_translation(centre));
    let p = Packed::new(&[(&meshes::cuboid(Vec3::ONE, 2), VOLUME), (&ball, VOLUME)]);
    let body = p.packing.bodies[1];
    let mut worst = 1.0f32;
    for (i, x) in p.positions(1).iter().enumerate() {
        let n = p.frame.normals[body.vertex_offset as usize + i];
        assert!((n.length() - 1.0).abs() < 1e-6, "vertex {i}: |n| = {}", n.length());
        worst = worst.min(n.dot((*x - centre) / radius));
    }
    // An area-weighted normal on a subdivided icosahedron is within a fraction of a degree of
    // the radius (the one-ring is nearly symmetric).
    assert!(worst > 0.9999, "worst cosine to the radius: {worst}");
}

#[test]
fn vertex_normals_of_a_box_are_its_face_normals_or_between_them() {
    let half = Vec3::new(1.0, 0.5, 2.0);
    let cube = meshes::cuboid(half, 4);
    let p = Packed::new(&[(&cube, VOLUME)]);
    for (i, x) in cube.positions.iter().enumerate() {
        let n = p.frame.normals[i];
        // The faces the vertex lies on: the axes where it is at ±half.
        let on: Vec<usize> = (0..3).filter(|&k| (x[k].abs() - half[k]).abs() < 1e-6).collect();
        assert!(!on.is_empty(), "vertex {i} is on the surface");
        for k in 0..3 {
            if on.contains(&k) {
                assert!(n[k] * x[k].signum() > 1e-3, "vertex {i} at {x}: n {n} points out of face {k}");
            } else {
                assert!(n[k].abs() < 1e-6, "vertex {i} at {x}: n {n} leaves the faces' span");
            }
        }
        if on.len() == 1 {
            let k = on[0];
            let mut face = Vec3::ZERO;
            face[k] = x[k].signum();
            assert!(n.distance(face) < 1e-6, "vertex {i} inside face {k}: {n}");
        }
    }
}

#[test]
fn vertex_normals_weight_by_area_and_leave_unused_vertices_zero() {
    // Vertex 0 is shared by a triangle of area 1/2 facing +z and one of area 2 facing +y: the
    // area-weighted normal is (0, 2, 1/2) / |.|; vertex 5 is on no triangle.
    let mesh = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z * 2.0, Vec3::X * 2.0, Vec3::splat(7.0)],
        triangles: vec![[0, 1, 2], [0, 3, 4]],
    };
    let p = Packed::new(&[(&mesh, VOLUME)]);
    let n = p.frame.normals.clone();
    assert!(n[0].distance(Vec3::new(0.0, 2.0, 0.5).normalize()) < 1e-6, "{}", n[0]);
    assert!(n[1].distance(Vec3::Z) < 1e-6 && n[2].distance(Vec3::Z) < 1e-6);
    assert!(n[3].distance(Vec3::Y) < 1e-6 && n[4].distance(Vec3::Y) < 1e-6);
    assert_eq!(n[5], Vec3::ZERO);
}

#[test]
fn expand_bits_and_morton_codes_interleave_bit_by_bit() {
    for x in 0..1024u32 {
        assert_eq!(cpu::expand_bits(x), interleave(x, 0, 0) >> 2, "expand_bits({x})");
        assert_eq!(cpu::expand_bits(x | 0xffff_fc00), cpu::expand_bits(x), "only the low 10 bits count");
    }
    let mut r = rng(1966);
    let mut checked = 0;
    for _ in 0..20_000 {
        let extent: f32 = r.random_range(0.01..100.0);
        let lo = Vec3::new(r.random_range(-5.0..5.0), r.random_range(-5.0..5.0), r.random_range(-5.0..5.0));
        let corner = |r: &mut rand_pcg::Pcg64| lo + Vec3::new(r.random(), r.random(), r.random()) * extent;
        let (a, b, c) = (corner(&mut r), corner(&mut r), corner(&mut r));
        // The cell of the centroid in a grid of 1024 cells over the power of two above the
        // extent, in f64; skipped within 1e-3 of a cell wall, where f32 may round either way.
        let mut side = 1.0f64;
        while side < extent as f64 {
            side *= 2.0;
        }
        while side / 2.0 >= extent as f64 {
            side /= 2.0;
        }
        let centroid = (a.as_dvec3() + b.as_dvec3() + c.as_dvec3()) / 3.0 - lo.as_dvec3();
        let cell = centroid / side * 1024.0;
        if cell.to_array().iter().any(|x| (x - x.round()).abs() < 1e-3) {
            continue;
        }
        let q = cell.to_array().map(|x| x.floor().clamp(0.0, 1023.0) as u32);
        let scale = cpu::quantisation_scale(extent);
        assert_eq!(scale, (1024.0 / side) as f32 * (1.0f32 / 3.0), "quantisation_scale({extent})");
        assert_eq!(cpu::morton_code(a, b, c, lo, scale), interleave(q[0], q[1], q[2]), "cell {q:?}");
        checked += 1;
    }
    assert!(checked > 15_000);
}

#[test]
fn radix_sort_equals_a_stable_sort_in_every_segment() {
    let mut r = rng(1954);
    for round in 0..128 {
        // Segments with gaps between them (left untouched), some empty or of one key.
        let mut segments = Vec::new();
        let mut at = 0u32;
        for _ in 0..r.random_range(1..6) {
            at += r.random_range(0..20);
            // Up to 5,000 keys, or about as many as a body of 8 tiles (the most with short keys).
            let count =
                [0, 1, 2, r.random_range(3..5000), r.random_range(30_000..36_000)][r.random_range(0..5)];
            segments.push(SortSegment { offset: at, count, tile_offset: 0, tile_count: 0 });
            at += count;
        }
        let n = at as usize + r.random_range(0..10);
        // Few distinct keys (stability matters), or full-range keys, or keys whose low bytes
        // are all equal (skipped passes), or keys that differ in their low `bits` bits alone
        // (every count of bits the sort's passes and digit widths follow from, 1 to 32, above
        // them a bit pattern every key shares).
        let bits = 1 + (round / 4) % 32;
        let low = u32::MAX >> (32 - bits);
        let keys: Vec<u32> = (0..n)
            .map(|_| match round % 4 {
                0 => r.random_range(0..40),
                1 => r.random(),
                2 => r.random_range(0..300u32) << 16 | 0xab,
                _ => 0xdead_beef & !low | r.random::<u32>() & low,
            })
            .collect();
        let values: Vec<u32> = (0..n as u32).collect();
        let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        for s in &segments {
            expected[s.offset as usize..(s.offset + s.count) as usize].sort_by_key(|kv| kv.0);
        }
        let (mut k, mut v) = (keys.clone(), values.clone());
        cpu::radix_sort(&segments, &mut k, &mut v, &[]);
        let got: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
        assert_eq!(got, expected, "round {round}");
    }
}

/// The structure of every body's BVH in `p`, checked from the frame alone: leaves, parents,
/// child and escape links, boxes.
fn check_tree(what: &str, p: &Packed) {
    let f: &FrameData = &p.frame;
    for (b, body) in p.packing.bodies.iter().enumerate() {
        let what = format!("{what}, body {b}");
        let tris = p.triangles(b);
        let positions = p.positions(b);
        let tri_box = |t: usize| bounds(tris[t].map(|i| positions[i as usize])).unwrap();
        let first = body.tri_offset as usize;
        // Degenerate, independently: in these meshes a triangle is exactly flat or far from it.
        let degenerate: Vec<bool> = tris
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| positions[i as usize].as_dvec3());
                let (e1, e2) = (b - a, c - a);
                e1.cross(e2).length_squared() <= 1e-9 * e1.length_squared() * e2.length_squared()
            })
            .collect();
        for (t, d) in degenerate.iter().enumerate() {
            assert_eq!(f.tri_boxes[first + t].flags & 1 != 0, *d, "{what}: degenerate flag of {t}");
        }
        let n = degenerate.iter().filter(|d| !**d).count();
        let state = f.body_state[b];
        assert_eq!(state.leaf_count as usize, n, "{what}: leaves");
        assert_eq!(state.degenerate_count as usize, tris.len() - n, "{what}: degenerate triangles");
        // Keys sorted within the segment; the degenerate triangles last, with their key (a
        // body of at most TINY_KEY_TRIANGLES triangles has keys of TINY_KEY_BITS bits, one of
        // at most SHORT_KEY_TILES tiles of SHORT_KEY_BITS bits).
        let keys = &f.keys[first..first + tris.len()];
        let values = &f.values[first..first + tris.len()];
        assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{what}: keys sorted");
        let form = key_form(body.tri_count, body.tile_count);
        let bits = if tris.len() <= TINY_KEY_TRIANGLES as usize {
            TINY_KEY_BITS
        } else if tris.len() <= (SHORT_KEY_TILES * TILE) as usize {
            SHORT_KEY_BITS
        } else {
            32
        };
        assert_eq!(form.bits, bits, "{what}: key bits");
        let degenerate_key = match bits {
            TINY_KEY_BITS => TINY_DEGENERATE_KEY,
            SHORT_KEY_BITS => SHORT_DEGENERATE_KEY,
            _ => DEGENERATE_KEY,
        };
        assert_eq!(form.degenerate, degenerate_key, "{what}: degenerate key");
        for (j, &v) in values.iter().enumerate() {
            let t = v as usize - first;
            assert_eq!(keys[j] == degenerate_key, degenerate[t], "{what}: key of triangle {t}");
            assert!(bits == 32 || keys[j] >> bits == 0, "{what}: key of triangle {t} in {bits} bits");
        }
        if n == 0 {
            assert_eq!(state.bounds(), None, "{what}: no leaves, no box");
            assert!(f.body_nodes(&p.packing, b).is_empty());
            continue;
        }
        let nodes = f.body_nodes(&p.packing, b);
        let parents = f.body_parents(&p.packing, b);
        assert_eq!(nodes.len(), 2 * n - 1, "{what}: used nodes");
        // Leaves n-1 .. 2n-2: each non-degenerate triangle once, in sorted-key order, with its
        // triangle's box; internal nodes are not leaves.
        let mut seen = vec![0; tris.len()];
        for (j, leaf) in nodes[n - 1..].iter().enumerate() {
            assert!(leaf.child & LEAF_BIT != 0, "{what}: node {} is a leaf", n - 1 + j);
            let t = (leaf.child & !LEAF_BIT) as usize;
            assert_eq!(t, values[j] as usize - first, "{what}: leaf {j} in key order");
            seen[t] += 1;
            let (lo, hi) = tri_box(t);
            assert_eq!((leaf.min.as_dvec3(), leaf.max.as_dvec3()), (lo, hi), "{what}: box of leaf {j}");
        }
        for (t, (s, d)) in seen.iter().zip(&degenerate).enumerate() {
            assert_eq!(*s, usize::from(!d), "{what}: triangle {t} as a leaf");
        }
        // Children from the parent links: two per internal node, `child` one of them.
        let mut children = vec![Vec::new(); n - 1];
        assert_eq!(parents[0], NONE, "{what}: the root has no parent");
        for (c, &par) in parents.iter().enumerate().skip(1) {
            assert!((par as usize) < n - 1, "{what}: parent {par} of node {c} is internal");
            children[par as usize].push(c);
        }
        let mut order = Vec::with_capacity(2 * n - 1);
        let mut size = vec![0usize; 2 * n - 1];
        for (i, ch) in children.iter().enumerate() {
            assert_eq!(ch.len(), 2, "{what}: children of {i}");
            assert!(nodes[i].child & LEAF_BIT == 0, "{what}: node {i} is internal");
            assert!(ch.contains(&(nodes[i].child as usize)), "{what}: child link of {i}");
        }
        // Depth first, first child first: every node once, the leaves in key order.
        fn visit(
            x: usize,
            n: usize,
            nodes: &[raycontact::internals::layout::Node],
            children: &[Vec<usize>],
            order: &mut Vec<usize>,
            size: &mut [usize],
        ) {
            let at = order.len();
            order.push(x);
            if x < n - 1 {
                let left = nodes[x].child as usize;
                let right = children[x].iter().copied().find(|&c| c != left).unwrap();
                visit(left, n, nodes, children, order, size);
                visit(right, n, nodes, children, order, size);
            }
            size[x] = order.len() - at;
        }
        visit(0, n, nodes, &children, &mut order, &mut size);
        assert_eq!(order.len(), 2 * n - 1, "{what}: every node reached once");
        let leaves: Vec<usize> = order.iter().copied().filter(|&x| x >= n - 1).collect();
        assert_eq!(leaves, (n - 1..2 * n - 1).collect::<Vec<_>>(), "{what}: leaves in key order");
        // Escape: the next node in depth-first order after the subtree.
        for (pos, &x) in order.iter().enumerate() {
            let next = order.get(pos + size[x]).map_or(NONE, |&y| y as u32);
            assert_eq!(nodes[x].escape, next, "{what}: escape of node {x}");
        }
        // Boxes: each internal node's is the union of its children's, which it contains.
        for (i, ch) in children.iter().enumerate() {
            let (l, r) = (&nodes[ch[0]], &nodes[ch[1]]);
            assert_eq!(nodes[i].min, l.min.min(r.min), "{what}: box of node {i}");
            assert_eq!(nodes[i].max, l.max.max(r.max), "{what}: box of node {i}");
        }
        // The body's box is the root's, the union of its non-degenerate triangles' boxes.
        let expected = bounds(
            (0..tris.len()).filter(|&t| !degenerate[t]).flat_map(|t| tris[t].map(|i| positions[i as usize])),
        )
        .unwrap();
        let (lo, hi) = state.bounds().unwrap();
        assert_eq!((lo.as_dvec3(), hi.as_dvec3()), expected, "{what}: body box");
        assert_eq!((nodes[0].min, nodes[0].max), (lo, hi), "{what}: root box");
    }
}

#[test]
fn hierarchy_and_fit_build_a_consistent_tree() {
    let mut with_degenerate = meshes::torus(1.0, 0.3, 24, 12);
    with_degenerate.triangles.extend([[0, 0, 1], [3, 4, 3], [5, 5, 5]]);
    let mut duplicated = meshes::icosphere(0.4, 2);
    let copy = duplicated.triangles.clone();
    duplicated.triangles.extend(copy); // every Morton key twice
    let single = TriMesh { positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y], triangles: vec![[0, 1, 2]] };
    let pair = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
    };
    let flat = TriMesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0],
        triangles: vec![[0, 1, 2], [2, 1, 0]],
    };
    let bunny = raycontact_tests::bunny();
    let sheet = meshes::grid_sheet(2.0, 1.0, 30, 7);
    let p = Packed::new(&[
        (&single, VOLUME),
        (&with_degenerate, VOLUME),
        (&flat, VOLUME),
        (&bunny, VOLUME),
        (&duplicated, VOLUME),
        (&pair, VOLUME),
        (&sheet, BodyKind::Cloth { half_thickness: 0.01 }),
    ]);
    assert_eq!(p.frame.body_state[2].leaf_count, 0, "a body of collinear triangles has no leaves");
    assert_eq!(p.frame.body_state[1].degenerate_count, 3);
    check_tree("shipped meshes", &p);
}

#[test]
fn random_triangle_soups_build_consistent_trees() {
    let mut r = rng(2007);
    for round in 0..20 {
        let count = [1, 2, 3, 17, 500, 3000][round % 6];
        let mut soup = TriMesh::default();
        for t in 0..count {
            // Odd rounds repeat three triangles over and over: many equal Morton keys.
            if round % 2 == 1 && t >= 3 {
                let copy: Vec<Vec3> = soup.positions[3 * (t as usize % 3)..][..3].to_vec();
                soup.positions.extend(copy);
            } else {
                let c = Vec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                );
                for _ in 0..3 {
                    soup.positions.push(c + Vec3::new(r.random(), r.random(), r.random()) * 0.05);
                }
            }
            soup.triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
        }
        let p = Packed::new(&[(&soup, VOLUME), (&soup, VOLUME)]);
        check_tree(&format!("soup {round}"), &p);
    }
}

#[test]
fn the_scene_builds_the_same_frame_as_frame_data_build() {
    let mesh = meshes::torus(1.0, 0.25, 20, 10);
    let mut s = Scene::new_cpu(Some(1)).unwrap();
    s.add_body(&mesh.positions, &mesh.triangles, VOLUME).unwrap();
    s.update().unwrap();
    let p = Packed::new(&[(&mesh, VOLUME)]);
    assert_eq!(s.frame_data().unwrap(), p.frame);
}
