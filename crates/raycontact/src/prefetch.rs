//! A cache hint for the CPU backend's gathers whose addresses are known ahead of their use: the
//! leaves' triangle boxes in Morton order (`tree_build`, the refit's fit), the triangle
//! records' corners ([`WideTree::fill`](crate::wide_bvh::WideTree::fill), and a refit's
//! [`WideTree::refill`](crate::wide_bvh::WideTree::refill)), the binary nodes
//! a wide tree's refit copies, the leaf records of each wide node a ray walk reads
//! (`cpu/traverse.rs`, `prefetch_leaves`, measured there), and where the walks of the iterative
//! pass's remembered contacts start and what their sources' normals read (`cpu/walk_contacts.rs`,
//! `prefetch_walk`: on resting-pile, `cpu-walk`'s iterative frame took
//! 0.947/0.892/0.921/0.985/0.986 ms without it and 0.828/0.850/0.889/0.906/0.887 with its first
//! stage, 5 runs alternated on a 2-core Intel VM, the order flipped each run; hints on the start
//! triangles' corner positions as well, 4 contacts ahead, gained nothing more, there and again on
//! the 2-core AMD VM; the stages for the normals, on that VM, took the walks from
//! 1.38–1.88 ms to 1.39–1.62, medians of 80 passes, faster in 6 of 8 alternated runs, timed in a
//! scratch build). The load starts early, so that its
//! cache miss overlaps the work before it. x86-64 only (`PREFETCHT0`); nothing elsewhere. Never
//! changes a result.
//!
//! Measured with `raycontact-bench --cpu --no-parry` (medians of 10 frames, 4 runs alternated
//! with the build without hints, 2-core VM): on mesh-scaling's 641k triangles the hierarchy
//! stage fell from 10.1-10.7 to 8.1-8.4 ms, `cpu-rayon`'s frame from 59.5-62.8 to 56.1-57.9 ms,
//! `cpu-refit`'s fit stage from 14.7-15.7 to 11.5-12.1 ms; scenes of small bodies (resting-pile,
//! cloth-layers), whose trees sit in cache, did not move. Hints on the triangle corners of the
//! bounds, on the faces around each vertex of the normals and on the collapse's next binary
//! nodes made those stages no faster or slower (the normals 0.17 -> 0.26 ms on cloth-layers):
//! there the data is near in memory already, or the next address is known too late. The
//! distances (16 leaves or records ahead, 4 wide nodes) were not improved on by 8 or 32 leaves
//! and records: 8 left `cpu-refit`'s fit stage on 641k at 12.8-13.1 ms against 12.2-12.4, and
//! 32 had the armadillo pair's hierarchy stage at 0.79-0.98 ms against 0.79-0.84.

/// Asks for the cache line of `items[i]` (nothing when `i` is past the end).
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(i) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` is `unsafe` because it takes a raw pointer, but PREFETCHT0
        // reads nothing into the program and never faults, whatever the address (Intel SDM,
        // PREFETCHh: "a hint", "does not affect program behavior"); the pointer here comes from a
        // reference into `items` anyway. SSE, which it needs, is part of every x86-64 target.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}
