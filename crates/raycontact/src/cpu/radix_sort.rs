//! Twin of the radix sort's kernels together (`shaders/radix_count.wgsl` or the counts that
//! `shaders/morton.wgsl` leaves, and `shaders/radix_scatter.wgsl` a pass or
//! `shaders/radix_tiles.wgsl` every pass of one-tile segments): a stable sort of (key, value)
//! pairs by key within each segment.

use rayon::prelude::*;

use crate::layout::SortSegment;
use crate::packing::has_moved;

/// The widest digit of a pass of [`sort_segment`] (a pass's counts, 16 KiB, fit the L1 cache).
/// The short keys of a body of 2,049 triangles to 8 tiles (24 bits: `layout::key_form`) take
/// two passes where digits of at most 11 bits took three of 8 (`cpu-1`'s `sort` stage, 3 runs
/// alternated: `mesh-scaling` 40k 0.56-0.61 -> 0.39-0.43 ms, 9.8k 0.11 -> 0.08-0.10); a larger
/// body's 30-bit codes take three passes of 10 bits either way.
const MAX_DIGIT_BITS: u32 = 12;

/// Digits of at most this many bits (a body of at most 2,048 triangles: 16-bit tiny keys, two
/// passes) are counted in tables of their own size.
const SMALL_DIGIT_BITS: u32 = 8;

/// The most passes of [`sort_segment`]: 32 bits in digits of [`MAX_DIGIT_BITS`].
const MAX_PASSES: usize = 32usize.div_ceil(MAX_DIGIT_BITS as usize);

/// Twin of the radix sort (`radix_count`, `radix_scatter`): a stable sort of (key, value) pairs
/// by key within each segment, by LSD radix sort (up to 12 bits a pass on the CPU:
/// [`radix_sort_segment`]; any stable sort gives the same result). Segments are sorted in
/// parallel; segment b (body b's keys) only where `moved` marks body b (`has_moved`: an empty
/// `moved` is every segment, as the kernels do).
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

/// Stable LSD radix sort of one segment, over the key bits that differ between its keys alone,
/// in as few passes of at most 12 bits as they take (digits of equal widths),
/// skipping a pass whose digit is the same for every key.
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
    // The bits that differ between keys (those above them are every key's): the passes cover
    // them alone, in as few digits of one width, at most MAX_DIGIT_BITS, as they take. On the
    // 2-core VM, `cpu-1`'s `sort` stage (3 runs alternated with 8-bit digits over all 32 bits,
    // constant digits skipped): `mesh-scaling` 641k 11.1-11.6 -> 10.4-10.8 ms, the armadillo
    // pair 0.71-0.75 -> 0.53-0.56, `tori-scaling` 64 1.11-1.16 -> 0.72-0.76, `cloth-layers`
    // 0.68-0.76 -> 0.38-0.40, `resting-pile` 0.42-0.44 -> 0.29-0.30.
    let differ = keys.iter().fold(0, |d, &k| d | (k ^ keys[0]));
    let bits = 32 - differ.leading_zeros();
    if bits == 0 {
        return;
    }
    let passes = bits.div_ceil(MAX_DIGIT_BITS);
    let width = bits.div_ceil(passes);
    // Counts of the digit's width, not the widest's: a small body's keys (digits of 8 bits or
    // less) would otherwise clear 48 KiB of counts for a few hundred keys.
    if width <= SMALL_DIGIT_BITS {
        sort_passes::<{ 1 << SMALL_DIGIT_BITS }>((keys, values), (kb, vb), passes, width);
    } else {
        sort_passes::<{ 1 << MAX_DIGIT_BITS }>((keys, values), (kb, vb), passes, width);
    }
}

/// The passes of [`sort_segment`]: `passes` digits of `width` bits (at most `log2(BUCKETS)`)
/// from the lowest, a pass skipped where every key has the same digit.
fn sort_passes<const BUCKETS: usize>(
    (keys, values): (&mut [u32], &mut [u32]),
    (kb, vb): (&mut [u32], &mut [u32]),
    passes: u32,
    width: u32,
) {
    let n = keys.len();
    let mask = (1u32 << width) - 1;
    let buckets = 1usize << width;
    let mut counts = [[0u32; BUCKETS]; MAX_PASSES];
    for &k in keys.iter() {
        for (p, c) in counts.iter_mut().enumerate().take(passes as usize) {
            c[((k >> (width * p as u32)) & mask) as usize] += 1;
        }
    }
    let (mut src_k, mut src_v, mut dst_k, mut dst_v) = (keys, values, kb, vb);
    let mut swapped = false;
    for (p, c) in counts.iter().enumerate().take(passes as usize) {
        let shift = width * p as u32;
        if c[..buckets].contains(&(n as u32)) {
            continue;
        }
        let mut offs = [0u32; BUCKETS];
        let mut sum = 0;
        for d in 0..buckets {
            offs[d] = sum;
            sum += c[d];
        }
        for i in 0..n {
            let k = src_k[i];
            let d = ((k >> shift) & mask) as usize;
            let at = offs[d] as usize;
            dst_k[at] = k;
            dst_v[at] = src_v[i];
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
