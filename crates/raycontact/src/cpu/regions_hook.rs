//! Twin of `shaders/regions_hook.wgsl`: the flood fill of the vertex graph without the crossed
//! edges.

use super::shared::intersect::unite;
use crate::layout::{EdgeGpu, RegionGpu};

/// Twin of `regions_hook.wgsl`: the two ends of every packed edge whose mark is 0 united (the
/// higher root under the lower: every region's root is its lowest packed vertex).
pub fn regions_hook(edges: &[EdgeGpu], marks: &[u32], regions: &mut [RegionGpu]) {
    for (e, &m) in edges.iter().zip(marks) {
        if m == 0 {
            unite(regions, e.a, e.b);
        }
    }
}
