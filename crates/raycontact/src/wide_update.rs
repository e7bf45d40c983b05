//! How a frame makes each body's 4-wide tree (`crate::wide_bvh`), from the body's motion since
//! its tree was made ([`Motion`]) and the scene's policy: kept, collapsed from its LBVH, or
//! collapsed from a binned-SAH tree over the LBVH's leaves, built in the frame or in the
//! background (`crate::wide_background`). [`WideTree::build`] makes one body's tree (the CPU
//! backend's rebuild hands it each tree as it is built), [`WideBvh::build`] every body's, and
//! [`WideBvh::refit`] brings them to a refit frame's positions.

use glam::Vec3;
use rayon::prelude::*;

use crate::layout::{BODY_STATIC, BodyState, Node};
use crate::packing::{Packing, has_moved};
use crate::pending_tree::{Done, Purpose, TreeEvent};
use crate::wide_bvh::{BodyTree, WideBvh, WideTree, used_nodes};
use crate::wide_direct::SortedLeaves;

/// How [`WideTree::build`] makes a body's tree in a frame.
#[derive(Clone, Copy, Debug)]
pub struct Building {
    /// How the body's positions changed since its tree was made.
    pub motion: Motion,
    /// The scene's policy refits the trees in the frames to come.
    pub refitted: bool,
    /// [`WideTree::collapse_lbvh`]'s, for a collapse from the LBVH.
    pub alone: bool,
    /// The frame rebuilt the body's LBVH.
    pub rebuilt: bool,
    /// Binned-SAH trees are built in the background
    /// ([`Scene::set_background_trees`](crate::Scene::set_background_trees)).
    pub background: bool,
}

impl Building {
    /// Why a body of `flags` gets a binned-SAH tree in this frame.
    fn purpose(&self, flags: u32) -> Purpose {
        if self.motion == Motion::Moved && self.refitted && flags & BODY_STATIC == 0 {
            Purpose::Refit
        } else {
            Purpose::Rest
        }
    }
}

/// What [`WideTree::build`] does with a body's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Making {
    /// Keeps it.
    Kept,
    /// Collapses a new binned-SAH tree.
    Sah,
    /// Collapses the body's LBVH.
    Lbvh,
}

/// How a body's positions changed since its wide tree was made, at a build
/// ([`WideTree::build`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// They changed (or the body has no tree yet).
    Moved,
    /// They did not, while other bodies' did: the body rests as the scene moves on.
    Resting,
    /// Nothing in the scene changed since the trees' last update: a detection after an update,
    /// or a second detection, in the same frame.
    Unchanged,
}

impl Motion {
    /// Packed body `b`'s motion, from the bodies that `moved` since the trees' last update (a
    /// body past its end, so every body of an empty `moved`, counts as moved), `any` whether
    /// some body did ([`Self::any`]), and `built` whether every body has a tree.
    pub fn of(built: bool, moved: &[bool], any: bool, b: usize) -> Motion {
        if !built || has_moved(moved, b) {
            Motion::Moved
        } else if any {
            Motion::Resting
        } else {
            Motion::Unchanged
        }
    }

    /// Whether a body of `moved` (as [`Self::of`] reads it) moved.
    pub fn any(moved: &[bool]) -> bool {
        moved.is_empty() || moved.contains(&true)
    }
}

