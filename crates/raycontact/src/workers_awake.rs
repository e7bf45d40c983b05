//! How the CPU backend's other workers wait through one call of the scene (a detection, an
//! update): [`WorkersAwake`], set with
//! [`Scene::set_workers_awake`](crate::Scene::set_workers_awake).

use std::time::Duration;

/// How long the other workers of a CPU scene's rayon pool stay awake, looking for the call's
/// parallel work, through one call of the scene (a detection or an update). Left to rayon, a
/// worker that finds no work sleeps after a few microseconds and is woken for the next parallel
/// stage, which on a VM can cost more than a small stage takes (the README's "The CPU backend's
/// workers" has the figures). A worker kept awake runs the pool's pending jobs as it finds them
/// and yields its thread while there are none; it stops when the call ends, after a millisecond
/// without work, when a yield shows that it shares its core with another thread, or after the
/// setting's most.
///
/// A kept-awake worker may take the ask while it waits in a join of some other job of the pool
/// (an engine's own work on a pool it shares with the scene); that job then waits until the
/// worker stops. [`WorkersAwake::AtMost`] bounds that wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkersAwake {
    /// Rayon's own behaviour: the workers sleep between the call's stages.
    Off,
    /// Awake through the call, but each worker for at most about this long after it takes the
    /// ask (it stops after the first job that ends past it; a call that runs longer wakes the
    /// workers as rayon does for its later stages): the default of
    /// [`Scene::new_cpu_on_pool`](crate::Scene::new_cpu_on_pool), whose pool the caller may use
    /// for other work at the same time, [`WorkersAwake::SHARED`].
    AtMost(Duration),
    /// Awake through the whole call: the default of [`Scene::new_cpu`](crate::Scene::new_cpu),
    /// whose pool is the scene's own.
    WholeCall,
}

impl WorkersAwake {
    /// The default on a pool the caller shares with the scene: 2 ms, longer than the small
    /// scenes' whole detections on the benchmark's 2-core VM (0.1–1.4 ms), and about as long as
    /// a job of the caller's may then wait.
    pub const SHARED: WorkersAwake = WorkersAwake::AtMost(Duration::from_millis(2));

    /// How long a worker stays awake for one ask (`None`: not at all).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn most(self) -> Option<Duration> {
        match self {
            WorkersAwake::Off => None,
            WorkersAwake::AtMost(d) => Some(d),
            WorkersAwake::WholeCall => Some(Duration::MAX),
        }
    }
}
