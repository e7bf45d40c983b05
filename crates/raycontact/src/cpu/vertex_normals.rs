//! Twin of `shaders/vertex_normals.wgsl`: area-weighted unit vertex normals, and the bodies'
//! boxes over their non-degenerate triangles' vertices.

use glam::{Vec3, Vec4};
use rayon::prelude::*;

use super::shared::common::{box_keys, tri_vertices};
use super::triangle_bounds::triangle_box;
use crate::layout::{BodyState, NORMAL_CANCELLED};
use crate::packing::Packing;

/// Twin of `vertex_normals.wgsl`: normalised sum of `cross(b - a, c - a)` over the incident
/// triangles in CSR order (zero where they cancel up to rounding: [`NORMAL_CANCELLED`]).
/// `positions` and `normals` are two regions of the kernel's one vertex buffer
/// ([`VERTEX_REGIONS`](crate::layout::VERTEX_REGIONS)), taken here as separate slices;
/// `triangles` is the first region of its triangle buffer.
pub fn vertex_normals(
    positions: &[Vec3],
    triangles: &[u32],
    vertex_tri_offsets: &[u32],
    vertex_tris: &[u32],
    normals: &mut [Vec3],
) {
    normals.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, out)| {
        *out = vertex_normal(positions, triangles, vertex_tri_offsets, vertex_tris, v);
    });
}

/// Twin of `face_sum`'s normal (`shaders/shared/incidence.wgsl`): the normal of packed vertex
/// `v` that [`vertex_normals`] computes, for one vertex (`walk_contacts` computes its sources'
/// this way).
pub fn vertex_normal(
    positions: &[Vec3],
    triangles: &[u32],
    vertex_tri_offsets: &[u32],
    vertex_tris: &[u32],
    v: usize,
) -> Vec3 {
    let mut sum = Vec4::ZERO;
    for &t in &vertex_tris[vertex_tri_offsets[v] as usize..vertex_tri_offsets[v + 1] as usize] {
        let (a, b, c) = tri_vertices(positions, triangles, t as usize);
        sum += with_length((b - a).cross(c - a));
    }
    unit_or_cancelled(sum.truncate(), sum.w)
}

/// A face's cross product with its L1 length as `w` (`(|x| + |y|) + |z|`, as `face_sum` adds
/// it): the four lanes whose sum over a vertex's faces [`unit_or_cancelled`] takes (the CPU
/// backend keeps them per triangle, so that a vertex's two sums are one SIMD sum).
#[inline(always)]
pub fn with_length(cross: Vec3) -> Vec4 {
    cross.extend(cross.x.abs() + cross.y.abs() + cross.z.abs())
}

/// `n` normalised, or zero where it is no longer than [`NORMAL_CANCELLED`] times `scale` (the sum
/// of the summed cross products' L1 lengths: the faces cancel up to rounding), as `face_sum` in
/// `shaders/shared/incidence.wgsl` ends.
#[inline(always)]
pub fn unit_or_cancelled(n: Vec3, scale: f32) -> Vec3 {
    let len = n.length();
    if len > NORMAL_CANCELLED * scale { n / len } else { Vec3::ZERO }
}

/// Twin of the box part of `vertex_normals.wgsl`: each body's box keys (`min_key`, `max_key`,
/// as [`BodyState`] holds them) over the vertices that belong to at least one non-degenerate
/// triangle ([`triangle_box`]), which is the box of its non-degenerate triangles, as
/// [`triangle_bounds`](super::triangle_bounds::triangle_bounds) computes it from the triangle
/// boxes (the CPU backend takes it from there). Other fields stay.
pub fn body_boxes(packing: &Packing, positions: &[Vec3], body_state: &mut [BodyState]) {
    for (body, state) in packing.bodies.iter().zip(body_state.iter_mut()) {
        let vertices = body.vertex_offset as usize..(body.vertex_offset + body.vertex_count) as usize;
        let live = vertices.into_par_iter().with_min_len(1024).filter(|&v| {
            let tris = &packing.vertex_tris
                [packing.vertex_tri_offsets[v] as usize..packing.vertex_tri_offsets[v + 1] as usize];
            tris.iter().any(|&t| {
                let (a, b, c) = tri_vertices(positions, &packing.triangles, t as usize);
                triangle_box(a, b, c).flags & 1 == 0
            })
        });
        (state.min_key, state.max_key) = box_keys(live.map(|v| (positions[v], positions[v])));
    }
}
