//! The pool's other workers kept awake through one call of the scene (a detection, an update):
//! each waits for the call's parallel work by looking for it, instead of going to sleep between
//! the call's stages and being woken for the next.
//!
//! Why: a rayon worker that finds no work looks for a few microseconds, then sleeps, and waking
//! it is an OS wake-up of its thread. On this project's 2-core VM a `rayon::join` of two 200 µs
//! halves took 320–400 µs once the other worker had slept for a millisecond, against 240–260 µs
//! while it was awake (a scratch program, 200 joins each, tenth percentile to median). A
//! detection has several parallel stages with serial steps between them (the plan, the pair
//! list, the ordering of the contacts), so the other worker slept through each of those and
//! came late to the next stage: `resting-pile`'s iterative pass lost 0.1–0.3 ms of its 1.3–1.6,
//! `cpu-rayon` on `tori-scaling` with 4 tori about 0.1 ms of its 0.65–0.75 (README, The CPU
//! backend's workers).
//!
//! A kept-awake worker runs rayon's pending jobs as it finds them (`rayon::yield_now`: those of
//! the call, or of anyone sharing the pool), and yields its OS thread while it finds none, so
//! that on a machine with more threads than cores the working threads still get theirs. It stops
//! when the call ends ([`Awake`] dropped) or after it has found no job for [`IDLE_LIMIT`] (a long
//! serial step: it then sleeps as rayon's workers do, and the next stage wakes it).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use web_time::Instant;

/// How long a kept-awake worker looks for work without finding any before it goes to sleep as
/// usual: several times a detection's serial steps between its parallel stages (the longest of
/// `resting-pile`'s iterative pass, the contacts' order, takes 0.08–0.13 ms), short enough that
/// a longer serial step does not keep a core busy for long.
pub(crate) const IDLE_LIMIT: Duration = Duration::from_millis(1);

/// Keeps the current rayon pool's other workers awake while it lives ([`Awake::start`]).
#[derive(Debug)]
pub(crate) struct Awake {
    done: Arc<AtomicBool>,
}

impl Awake {
    /// From inside a pool (a worker of it: the call installed there), asks each of its other
    /// workers to stay awake until this is dropped; outside a pool, or in a pool of one thread,
    /// nothing.
    pub(crate) fn start() -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if let Some(me) = rayon::current_thread_index().filter(|_| rayon::current_num_threads() > 1) {
            let until = done.clone();
            rayon::spawn_broadcast(move |worker| {
                // This worker runs the call (it finds its own request when it waits in a join).
                if worker.index() != me {
                    stay_awake(&until);
                }
            });
        }
        Awake { done }
    }
}

impl Drop for Awake {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

/// Runs the pool's pending jobs as they come until `done`, or until none came for
/// [`IDLE_LIMIT`]. Returns how many times it looked for one.
fn stay_awake(done: &AtomicBool) -> u64 {
    let (mut idle_since, mut looked) = (Instant::now(), 0);
    while !done.load(Ordering::Acquire) {
        looked += 1;
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => idle_since = Instant::now(),
            _ if idle_since.elapsed() > IDLE_LIMIT => break,
            _ => std::thread::yield_now(),
        }
    }
    looked
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// The kept-awake workers run the call's parallel work (stages with serial steps between
    /// them, and a nested call that keeps them awake again), and are back in the pool once it
    /// has ended: every worker answers a broadcast.
    #[test]
    fn workers_kept_awake_run_the_call_and_come_back_when_it_ends() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let sum: u64 = pool.install(|| {
            let _awake = Awake::start();
            let stage = |n: u32| (0..n).into_par_iter().with_min_len(1_000).map(u64::from).sum::<u64>();
            let first = stage(100_000);
            std::thread::sleep(Duration::from_micros(300));
            let nested = pool.install(|| {
                let _again = Awake::start();
                stage(50_000)
            });
            first + nested
        });
        assert_eq!(sum, 100_000 * 99_999 / 2 + 50_000 * 49_999 / 2);
        assert_eq!(pool.broadcast(|w| w.index()), vec![0, 1, 2]);
    }

    /// The loop ends without looking for work when the call has ended, and after
    /// [`IDLE_LIMIT`] without work while it has not (outside a pool there is never any).
    #[test]
    fn a_worker_stops_when_the_call_ends_or_after_the_idle_limit() {
        assert_eq!(stay_awake(&AtomicBool::new(true)), 0);
        let start = Instant::now();
        assert!(stay_awake(&AtomicBool::new(false)) > 0);
        assert!(start.elapsed() >= IDLE_LIMIT);
    }

    /// Outside a pool, or in a pool of one thread, nothing is asked of anyone.
    #[test]
    fn nothing_to_keep_awake_outside_a_pool_or_alone() {
        drop(Awake::start());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        pool.install(|| drop(Awake::start()));
        assert_eq!(pool.broadcast(|w| w.index()), vec![0]);
    }
}
