//! Twin of `shaders/edge_contacts.wgsl`: contacts from edge–triangle crossings.

use glam::Vec3;

use crate::layout::{
    BODY_CLOTH, BodyGpu, CROSSING_FIRST, CROSSING_FORWARD, CROSSING_LAST, CROSSING_WRONG_A, CROSSING_WRONG_B,
    ContactGpu, CrossingGpu, EdgeGpu, NONE, contact_flags,
};

/// The contact of one crossing, as `edge_contacts.wgsl` makes it (see the kernel for the rules),
/// or `None`.
pub fn edge_contact(
    bodies: &[BodyGpu],
    positions: &[Vec3],
    triangles: &[u32],
    edges: &[EdgeGpu],
    c: &CrossingGpu,
) -> Option<ContactGpu> {
    let (sb, ob) = (&bodies[c.source_body as usize], &bodies[c.target_body as usize]);
    let e = &edges[(sb.edge_offset + c.edge) as usize];
    let g = (ob.tri_offset + c.triangle) as usize;
    let ta = positions[triangles[3 * g] as usize];
    let m =
        (positions[triangles[3 * g + 1] as usize] - ta).cross(positions[triangles[3 * g + 2] as usize] - ta);
    let ml = m.length();
    if ml.is_nan() || ml <= 0.0 {
        return None;
    }
    let n = m / ml;
    let (p, q) = (positions[e.a as usize], positions[e.b as usize]);
    let forward = c.flags & CROSSING_FORWARD != 0;
    let (a_next, b_next) = (c.flags & CROSSING_FIRST != 0, c.flags & CROSSING_LAST != 0);
    let (w, source_point, target_point, normal, depth, moved);
    if ob.flags & BODY_CLOTH == 0 {
        if (forward && a_next) || (!forward && b_next) {
            return None;
        }
        let y = p + c.inside_t * (q - p);
        depth = (c.point - y).dot(n);
        if depth.is_nan() || depth <= 0.0 {
            return None;
        }
        moved = depth;
        w = if c.inside_t < 0.5 { e.a } else { e.b };
        normal = n;
        source_point = y;
        target_point = y + depth * n;
    } else {
        let da = (p - c.point).dot(n).abs();
        let db = (q - c.point).dot(n).abs();
        w = if a_next && c.flags & CROSSING_WRONG_A != 0 {
            e.a
        } else if b_next && c.flags & CROSSING_WRONG_B != 0 {
            e.b
        } else if a_next && (!b_next || da <= db) {
            e.a
        } else if b_next {
            e.b
        } else {
            return None;
        };
        let x = positions[w as usize];
        let sd = (x - c.point).dot(n);
        let behind = if sd == 0.0 { (w == e.a) == forward } else { sd < 0.0 };
        normal = if behind { n } else { -n };
        moved = sd.abs();
        depth = moved + sb.half_thickness + ob.half_thickness;
        source_point = x - sb.half_thickness * normal;
        target_point = x + (moved + ob.half_thickness) * normal;
    }
    Some(ContactGpu {
        source_body: c.source_body,
        source_vertex: w - sb.vertex_offset,
        target_body: c.target_body,
        target_triangle: c.triangle,
        source_point,
        u: c.u,
        target_point,
        v: c.v,
        normal,
        depth,
        ray_length: moved,
        weight: 1.0,
        flags: contact_flags::COLLISION | contact_flags::EDGE,
        pair: c.pair,
        exit_triangle: NONE,
        ..Default::default()
    })
}

/// Twin of `edge_contacts.wgsl`: the contacts of the crossings, in crossing order (the GPU
/// appends them in any order).
pub fn edge_contacts(
    bodies: &[BodyGpu],
    positions: &[Vec3],
    triangles: &[u32],
    edges: &[EdgeGpu],
    crossings: &[CrossingGpu],
) -> Vec<ContactGpu> {
    crossings.iter().filter_map(|c| edge_contact(bodies, positions, triangles, edges, c)).collect()
}
