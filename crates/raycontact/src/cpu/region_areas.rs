//! Twin of `shaders/region_areas.wgsl`: every vertex at its region's root, and the regions'
//! areas in fixed point.

use glam::Vec3;

use super::shared::intersect::{compress, find};
use crate::layout::{BodyGpu, ONE_THIRD, RegionGpu, area_unit};

/// Fixed-point steps of a vertex's area (a third of its triangles'), as the kernel rounds it:
/// `min(round_ties_even(area / unit), 4294967040)`.
pub fn vertex_area_steps(positions: &[Vec3], triangles: &[u32], incident: &[u32], mean_size: f32) -> u32 {
    let mut area = 0.0f32;
    for &g in incident {
        let g = g as usize;
        let [a, b, c] =
            [triangles[3 * g], triangles[3 * g + 1], triangles[3 * g + 2]].map(|i| positions[i as usize]);
        area += (b - a).cross(c - a).length() * (0.5 * ONE_THIRD);
    }
    (area / area_unit(mean_size)).round_ties_even().min(4_294_967_040.0) as u32
}

/// Twin of `region_areas.wgsl`: parents compressed to the roots, each vertex's area steps added
/// to its root's 64-bit sum.
pub fn region_areas(
    bodies: &[BodyGpu],
    positions: &[Vec3],
    triangles: &[u32],
    vertex_tri_offsets: &[u32],
    vertex_tris: &[u32],
    regions: &mut [RegionGpu],
) {
    compress(regions, regions.len() as u32);
    for body in bodies {
        for v in body.vertex_offset..body.vertex_offset + body.vertex_count {
            let incident = &vertex_tris
                [vertex_tri_offsets[v as usize] as usize..vertex_tri_offsets[v as usize + 1] as usize];
            let steps = vertex_area_steps(positions, triangles, incident, body.mean_size);
            let root = find(regions, v) as usize;
            let sum = regions[root].area_steps() + u64::from(steps);
            regions[root].area_lo = sum as u32;
            regions[root].area_hi = (sum >> 32) as u32;
        }
    }
}
