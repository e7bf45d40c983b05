//! The stable sort of a detection's contacts by their packed keys ([`Sorting::run`]), for
//! [`crate::contact_order`]: an LSD radix sort whose every pass runs on every thread of the
//! current rayon pool, each thread's chunk of entries counting its digits and then moving its
//! entries to places of its own; then each run of equal keys ordered by the contacts'
//! remaining fields ([`order_runs`]).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};

use rayon::prelude::*;

use crate::layout::ContactGpu;

/// The fewest contacts a rayon job of the ordering (and of the scene's conversion to
/// [`Contact`](crate::Contact)s) takes: below that, starting jobs costs more than the work.
/// resting-pile's iterative pass (6k contacts) took 1.27/1.26/1.32 ms with jobs of any size,
/// 1.23/1.25/1.21 ms with this floor (alternated runs).
pub(crate) const MIN_JOB: usize = 4096;

/// The fewest entries [`Sorting::run`] sorts in parallel: fewer are sorted in one chunk, their
/// passes' jobs not split, so that they run on the calling thread. In chunks of [`MIN_JOB`],
/// `resting-pile`'s 6k contacts took `gpu-walk`'s order step (sort and conversion) from 0.11-0.13
/// to 0.25-0.36 ms on the 2-core VM (three suite runs): waking another thread for each pass
/// cost more than the pass. (The GPU scene sends an order of this many contacts or more to
/// rayon's pool as one job: `Scene::contacts_into`.)
pub(crate) const PARALLEL_ENTRIES: usize = 4 * MIN_JOB;

/// Bits of a digit of the radix sort: the 21-bit keys of `cloth-layers` (4 bodies, 11k vertices
/// at most) in two passes, where bytes took three; a digit's counts (8 KiB) stay in the cache.
pub(crate) const DIGIT_BITS: u32 = 11;
/// Values of a digit.
pub(crate) const BUCKETS: usize = 1 << DIGIT_BITS;
/// A digit's bits.
const DIGIT_MASK: u64 = (1 << DIGIT_BITS) - 1;

/// A contact's fields after the first five of the documented order ([`crate::contact_order`]),
/// in order: what orders a run of equal packed keys.
pub(crate) fn secondary(c: &ContactGpu) -> [u32; 4] {
    [c.target_triangle, c.u.to_bits(), c.v.to_bits(), c.depth.to_bits()]
}

/// Where [`Sorting::run`] keeps an entry (a contact's packed key and its index) between its
/// passes, written and read `Relaxed`: safe code cannot split a slice at the places a chunk of
/// the sort writes, though no two chunks write the same one, and rayon's joins order a pass's
/// writes before the next pass's reads. On x86-64 and AArch64 such a store or load is a plain
/// one.
pub(crate) trait Slot: Default + Sync {
    /// An entry, as a pass moves it.
    type Entry: Copy + Send;
    /// The entry kept here.
    fn get(&self) -> Self::Entry;
    /// Keeps `e` here.
    fn put(&self, e: Self::Entry);
    /// The entry's packed key.
    fn key(e: Self::Entry) -> u64;
    /// The entry's contact.
    fn index(e: Self::Entry) -> u32;
}

/// A key of at most 32 bits above its index, `key << 32 | index`: one stream of 8 bytes a
/// pass moves, where a key and its index take two. On the NVIDIA H200 machine's host, where
/// the two serial passes over `cloth-layers`' 40k keys took 0.83-0.88 ms in pairs, they took
/// 0.57-0.66 ms so (stop 63).
impl Slot for AtomicU64 {
    type Entry = u64;
    fn get(&self) -> u64 {
        self.load(Relaxed)
    }
    fn put(&self, e: u64) {
        self.store(e, Relaxed);
    }
    fn key(e: u64) -> u64 {
        e >> 32
    }
    fn index(e: u64) -> u32 {
        e as u32
    }
}

/// A key of more than 32 bits and its index: 256 bodies fit 32 bits with at most 2^13 vertices
/// each, 1,024 with at most 512 (a pile of a thousand rocks of more does not).
#[derive(Debug, Default)]
pub(crate) struct Pair {
    key: AtomicU64,
    index: AtomicU32,
}

impl Slot for Pair {
    type Entry = (u64, u32);
    fn get(&self) -> (u64, u32) {
        (self.key.load(Relaxed), self.index.load(Relaxed))
    }
    fn put(&self, (key, index): (u64, u32)) {
        self.key.store(key, Relaxed);
        self.index.store(index, Relaxed);
    }
    fn key(e: (u64, u32)) -> u64 {
        e.0
    }
    fn index(e: (u64, u32)) -> u32 {
        e.1
    }
}

/// What one pass over entries finds of their keys: the OR and the AND (the bits that vary are
/// those where they differ), the first and the last, and whether they strictly increase.
#[derive(Clone, Copy)]
struct Summary {
    or: u64,
    and: u64,
    first: u64,
    last: u64,
    increasing: bool,
}

impl Summary {
    /// The summary of a run of keys; `None` for none.
    fn of(mut keys: impl Iterator<Item = u64>) -> Option<Self> {
        let first = keys.next()?;
        let mut s = Summary { or: first, and: first, first, last: first, increasing: true };
        for k in keys {
            s.increasing &= s.last < k;
            (s.or, s.and, s.last) = (s.or | k, s.and & k, k);
        }
        Some(s)
    }

    /// The summary of two neighbouring runs, `self` first.
    fn then(self, next: Self) -> Self {
        Summary {
            or: self.or | next.or,
            and: self.and & next.and,
            first: self.first,
            last: next.last,
            increasing: self.increasing && next.increasing && self.last < next.first,
        }
    }
}

