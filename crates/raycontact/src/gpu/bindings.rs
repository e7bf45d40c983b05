//! What each frame kernel binds: the scene's buffers in binding order ([`kernel_buffers`]),
//! and the parts of each it reads and writes ([`traffic`], the byte counts of
//! [`StageStats`](crate::stats::StageStats)). Three buffers hold several arrays, so that no
//! kernel binds more than WebGPU's default of 8 storage buffers: the vertices (positions,
//! previous positions, normals), the triangles (their vertices, their adjacency) and the pairs
//! (the detection's counters, the pair list).

use super::buffers::{B, contact_sides};
use crate::kernels::{Binding, Kernel};
use crate::layout::{PAIRS_OFFSET, SortPass, TRIANGLE_REGIONS, VERTEX_REGIONS};

/// Kernels whose bind group depends on a ping-pong side (of the sort or of the contacts).
pub(crate) fn two_sided(k: Kernel) -> bool {
    matches!(
        k,
        Kernel::RadixCount
            | Kernel::RadixScatter
            | Kernel::NarrowPhase
            | Kernel::WalkContacts
            | Kernel::ContactArgs
    )
}

/// The buffers each frame kernel binds, in binding order ([`Kernel::bindings`]). `pass` picks
/// the ping-pong side of the sort and of the contacts.
pub(crate) fn kernel_buffers(k: Kernel, pass: u32) -> Vec<B> {
    let ((cur, cur_args), (prev, _)) = contact_sides(pass);
    let (kin, vin, kout, vout) = if pass.is_multiple_of(2) {
        (B::Keys0, B::Values0, B::Keys1, B::Values1)
    } else {
        (B::Keys1, B::Values1, B::Keys0, B::Values0)
    };
    use B::*;
    match k {
        Kernel::VertexNormals => vec![Params, Vertices, Triangles, VertexTriOffsets, VertexTris],
        Kernel::TriangleBounds => vec![Bodies, TileBody, Vertices, Triangles, TriBoxes, BodyState, Params],
        Kernel::Morton => {
            vec![Bodies, TileBody, Vertices, Triangles, TriBoxes, BodyState, Keys0, Values0, Params]
        }
        Kernel::RadixCount => vec![SortPasses, Segments, TileBody, kin, Counters],
        Kernel::RadixScan => vec![SortPasses, Counters],
        Kernel::RadixScatter => vec![SortPasses, Segments, TileBody, Counters, kin, vin, kout, vout],
        Kernel::Hierarchy => vec![Bodies, TileBody, BodyState, Keys0, Values0, Nodes, Parents, Params],
        Kernel::Fit => vec![Bodies, TileBody, BodyState, TriBoxes, Parents, Nodes, Visits, Params],
        Kernel::Raycast => unreachable!("the ray-cast query has its own bind group"),
        Kernel::BroadPhase => vec![DetectParams, Bodies, BodyState, Pairs],
        Kernel::PairTiles => vec![DetectParams, Bodies, Pairs, TileOffsets, Dispatch],
        Kernel::NarrowPhase => {
            vec![DetectParams, Bodies, BodyState, Vertices, Triangles, Nodes, Sources, Pairs, cur]
        }
        Kernel::ContactArgs => vec![DetectParams, Pairs, cur_args],
        Kernel::RaySources => vec![DetectParams, Bodies, BodyState, Vertices, TileOffsets, Pairs, Sources],
        Kernel::SourceArgs => vec![DetectParams, Pairs, Dispatch],
        Kernel::Walk => unreachable!("the walk query has its own bind group"),
        Kernel::Response => unreachable!("the response has its own bind groups"),
        Kernel::WalkContacts => {
            vec![DetectParams, Bodies, BodyState, Vertices, Triangles, Nodes, prev, Pairs, cur]
        }
    }
}

/// An array of a buffer that holds several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Positions,
    Previous,
    Normals,
    Triangles,
    Adjacency,
    Counters,
    PairList,
}

