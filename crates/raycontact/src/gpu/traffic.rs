//! The bytes a frame kernel's dispatch reads and writes ([`traffic`], the byte counts of
//! [`StageStats`](crate::stats::StageStats)): every binding's buffer, but only the parts a
//! kernel uses of the three buffers that hold several arrays so that no kernel binds more than
//! WebGPU's default of 8 storage buffers: the vertices (positions, previous positions,
//! normals), the triangles (their vertices, their adjacency, the incidence, the trees' fan words
//! and the incidence's offsets), the pairs (the detection's counters, the pair list) and the
//! sources (the source list, then the narrow phase's exit memo).

use super::buffers::B;
use crate::kernels::{Binding, Kernel};
use crate::layout::{PAIRS_OFFSET, SortPass, TRIANGLE_WORDS, VERTEX_REGIONS};

/// An array of a buffer that holds several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Positions,
    Previous,
    Normals,
    Triangles,
    Adjacency,
    Incident,
    Fans,
    IncidentOffsets,
    Counters,
    PairList,
    SourceList,
}

/// The parts of a buffer of several arrays that kernel `k` reads and writes; `None` for a
/// buffer of one array (all of it read, and written through a writable binding).
fn parts(k: Kernel, b: B) -> Option<(&'static [Part], &'static [Part])> {
    use Part::*;
    Some(match (b, k) {
        (B::Vertices, Kernel::VertexNormals) => (&[Positions, Normals], &[Normals]),
        (B::Vertices, Kernel::NarrowPhase) => (&[Positions, Previous, Normals], &[]),
        // `walk_contacts` computes its sources' normals (from the positions).
        (B::Vertices, Kernel::WalkContacts | Kernel::Response) => (&[Positions, Previous], &[]),
        (B::Vertices, _) => (&[Positions], &[]),
        (B::Triangles, Kernel::Walk) => (&[Triangles, Adjacency], &[]),
        // `fit` writes the fan words from the triangles' vertices (counted whole, as every read
        // below, though only where the tuning passes fans, for the bodies with `BODY_FANS`).
        (B::Triangles, Kernel::Fit) => (&[Triangles], &[Fans]),
        // The walks that ignore a vertex of many triangles pass its fan (`passes_fan`).
        (B::Triangles, Kernel::NarrowPhase) => (&[Triangles, Fans], &[]),
        // `walk_contacts` computes its sources' normals from the incidence.
        (B::Triangles, Kernel::WalkContacts) => {
            (&[Triangles, Adjacency, Incident, Fans, IncidentOffsets], &[])
        }
        (B::Triangles, Kernel::VertexNormals | Kernel::RegionAreas) => {
            (&[Triangles, Incident, IncidentOffsets], &[])
        }
        (B::Triangles, _) => (&[Triangles], &[]),
        (B::Pairs, Kernel::SourceArgs) => (&[Counters], &[]),
        (B::Pairs, Kernel::ContactArgs) => (&[Counters], &[Counters]),
        // `pair_tiles` appends the pairs itself when it runs the broad phase (few bodies).
        (B::Pairs, Kernel::BroadPhase | Kernel::PairTiles) => (&[Counters, PairList], &[Counters, PairList]),
        (B::Pairs, _) => (&[Counters, PairList], &[Counters]),
        // The narrow phase reads the list; its exit memo's words (one read, and one write for
        // the first, per exit trace of a volumetric source: a few bytes a source) are left out.
        (B::Sources, Kernel::NarrowPhase) => (&[SourceList], &[]),
        _ => return None,
    })
}

/// Bytes (read, written) of one dispatch of kernel `k` through `binding` of buffer `b`, of
/// which `used` bytes are in use, in a packing of `triangles` triangles: the parts the kernel
/// reads and writes of a buffer of several arrays, else all of it (one [`SortPass`] for the
/// sort's per-pass uniforms).
pub(crate) fn traffic(k: Kernel, b: B, binding: Binding, used: u64, triangles: u64) -> (u64, u64) {
    if b == B::SortPasses {
        return (size_of::<SortPass>() as u64, 0);
    }
    let Some((reads, writes)) = parts(k, b) else {
        return (used, if binding.writes() { used } else { 0 });
    };
    let bytes = |p: &Part| match p {
        Part::Positions | Part::Previous | Part::Normals => used / VERTEX_REGIONS as u64,
        Part::Triangles | Part::Adjacency | Part::Incident => 12 * triangles,
        Part::Fans => 4 * triangles,
        Part::IncidentOffsets => used.saturating_sub(4 * TRIANGLE_WORDS as u64 * triangles),
        Part::Counters => PAIRS_OFFSET.min(used),
        Part::PairList => used.saturating_sub(PAIRS_OFFSET),
        Part::SourceList => used,
    };
    (reads.iter().map(bytes).sum(), writes.iter().map(bytes).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::buffers::kernel_buffers;

    #[test]
    fn a_kernel_writes_only_parts_it_binds_writable() {
        let frame = Kernel::ALL
            .into_iter()
            .filter(|k| {
                !matches!(
                    k,
                    Kernel::Raycast
                        | Kernel::RaycastAnyhit
                        | Kernel::RaycastAll
                        | Kernel::Walk
                        | Kernel::Response
                )
            })
            .filter(|k| !Kernel::INTERSECTION.contains(k));
        for k in frame {
            for (b, binding) in kernel_buffers(k, 0).iter().zip(k.bindings()) {
                if let Some((reads, writes)) = parts(k, *b) {
                    assert!(writes.is_empty() || binding.writes(), "{k:?} writes {b:?} bound read-only");
                    // `fit` writes the fan words without reading them.
                    let only_written = |w: &Part| k == Kernel::Fit && *w == Part::Fans;
                    assert!(
                        writes.iter().all(|w| reads.contains(w) || only_written(w)),
                        "{k:?}: {b:?} written parts are read"
                    );
                }
            }
        }
    }
}
