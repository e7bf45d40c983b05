//! The intersection analysis's test scenes (issue 13's list) and the comparison of two backends'
//! [`Intersections`] and intersection contacts.

use std::f32::consts::PI;

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{BodyKind, Contact, ContactFlags, Contacts, Intersections};

/// A cloth of half-thickness 0.005.
pub const CLOTH: BodyKind = BodyKind::Cloth { half_thickness: 0.005 };

/// Two flat sheets crossing at an angle: A (2 × 2, 16 × 16 quads) in z = 0; B (1.6 × 1.6, 12 × 12)
/// turned by 70° about a slanted axis and moved off centre, so that the straight segment where
/// they cross runs off every grid line, from border to border of B (A reaches past B both ways
/// along it): B is cut into a larger and a smaller part, A only slit.
pub fn tilted_sheets() -> Vec<(TriMesh, BodyKind)> {
    let a = meshes::grid_sheet(2.0, 2.0, 16, 16);
    let turn = Quat::from_axis_angle(Vec3::new(1.0, 0.23, 0.0).normalize(), 70f32.to_radians());
    let b = meshes::grid_sheet(1.6, 1.6, 12, 12)
        .transformed(Affine3A::from_rotation_translation(turn, Vec3::new(0.0137, 0.291, 0.0113)));
    vec![(a, CLOTH), (b, CLOTH)]
}

/// A sphere (radius 0.5) pushed through a sheet from above: the sheet (3 × 3, 30 × 30) in
/// z = 0.1013, the sphere's centre at z = 0.4: its cap below the sheet is the smaller part of it.
pub fn sphere_through_sheet() -> Vec<(TriMesh, BodyKind)> {
    let sheet = meshes::grid_sheet(3.0, 3.0, 30, 30)
        .transformed(Affine3A::from_translation(Vec3::new(0.0071, -0.0043, 0.1013)));
    let sphere = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, 0.4)));
    vec![(sheet, CLOTH), (sphere, BodyKind::Volumetric)]
}

/// A torus (radii 1 and 0.25) standing in the x-z plane, its lower arc sunk into a slab (a box
/// 4 × 2 × 1 whose top face is z = 0.5013, above the tube at the arc's lowest point): the slab's
/// top face cuts the torus's tube twice, once in each leg of the ring.
pub fn torus_through_slab() -> Vec<(TriMesh, BodyKind)> {
    let stand = Quat::from_rotation_x(PI / 2.0);
    let torus = meshes::torus(1.0, 0.25, 48, 16)
        .transformed(Affine3A::from_rotation_translation(stand, Vec3::new(0.013, 0.0071, 1.0)));
    let slab = meshes::cuboid(Vec3::new(2.0, 1.0, 0.5), 8)
        .transformed(Affine3A::from_translation(Vec3::new(0.0, 0.0, 0.0013)));
    vec![(torus, BodyKind::Volumetric), (slab, BodyKind::Volumetric)]
}

/// Two unit boxes crossing edge to edge: A turned 45° about x, its lowest edge along x; B turned
/// 45° about y, its highest edge along y, 0.05 above A's lowest: the two edges pass through each
/// other's box and no vertex is inside the other box.
pub fn boxes_edge_to_edge() -> Vec<(TriMesh, BodyKind)> {
    let h = 0.5 * 2f32.sqrt();
    let a = meshes::cuboid(Vec3::splat(0.5), 1).transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_x(PI / 4.0),
        Vec3::new(0.017, 0.0123, h - 0.025),
    ));
    let b = meshes::cuboid(Vec3::splat(0.5), 1).transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_y(PI / 4.0),
        Vec3::new(-0.011, 0.007, -h + 0.025),
    ));
    vec![(a, BodyKind::Volumetric), (b, BodyKind::Volumetric)]
}

/// Two spheres (radius 0.5, subdivision 3) whose centres are 0.7 apart.
pub fn two_spheres() -> Vec<(TriMesh, BodyKind)> {
    let a = meshes::icosphere(0.5, 3);
    let b = a.transformed(Affine3A::from_rotation_translation(
        Quat::from_rotation_z(0.3),
        Vec3::new(0.7, 0.013, 0.021),
    ));
    vec![(a, BodyKind::Volumetric), (b, BodyKind::Volumetric)]
}

