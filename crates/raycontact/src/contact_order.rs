//! The documented order of a detection's contacts ([`Contacts::contacts`](crate::Contacts)),
//! computed on the host for both backends: (source body, target body, source vertex, class,
//! ray side) first, bodies by the rank of their id, then (target triangle, the bits of `u`, `v`,
//! `depth`); equal contacts keep their order.
//!
//! The first five fields almost always fit one `u64` (they take `2 b + v + 3` bits for `2^b` bodies
//! and vertex indices below `2^v`, `v` from the largest body's vertex count: no pass over the
//! contacts to find their largest vertex). Then the contacts are ordered by a stable LSD radix sort
//! of that key, one pass per digit of [`DIGIT_BITS`](crate::contact_sort::DIGIT_BITS) bits that is
//! not the same in every key, and each run of equal keys (rare: a vertex's ray meets a pair once a
//! side) by the remaining fields, every pass parallel ([`Sorting::run`]): a key of at most 32 bits
//! with its index below it in one `u64`, a longer one beside its index
//! ([`Slot`](crate::contact_sort::Slot)). Otherwise, and as the reference of the tests, by a
//! comparison sort of the whole key. On cloth-layers (40k contacts, 2 threads) the serial radix
//! order took 0.7 ms, where the parallel comparison sort of the whole key it replaced took 1.4 ms.
//! With a pass over the contacts for their largest vertex and bytes as digits (three passes for its
//! 21-bit keys) it took 0.69-1.29 ms (median 1.03, `cpu-1` and `cpu-rayon`, 10 frames, two runs),
//! without that pass and with 11-bit digits (two passes) 0.62-1.12 ms (median 0.85).
//!
//! Contacts already in the documented order, their packed keys strictly increasing, are left
//! where they are ([`contact_order`] returns `None`): one pass over the keys, no sort. That is
//! the CPU backend's iterative pass: it keeps its contacts in this order
//! ([`CpuScene::keep_contacts`]) and walks them in the order it keeps them, each remembered
//! contact giving at most its own. Fewer than
//! [`PARALLEL_ENTRIES`](crate::contact_sort::PARALLEL_ENTRIES) are first tried by
//! [`convert_in_order`], which converts them for the caller in that same pass, so that each is
//! read once: on `resting-pile` (6.2k contacts) `cpu-walk`'s iterative frame went from
//! 0.944-1.059 ms (median 1.00) to 0.913-1.017 (median 0.96), 10 runs alternated on the 2-core VM,
//! where the check took 25-100 µs and the conversion after it 50-100.
//!
//! [`CpuScene::keep_contacts`]: crate::cpu_backend::CpuScene::keep_contacts

use std::sync::atomic::AtomicU64;

use rayon::prelude::*;

use crate::body::BodyId;
use crate::contact_sort::{BUCKETS, Pair, Sorting, secondary};
use crate::layout::{ContactGpu, contact_flags};

/// The ordering's vectors, kept from frame to frame by the scene, so that ordering a frame's
/// contacts allocates nothing once they have grown (but the comparison sort's, where the packed
/// key does not fit).
#[derive(Debug, Default)]
pub(crate) struct OrderScratch {
    by_id: Vec<u32>,
    rank: Vec<u32>,
    /// The sort's entries of keys of at most 32 bits, and of longer ones
    /// ([`Slot`](crate::contact_sort::Slot)).
    entries: [Vec<AtomicU64>; 2],
    pairs: [Vec<Pair>; 2],
    order: Vec<u32>,
    /// Each digit's counts of each chunk of entries, then their places.
    counts: Vec<[u32; BUCKETS]>,
}

/// The permutation that puts `contacts` in the documented order (`contacts[order[0]]` first),
/// computed in the current rayon pool; `None` where they are in that order already.
#[cfg(test)]
pub(crate) fn contact_order(contacts: &[ContactGpu], ids: &[BodyId]) -> Option<Vec<u32>> {
    let vertices = contacts.iter().map(|c| c.source_vertex.saturating_add(1)).max().unwrap_or(0);
    contact_order_with(contacts, ids, vertices, &mut OrderScratch::default()).map(<[u32]>::to_vec)
}

