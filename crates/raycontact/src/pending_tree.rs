//! A tree being built in the background for one body ([`PendingTree`]): the build's result to
//! come, whether the body moved since the build copied its positions, why the tree is made, and
//! what the frame did about it. Generic over the tree, so that the tree's module can hold one
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

/// A build running in the background: its tree comes through `tree` (in a mutex only so that
/// the frame's trees can be shared between threads; it is only ever reached through `&mut`).
struct Job<T> {
    tree: Mutex<Build<T>>,
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
    /// Whether a build is running (or done, and not yet taken).
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

    /// The build's result, when it is done (and the build forgotten); `None` while it runs. A
    /// build that ended without a tree (it panicked) is forgotten too.
    pub(crate) fn take_done(&mut self) -> Option<Done<T>> {
        let job = self.job.as_mut()?;
        let tree = job.tree.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
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

    /// Starts `build` on the trees' thread (`crate::tree_thread`), in place of any build before
    /// (dropped). Starts none when too many builds wait for that thread already
    /// ([`MAX_WAITING_BUILDS`](crate::tree_thread::MAX_WAITING_BUILDS)): the body keeps the tree
    /// it has, and a later frame tries again.
    /// Whether it started.
    pub(crate) fn start(&mut self, build: impl FnOnce() -> T + Send + 'static, purpose: Purpose) -> bool {
        self.job = None;
        if let Some(tree) = spawn_build(build) {
            self.job = Some(Job { tree: Mutex::new(tree), moved: false, purpose });
            self.event = TreeEvent::Started(purpose);
        }
        self.job.is_some()
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
