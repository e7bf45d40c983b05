//! The suite's CPU thread pools: one of a worker per core, which every "rayon" implementation
//! runs on (raycontact's CPU scenes through `Scene::new_cpu_on_pool`, and parry3d), and one of
//! a single worker for the "1 thread" ones. The implementations' frames run one at a time, so
//! they share the two pools for the whole run.
//!
//! When each implementation kept its own pool (about twenty threads in the process), a rayon
//! frame that followed a single-threaded one often had both its workers woken on one core
//! while the other core idled (seen with `perf sched` on this project's 2-core machine):
//! `cpu-rayon` on resting-pile took 10.4–12.3 ms a frame in runs with `parry-1` or
//! `parry-refit-1`, against 6.2–6.5 ms without, and parry3d's rayon runs slowed alike. Pinning
//! those pools' workers to distinct cores removed it, and so does sharing the pools, pinned or
//! not (whole suite: resting-pile's `cpu-rayon` 10.6 → 6.1 / 6.5 ms, cloth-layers' 42.6 → 30.5 /
//! 31.7 ms).
//!
//! With `--pin`, each worker is also pinned to a core of those the process may run on: worker i
//! of the wide pool to the i-th, the single worker to the first.

use std::sync::Arc;

use rayon::{ThreadPool, ThreadPoolBuilder};

/// Whether the pools' workers are pinned to cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pinning {
    /// Left to the operating system's scheduler (the default).
    Off,
    /// Each worker pinned to one of the `cores` cores the process may run on.
    Pinned {
        /// The cores the process may run on.
        cores: usize,
    },
    /// Asked for, and not done (the reason): the workers are left to the scheduler.
    Failed(String),
}

impl Pinning {
    /// Whether the workers are pinned.
    pub fn pinned(&self) -> bool {
        matches!(self, Pinning::Pinned { .. })
    }

    /// In words, for the report's header.
    pub fn words(&self) -> String {
        match self {
            Pinning::Off => {
                "every implementation of a kind shares one pool (rayon, single); workers left to the \
                 scheduler (--pin pins them)"
                    .into()
            }
            Pinning::Pinned { cores } => format!(
                "every implementation of a kind shares one pool (rayon, single); worker i of the rayon \
                 pool pinned to core i of the process's {cores}, the single worker to the first (--pin)"
            ),
            Pinning::Failed(why) => format!(
                "every implementation of a kind shares one pool (rayon, single); --pin asked, not done \
                 ({why}): workers left to the scheduler"
            ),
        }
    }
}

/// The run's two pools.
pub struct Pools {
    /// One worker per core: the "rayon" implementations.
    pub all: Arc<ThreadPool>,
    /// One worker: the "1 thread" implementations.
    pub one: Arc<ThreadPool>,
    /// Whether their workers are pinned.
    pub pinning: Pinning,
}

impl Pools {
    /// The pools, their workers pinned when `pin` is set and the platform allows it.
    pub fn new(pin: bool) -> Result<Self, String> {
        let cores = if pin { core_affinity::get_core_ids().filter(|c| !c.is_empty()) } else { None };
        let threads = cores.as_ref().map(Vec::len);
        let all = build("rayon", threads)?;
        let one = build("single", Some(1))?;
        let pinning = match (pin, cores) {
            (false, _) => Pinning::Off,
            (true, None) => Pinning::Failed("the cores this process may run on are unknown here".into()),
            (true, Some(cores)) => {
                let pinned =
                    all.broadcast(|b| core_affinity::set_for_current(cores[b.index() % cores.len()]));
                let first = one.install(|| core_affinity::set_for_current(cores[0]));
                if pinned.iter().all(|&ok| ok) && first {
                    Pinning::Pinned { cores: cores.len() }
                } else {
                    Pinning::Failed("the operating system refused to pin a worker".into())
                }
            }
        };
        Ok(Pools { all, one, pinning })
    }

    /// The pool of `threads` workers: [`Pools::one`] for `Some(1)`, else [`Pools::all`].
    pub fn of(&self, threads: Option<usize>) -> Arc<ThreadPool> {
        match threads {
            Some(1) => self.one.clone(),
            _ => self.all.clone(),
        }
    }
}

/// A pool of `threads` workers (`None`: one per core) named `bench-<name>-<i>`.
fn build(name: &'static str, threads: Option<usize>) -> Result<Arc<ThreadPool>, String> {
    let mut b = ThreadPoolBuilder::new().thread_name(move |i| format!("bench-{name}-{i}"));
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    b.build().map(Arc::new).map_err(|e| format!("rayon pool: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_have_their_sizes_and_say_whether_they_are_pinned() {
        let p = Pools::new(false).unwrap();
        assert_eq!(p.pinning, Pinning::Off);
        assert_eq!(p.one.current_num_threads(), 1);
        assert_eq!(p.of(Some(1)).current_num_threads(), 1);
        assert_eq!(p.of(None).current_num_threads(), p.all.current_num_threads());
        let pinned = Pools::new(true).unwrap();
        match &pinned.pinning {
            Pinning::Pinned { cores } => assert_eq!(pinned.all.current_num_threads(), *cores),
            Pinning::Failed(_) => {}
            Pinning::Off => panic!("pinning was asked for"),
        }
        // A pinned worker stays on its core.
        if let Some(cores) = core_affinity::get_core_ids().filter(|_| pinned.pinning.pinned()) {
            let ids = pinned.all.broadcast(|_| core_affinity::get_core_ids().map(|c| c.len()));
            assert!(ids.iter().all(|n| *n == Some(1)), "{ids:?} of {}", cores.len());
        }
    }
}