/// [`contact_order`] in `scratch`'s vectors, for contacts whose source vertices are all below
/// `vertices` (the largest vertex count of a packed body).
pub(crate) fn contact_order_with<'s>(
    contacts: &[ContactGpu],
    ids: &[BodyId],
    vertices: u32,
    scratch: &'s mut OrderScratch,
) -> Option<&'s [u32]> {
    ranks(ids, scratch);
    match Packed::fitting(vertices, ids.len()) {
        Some(packed) => radix_order(contacts, packed, scratch),
        None => {
            scratch.order = comparison_order(contacts, &scratch.rank);
            Some(&scratch.order)
        }
    }
}

/// Converts `contacts` into `out` (emptied first) by `convert` in one pass, while their packed
/// keys strictly increase: returns whether they all did (then `out` holds every contact, in the
/// documented order, and [`contact_order_with`] would have returned `None`); else stops at the
/// first key that does not increase, with `out` holding the contacts before it. One thread, for
/// fewer than [`PARALLEL_ENTRIES`](crate::contact_sort::PARALLEL_ENTRIES) contacts: where they
/// come in order (the CPU backend's iterative pass), each is read once, where the check of
/// [`contact_order_with`] and a conversion after it read them twice; where they do not (a GPU's,
/// the CPU's full pass), it stops at the first step down, after converting at worst all but one.
pub(crate) fn convert_in_order<T>(
    contacts: &[ContactGpu],
    ids: &[BodyId],
    vertices: u32,
    scratch: &mut OrderScratch,
    out: &mut Vec<T>,
    convert: impl Fn(&ContactGpu) -> T,
) -> bool {
    out.clear();
    out.reserve(contacts.len());
    let Some(packed) = Packed::fitting(vertices, ids.len()) else { return false };
    ranks(ids, scratch);
    let rank = &scratch.rank;
    let mut last = None;
    for c in contacts {
        let k = packed.key(c, rank);
        if last.is_some_and(|l| l >= k) {
            return false;
        }
        last = Some(k);
        out.push(convert(c));
    }
    true
}

/// Each packed body's rank among the ids in order, into `scratch.rank`.
fn ranks(ids: &[BodyId], scratch: &mut OrderScratch) {
    let (by_id, rank) = (&mut scratch.by_id, &mut scratch.rank);
    by_id.clear();
    by_id.extend(0..ids.len() as u32);
    by_id.sort_unstable_by_key(|&b| ids[b as usize]);
    rank.resize(ids.len(), 0);
    for (r, &b) in by_id.iter().enumerate() {
        rank[b as usize] = r as u32;
    }
}

/// The vertex rays' contacts, then edge, then untangling ones (bits 6 and 7 of the flags, in
/// that order as an integer), then inward before outward: 3 bits.
fn side(c: &ContactGpu) -> u32 {
    const _: () = assert!(contact_flags::EDGE == 64 && contact_flags::UNTANGLE == 128);
    let class = (c.flags & (contact_flags::EDGE | contact_flags::UNTANGLE)) >> 6;
    class << 1 | u32::from(c.flags & contact_flags::OUTWARD_RAY != 0)
}

/// Bits of the packed primary key: a rank takes `body_bits`, a vertex `vertex_bits`.
#[derive(Clone, Copy, Debug)]
struct Packed {
    body_bits: u32,
    vertex_bits: u32,
}

impl Packed {
    /// The packing of the primary keys of contacts of `bodies` bodies whose source vertices are
    /// below `vertices`, if they fit 64 bits.
    fn fitting(vertices: u32, bodies: usize) -> Option<Self> {
        let bits = |n: u64| 64 - n.leading_zeros();
        let top = u64::from(vertices.saturating_sub(1));
        let packed = Packed { body_bits: bits(bodies.saturating_sub(1) as u64), vertex_bits: bits(top) };
        (packed.bits() <= 64).then_some(packed)
    }

    /// Bits of a packed key.
    fn bits(self) -> u32 {
        2 * self.body_bits + self.vertex_bits + 3
    }

    fn key(self, c: &ContactGpu, rank: &[u32]) -> u64 {
        debug_assert!(
            u64::from(c.source_vertex) >> self.vertex_bits == 0,
            "a source vertex past the bodies'"
        );
        let mut k = u64::from(rank[c.source_body as usize]);
        k = k << self.body_bits | u64::from(rank[c.target_body as usize]);
        k = k << self.vertex_bits | u64::from(c.source_vertex);
        k << 3 | u64::from(side(c))
    }
}

