//! Twin of the radix sort's kernels together (`shaders/radix_count.wgsl` or the counts that
//! `shaders/morton.wgsl` leaves, and `shaders/radix_scatter.wgsl` a pass or
//! `shaders/radix_tiles.wgsl` every pass of one-tile segments): a stable sort of (key, value)
//! pairs by key within each segment.

use rayon::prelude::*;

use crate::layout::SortSegment;
use crate::packing::has_moved;

/// Twin of the radix sort (`radix_count`, `radix_scatter`): a stable sort of
/// (key, value) pairs by key within each segment, by LSD radix sort (8 bits a pass on the CPU;
/// any stable sort gives the same result). Segments are sorted in parallel; segment b (body b's
/// keys) only where `moved` marks body b (`has_moved`: an empty `moved` is every segment, as
/// the kernels do).
pub fn radix_sort(segments: &[SortSegment], keys: &mut [u32], values: &mut [u32], moved: &[bool]) {
    let mut parts = Vec::with_capacity(segments.len());
    let (mut k_rest, mut v_rest) = (keys, values);
    let mut at = 0usize;
    for (b, s) in segments.iter().enumerate() {
        let (_, k) = std::mem::take(&mut k_rest).split_at_mut(s.offset as usize - at);
        let (_, v) = std::mem::take(&mut v_rest).split_at_mut(s.offset as usize - at);
        let (k_seg, k_tail) = k.split_at_mut(s.count as usize);
        let (v_seg, v_tail) = v.split_at_mut(s.count as usize);
        if has_moved(moved, b) {
            parts.push((k_seg, v_seg));
        }
        k_rest = k_tail;
        v_rest = v_tail;
        at = (s.offset + s.count) as usize;
    }
    parts.into_par_iter().for_each(|(k, v)| radix_sort_segment(k, v));
}

/// Stable LSD radix sort of one segment, 8 bits a pass, skipping passes whose digit is the same
/// for every key.
pub fn radix_sort_segment(keys: &mut [u32], values: &mut [u32]) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    let mut counts = [[0usize; 256]; 4];
    for &k in keys.iter() {
        for (p, c) in counts.iter_mut().enumerate() {
            c[((k >> (8 * p)) & 0xff) as usize] += 1;
        }
    }
    let mut kb = vec![0u32; n];
    let mut vb = vec![0u32; n];
    let (mut src_k, mut src_v, mut dst_k, mut dst_v) = (keys, values, kb.as_mut_slice(), vb.as_mut_slice());
    let mut swapped = false;
    for (p, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue;
        }
        let mut offs = [0usize; 256];
        let mut sum = 0;
        for d in 0..256 {
            offs[d] = sum;
            sum += c[d];
        }
        for i in 0..n {
            let k = src_k[i];
            let d = ((k >> (8 * p)) & 0xff) as usize;
            dst_k[offs[d]] = k;
            dst_v[offs[d]] = src_v[i];
            offs[d] += 1;
        }
        std::mem::swap(&mut src_k, &mut dst_k);
        std::mem::swap(&mut src_v, &mut dst_v);
        swapped = !swapped;
    }
    if swapped {
        // The sorted data is in the scratch buffers: copy it back.
        dst_k.copy_from_slice(src_k);
        dst_v.copy_from_slice(src_v);
    }
}
