//! The bodies a GPU frame leaves as they are ([`BODY_KEEP`]): a body whose positions did not
//! change since its tree was last brought up to date (and, in a rebuild, whose tree was rebuilt
//! at these positions) has the normals, box, triangle boxes, sorted keys and tree that the
//! frame's kernels would compute again. The scene marks it in the bodies buffer (and, in a
//! rebuild, empties its sort segment) before the frame, so that `vertex_normals`,
//! `triangle_bounds`, `morton`, the sort, `hierarchy` and `fit` skip it and its data stays; the
//! frame clears only the other bodies' states. As on the CPU backend ([`Changes`]).
//!
//! Also which bodies' trees are binned-SAH trees the scene wrote over their LBVHs
//! (`scene/rest_trees.rs`), which bodies a frame finds newly at rest, which it rebuilds, and the
//! trees being built in the background over the leaves of a body's LBVH (for a body at rest, or
//! one that a rebuild under a refitting policy rebuilt), dropped when their body is rebuilt.

use super::buffers::{B, Buffers};
use crate::changes::Changes;
use crate::layout::{BODY_KEEP, BodyGpu, Node, SortSegment, sort_passes};
use crate::packing::Packing;
use crate::pending_tree::{PendingTree, Purpose};
use crate::stats::BvhAction;

/// What the bodies and segments buffers hold of each body, and what moved.
#[derive(Debug, Default)]
pub(super) struct Kept {
    changes: Changes,
    /// The packing's bodies, with the [`BODY_KEEP`] bits as the bodies buffer holds them.
    bodies: Vec<BodyGpu>,
    /// The packing's sort segments as the segments buffer holds them: each body's count is its
    /// triangles, or 0 when the last rebuild kept it.
    segments: Vec<SortSegment>,
    /// Whether this frame keeps some body.
    any: bool,
    /// Whether this frame brings some body's tree up to date (rebuilt or refitted).
    updates_some: bool,
    /// Whether this frame is a rebuild.
    rebuilds: bool,
    /// Whether this frame is a refit.
    refits: bool,
    /// Per packed body, whether its tree is a binned-SAH tree written over its LBVH
    /// ([`Self::rest`]) and not rebuilt since.
    sah: Vec<bool>,
    /// Per packed body, the binned-SAH tree being built in the background over the leaves of
    /// its LBVH ([`Self::building`]), which it keeps until it is rebuilt.
    pending: Vec<PendingTree<HostTree>>,
    /// Per packed body: its positions changed since a full pass last emptied its words of the
    /// narrow phase's exit memo ([`Self::take_stale_exits`]; all after a new packing).
    exits_stale: Vec<bool>,
}

impl Kept {
    /// A new packing, as uploaded: no body kept, every body moved.
    pub fn packed(&mut self, p: &Packing) {
        self.changes.repacked(p.bodies.len());
        self.bodies.clone_from(&p.bodies);
        self.segments.clone_from(&p.segments);
        self.any = false;
        self.updates_some = false;
        self.rebuilds = false;
        self.refits = false;
        self.sah.clear();
        self.sah.resize(p.bodies.len(), false);
        self.pending.clear();
        self.pending.resize_with(p.bodies.len(), PendingTree::default);
        self.exits_stale.clear();
        self.exits_stale.resize(p.bodies.len(), true);
    }

    /// Packed body `b` was given new positions.
    pub fn moved(&mut self, b: usize) {
        self.changes.mark(b);
        if let Some(s) = self.exits_stale.get_mut(b) {
            *s = true;
        }
    }

    /// Calls `empty(first, count)` for each run of consecutive packed vertices whose words of
    /// the narrow phase's exit memo a full pass must empty: those of the bodies that moved since
    /// the last call (or since the packing), bodies next to each other in one run. Their exit
    /// traces are not those of the memo; the other bodies' are, as long as they do not move
    /// (an exit trace depends on nothing but its body's positions).
    pub fn take_stale_exits(&mut self, mut empty: impl FnMut(u32, u32)) {
        let mut run: Option<(u32, u32)> = None;
        for (stale, body) in self.exits_stale.iter_mut().zip(&self.bodies) {
            if !std::mem::take(stale) || body.vertex_count == 0 {
                continue;
            }
            match &mut run {
                Some((first, count)) if *first + *count == body.vertex_offset => *count += body.vertex_count,
                _ => {
                    if let Some((first, count)) = run.replace((body.vertex_offset, body.vertex_count)) {
                        empty(first, count);
                    }
                }
            }
        }
        if let Some((first, count)) = run {
            empty(first, count);
        }
    }

