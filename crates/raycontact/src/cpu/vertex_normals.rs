//! Twin of `shaders/vertex_normals.wgsl`: area-weighted unit vertex normals.

use glam::Vec3;
use rayon::prelude::*;

use super::shared::common::tri_vertices;

/// Twin of `vertex_normals.wgsl`: normalised sum of `cross(b - a, c - a)` over the incident
/// triangles in CSR order. `positions` and `normals` are two regions of the kernel's one vertex
/// buffer ([`VERTEX_REGIONS`](crate::layout::VERTEX_REGIONS)), taken here as separate slices;
/// `triangles` is the first region of its triangle buffer.
pub fn vertex_normals(
    positions: &[Vec3],
    triangles: &[u32],
    vertex_tri_offsets: &[u32],
    vertex_tris: &[u32],
    normals: &mut [Vec3],
) {
    normals.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, out)| {
        let mut n = Vec3::ZERO;
        for &t in &vertex_tris[vertex_tri_offsets[v] as usize..vertex_tri_offsets[v + 1] as usize] {
            let (a, b, c) = tri_vertices(positions, triangles, t as usize);
            n += (b - a).cross(c - a);
        }
        let len = n.length();
        *out = if len > 0.0 { n / len } else { n };
    });
}