/// The parts of a buffer of several arrays that kernel `k` reads and writes; `None` for a
/// buffer of one array (all of it read, and written through a writable binding).
fn parts(k: Kernel, b: B) -> Option<(&'static [Part], &'static [Part])> {
    use Part::*;
    Some(match (b, k) {
        (B::Vertices, Kernel::VertexNormals) => (&[Positions, Normals], &[Normals]),
        (B::Vertices, Kernel::NarrowPhase | Kernel::WalkContacts) => (&[Positions, Previous, Normals], &[]),
        (B::Vertices, Kernel::Response) => (&[Positions, Previous], &[]),
        (B::Vertices, _) => (&[Positions], &[]),
        (B::Triangles, Kernel::Walk | Kernel::WalkContacts) => (&[Triangles, Adjacency], &[]),
        (B::Triangles, _) => (&[Triangles], &[]),
        (B::Pairs, Kernel::SourceArgs) => (&[Counters], &[]),
        (B::Pairs, Kernel::ContactArgs) => (&[Counters], &[Counters]),
        (B::Pairs, Kernel::BroadPhase) => (&[Counters, PairList], &[Counters, PairList]),
        (B::Pairs, _) => (&[Counters, PairList], &[Counters]),
        _ => return None,
    })
}

/// Bytes (read, written) of one dispatch of kernel `k` through `binding` of buffer `b`, of
/// which `used` bytes are in use: the parts the kernel reads and writes of a buffer of several
/// arrays, else all of it (one [`SortPass`] for the sort's per-pass uniforms).
pub(crate) fn traffic(k: Kernel, b: B, binding: Binding, used: u64) -> (u64, u64) {
    if b == B::SortPasses {
        return (size_of::<SortPass>() as u64, 0);
    }
    let Some((reads, writes)) = parts(k, b) else {
        return (used, if binding.writes() { used } else { 0 });
    };
    let bytes = |p: &Part| match p {
        Part::Positions | Part::Previous | Part::Normals => used / VERTEX_REGIONS as u64,
        Part::Triangles | Part::Adjacency => used / TRIANGLE_REGIONS as u64,
        Part::Counters => PAIRS_OFFSET.min(used),
        Part::PairList => used.saturating_sub(PAIRS_OFFSET),
    };
    (reads.iter().map(bytes).sum(), writes.iter().map(bytes).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::buffers::usage_is_uniform;

    /// The frame kernels (the queries and the response bind their own buffers).
    fn frame_kernels() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| !matches!(k, Kernel::Raycast | Kernel::Walk | Kernel::Response))
    }

    #[test]
    fn every_two_sided_kernel_changes_with_the_side() {
        for k in frame_kernels().filter(|&k| two_sided(k)) {
            assert_ne!(kernel_buffers(k, 0), kernel_buffers(k, 1), "{k:?}");
        }
    }

    #[test]
    fn each_binding_is_a_buffer_of_its_kind() {
        for k in frame_kernels() {
            for side in 0..2 {
                let bufs = kernel_buffers(k, side);
                assert_eq!(bufs.len(), k.bindings().len(), "{k:?}: one buffer per binding");
                for (b, binding) in bufs.iter().zip(k.bindings()) {
                    let uniform = matches!(binding, Binding::Uniform | Binding::UniformDynamic);
                    assert_eq!(usage_is_uniform(*b), uniform, "{k:?}: {b:?} bound as {binding:?}");
                }
                let mut seen = bufs.clone();
                seen.sort_by_key(|b| *b as usize);
                seen.dedup();
                assert_eq!(seen.len(), bufs.len(), "{k:?} binds a buffer twice");
            }
        }
    }

    #[test]
    fn a_kernel_writes_only_parts_it_binds_writable() {
        for k in frame_kernels() {
            for (b, binding) in kernel_buffers(k, 0).iter().zip(k.bindings()) {
                if let Some((reads, writes)) = parts(k, *b) {
                    assert!(writes.is_empty() || binding.writes(), "{k:?} writes {b:?} bound read-only");
                    assert!(writes.iter().all(|w| reads.contains(w)), "{k:?}: {b:?} written parts are read");
                }
            }
        }
    }
}