    /// Marks the bodies this frame (its trees updated as `bvh` says) keeps, writing the bodies
    /// and segments whose flags or counts changed: the records from the first changed to the
    /// last, in one write per buffer (wgpu makes a staging buffer and a copy for each write,
    /// whatever its size: bodies that fall still or start moving together cost one, not one
    /// each).
    pub fn begin_frame(&mut self, queue: &wgpu::Queue, bufs: &Buffers, bvh: BvhAction) {
        self.any = false;
        self.updates_some = false;
        self.rebuilds = bvh == BvhAction::Rebuilt;
        self.refits = bvh == BvhAction::Refitted;
        if bvh == BvhAction::None {
            // No stage runs.
            return;
        }
        self.changes.begin();
        let (mut bodies_changed, mut segments_changed) = (Changed::default(), Changed::default());
        for b in 0..self.bodies.len() {
            let keep = match bvh {
                BvhAction::Rebuilt => !self.changes.stale()[b],
                _ => !self.changes.moved[b],
            };
            self.any |= keep;
            if !keep && matches!(bvh, BvhAction::Rebuilt | BvhAction::Refitted) {
                self.updates_some = true;
                // A rebuilt tree is an LBVH again (a refitted one keeps its shape), with other
                // leaves than a tree being built over the last one's; a refit keeps the leaves.
                if bvh == BvhAction::Rebuilt {
                    self.sah[b] = false;
                    self.pending[b].cancel();
                }
            }
            let flags = (self.bodies[b].flags & !BODY_KEEP) | if keep { BODY_KEEP } else { 0 };
            if flags != self.bodies[b].flags {
                self.bodies[b].flags = flags;
                bodies_changed.add(b);
            }
            let count = if keep { 0 } else { self.bodies[b].tri_count };
            if bvh == BvhAction::Rebuilt && count != self.segments[b].count {
                self.segments[b].count = count;
                segments_changed.add(b);
            }
        }
        bodies_changed.write(queue, bufs.get(B::Bodies), &self.bodies);
        segments_changed.write(queue, bufs.get(B::Segments), &self.segments);
    }

    /// Whether the frame that [`Self::begin_frame`] began keeps some body.
    pub fn any(&self) -> bool {
        self.any
    }

    /// Passes of the sort of the rebuild that [`Self::begin_frame`] began: those of the bodies
    /// it sorts (`layout::sort_passes`; a kept body's segment is empty, so a kept large body
    /// leaves the others' short or tiny keys to fewer passes).
    pub fn sort_passes(&self) -> u32 {
        sort_passes(self.segments.iter().filter(|s| s.count > 0))
    }

    /// Whether packed body `b` is kept by the frame that [`Self::begin_frame`] began.
    pub fn is_kept(&self, b: usize) -> bool {
        self.any && self.bodies.get(b).is_some_and(|body| body.flags & BODY_KEEP != 0)
    }

