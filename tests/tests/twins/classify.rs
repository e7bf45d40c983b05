//! The classification (`cpu::narrow_phase` over `cpu::classify`) on cases whose contacts are
//! known by hand: a small box poking into a big one (collisions), the same box just outside
//! (predictions), a sheet resting within its half-thickness on a box, and a slanted vertex over
//! a sheet and over a strip beside its foot (the straight ray that confirms a hit beyond the reach).
//!
//! Both boxes are `meshes::cuboid`s; the small one is shifted off the big one's lattice by
//! (0.013, 0.007) in y and z so that no ray meets an edge. A box vertex inside a face has the
//! face's normal exactly; the re-projected depth of any ray onto a flat face is the distance to
//! that face's plane, whatever the ray's direction, so every depth below is exact.

use glam::Vec3;
use raycontact::BodyKind;
use raycontact::internals::cpu;
use raycontact::internals::layout::{BodyPair, ContactGpu, contact_flags as f};
use raycontact::meshes::{self, TriMesh};

use crate::reference::Packed;

/// The contacts of pair (0, 1) with prediction distance `prediction`, as the CPU backend's
/// full pass finds them.
fn contacts(bodies: &[(&TriMesh, BodyKind)], prediction: f32) -> Vec<ContactGpu> {
    let p = Packed::new(bodies);
    cpu::narrow_phase(&p.narrow(), &[BodyPair { a: 0, b: 1, prediction, pad: 0 }])
}

fn big_box() -> TriMesh {
    meshes::cuboid(Vec3::ONE, 4) // lattice step 0.5: one vertex, (1, 0, 0), near the small box
}

fn small_box(x: f32) -> TriMesh {
    meshes::cuboid(Vec3::splat(0.1), 2)
        .transformed(glam::Affine3A::from_translation(Vec3::new(x, 0.013, 0.007)))
}

const VOLUME: BodyKind = BodyKind::Volumetric;

/// Checks one contact: flags, normal, depth, the re-projected ray `length` (the distance of
/// the vertex from the hit plane) and the points' separation along the normal.
fn check(c: &ContactGpu, flags: u32, normal: Vec3, depth: f32, length: f32) {
    assert_eq!(c.flags, flags, "{c:?}");
    assert!(c.normal.distance(normal) < 1e-6, "normal {c:?}");
    assert!((c.depth - depth).abs() < 2e-6, "depth {} vs {depth}: {c:?}", c.depth);
    assert!(c.weight > 0.0 && c.weight <= 1.0 + 1e-6);
    assert!((c.ray_length * c.weight - length).abs() < 2e-6, "re-projection {c:?}");
    assert!(((c.target_point - c.source_point).dot(c.normal) - c.depth).abs() < 2e-6, "points {c:?}");
}

#[test]
fn a_small_box_poking_into_a_big_one_collides_by_its_depth() {
    let (big, small) = (big_box(), small_box(1.05)); // the small box's face x = 0.95 is inside
    let found = contacts(&[(&big, VOLUME), (&small, VOLUME)], 0.0);
    // Small -> big: each of the 9 vertices on the small box's face x = 0.95 (3 x 3 lattice) is
    // 0.05 deep, pushed out along +x; no other vertex of the small box is inside.
    let from_small: Vec<_> = found.iter().filter(|c| c.source_body == 1).collect();
    let inside: Vec<u32> =
        (0..small.positions.len() as u32).filter(|&v| small.positions[v as usize].x < 1.0).collect();
    assert_eq!(inside.len(), 9);
    assert_eq!(from_small.iter().map(|c| c.source_vertex).collect::<Vec<_>>(), inside);
    for c in from_small {
        check(c, f::COLLISION | f::INWARD_RAY, Vec3::X, 0.05, 0.05);
        assert_eq!(c.source_point, small.positions[c.source_vertex as usize]);
        assert!((c.target_point.x - 1.0).abs() < 1e-6, "on the big box's face: {c:?}");
    }
    // Big -> small: the big box's vertex (1, 0, 0) is inside the small box, 0.05 from its face
    // x = 0.95, where its inward ray (-x) leaves it: pushed along -x.
    let from_big: Vec<_> = found.iter().filter(|c| c.source_body == 0).collect();
    assert_eq!(from_big.len(), 1, "{from_big:?}");
    let c = from_big[0];
    assert_eq!(big.positions[c.source_vertex as usize], Vec3::X);
    check(c, f::COLLISION | f::INWARD_RAY, -Vec3::X, 0.05, 0.05);
    assert!(c.target_point.distance(Vec3::new(0.95, 0.0, 0.0)) < 1e-6, "{c:?}");
    assert_eq!(found.len(), 10);
}