/// The order of the contacts by their packed keys, then each run of equal keys by the
/// remaining fields (a stable sort), in `scratch` (its ranks made); `None` where the keys
/// strictly increase already (no two equal: the remaining fields cannot reorder them): by
/// [`Sorting::run`], each key of at most 32 bits above its index in one `u64`, a longer one
/// beside its index ([`Pair`]).
fn radix_order<'s>(
    contacts: &[ContactGpu],
    packed: Packed,
    scratch: &'s mut OrderScratch,
) -> Option<&'s [u32]> {
    let rank = &scratch.rank;
    let key = |c: &ContactGpu| packed.key(c, rank);
    let sorting = Sorting { contacts, counts: &mut scratch.counts, order: &mut scratch.order };
    if packed.bits() <= 32 {
        sorting.run(&mut scratch.entries, |i, c| key(c) << 32 | i as u64)
    } else {
        sorting.run(&mut scratch.pairs, |i, c| (key(c), i as u32))
    }
}

/// The order by a parallel comparison sort of (whole key, index) pairs.
fn comparison_order(contacts: &[ContactGpu], rank: &[u32]) -> Vec<u32> {
    let key = |c: &ContactGpu| {
        ([rank[c.source_body as usize], rank[c.target_body as usize], c.source_vertex, side(c)], secondary(c))
    };
    let mut keyed: Vec<_> = contacts.par_iter().enumerate().map(|(i, c)| (key(c), i as u32)).collect();
    keyed.par_sort_unstable();
    keyed.par_iter().map(|&(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact_sort::{MIN_JOB, PARALLEL_ENTRIES};

    /// Draws below `n` from a linear congruential sequence of `seed`.
    fn draws(mut seed: u64) -> impl FnMut(u64) -> u32 {
        move |n| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % n) as u32
        }
    }

    /// Both orders equal the documented tuple's stable sort: contacts drawn from a few values
    /// of each field (ties on every field, ids whose generation decides, negative and
    /// signed-zero floats, vertex indices of 32 bits), and with 2^20 bodies, where the packed key
    /// does not fit and the comparison sort is used.
    #[test]
    fn both_orders_sort_as_the_documented_tuple() {
        let ids = [
            BodyId { index: 3, generation: 0 },
            BodyId { index: 0, generation: 7 },
            BodyId { index: 0, generation: 2 },
            BodyId { index: 9, generation: 1 },
        ];
        let mut next = draws(0x2008);
        let floats = [0.0, -0.0, 0.25, -0.5, 1.0];
        let flag_sets = [0, contact_flags::EDGE, contact_flags::UNTANGLE, contact_flags::OUTWARD_RAY];
        let contacts: Vec<ContactGpu> = (0..5000)
            .map(|i| ContactGpu {
                source_body: next(4),
                target_body: next(4),
                source_vertex: next(3) * 0x7fff_fff0,
                target_triangle: next(3) * 0x7fff_fff0,
                flags: flag_sets[next(4) as usize] | flag_sets[next(4) as usize] | next(2),
                u: floats[next(5) as usize],
                v: floats[next(5) as usize],
                depth: floats[next(5) as usize],
                pair: i,
                ..ContactGpu::default()
            })
            .collect();
        let mut expected = contacts.clone();
        let class = contact_flags::EDGE | contact_flags::UNTANGLE;
        expected.sort_by_key(|c| {
            (
                ids[c.source_body as usize],
                ids[c.target_body as usize],
                c.source_vertex,
                c.flags & class,
                c.flags & contact_flags::OUTWARD_RAY,
                c.target_triangle,
                [c.u, c.v, c.depth].map(f32::to_bits),
            )
        });
        let sorted = |order: Vec<u32>| order.iter().map(|&i| contacts[i as usize]).collect::<Vec<_>>();
        let mut scratch = OrderScratch::default();
        ranks(&ids, &mut scratch);
        let vertices = contacts.iter().map(|c| c.source_vertex + 1).max().unwrap();
        let packed = Packed::fitting(vertices, ids.len()).expect("4 bodies and 32-bit vertices fit");
        assert!(packed.bits() > 32, "keys beside their index (`Pair`)");
        let radix = radix_order(&contacts, packed, &mut scratch).expect("random contacts are out of order");
        assert_eq!(sorted(radix.to_vec()), expected, "radix order");
        assert_eq!(sorted(comparison_order(&contacts, &scratch.rank)), expected, "comparison order");
        assert_eq!(sorted(contact_order(&contacts, &ids).expect("out of order")), expected);
        // Again in the same vectors: the same order.
        let again = contact_order_with(&contacts, &ids, vertices, &mut scratch).expect("out of order");
        assert_eq!(sorted(again.to_vec()), expected, "radix order again");
        // 2^20 bodies: 2 x 20 + 32 + 3 bits do not fit; the entry point falls back.
        assert!(Packed::fitting(vertices, 1 << 20).is_none());
        assert!(Packed::fitting(0, 1 << 20).is_some(), "no vertex bits without vertices");
        assert_eq!(radix_order(&[], packed, &mut scratch), None, "no contacts: in order");
    }

    #[test]
    fn a_large_random_set_orders_as_the_comparison_order() {
        // 30k contacts in random order over 3 bodies and 9k vertices, as a GPU appends them,
        // with runs of equal keys (a vertex's two rays on one triangle) ordered by the remaining
        // fields and then by index.
        let ids: Vec<BodyId> = (0..3).map(|i| BodyId { index: 2 - i, generation: i }).collect();
        let mut next = draws(0x2015);
        let contacts: Vec<ContactGpu> = (0..30_000)
            .map(|i| ContactGpu {
                source_body: next(3),
                target_body: next(3),
                source_vertex: next(9000),
                target_triangle: next(4),
                flags: next(2),
                depth: [0.5, -0.25][next(2) as usize],
                pair: i,
                ..ContactGpu::default()
            })
            .collect();
        let mut scratch = OrderScratch::default();
        ranks(&ids, &mut scratch);
        assert!(Packed::fitting(9000, ids.len()).unwrap().bits() <= 32, "keys above their index in a u64");
        let expected: Vec<u32> = comparison_order(&contacts, &scratch.rank);
        let radix = contact_order(&contacts, &ids).expect("random contacts are out of order");
        assert_eq!(radix, expected);
        // In order already: left in place, or (runs of equal keys) ordered to the identity.
        let ordered: Vec<ContactGpu> = expected.iter().map(|&i| contacts[i as usize]).collect();
        let again = contact_order(&ordered, &ids);
        assert!(
            again.is_none_or(|o| o.iter().enumerate().all(|(i, &j)| i as u32 == j)),
            "already in order: none or the identity"
        );
    }

    /// The parallel passes give one order whatever the pool: contacts of several chunks, with
    /// long runs of equal keys (across the chunks' ends) and keys that vary in one digit or in
    /// three, or of more than 32 bits, in pools of 1 to 7 threads; in order across the chunks'
    /// ends, they are left in place, and one step down at a chunk's end is seen.
    #[test]
    fn the_parallel_passes_order_alike_in_any_pool() {
        let ids: Vec<BodyId> = (0..5).map(|i| BodyId { index: 7 - i, generation: i }).collect();
        let mut next = draws(0x2013);
        // Enough for the parallel passes: a chunk per thread.
        let n = PARALLEL_ENTRIES + 3 * MIN_JOB + 123;
        // Vertices below 2^20 (keys of 3 + 3 + 20 + 3 bits: three digits vary) or 200 (one
        // body pair and side: one digit varies), vertex 5 in every seventh contact (runs of
        // equal keys, one of about 4,100 in the second set).
        let wide: Vec<ContactGpu> = (0..n as u32)
            .map(|i| ContactGpu {
                source_body: next(5),
                target_body: next(5),
                source_vertex: if i % 7 == 0 { 5 } else { next(1 << 20) },
                target_triangle: next(3),
                flags: next(2),
                u: [0.0, 0.5][next(2) as usize],
                pair: i,
                ..ContactGpu::default()
            })
            .collect();
        let narrow: Vec<ContactGpu> = wide
            .iter()
            .map(|c| ContactGpu {
                source_body: 1,
                target_body: 3,
                flags: 0,
                source_vertex: c.source_vertex % 200,
                ..*c
            })
            .collect();
        // Vertices below 2^30: keys of 39 bits, each beside its index.
        for (contacts, vertices) in [(&wide, 1 << 20), (&narrow, 1 << 20), (&wide, 1 << 30)] {
            let mut scratch = OrderScratch::default();
            ranks(&ids, &mut scratch);
            let bits = Packed::fitting(vertices, ids.len()).expect("fits 64 bits").bits();
            assert_eq!(bits > 32, vertices == 1 << 30);
            let expected = comparison_order(contacts, &scratch.rank);
            for threads in [1, 2, 3, 7] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
                let order = pool.install(|| {
                    contact_order_with(contacts, &ids, vertices, &mut scratch).map(<[u32]>::to_vec)
                });
                assert_eq!(order.as_ref(), Some(&expected), "{threads} threads, {bits}-bit keys");
            }
        }
        // In order (distinct keys), then one step down where the second of three threads' chunks
        // starts.
        let ordered: Vec<ContactGpu> = (0..n as u32)
            .map(|i| ContactGpu {
                source_body: 4,
                target_body: 0,
                source_vertex: 2 * i,
                ..ContactGpu::default()
            })
            .collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
        let mut scratch = OrderScratch::default();
        assert_eq!(pool.install(|| contact_order_with(&ordered, &ids, 1 << 20, &mut scratch)), None);
        let mut stepped = ordered.clone();
        let second = n.div_ceil(3);
        stepped.swap(second - 1, second);
        let order =
            pool.install(|| contact_order_with(&stepped, &ids, 1 << 20, &mut scratch).map(<[u32]>::to_vec));
        let mut swapped: Vec<u32> = (0..n as u32).collect();
        swapped.swap(second - 1, second);
        assert_eq!(order, Some(swapped));
    }

    /// Contacts whose packed keys strictly increase are left in place; one pair of equal keys
    /// (ordered by the remaining fields) or one step down, and they are ordered.
    #[test]
    fn contacts_in_order_are_left_in_place() {
        let ids = [BodyId { index: 5, generation: 0 }, BodyId { index: 1, generation: 0 }];
        let contact = |source_body, source_vertex, flags, target_triangle| ContactGpu {
            source_body,
            target_body: 1 - source_body,
            source_vertex,
            flags,
            target_triangle,
            ..ContactGpu::default()
        };
        // Body 1 has the lower id, so its contacts come first; then vertex, class, side.
        let ordered = vec![
            contact(1, 0, 0, 9),
            contact(1, 0, contact_flags::OUTWARD_RAY, 3),
            contact(1, 0, contact_flags::EDGE, 4),
            contact(1, 7, 0, 2),
            contact(0, 2, 0, 8),
            contact(0, 3, contact_flags::UNTANGLE, 1),
        ];
        assert_eq!(contact_order(&ordered, &ids), None);
        assert_eq!(contact_order(&ordered[..1], &ids), None);
        let mut swapped = ordered.clone();
        swapped.swap(3, 4);
        assert_eq!(contact_order(&swapped, &ids), Some(vec![0, 1, 2, 4, 3, 5]));
        // Equal primary keys: ordered by the target triangle, even where they come in order.
        let mut equal = ordered.clone();
        equal[4] = contact(0, 3, contact_flags::UNTANGLE, 0);
        assert_eq!(contact_order(&equal, &ids), Some(vec![0, 1, 2, 3, 4, 5]));
        equal.swap(4, 5);
        assert_eq!(contact_order(&equal, &ids), Some(vec![0, 1, 2, 3, 5, 4]));
        // Converted in the check's pass exactly where the order would leave them in place.
        let mut equal_first = ordered.clone();
        equal_first[1] = contact(1, 0, 0, 2);
        for set in [&ordered[..], &ordered[..1], &[], &swapped, &equal, &equal_first] {
            let mut scratch = OrderScratch::default();
            let mut out = vec![ContactGpu::default(); 9];
            let whole = convert_in_order(set, &ids, 8, &mut scratch, &mut out, |c| *c);
            assert_eq!(whole, contact_order(set, &ids).is_none(), "{set:?}");
            if whole {
                assert_eq!(out, set, "every contact, in place");
            } else {
                assert!(out.len() < set.len() && set.starts_with(&out), "those before the first step down");
            }
        }
    }
}
