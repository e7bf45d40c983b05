//! A tree being built in the background for one body ([`PendingTree`]): the build's result to
//! come (or the build itself, waiting in the body while too many wait for the trees' thread),
//! whether the body moved since the build copied its positions, why the tree is made, and what
//! the frame did about it. Generic over the tree, so that the tree's module can hold one
//! without this one knowing the tree (`crate::wide_background` starts the CPU backend's builds
//! and puts their trees in place).

use std::sync::Mutex;
use std::sync::mpsc::TryRecvError;

use crate::tree_thread::{Build, spawn_build};

/// Why a body's binned-SAH tree is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The body rests while others move, or is static: its tree is kept.
    Rest,
    /// A refitting policy rebuilt the body: its tree is refitted in the frames to come.
    Refit,
}

/// What a frame did about a body's binned-SAH tree ([`PendingTree::event`]), for
/// [`BvhStats`](crate::BvhStats)' counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TreeEvent {
    /// Nothing.
    #[default]
    None,
    /// Collapsed from a binned-SAH tree built in the frame.
    Built(Purpose),
    /// Its build started in the background.
    Started(Purpose),
    /// The tree of a build done in the background put in place.
    Installed(Purpose),
}

/// A build the trees' thread was handed, or one waiting to be: when it was started, too many
/// builds waited for that thread ([`MAX_WAITING_BUILDS`](crate::tree_thread::MAX_WAITING_BUILDS)),
/// and it is handed over by the first [`PendingTree::take_done`] that finds room.
enum Run<T> {
    /// On the trees' thread: its tree comes through it.
    Handed(Build<T>),
    /// Waiting in the body, with the copies of its data it builds from.
    Waiting(Box<dyn FnOnce() -> T + Send>),
}

/// A build in the background: its run (in a mutex only so that the frame's trees can be shared
/// between threads; it is only ever reached through `&mut`).
struct Job<T> {
    run: Mutex<Option<Run<T>>>,
    /// The body's positions changed since the build's copy of them.
    moved: bool,
    purpose: Purpose,
}

/// A body's tree being built in the background, if any, and what this frame did about its
/// tree. Not part of the tree's value (a clone has none, and any two compare equal).
pub(crate) struct PendingTree<T> {
    job: Option<Job<T>>,
    event: TreeEvent,
}

impl<T> Default for PendingTree<T> {
    fn default() -> Self {
        PendingTree { job: None, event: TreeEvent::None }
    }
}

impl<T> Clone for PendingTree<T> {
    fn clone(&self) -> Self {
        PendingTree::default()
    }
}

impl<T> PartialEq for PendingTree<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> std::fmt::Debug for PendingTree<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PendingTree")
    }
}

/// A build done: its tree, whether the body moved since, and why it was made.
pub(crate) struct Done<T> {
    pub(crate) tree: T,
    pub(crate) moved: bool,
    pub(crate) purpose: Purpose,
}

impl<T: Send + 'static> PendingTree<T> {
    /// Whether a build is running (or waiting to be handed to the trees' thread, or done and
    /// not yet taken).
    pub(crate) fn is_pending(&self) -> bool {
        self.job.is_some()
    }

    /// Drops the build, if any.
    pub(crate) fn cancel(&mut self) {
        self.job = None;
    }

    /// The body's positions changed: a tree done from now on is refitted when put in place.
    pub(crate) fn moved(&mut self) {
        if let Some(j) = &mut self.job {
            j.moved = true;
        }
    }

    /// The build's result, when it is done (and the build forgotten); `None` while it runs or
    /// waits (one waiting is handed to the trees' thread now if there is room). A build that
    /// ended without a tree (it panicked) is forgotten too.
    pub(crate) fn take_done(&mut self) -> Option<Done<T>> {
        let job = self.job.as_mut()?;
        let run = job.run.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(Run::Waiting(_)) = run {
            let Some(Run::Waiting(build)) = run.take() else { unreachable!("a waiting build") };
            *run = Some(hand(build));
        }
        let Some(Run::Handed(tree)) = run else {
            return None;
        };
        match tree.try_recv() {
            Ok(tree) => {
                let job = self.job.take()?;
                Some(Done { tree, moved: job.moved, purpose: job.purpose })
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.job = None;
                None
            }
        }
    }

    /// Starts `build` in the background, in place of any build before (dropped): hands it to
    /// the trees' thread (`crate::tree_thread`), or, when too many builds wait for that thread
    /// already ([`MAX_WAITING_BUILDS`](crate::tree_thread::MAX_WAITING_BUILDS)), keeps it
    /// waiting here for a later [`Self::take_done`] to hand over. Either way it is pending
    /// ([`Self::is_pending`]), the body keeps the tree it has meanwhile, and the tree built is
    /// that of this frame's copies, however late it is handed over.
    pub(crate) fn start(&mut self, build: impl FnOnce() -> T + Send + 'static, purpose: Purpose) {
        let run = Mutex::new(Some(hand(Box::new(build))));
        self.job = Some(Job { run, moved: false, purpose });
        self.event = TreeEvent::Started(purpose);
    }

    /// Notes what this frame did about the tree.
    pub(crate) fn note(&mut self, event: TreeEvent) {
        self.event = event;
    }

    /// What this frame did about the tree; forgotten for the next frame.
    pub(crate) fn event(&mut self) -> TreeEvent {
        std::mem::take(&mut self.event)
    }
}

/// `build` handed to the trees' thread, or kept waiting when it has no room.
fn hand<T: Send + 'static>(build: Box<dyn FnOnce() -> T + Send>) -> Run<T> {
    match spawn_build(build) {
        Ok(tree) => Run::Handed(tree),
        Err(build) => Run::Waiting(build),
    }
}