#[test]
fn a_small_box_just_outside_a_big_one_is_predicted_by_its_gap() {
    let (big, small) = (big_box(), small_box(1.12)); // 0.02 from the big box's face x = 1
    assert!(contacts(&[(&big, VOLUME), (&small, VOLUME)], 0.0).is_empty(), "no prediction distance");
    assert!(contacts(&[(&big, VOLUME), (&small, VOLUME)], 0.015).is_empty(), "under the gap");
    let found = contacts(&[(&big, VOLUME), (&small, VOLUME)], 0.1);
    // The outward rays of the small box's 9 vertices on its face x = 1.02 and of the big box's
    // vertex (1, 0, 0) meet the other box 0.02 away: predictions with depth -0.02, each box
    // pushed away from the other.
    let from_small: Vec<_> = found.iter().filter(|c| c.source_body == 1).collect();
    assert_eq!(from_small.len(), 9, "{from_small:?}");
    for c in from_small {
        assert!(small.positions[c.source_vertex as usize].x < 1.03);
        check(c, f::PREDICTION | f::OUTWARD_RAY, Vec3::X, -0.02, 0.02);
    }
    let from_big: Vec<_> = found.iter().filter(|c| c.source_body == 0).collect();
    assert_eq!(from_big.len(), 1, "{from_big:?}");
    assert_eq!(big.positions[from_big[0].source_vertex as usize], Vec3::X);
    check(from_big[0], f::PREDICTION | f::OUTWARD_RAY, -Vec3::X, -0.02, 0.02);
    assert_eq!(found.len(), 10);
}

#[test]
fn a_sheet_within_its_half_thickness_over_a_box_collides_by_e_minus_the_gap() {
    let (e, h) = (0.02, 0.01);
    let big = big_box();
    let sheet = meshes::grid_sheet(1.0, 1.0, 4, 4).transformed(glam::Affine3A::from_translation(Vec3::new(
        0.013,
        0.007,
        1.0 + h,
    )));
    let found = contacts(&[(&big, VOLUME), (&sheet, BodyKind::Cloth { half_thickness: e })], 0.0);
    // Sheet -> box: all 25 sheet vertices, by their inward ray (-z); the sheet pushed up by
    // e - h. Box -> sheet: the box's top vertices under the sheet ((0 or 0.5, 0 or 0.5, 1)),
    // by their outward ray (+z); the box pushed down.
    let from_sheet: Vec<_> = found.iter().filter(|c| c.source_body == 1).collect();
    assert_eq!(from_sheet.len(), 25);
    for c in &from_sheet {
        check(c, f::COLLISION | f::INWARD_RAY, Vec3::Z, e - h, h);
        assert!((c.ray_length - h).abs() < 1e-6);
        // The sheet's point is on its lower surface, e below the mid-surface.
        let v = sheet.positions[c.source_vertex as usize];
        assert!(c.source_point.distance(v - Vec3::Z * e) < 1e-6, "{c:?}");
    }
    let from_box: Vec<_> = found.iter().filter(|c| c.source_body == 0).collect();
    let mut under: Vec<Vec3> = from_box.iter().map(|c| big.positions[c.source_vertex as usize]).collect();
    under.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).unwrap());
    let expected: Vec<Vec3> =
        [(0.0, 0.0), (0.0, 0.5), (0.5, 0.0), (0.5, 0.5)].map(|(x, y)| Vec3::new(x, y, 1.0)).to_vec();
    assert_eq!(under, expected);
    for c in from_box {
        check(c, f::COLLISION | f::OUTWARD_RAY, -Vec3::Z, e - h, h);
        // The box's point is its vertex; the target point is on the sheet's lower surface.
        assert!((c.target_point.z - (1.0 + h - e)).abs() < 1e-6, "{c:?}");
    }
}

