//! The thread on which the scenes build their binned-SAH trees in the background
//! ([`Scene::set_background_trees`](crate::Scene::set_background_trees): the GPU scenes'
//! `scene/rest_trees.rs`, the CPU backend's `crate::wide_background`), and a hold on it and a
//! wait for it, for tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::sync::{Arc, OnceLock};

/// Builds at most waiting for the trees' thread at once, over every scene: past it a build
/// waits in its body instead and is handed to the thread by a later frame (a machine whose cores
/// the frames keep busy leaves the thread, at the lowest priority, little time, and builds
/// dropped before they begin would pile up in its queue, each with its copy of a body's data;
/// a body holds one build at most, and drops it at once).
pub const MAX_WAITING_BUILDS: usize = 64;

/// Builds started and not yet begun on the trees' thread.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// A build started by [`spawn_build`]: its result to come. Dropping it drops the build: one
/// not yet begun is then skipped.
#[derive(Debug)]
pub(crate) struct Build<T> {
    tree: Receiver<T>,
    /// The build is still wanted while this lives (the job holds a weak reference).
    _wanted: Arc<()>,
}

impl<T> Build<T> {
    /// The result, when the build is done; [`TryRecvError::Disconnected`] when it ended without
    /// one (it panicked).
    pub(crate) fn try_recv(&self) -> Result<T, TryRecvError> {
        self.tree.try_recv()
    }
}

/// Runs `build` on the trees' own thread ([`tree_pool`]), or in place where there is none; its
/// result comes through the [`Build`] (none if the build panics). `build` given back, and
/// nothing run, when [`MAX_WAITING_BUILDS`] builds wait already: the caller starts it again
/// later. A build whose [`Build`] is dropped before it begins is skipped.
pub(crate) fn spawn_build<T, F>(build: F) -> Result<Build<T>, F>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = sync_channel(1);
    let wanted = Arc::new(());
    match tree_pool() {
        Some(pool) => {
            if WAITING.fetch_add(1, Ordering::Relaxed) >= MAX_WAITING_BUILDS {
                WAITING.fetch_sub(1, Ordering::Relaxed);
                return Err(build);
            }
            let still_wanted = Arc::downgrade(&wanted);
            pool.spawn(move || {
                WAITING.fetch_sub(1, Ordering::Relaxed);
                // Not wanted any more (the body was rebuilt, or the scene is gone): not built.
                // Else the scene may still drop the receiver before the result is sent.
                if still_wanted.strong_count() > 0 {
                    drop(tx.send(build()));
                }
            });
        }
        None => drop(tx.send(build())),
    }
    Ok(Build { tree: rx, _wanted: wanted })
}

/// Holds every scene's background tree builds
/// ([`Scene::set_background_trees`](crate::Scene::set_background_trees)) until the returned
/// guard is dropped: a job on the trees' thread that waits for the guard, so that every build
/// started meanwhile waits behind it. For tests that need a build not done in some frames
/// (the frames' results do not depend on it: any tree over the same leaves gives the same hits);
/// it delays the builds of every scene of the process while held. Nothing where there is no
/// trees' thread (the builds then run in place).
pub fn hold_background_trees() -> BackgroundHold {
    let (tx, rx) = sync_channel::<()>(0);
    if let Some(pool) = tree_pool() {
        // Ends when the guard's sender is dropped (the receive then fails).
        pool.spawn(move || rx.recv().unwrap_or_default());
    }
    BackgroundHold { _release: tx }
}

/// Waits until every background tree build started so far (by any scene of the process) is
/// done: a job on the trees' thread, which runs its jobs one after another in the order they
/// were started, that the caller waits for. For tests that need the builds done by the next
/// frame (held by [`hold_background_trees`], drop the hold first). Returns at once where there
/// is no trees' thread (the builds ran in place).
pub fn wait_background_trees() {
    if let Some(pool) = tree_pool() {
        let (tx, rx) = sync_channel::<()>(1);
        pool.spawn(move || tx.send(()).unwrap_or_default());
        // A dropped sender (the job did not run) ends the wait too.
        rx.recv().unwrap_or_default();
    }
}

/// The guard of [`hold_background_trees`]: the builds go on when it is dropped.
#[derive(Debug)]
pub struct BackgroundHold {
    _release: std::sync::mpsc::SyncSender<()>,
}

/// The thread that builds the binned-SAH trees in the background, for every scene: a
/// rayon pool of one worker, made on first use (`None` where no thread can be started). Its
/// builds run one after another, and their parallel parts (the boxes, the two sides of a
/// split) run on it alone: on rayon's global pool, which the frame's own parallel steps use
/// (the contacts' ordering), a build would hold every worker, and a frame's step would wait
/// for it to end.
fn tree_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let builder =
            rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "raycontact-trees".into());
        builder.start_handler(|_| lower_priority()).build().ok()
    })
    .as_ref()
}

/// Gives the calling thread (the trees' thread) the lowest priority of normal threads (Linux's
/// nice 19), so that a build takes the cores when the frames leave them idle, not while a
/// frame's own workers could use them. Elsewhere nothing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn lower_priority() {
    // SAFETY: `setpriority` and `gettid` take and return plain integers and touch no memory of
    // ours. On Linux the nice value is a thread's own (`setpriority(2)`, NOTES): this sets the
    // calling thread's alone. An error (none is expected: lowering needs no privilege) leaves
    // the priority as it was, which is only slower frames while a build runs.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
    }
}

/// Elsewhere the trees' thread keeps the default priority.
#[cfg(not(target_os = "linux"))]
fn lower_priority() {}