impl WideTree {
    /// Packed body `b`'s part of [`WideBvh::build`], from its fitted binary tree `lbvh` (its used
    /// nodes), as [`Building::motion`] says: kept when [`Motion::Unchanged`], or
    /// [`Motion::Resting`] and already collapsed from a binned-SAH tree; collapsed from a
    /// binned-SAH tree when resting, static or [`Building::refitted`] (the scene's policy
    /// refits the trees in the frames to come: the tree is made once for many frames, as a
    /// static body's), else collapsed from `lbvh`.
    ///
    /// Why not when nothing moved: the bodies may all move at the next update, and the
    /// binned-SAH build costs several LBVH builds. A scene that calls
    /// [`Scene::update`](crate::Scene::update) (for ray queries, say) and then
    /// [`Scene::detect`](crate::Scene::detect) in the same frame finds every body still at the
    /// detection: when that made the binned-SAH tree, it made one for every moving body every
    /// frame (`cargo bench -p raycontact-benches --bench cpu_bvh -- frame-`, two tori of 12.8k
    /// triangles on one thread: 9.58 ms such a frame, against 3.18 ms for the detection alone;
    /// 3.10-3.30 ms with the update's trees kept). A scene none of whose bodies ever moves keeps
    /// the trees collapsed from their LBVHs (but its static bodies').
    ///
    /// Why for `refitted`: the rays walk fewer nodes in a binned-SAH tree than in the LBVH,
    /// and a refit keeps the tree's shape. Measured with the binned-SAH tree made at every
    /// rebuild (`raycontact-bench --cpu --no-parry --implementations cpu-1`, one build each way,
    /// the ray stage): `cloth-layers` 75.3 / 79.6 -> 65.8 / 66.0 ms, `resting-pile` 11.7 -> 9.8,
    /// `mesh-scaling` 159k 12.5 -> 11.3, the armadillo pair (its static body's tree a binned-SAH
    /// one already) 39.9 -> 36.7; but the binned-SAH build took 24 ms more a frame on
    /// `cloth-layers` (hierarchy stage 5.4 -> 29.5 ms), so a rebuild every frame keeps the LBVH.
    /// Still so with the binned-SAH build in two passes a range (`sah_tree.rs`), 3 runs
    /// alternated: `cloth-layers` hierarchy 3.5 / 3.3 / 3.5 -> 21.2 / 17.0 / 21.7 ms against rays
    /// 72.4 / 75.5 / 69.4 -> 64.6 / 61.3 / 64.8 (`cpu-rayon`'s frame 41.9 / 37.8 / 46.1 -> 52.2 /
    /// 52.8 / 49.6), and `resting-pile` and `eight-sheets` lose too.
    ///
    /// With [`Building::background`], a binned-SAH tree is built in the background instead
    /// (`crate::wide_background`): the body keeps its tree meanwhile, or gets its LBVH's
    /// collapse when [`Building::rebuilt`] rebuilt the LBVH (which also drops a build started
    /// before); a build done by now is put in place first, whatever the setting.
    pub fn build(
        &mut self,
        packing: &Packing,
        b: usize,
        body_state: &[BodyState],
        lbvh: &[Node],
        positions: &[Vec3],
        how: Building,
    ) {
        let tree_of = BodyTree::new(packing, b, lbvh, body_state[b].leaf_count, positions);
        let body = &packing.bodies[b];
        let done = self.pending_after(how);
        let making = self.making(body.flags, how.motion, how.refitted);
        match (making, done) {
            (Making::Lbvh, _) => self.collapse_lbvh(tree_of, how.alone),
            (Making::Kept | Making::Sah, Some(done)) => self.install(done, positions, true),
            (Making::Kept, None) => {
                // A tree collapsed from the LBVH that the frame rebuilt is collapsed again.
                if how.rebuilt && self.sah.is_empty() && !self.nodes.is_empty() {
                    self.collapse_lbvh(tree_of, how.alone);
                }
            }
            (Making::Sah, None) => {
                let purpose = how.purpose(body.flags);
                if !how.background || tree_of.leaves < 2 {
                    self.pending.cancel();
                    self.collapse_sah(tree_of);
                    self.pending.note(TreeEvent::Built(purpose));
                } else if !self.pending.is_pending() {
                    // A resting body whose LBVH was not rebuilt has that LBVH's collapse.
                    if how.rebuilt || self.nodes.is_empty() {
                        self.collapse_lbvh(tree_of, how.alone);
                    }
                    self.start_background(tree_of, body, purpose);
                }
            }
        }
    }