/// A thin closed square pyramid, apex (vertex 0) at `apex`, axis (and so the apex's normal)
/// slanted `degrees` from -z towards +x.
fn slanted_spike(apex: Vec3, degrees: f32) -> TriMesh {
    let s = 0.1;
    let base = [(s, s), (-s, s), (-s, -s), (s, -s)].map(|(x, y)| Vec3::new(x, y, -1.0));
    let positions = [vec![Vec3::ZERO], base.to_vec()].concat();
    let triangles = vec![[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1], [1, 4, 3], [1, 3, 2]];
    let axis = Vec3::new(degrees.to_radians().sin(), 0.0, -degrees.to_radians().cos());
    let turn = glam::Quat::from_rotation_arc(Vec3::Z, axis);
    TriMesh { positions, triangles }.transformed(glam::Affine3A::from_rotation_translation(turn, apex))
}

#[test]
fn a_slanted_hit_beyond_the_reach_counts_by_the_straight_ray_towards_its_plane() {
    // Issue 12, item 6. The apex 0.03 over a sheet (e = 0.05, r = 0.05), its normal slanted
    // 80°: its outward ray lands 0.17 further along x at t = 0.173 > r with L = 0.03 < e. Over
    // a whole sheet the straight ray down hits it at t = 0.03: a collision made from that ray
    // (depth e - 0.03, cos α = 1). Over a strip that starts between the apex's foot and the
    // slanted ray's landing (x from 0.5), the slanted ray still hits the strip with the same L
    // but the straight ray misses it: the vertex is within e of the strip's plane, not of the
    // strip, and there is no contact.
    let e = 0.05;
    let apex = Vec3::new(0.4, 0.013, 0.03);
    let spike = slanted_spike(apex, 80.0);
    let sheet = meshes::grid_sheet(4.0, 4.0, 8, 8);
    let strip = meshes::grid_sheet(1.0, 4.0, 2, 8).transformed(glam::Affine3A::from_translation(Vec3::X));
    let cloth = BodyKind::Cloth { half_thickness: e };
    let found = contacts(&[(&spike, VOLUME), (&sheet, cloth)], 0.0);
    let at_apex: Vec<_> = found.iter().filter(|c| c.source_body == 0 && c.source_vertex == 0).collect();
    assert_eq!(at_apex.len(), 1, "{found:?}");
    check(at_apex[0], f::COLLISION | f::OUTWARD_RAY, Vec3::Z, e - 0.03, 0.03);
    assert!((at_apex[0].ray_length - 0.03).abs() < 1e-6 && (at_apex[0].weight - 1.0).abs() < 1e-6);
    let landing = apex.x + apex.z * 80f32.to_radians().tan();
    assert!(landing > 0.55 && landing < 1.5 && apex.x < 0.5, "lands on the strip at x = {landing}");
    let found = contacts(&[(&spike, VOLUME), (&strip, cloth)], 0.0);
    assert!(found.iter().all(|c| c.source_body != 0 || c.source_vertex != 0), "{found:?}");
    // The same spike 0.2 further along x, its foot on the strip: found again.
    let moved = slanted_spike(apex + Vec3::X * 0.2, 80.0);
    let found = contacts(&[(&moved, VOLUME), (&strip, cloth)], 0.0);
    let at_apex: Vec<_> = found.iter().filter(|c| c.source_body == 0 && c.source_vertex == 0).collect();
    assert_eq!(at_apex.len(), 1, "{found:?}");
    check(at_apex[0], f::COLLISION | f::OUTWARD_RAY, Vec3::Z, e - 0.03, 0.03);
}