/// A sort's contacts and the vectors it fills: each digit's counts of each chunk, then their
/// places, and the order.
pub(crate) struct Sorting<'c, 'a> {
    pub(crate) contacts: &'c [ContactGpu],
    pub(crate) counts: &'a mut Vec<[u32; BUCKETS]>,
    pub(crate) order: &'a mut Vec<u32>,
}

impl<'a> Sorting<'_, 'a> {
    /// The order of the contacts by the keys of their entries (`entry(i, contact)`, kept in
    /// `slots` between the passes), every pass over the entries parallel: one makes them and
    /// finds whether they are in order already and which key bits vary; then, for each digit of
    /// [`DIGIT_BITS`] bits that varies, a stable LSD pass in which each thread's chunk of
    /// entries counts its digits, and then moves its entries to its own places of each digit's
    /// (after those of the chunks before it); then the order read from the entries and, where
    /// two keys are equal (rare), each run of them ordered by the remaining fields. Fewer than
    /// [`PARALLEL_ENTRIES`] entries are one chunk, whose passes run on the calling thread.
    ///
    /// The serial LSD sort it replaces (with serial counting, packing, order checks and
    /// unpacking around its passes) ordered 40k contacts shaped like `cloth-layers`' (4 bodies,
    /// 21-bit keys, in random order) in 0.19-0.25 ms on the 2-core EPYC VM, this in 0.12-0.16
    /// ms (medians of 400 orders in a 2-thread pool, 8 runs alternated; two runs of this at 0.27
    /// and 0.31, the machine's noise); in a 1-thread pool 0.21-0.26 against 0.20-0.27 ms. On the
    /// NVIDIA H200 machine's host (16 cores of a Xeon VM) the serial sort took 1.27 ms of
    /// `cloth-layers`' 3.6 ms GPU frame (its two passes 0.57-0.66 ms); this was not run there.
    /// Keys of more than 32 bits (the same contacts with 39-bit keys: three passes), which the
    /// serial sort ordered in (key, index) pairs: 0.38-0.41 -> 0.29-0.33 ms in a 2-thread pool
    /// (3 runs alternated), 0.38 -> 0.41 ms in a 1-thread pool.
    pub(crate) fn run<S: Slot>(
        self,
        slots: &mut [Vec<S>; 2],
        entry: impl Fn(usize, &ContactGpu) -> S::Entry + Sync,
    ) -> Option<&'a [u32]> {
        let (contacts, n) = (self.contacts, self.contacts.len());
        let [from, to] = slots;
        for v in [&mut *from, &mut *to] {
            if v.len() < n {
                v.resize_with(n, S::default);
            }
        }
        let (from, to) = (&from[..n], &to[..n]);
        // A chunk per thread (the places are a pass over every chunk's counts of every digit),
        // one for fewer than PARALLEL_ENTRIES.
        let job =
            if n < PARALLEL_ENTRIES { n } else { n.div_ceil(rayon::current_num_threads()).max(MIN_JOB) };
        let summary = from
            .par_chunks(job.max(1))
            .zip(contacts.par_chunks(job.max(1)))
            .enumerate()
            .map(|(k, (out, chunk))| {
                for (i, (o, c)) in out.iter().zip(chunk).enumerate() {
                    o.put(entry(k * job + i, c));
                }
                Summary::of(out.iter().map(|o| S::key(o.get())))
            })
            .reduce(
                || None,
                |a, b| match (a, b) {
                    (Some(a), Some(b)) => Some(a.then(b)),
                    (a, b) => a.or(b),
                },
            )?;
        if summary.increasing {
            return None;
        }
        let varying = summary.or ^ summary.and;
        let places = self.counts;
        places.resize(n.div_ceil(job), [0; BUCKETS]);
        let (mut from, mut to) = (from, to);
        let shifts = (0..64).step_by(DIGIT_BITS as usize).filter(|&s| (varying >> s) & DIGIT_MASK != 0);
        for shift in shifts {
            let digit = |e: S::Entry| ((S::key(e) >> shift) & DIGIT_MASK) as usize;
            from.par_chunks(job).zip(places.par_iter_mut()).for_each(|(chunk, count)| {
                count.fill(0);
                chunk.iter().for_each(|e| count[digit(e.get())] += 1);
            });
            // Each chunk's first place in each digit: the digits before, then the chunks before.
            let mut sum = 0;
            for d in 0..BUCKETS {
                for count in places.iter_mut() {
                    (count[d], sum) = (sum, sum + count[d]);
                }
            }
            from.par_chunks(job).zip(places.par_iter_mut()).for_each(|(chunk, place)| {
                for e in chunk {
                    let e = e.get();
                    let p = &mut place[digit(e)];
                    to[*p as usize].put(e);
                    *p += 1;
                }
            });
            std::mem::swap(&mut from, &mut to);
        }
        let order = self.order;
        order.clear();
        order.par_extend(from.par_iter().with_min_len(job).map(|e| S::index(e.get())));
        let key = |i: usize| S::key(from[i].get());
        if (1..n).into_par_iter().with_min_len(job).any(|i| key(i - 1) == key(i)) {
            order_runs(contacts, order, key);
        }
        Some(order)
    }
}

/// Orders each run of equal keys (`key(i)`: the key at place i) of `order` by the remaining
/// fields of its contacts (a stable sort).
fn order_runs(contacts: &[ContactGpu], order: &mut [u32], key: impl Fn(usize) -> u64) {
    let mut run = 0;
    while run < order.len() {
        let k = key(run);
        let end = run + (run..order.len()).take_while(|&i| key(i) == k).count();
        if end - run > 1 {
            order[run..end].sort_by_key(|&i| secondary(&contacts[i as usize]));
        }
        run = end;
    }
}
