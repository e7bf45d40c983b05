//! The pool's other workers kept awake through one call of the scene (a detection, an update):
//! each waits for the call's parallel work by looking for it, instead of going to sleep between
//! the call's stages and being woken for the next ([`crate::WorkersAwake`] says how long).
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
//! that on a machine with more threads than cores the working threads still get theirs (in a
//! scratch program whose two workers were kept awake from outside the call, a call of 0.4 ms
//! took 2.9 ms while they only spun, 0.41 ms with their threads yielded). It stops when the call
//! ends ([`Awake`] dropped), after it has found no job for [`IDLE_LIMIT`] (a long serial step: it
//! then sleeps as rayon's workers do, and the next stage wakes it), when it finds that it shares
//! its core ([`SHARED_CORE`]), or once it has been awake for the setting's most. The ask is a job
//! of its own on each worker, taken before any other by an idle one; a worker of a shared pool
//! that takes it while it waits in a join of another job of the pool comes back to that job
//! only when it stops, hence a bounded setting on a caller's pool.
//!
//! Also measured, and dropped: waking the workers ahead of the call, at a frame's first
//! `Scene::set_positions` (so that the detection's first stage would not wait for them either).
//! Small frames gained (`tori-scaling` with 2 tori, `cpu-refit`, 0.19 -> 0.15–0.18 ms), but
//! `resting-pile`'s iterative pass lost (1.10–1.16 -> 1.15–1.23 ms in 5 runs alternated),
//! probably to the woken workers taking the cores from the thread setting the positions (not
//! traced).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use web_time::Instant;

/// How long a kept-awake worker looks for work without finding any before it goes to sleep as
/// usual: several times a detection's serial steps between its parallel stages (the longest of
/// `resting-pile`'s iterative pass, the contacts' order, takes 0.08–0.13 ms), short enough that
/// a longer serial step does not keep a core busy for long.
const IDLE_LIMIT: Duration = Duration::from_millis(1);

/// Keeps the current rayon pool's other workers awake while it lives ([`Awake::start`]).
#[derive(Debug)]
pub(crate) struct Awake {
    done: Arc<AtomicBool>,
}