    /// Whether [`Self::build`] would collapse the LBVH of `leaves` leaves of a body of `flags`
    /// (as `how` says): then the rebuild builds no LBVH for it and
    /// [`Self::build_from_keys_in_frame`] builds this tree from the sorted keys instead, the
    /// LBVH being built when something reads it (`cpu_backend/lag.rs`). Not where the scene's
    /// policy refits the trees (a refit reads the LBVH, and makes binned-SAH trees).
    pub(crate) fn built_from_keys(&self, flags: u32, leaves: u32, how: Building) -> bool {
        !how.refitted
            && how.rebuilt
            && leaves >= 2
            && self.making(flags, how.motion, how.refitted) == Making::Lbvh
    }

    /// [`Self::build`] of a body that [`Self::built_from_keys`] marks, from its sorted `leaves`
    /// (`crate::wide_direct`) instead of its LBVH: the same pending binned-SAH tree dropped,
    /// another tree over the same leaves; on every thread for a large body alone in its build
    /// ([`WideTree::builds_from_keys_in_parallel`]). Returns the root's box
    /// (the LBVH's root's, for the wide walks' first test).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build_from_keys_in_frame(
        &mut self,
        packing: &Packing,
        b: usize,
        body_state: &[BodyState],
        leaves: SortedLeaves<'_>,
        positions: &[Vec3],
        how: Building,
    ) -> Option<(Vec3, Vec3)> {
        // A binned-SAH tree done by now is dropped, as `build` drops it for an LBVH's collapse.
        let _ = self.pending_after(how);
        let count = body_state[b].leaf_count;
        let body = BodyTree::new(packing, b, &[], count, positions);
        if WideTree::builds_from_keys_in_parallel(count, how.alone) {
            self.build_from_keys_parallel(leaves, body)
        } else {
            self.build_from_keys(leaves, body)
        }
    }

    /// The background binned-SAH build after a frame that `how` describes: the one started
    /// before dropped where the frame rebuilt the LBVH, told of the body's move, and taken
    /// when done.
    fn pending_after(&mut self, how: Building) -> Option<Done<WideTree>> {
        if how.rebuilt {
            self.pending.cancel();
        }
        if how.motion == Motion::Moved {
            self.pending.moved();
        }
        self.pending.take_done()
    }

    /// What [`Self::build`] makes of the tree of a body of `flags` (`motion` and `refitted` as
    /// [`Building`]'s), with the binned-SAH trees built in the frame.
    pub(crate) fn making(&self, flags: u32, motion: Motion, refitted: bool) -> Making {
        match motion {
            Motion::Unchanged => Making::Kept,
            Motion::Resting if !self.sah.is_empty() => Making::Kept,
            Motion::Resting => Making::Sah,
            Motion::Moved if refitted || flags & BODY_STATIC != 0 => Making::Sah,
            Motion::Moved => Making::Lbvh,
        }
    }

    /// Refits the tree to `positions`: on its own nodes when collapsed from a binned-SAH tree
    /// ([`Self::refit_sah`], with its `split`), else from the refitted `lbvh` it was collapsed
    /// from ([`Self::refit`], [`Self::refill`]).
    fn refit_lanes(&mut self, lbvh: &[Node], positions: &[Vec3], split: bool) {
        if self.sah.is_empty() {
            self.refit(lbvh);
            self.refill(positions);
        } else {
            self.refit_sah(positions, split);
        }
    }
}

impl WideBvh {
    /// Collapses every body's fitted binary tree (`nodes` in the packed layout) and fills its
    /// triangle records from `positions`, in parallel over the bodies, but for the bodies that
    /// `moved` marks false (their positions did not change since their tree was made; a body
    /// past its end counts as moved), when every body has a tree: those are kept, collapsed the
    /// first time from a binned-SAH tree ([`WideTree::collapse_sah`]) when some body moved
    /// ([`Motion`]), as is a static body's new tree.
    pub fn build(
        &mut self,
        packing: &Packing,
        body_state: &[BodyState],
        nodes: &[Node],
        positions: &[Vec3],
        moved: &[bool],
    ) {
        if self.off {
            self.trees.clear();
            return;
        }
        let built = self.prepare(packing.bodies.len());
        let any = Motion::any(moved);
        let motion = |b: usize| Motion::of(built, moved, any, b);
        let alone = self.splits_collapse(packing, body_state, motion, false);
        self.trees.par_iter_mut().enumerate().for_each(|(b, tree)| {
            let lbvh =
                &nodes[packing.bodies[b].node_offset as usize..][..used_nodes(body_state[b].leaf_count)];
            let how = Building {
                motion: motion(b),
                refitted: false,
                alone,
                rebuilt: has_moved(moved, b),
                background: false,
            };
            tree.build(packing, b, body_state, lbvh, positions, how);
        });
    }

