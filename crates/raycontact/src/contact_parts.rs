//! Contacts found in parallel without fresh memory every frame: the items split into blocks
//! (rayon jobs), each block's contacts appended to a vector kept from frame to frame, then the
//! vectors joined, in item order, into an output vector that is kept too.
//!
//! Why kept: a vector that grows from nothing each frame gets fresh pages from the system, and
//! the first touch of each costs a page fault. On the 2-core VM the benchmark runs on, joining
//! cloth-layers' 40k contacts (3.8 MB) into a new vector took 1.9–2.4 ms, 0.5 ms when the
//! allocator happened to hand back touched memory; the rays of that frame take about 35 ms.
//!
//! The join copies the blocks into the output in parallel (halves of the blocks as rayon jobs)
//! once it holds enough contacts: on the same VM, joining cloth-layers' 40k contacts took
//! 0.47–0.64 ms on one thread and 0.25–0.46 ms on two (12 frames of `cpu-rayon`, timed in a
//! scratch build). On a machine of many cores the serial copy was a larger share of the frame.

use rayon::prelude::*;

use crate::layout::ContactGpu;

/// Blocks per worker thread: enough for rayon to even out blocks of unequal cost.
const BLOCKS_PER_THREAD: usize = 16;

/// The smallest block, in items.
const MIN_BLOCK: usize = 64;

/// A join of fewer than twice this many contacts (about 200 KB) stays on one thread, where
/// waking another would cost about what it saves. `resting-pile`'s iterative pass joins its 6.2k
/// contacts (600 KB) on both: on the 2-core AMD VM, from the end of its last block to the end of
/// the pass took 84–101 µs against 109–144 with 4,096 here (joined on one thread; medians of 80
/// passes, 3 runs of each alternated, timed in a scratch build), of a pass of 1.5–1.9 ms. (On
/// an earlier Intel VM the whole pass had measured 1.07–1.11 ms against 1.07–1.12: within its
/// noise.) The workers are awake through the pass (`cpu_backend::awake`).
const MIN_JOIN: usize = 1024;

/// The kept per-block vectors.
#[derive(Debug, Default)]
pub struct ContactParts {
    parts: Vec<Vec<ContactGpu>>,
}

impl ContactParts {
    /// Runs `job` on `items` in blocks in the current rayon pool, each block appending its
    /// contacts to its own kept vector, then puts every block's contacts into `out` (in place
    /// of what it held), block after block. Returns the blocks' results folded by `combine`
    /// (from `R::default()`, in any grouping: a sum, say), which allocates nothing.
    pub fn run<I, R>(
        &mut self,
        items: &[I],
        out: &mut Vec<ContactGpu>,
        job: impl Fn(&[I], &mut Vec<ContactGpu>) -> R + Sync + Send,
        combine: impl Fn(R, R) -> R + Sync + Send,
    ) -> R
    where
        I: Sync,
        R: Send + Default,
    {
        let block = items.len().div_ceil(rayon::current_num_threads() * BLOCKS_PER_THREAD).max(MIN_BLOCK);
        let blocks = items.len().div_ceil(block);
        if self.parts.len() < blocks {
            self.parts.resize_with(blocks, Vec::new);
        }
        let parts = &mut self.parts[..blocks];
        let results = parts
            .par_iter_mut()
            .zip(items.par_chunks(block))
            .map(|(part, chunk)| {
                part.clear();
                job(chunk, part)
            })
            .reduce(R::default, combine);
        // `out` is kept too: only what it grows by is written twice (its old contents are
        // overwritten).
        out.resize(parts.iter().map(Vec::len).sum(), ContactGpu::default());
        join(out, parts);
        results
    }
}

/// Copies `parts` one after the other into `out`, which holds exactly that many: the two halves
/// of the parts in parallel (`rayon::join`, no allocation), down to joins of fewer than twice
/// [`MIN_JOIN`] contacts.
fn join(out: &mut [ContactGpu], parts: &[Vec<ContactGpu>]) {
    if out.len() < 2 * MIN_JOIN || parts.len() < 2 {
        let mut at = 0;
        for part in parts {
            out[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        return;
    }
    let mid = parts.len() / 2;
    let (left, right) = out.split_at_mut(parts[..mid].iter().map(Vec::len).sum());
    rayon::join(|| join(left, &parts[..mid]), || join(right, &parts[mid..]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output holds every block's contacts in item order, whatever the block size, and the
    /// next run replaces it.
    #[test]
    fn blocks_join_in_item_order() {
        let mut parts = ContactParts::default();
        let mut out = vec![ContactGpu::default(); 3];
        let items: Vec<u32> = (0..1000).collect();
        // Items that are multiples of 3 give two contacts, the others none.
        let job = |chunk: &[u32], part: &mut Vec<ContactGpu>| {
            for &i in chunk.iter().filter(|&&i| i % 3 == 0) {
                part.extend([ContactGpu { source_vertex: i, ..ContactGpu::default() }; 2]);
            }
            chunk.len()
        };
        assert_eq!(parts.run(&items, &mut out, job, |a, b| a + b), 1000, "the blocks' results summed");
        let expected: Vec<u32> = (0..1000).filter(|i| i % 3 == 0).flat_map(|i| [i, i]).collect();
        assert_eq!(out.iter().map(|c| c.source_vertex).collect::<Vec<_>>(), expected);
        parts.run(&items[..10], &mut out, |_, _| (), |(), ()| ());
        assert!(out.is_empty());
    }

    /// Joined in parallel (over `2 * MIN_JOIN` contacts) on 1 to 4 threads, into an output
    /// that held more or fewer contacts before: still every block's contacts in item order.
    #[test]
    fn a_large_join_in_parallel_keeps_item_order() {
        let items: Vec<u32> = (0..40_000).collect();
        let contacts = |i: u32| (i % 7 + i / 5_000) as usize % 4;
        let expected: Vec<u32> = items.iter().flat_map(|&i| std::iter::repeat_n(i, contacts(i))).collect();
        assert!(expected.len() > 8 * MIN_JOIN);
        for threads in 1..=4 {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut parts = ContactParts::default();
            for before in [0, 5, 200_000] {
                let mut out = vec![ContactGpu { source_vertex: u32::MAX, ..ContactGpu::default() }; before];
                pool.install(|| {
                    let job = |chunk: &[u32], part: &mut Vec<ContactGpu>| {
                        for &i in chunk {
                            part.extend(std::iter::repeat_n(
                                ContactGpu { source_vertex: i, ..ContactGpu::default() },
                                contacts(i),
                            ));
                        }
                    };
                    parts.run(&items, &mut out, job, |(), ()| ())
                });
                let got: Vec<u32> = out.iter().map(|c| c.source_vertex).collect();
                assert!(got == expected, "{threads} threads, {before} contacts before");
            }
        }
    }
}