/// The intersection contacts ([`ContactFlags::EDGE`], [`ContactFlags::UNTANGLE`]).
pub fn intersection_contacts(c: &Contacts) -> Vec<&Contact> {
    let flags = ContactFlags::EDGE | ContactFlags::UNTANGLE;
    c.contacts.iter().filter(|x| x.flags.intersects(flags)).collect()
}

/// Checks that two backends found the same intersections and intersection contacts: the same
/// crossings (edges, triangles, flags; points within `tol`), loops (crossings, closed, triangles;
/// length within `tol`), regions (vertices, lowest vertex, wrong side; areas within `tol`
/// relative) and contacts (bodies, vertex, triangle, flags; depth and normal within `tol`).
pub fn compare(what: &str, a: &Contacts, b: &Contacts, tol: f32) -> Result<(), String> {
    let (x, y) = (&a.intersections, &b.intersections);
    let err = |m: String| Err(format!("{what}: {m}"));
    if x.crossings.len() != y.crossings.len() {
        return err(format!("{} vs {} crossings", x.crossings.len(), y.crossings.len()));
    }
    for (i, (p, q)) in x.crossings.iter().zip(&y.crossings).enumerate() {
        let same = (p.edge_body, p.edge, p.triangle_body, p.triangle, p.forward, p.first, p.last)
            == (q.edge_body, q.edge, q.triangle_body, q.triangle, q.forward, q.first, q.last);
        if !same || p.point.distance(q.point) > tol {
            return err(format!("crossing {i}: {p:?} vs {q:?}"));
        }
    }
    compare_analysis(x, y, tol).or_else(err)?;
    let (p, q) = (intersection_contacts(a), intersection_contacts(b));
    if p.len() != q.len() {
        return err(format!("{} vs {} intersection contacts", p.len(), q.len()));
    }
    for (c, d) in p.iter().zip(&q) {
        let key = |c: &Contact| (c.source_body, c.source_vertex, c.target_body, c.target_triangle, c.flags);
        if key(c) != key(d) || (c.depth - d.depth).abs() > tol || c.normal.distance(d.normal) > tol {
            return err(format!("contact {c:?} vs {d:?}"));
        }
    }
    Ok(())
}

fn compare_analysis(x: &Intersections, y: &Intersections, tol: f32) -> Result<(), String> {
    if x.loops.len() != y.loops.len() {
        return Err(format!("{} vs {} loops", x.loops.len(), y.loops.len()));
    }
    for (i, (p, q)) in x.loops.iter().zip(&y.loops).enumerate() {
        let same = (&p.bodies, &p.crossings, p.closed, &p.triangles, &p.sides)
            == (&q.bodies, &q.crossings, q.closed, &q.triangles, &q.sides);
        if !same || (p.length - q.length).abs() > tol * p.length.max(1.0) {
            return Err(format!("loop {i}: {p:?} vs {q:?}"));
        }
    }
    if x.regions.len() != y.regions.len() {
        return Err(format!("regions of {} vs {} bodies", x.regions.len(), y.regions.len()));
    }
    for (p, q) in x.regions.iter().zip(&y.regions) {
        if (p.body, &p.vertex_region) != (q.body, &q.vertex_region) || p.regions.len() != q.regions.len() {
            return Err(format!("regions of {}: {} vs {}", p.body, p.regions.len(), q.regions.len()));
        }
        for (r, s) in p.regions.iter().zip(&q.regions) {
            let same = (r.lowest_vertex, r.vertices, r.wrong_side_of)
                == (s.lowest_vertex, s.vertices, s.wrong_side_of);
            if !same || (r.area - s.area).abs() > tol * r.area.max(1e-6) {
                return Err(format!("region of {}: {r:?} vs {s:?}", p.body));
            }
        }
    }
    if x.counts != y.counts {
        return Err(format!("counts {:?} vs {:?}", x.counts, y.counts));
    }
    Ok(())
}
