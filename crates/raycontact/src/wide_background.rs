//! The CPU backend's binned-SAH wide trees built in the background
//! ([`Scene::set_background_trees`](crate::Scene::set_background_trees), on by default but on
//! the web), as the GPU scene builds its trees of the same bodies (`scene/rest_trees.rs`).
//!
//! A body's wide tree is collapsed from a binned-SAH tree over its LBVH's leaves
//! ([`WideTree::collapse_sah`]) when the body rests while others move, when it is static and its
//! tree is made anew, and at every rebuild under a refitting policy (`BvhUpdate::Refit`,
//! `Auto`): several LBVH builds' worth of work, which made those frames the slowest of a run
//! (the README has the figures). In the background, that frame collapses the body's LBVH instead
//! (a moved body's; a resting one keeps the tree it has, the LBVH's collapse at its positions),
//! copies the LBVH's leaves, the body's triangles and its positions, and starts the build on
//! the trees' thread (`crate::tree_thread`: one for every scene, off the frame's pool, at the
//! lowest priority on Linux); the
//! first frame that updates the trees after the build is done puts its tree in place
//! ([`WideTree::install`]), refitted to the body's positions when they changed since the copy.
//! A frame that rebuilds the body's LBVH drops the build (its leaves may no longer be the
//! tree's), and so does a static body's move (its tree is made for the positions it keeps). When
//! too many builds wait for the trees' thread (`tree_thread::MAX_WAITING_BUILDS`), a build waits
//! in its body (`crate::pending_tree`) until a later frame that updates the trees finds room:
//! under `Refit`, a body that could not start its build at a rebuild walks its LBVH's collapse
//! only until then, not until its next rebuild (which `Refit` may never make).
//!
//! Measured with a scratch program (two tori of 90k triangles, one twisting until `Auto`
//! rebuilds: 40 frames, two rebuilds; 4 runs of each setting, alternated, on the 2-core VM, the
//! scene's pool of 2 threads): the rebuild frame 45.7-65.8 ms with the builds in it, 24.5-35.0
//! in the background, the slowest frame of a run 49.8-65.8 against 33.0-44.9, the median refit
//! frame 15.2-18.4 against 16.4-19.1 (the bodies walk their LBVHs' collapses until the trees are
//! in place, several frames later). With the trees' thread at the default priority instead of
//! the lowest, the frames the builds overlapped slowed to 44-55 ms (three threads on two cores)
//! and the slowest frame was no better (70.9 and 62.5 against 69.4 and 64.0, 2 runs of each);
//! with the scene's pool of 1 thread (a core left to the builds), the rebuild frame 87.9-95.0 ms
//! in the frame against 39.8-71.2 in the background.
//!
//! Exact: any tree over the same leaves gives the same closest hit, and the tree put in place is
//! the one the frame that started it would have collapsed (the same leaves, taken in triangle
//! order), with the same records, refitted as that frame's tree would have been since: the
//! contacts do not depend on when a build is done. Only which boxes the rays enter does.

use glam::Vec3;

use crate::layout::BodyGpu;
use crate::pending_tree::{Done, Purpose, TreeEvent};
use crate::sah_tree::sah_tree_of_leaves;
use crate::stats::BvhStats;
use crate::wide_bvh::{BodyTree, WideBvh, WideTree};

impl WideTree {
    /// Starts the build of the wide tree that [`WideTree::collapse_sah`] makes of `tree_of` (the
    /// tree of packed body `body`) in the background, on copies of its LBVH's leaves, its
    /// triangles (their vertices made body-local) and its positions; the records' vertices are
    /// made packed again once collapsed.
    pub(crate) fn start_background(&mut self, tree_of: BodyTree<'_>, body: &BodyGpu, purpose: Purpose) {
        let n = tree_of.leaves as usize;
        let leaves = tree_of.binary[n.saturating_sub(1)..][..n].to_vec();
        let first = body.vertex_offset;
        let vertices = first as usize..(first + body.vertex_count) as usize;
        let positions = tree_of.positions[vertices].to_vec();
        let corners = 3 * body.tri_offset as usize..3 * (body.tri_offset + body.tri_count) as usize;
        let triangles: Vec<u32> = tree_of.triangles[corners].iter().map(|&v| v - first).collect();
        let build = move || {
            let mut sah = Vec::new();
            sah_tree_of_leaves(&leaves, &mut sah);
            let mut tree = WideTree::default();
            let local = BodyTree {
                binary: &[],
                leaves: n as u32,
                tri_offset: 0,
                triangles: &triangles,
                positions: &positions,
            };
            tree.collapse_sah_tree(sah, local);
            for r in &mut tree.tris {
                r.vertices = r.vertices.map(|v| v + first);
            }
            tree
        };
        self.pending.start(build, purpose);
    }

    /// Puts the tree of a build done in the background in place of this one (its scratch memory
    /// kept), refitted to `positions` when the body moved since the build's copy and `refit`
    /// (a caller that refits it next passes `false`).
    pub(crate) fn install(&mut self, done: Done<WideTree>, positions: &[Vec3], refit: bool) {
        let scratch = std::mem::take(&mut self.scratch);
        let mut pending = std::mem::take(&mut self.pending);
        *self = done.tree;
        self.scratch = scratch;
        pending.note(TreeEvent::Installed(done.purpose));
        self.pending = pending;
        if done.moved && refit {
            self.refit_sah(positions, true);
        }
    }
}

impl WideBvh {
    /// Adds to `stats` what this frame did about the bodies' binned-SAH trees (and forgets it):
    /// [`BvhStats::rest_trees`] the trees of bodies at rest or static collapsed from one in the
    /// frame (built there, or in the background and put in place), [`BvhStats::refit_trees`]
    /// those of bodies a refitting policy rebuilt, built in the frame or started in the
    /// background, [`BvhStats::refit_trees_written`] those put in place.
    pub(crate) fn count_trees(&mut self, stats: &mut BvhStats) {
        for tree in &mut self.trees {
            match tree.pending.event() {
                TreeEvent::Built(Purpose::Rest) | TreeEvent::Installed(Purpose::Rest) => {
                    stats.rest_trees += 1
                }
                TreeEvent::Built(Purpose::Refit) | TreeEvent::Started(Purpose::Refit) => {
                    stats.refit_trees += 1
                }
                TreeEvent::Installed(Purpose::Refit) => stats.refit_trees_written += 1,
                TreeEvent::None | TreeEvent::Started(Purpose::Rest) => {}
            }
        }
    }
}
