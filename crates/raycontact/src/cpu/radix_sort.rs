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
    let (mut kb, mut vb) = (Vec::new(), Vec::new());
    radix_sort_with(segments, (keys, values), (&mut kb, &mut vb), moved);
}

/// [`radix_sort`] with `scratch` its second buffers of keys and values, resized to the keys'
/// length (kept by the caller from frame to frame, they are allocated once).
pub(crate) fn radix_sort_with(
    segments: &[SortSegment],
    (keys, values): (&mut [u32], &mut [u32]),
    (kb, vb): (&mut Vec<u32>, &mut Vec<u32>),
    moved: &[bool],
) {
    kb.resize(keys.len(), 0);
    vb.resize(keys.len(), 0);
    let mut parts = Vec::with_capacity(segments.len());
    let mut rest = [keys, values, kb, vb];
    let mut at = 0usize;
    for (b, s) in segments.iter().enumerate() {
        let mut seg = rest.each_mut().map(|r| {
            let (_, tail) = std::mem::take(r).split_at_mut(s.offset as usize - at);
            let (seg, tail) = tail.split_at_mut(s.count as usize);
            *r = tail;
            seg
        });
        at = (s.offset + s.count) as usize;
        if has_moved(moved, b) {
            parts.push(seg.each_mut().map(std::mem::take));
        }
    }
    parts.into_par_iter().for_each(|[k, v, kb, vb]| sort_segment(k, v, kb, vb));
}

/// Stable LSD radix sort of one segment, 8 bits a pass, skipping passes whose digit is the same
/// for every key.
pub fn radix_sort_segment(keys: &mut [u32], values: &mut [u32]) {
    let (mut kb, mut vb) = (vec![0u32; keys.len()], vec![0u32; keys.len()]);
    sort_segment(keys, values, &mut kb, &mut vb);
}

/// [`radix_sort_segment`] with `kb` and `vb` (as long as the keys) its second buffers.
fn sort_segment(keys: &mut [u32], values: &mut [u32], kb: &mut [u32], vb: &mut [u32]) {
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
    let (mut src_k, mut src_v, mut dst_k, mut dst_v) = (keys, values, kb, vb);
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