    /// One tree per packed body before a build ([`WideTree::build`] on each): whether every
    /// body had one (else the trees are all new, and none is `still`).
    pub fn prepare(&mut self, bodies: usize) -> bool {
        let built = self.trees.len() == bodies;
        self.trees.resize_with(bodies, WideTree::default);
        built
    }

    /// Brings every body's wide tree (built by [`Self::build`]) to the refitted binary trees:
    /// the boxes and this frame's corners copied into the lanes, on the same topology; but the
    /// bodies that `moved` marks false are kept (as [`Self::build`] keeps them), and a tree
    /// collapsed from a binned-SAH tree whose body moved is refitted on its own nodes from this
    /// frame's `positions` ([`WideTree::refit_sah`]; each large one split into subtrees refitted
    /// in parallel when there are fewer of them than threads, so that a single large body uses
    /// every core, and two large bodies on two threads are not split for nothing), or collapsed
    /// from a new binned-SAH tree when the body is static (its tree is made for the positions it
    /// keeps).
    pub fn refit(
        &mut self,
        packing: &Packing,
        body_state: &[BodyState],
        nodes: &[Node],
        positions: &[Vec3],
        moved: &[bool],
    ) {
        if self.off || self.trees.len() != packing.bodies.len() {
            // Off, or no trees to refit (e.g. just turned on): built from the refitted binary
            // trees instead.
            return self.build(packing, body_state, nodes, positions, &[]);
        }
        let refits_sah = |b: usize, tree: &WideTree| {
            has_moved(moved, b) && packing.bodies[b].flags & BODY_STATIC == 0 && !tree.sah.is_empty()
        };
        let large = self.trees.iter().enumerate().filter(|&(b, t)| refits_sah(b, t) && t.refit_plan.splits());
        let split = large.count() < rayon::current_num_threads();
        let background = self.background;
        self.trees.par_iter_mut().enumerate().for_each(|(b, tree)| {
            let (body, leaves) = (&packing.bodies[b], body_state[b].leaf_count);
            let lbvh = &nodes[body.node_offset as usize..][..used_nodes(leaves)];
            let tree_of = BodyTree::new(packing, b, lbvh, leaves, positions);
            let still = !has_moved(moved, b);
            let fixed = body.flags & BODY_STATIC != 0;
            if !still {
                tree.pending.moved();
                if fixed {
                    // A static body's tree is made for the positions it keeps.
                    tree.pending.cancel();
                }
            }
            // A build done in the background first (refitted below when the body moved).
            if let Some(done) = tree.pending.take_done() {
                tree.install(done, positions, still);
            }
            if still && !tree.sah.is_empty() {
                // Kept as it is.
            } else if (still || fixed) && (!background || leaves < 2) {
                tree.pending.cancel();
                tree.collapse_sah(tree_of);
                tree.pending.note(TreeEvent::Built(Purpose::Rest));
            } else if still || fixed {
                // In the background: meanwhile a static body's tree follows it.
                if !still {
                    tree.refit_lanes(lbvh, positions, split);
                }
                if !tree.pending.is_pending() {
                    tree.start_background(tree_of, body, Purpose::Rest);
                }
            } else {
                // Moved, not static: refitted on its own nodes or from its refitted LBVH.
                tree.refit_lanes(lbvh, positions, split);
            }
        });
    }
}