    /// The bodies newly at rest: kept by the rebuild or refit that [`Self::begin_frame`] began
    /// while it updates some other body's tree (the scene moves on around them, as the CPU
    /// backend's `wide_update::Motion::Resting`), their trees still LBVHs rebuilt at their
    /// positions (not refitted since: so the tree's leaves are the body's non-degenerate
    /// triangles).
    pub fn newly_at_rest(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.sah.len()).filter(move |&b| self.rests(b) && !self.sah[b] && !self.pending[b].is_pending())
    }

    /// Whether packed body `b` rests in the frame that [`Self::begin_frame`] began: kept by a
    /// rebuild or refit that updates some other body's tree, its own an LBVH made at its
    /// positions or a tree written over one.
    fn rests(&self, b: usize) -> bool {
        self.updates_some && self.any && self.is_kept(b) && !self.changes.stale()[b]
    }

    /// Starts `build`, the binned-SAH tree over packed body `b`'s LBVH's leaves, in the
    /// background, to come through [`Self::built`]: newly at rest, or (`refit`) rebuilt by the
    /// frame that [`Self::begin_frame`] began, under a refitting policy: handed to the trees'
    /// thread now, or by a later frame's [`Self::built`] when too many builds wait for it
    /// ([`PendingTree::start`]).
    pub fn building(&mut self, b: usize, build: impl FnOnce() -> HostTree + Send + 'static, refit: bool) {
        let purpose = if refit { Purpose::Refit } else { Purpose::Rest };
        self.pending[b].start(build, purpose);
    }

    /// The trees built in the background that are done, for the bodies that rest in the frame
    /// that [`Self::begin_frame`] began, or that it refits or keeps while it refits (the tree's
    /// leaves are the body's LBVH's: a refit keeps them). The tree's boxes are those of the
    /// positions it was built from: exact for a body that rests (its LBVH was rebuilt at its
    /// positions, which did not change since), made so by the frame's `fit` for a body it
    /// refits, and to be made so on the host for one it keeps after a refit has moved its boxes
    /// since ([`BuiltTree::host_fit`]). A body that was rebuilt since its tree was started had
    /// it dropped then; any other (kept by a rebuild without resting, or by an iterative pass
    /// that needs no tree) keeps its tree for a later frame. A build that failed (its task
    /// panicked) is dropped: the body can be newly at rest again.
    pub fn built(&mut self) -> Vec<BuiltTree> {
        let mut done = Vec::new();
        for b in 0..self.pending.len() {
            let rests = self.rests(b);
            if !(rests || self.refits) {
                continue;
            }
            if let Some(built) = self.pending[b].take_done() {
                let (refit, host_fit) = (built.purpose == Purpose::Refit, !rests && self.is_kept(b));
                done.push(BuiltTree { body: b, tree: built.tree, refit, host_fit });
            }
        }
        done
    }

    /// The bodies whose trees the rebuild that [`Self::begin_frame`] began rebuilds (none when
    /// it began no rebuild).
    pub fn rebuilt(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.sah.len()).filter(move |&b| self.rebuilds && !self.is_kept(b))
    }

    /// Packed body `b`'s tree is now a binned-SAH tree over its LBVH's leaves.
    pub fn rest(&mut self, b: usize) {
        self.sah[b] = true;
    }

    /// Per packed body, whether its tree is a binned-SAH tree written over its LBVH.
    pub fn sah_trees(&self) -> &[bool] {
        &self.sah
    }

    /// The frame's trees were updated as `bvh` says.
    pub fn end_frame(&mut self, bvh: BvhAction) {
        match bvh {
            BvhAction::Rebuilt => self.changes.rebuilt(),
            BvhAction::Refitted => self.changes.refitted(),
            _ => {}
        }
    }
}

/// A binary tree built on the host for a body: its nodes (body-local), their parents and its
/// fan words (empty unless the body has them).
pub(crate) type HostTree = (Vec<Node>, Vec<u32>, Vec<u32>);

/// A tree built in the background, done, for a frame to write ([`Kept::built`]).
pub(crate) struct BuiltTree {
    /// The packed body.
    pub body: usize,
    /// The tree, with the boxes of the positions it was built from.
    pub tree: HostTree,
    /// Started for a body that a rebuild under a refitting policy rebuilt (else at rest).
    pub refit: bool,
    /// The body is kept by the frame, its boxes refitted since the tree's positions: the tree's
    /// boxes are to be refitted to the body's positions on the host before it is written (the
    /// frame's `fit` leaves the body).
    pub host_fit: bool,
}

/// The range of records from the first changed to the last.
#[derive(Default)]
struct Changed(Option<(usize, usize)>);

impl Changed {
    /// Record `i` changed (the records come in increasing order).
    fn add(&mut self, i: usize) {
        self.0 = Some(self.0.map_or((i, i + 1), |(lo, _)| (lo, i + 1)));
    }

    /// Writes the changed range of `records` (the buffer's contents) into `buffer`.
    fn write<T: bytemuck::Pod>(&self, queue: &wgpu::Queue, buffer: &wgpu::Buffer, records: &[T]) {
        if let Some((lo, hi)) = self.0 {
            queue.write_buffer(buffer, (lo * size_of::<T>()) as u64, bytemuck::cast_slice(&records[lo..hi]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_memo_words_emptied_are_the_moved_bodies_in_runs_once() {
        let body =
            |vertex_offset, vertex_count| BodyGpu { vertex_offset, vertex_count, ..BodyGpu::default() };
        let packing = Packing {
            bodies: vec![body(0, 10), body(10, 5), body(15, 0), body(15, 7), body(22, 3)],
            ..Packing::default()
        };
        let mut kept = Kept::default();
        kept.packed(&packing);
        let runs = |kept: &mut Kept| {
            let mut runs = Vec::new();
            kept.take_stale_exits(|first, count| runs.push((first, count)));
            runs
        };
        assert_eq!(runs(&mut kept), [(0, 25)], "a new packing: every vertex, in one run");
        assert_eq!(runs(&mut kept), [], "nothing moved since");
        kept.moved(0);
        kept.moved(3);
        kept.moved(4);
        kept.moved(9);
        assert_eq!(runs(&mut kept), [(0, 10), (15, 10)], "bodies 3 and 4 together, past the empty body 2");
        kept.moved(1);
        kept.moved(2);
        assert_eq!(runs(&mut kept), [(10, 5)]);
        assert_eq!(runs(&mut kept), []);
    }
}
