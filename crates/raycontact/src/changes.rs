//! Which packed bodies moved since their trees were last brought up to date, and which trees
//! are what a rebuild at today's positions would make: the bodies whose frame data (normals,
//! boxes, keys, trees) both backends leave as they are. Not a twin of any kernel.

/// Which bodies' positions changed since their trees were last brought up to date, and which
/// trees are what a rebuild at today's positions would make. The others' normals, boxes and
/// trees are kept (the same positions give the same ones), and so are their wide trees,
/// whatever this frame's update (the same leaves, and any tree over them the same hits).
#[derive(Clone, Debug, Default)]
pub(crate) struct Changes {
    /// Per packed body: its positions changed since the last update of the trees (all true
    /// after a new packing).
    pub moved: Vec<bool>,
    /// Per packed body: its binary tree was rebuilt at its current positions (a refit after
    /// it moved makes another tree than a rebuild would).
    fresh: Vec<bool>,
    /// Per packed body: a rebuild must build its tree (moved, or not fresh); this frame's.
    stale: Vec<bool>,
}

impl Changes {
    /// A new packing: every body moved, no tree is fresh.
    pub(crate) fn repacked(&mut self, bodies: usize) {
        self.moved = vec![true; bodies];
        self.fresh = vec![false; bodies];
    }

    /// This frame's bodies to rebuild, from the moves and the fresh trees.
    pub(crate) fn begin(&mut self) {
        self.stale.clear();
        self.stale.extend(self.moved.iter().zip(&self.fresh).map(|(&m, &f)| m || !f));
    }

    /// The trees were refitted: the trees of the bodies that moved are no longer fresh.
    pub(crate) fn refitted(&mut self) {
        self.fresh.iter_mut().zip(&self.moved).for_each(|(f, &m)| *f &= !m);
        self.moved.iter_mut().for_each(|m| *m = false);
    }

    /// The bodies a rebuild must build this frame (after [`Self::begin`]).
    pub(crate) fn stale(&self) -> &[bool] {
        &self.stale
    }

    /// Marks packed body `b` as moved (a body past the packing's end is ignored).
    pub(crate) fn mark(&mut self, b: usize) {
        if let Some(m) = self.moved.get_mut(b) {
            *m = true;
        }
    }

    /// The trees of the bodies that `built` marks were rebuilt at their current positions
    /// (a deferred rebuild: `cpu_backend/deferred.rs`); the others are as they were.
    pub(crate) fn rebuilt_bodies(&mut self, built: &[bool]) {
        let bodies = self.fresh.iter_mut().zip(self.moved.iter_mut()).zip(built);
        for ((f, m), _) in bodies.filter(|(_, b)| **b) {
            (*f, *m) = (true, false);
        }
    }

    /// The trees were rebuilt: every tree is fresh.
    pub(crate) fn rebuilt(&mut self) {
        self.fresh.iter_mut().for_each(|f| *f = true);
        self.moved.iter_mut().for_each(|m| *m = false);
    }
}
