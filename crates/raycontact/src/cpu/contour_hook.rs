//! Twin of `shaders/contour_hook.wgsl`: the linked crossings united into loops.

use super::shared::intersect::unite;
use crate::layout::ContourGpu;

/// Twin of `contour_hook.wgsl`: each crossing united with its linked neighbours (the higher
/// root under the lower, so that each loop's root is its lowest slot, as on the GPU).
pub fn contour_hook(contour: &mut [ContourGpu]) {
    for i in 0..contour.len() as u32 {
        for side in 0..2 {
            let l = contour[i as usize].links[side];
            if l != 0 && (l - 1) / 2 > i {
                unite(contour, i, (l - 1) / 2);
            }
        }
    }
}