impl Awake {
    /// From inside a pool (a worker of it: the call installed there), asks each of its other
    /// workers to stay awake until this is dropped, for at most `most`; outside a pool, or in a
    /// pool of one thread, nothing.
    pub(crate) fn start(most: Duration) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if let Some(me) = rayon::current_thread_index().filter(|_| rayon::current_num_threads() > 1) {
            let until = done.clone();
            rayon::spawn_broadcast(move |worker| {
                // This worker runs the call (it would find its own ask while it waits in a join).
                if worker.index() != me {
                    stay_awake(&until, most);
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

/// Why a worker stopped staying awake ([`stay_awake`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The call ended.
    Done,
    /// It found no job for [`IDLE_LIMIT`].
    Idle,
    /// A yield returned late: it shares its core ([`SHARED_CORE`]).
    SharedCore,
    /// It ran a job past its most.
    Most,
}

/// Runs the pool's pending jobs as they come until `done`, until none came for [`IDLE_LIMIT`],
/// until a yield returns [`SHARED_CORE`] late, or for `most` in all.
fn stay_awake(done: &AtomicBool, most: Duration) -> Stop {
    let start = Instant::now();
    let mut idle_since = start;
    while !done.load(Ordering::Acquire) {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => {
                idle_since = Instant::now();
                if idle_since - start > most {
                    return Stop::Most;
                }
            }
            _ if idle_since.elapsed() > IDLE_LIMIT => return Stop::Idle,
            _ => {
                let before = Instant::now();
                std::thread::yield_now();
                if before.elapsed() > SHARED_CORE {
                    return Stop::SharedCore;
                }
            }
        }
    }
    Stop::Done
}

/// A yield that returns this late gave the core to another thread that wanted it: the worker
/// shares its core (with the worker running the call, say), and stops staying awake, so that
/// the scheduler places it afresh when the next stage wakes it. A thread that keeps looking for
/// work is not moved to an idle core while it looks: in runs of `resting-pile` with every
/// implementation (`raycontact-bench --scene resting-pile --frames 20`, lavapipe's threads
/// running between the CPU frames), 0 to 4 of `cpu-walk`'s 13 iterative passes a run took
/// 1.55–1.74 ms against 1.0–1.2 for the others, as if on one core, and none with the workers
/// pinned to cores (`--pin`); with this stop, 1, 0 and 2 against 1, 2 and 4 (3 runs each,
/// alternated). Sleeping a microsecond instead of stopping (to be placed afresh at once) left 1
/// or 2 and slowed the others (medians 1.24–1.29 against 1.17–1.25 ms).
const SHARED_CORE: Duration = Duration::from_micros(50);

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::atomic::AtomicU32;

    const ALWAYS: Duration = Duration::MAX;

    /// The kept-awake workers run the call's parallel work (stages with serial steps between
    /// them, and a nested call that keeps them awake again), and are back in the pool once it
    /// has ended: every worker answers a broadcast.
    #[test]
    fn workers_kept_awake_run_the_call_and_come_back_when_it_ends() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let sum: u64 = pool.install(|| {
            let _awake = Awake::start(ALWAYS);
            let stage = |n: u32| (0..n).into_par_iter().with_min_len(1_000).map(u64::from).sum::<u64>();
            let first = stage(100_000);
            std::thread::sleep(Duration::from_micros(300));
            let nested = pool.install(|| {
                let _again = Awake::start(ALWAYS);
                stage(50_000)
            });
            first + nested
        });
        assert_eq!(sum, 100_000 * 99_999 / 2 + 50_000 * 49_999 / 2);
        assert_eq!(pool.broadcast(|w| w.index()), vec![0, 1, 2]);
    }

    /// The loop ends when the call has ended, when it finds no work for [`IDLE_LIMIT`] or a
    /// yield returns late while the call has not (outside a pool there is never any work), and
    /// after `most` once it has run a job past it, however much work there is.
    #[test]
    fn a_worker_stops_when_the_call_ends_when_idle_or_past_its_most() {
        assert_eq!(stay_awake(&AtomicBool::new(true), ALWAYS), Stop::Done);
        let start = Instant::now();
        match stay_awake(&AtomicBool::new(false), ALWAYS) {
            Stop::Idle => assert!(start.elapsed() >= IDLE_LIMIT),
            stop => assert_eq!(stop, Stop::SharedCore),
        }
        // On a pool of one worker, a chain of jobs each of which spawns the next: kept awake
        // without end it runs them all, kept awake for at most nothing it stops after the
        // first.
        fn chain(ran: Arc<AtomicU32>, left: u32) {
            ran.fetch_add(1, Ordering::Relaxed);
            if left > 0 {
                rayon::spawn(move || chain(ran, left - 1));
            }
        }
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        for (most, ran_all) in [(ALWAYS, true), (Duration::ZERO, false)] {
            let ran = Arc::new(AtomicU32::new(0));
            let (jobs, count) = (ran.clone(), 10_000);
            let (stop, ran_then) = pool.install(|| {
                rayon::spawn(move || chain(jobs, count - 1));
                (stay_awake(&AtomicBool::new(false), most), ran.load(Ordering::Relaxed))
            });
            assert_eq!(ran_then == count, ran_all, "{ran_then} jobs run with at most {most:?}");
            assert_eq!(stop == Stop::Most, !ran_all, "{stop:?} with at most {most:?}");
        }
    }

    /// Outside a pool, or in a pool of one thread, nothing is asked of anyone.
    #[test]
    fn nothing_to_keep_awake_outside_a_pool_or_alone() {
        drop(Awake::start(ALWAYS));
        let alone = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        alone.install(|| drop(Awake::start(ALWAYS)));
        assert_eq!(alone.broadcast(|w| w.index()), vec![0]);
    }
}
