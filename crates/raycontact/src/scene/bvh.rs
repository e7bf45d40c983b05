//! The BVH update policy of a scene ([`BvhUpdate`]): the setting, what each frame asks of the
//! trees, and on the GPU backend the decision of `Auto`, taken on the host by the CPU twins of
//! the bounds and fit (and of the rebuild) run on a mirror of the GPU's trees, the same code as
//! the CPU backend's frame, so that both backends decide alike. As the GPU's frame, the mirror
//! brings up to date only the bodies that moved (and for a rebuild those whose trees are not
//! rebuilds at their positions), its other trees' measures kept: on the armadillo pair (one
//! body static) `gpu-auto`'s host work went from 3.21-3.22 ms to 1.73-2.01 so, then to
//! 1.45-1.58 (from 1.81-3.11) with the positions of the moved bodies alone copied and the body
//! boxes folded as the CPU backend's (`raycontact-bench --scene files`, alternated runs).

use std::time::Instant;

use glam::Vec3;

use super::Scene;
use crate::bvh_update::{BvhUpdate, Quality};
use crate::changes::Changes;
use crate::cpu_backend::{Follow, TreeWork};
use crate::error::{Error, Result};
use crate::frame::FrameData;
use crate::stats::{BvhAction, BvhStats};

/// A GPU scene's mirror of its trees for `Auto`'s measure: the binary trees the CPU twins build
/// from the same positions (bit for bit the GPU's), their costs at the last rebuild, the packed
/// positions, and which bodies moved since the mirror's last update (as the GPU's frame, it
/// leaves the others' trees: `gpu/kept.rs`).
#[derive(Debug, Default)]
pub(super) struct GpuMirror {
    frame: FrameData,
    quality: Quality,
    positions: Vec<Vec3>,
    changes: Changes,
}

impl Scene {
    /// Brings the mirror's packed positions up to date: the bodies marked moved since its last
    /// update (every body after a new packing, or into a new mirror).
    fn mirror_positions(&self, mirror: &mut GpuMirror, force: bool) {
        let (vertices, bodies) = (self.packing.params.vertex_count as usize, self.packing.bodies.len());
        let moved = &mirror.changes.moved;
        let all = force || mirror.positions.len() != vertices || moved.len() != bodies;
        if all {
            mirror.positions.clear();
        }
        for (b, (id, packed)) in self.packing.ids.iter().zip(&self.packing.bodies).enumerate() {
            if !all && !moved[b] {
                continue;
            }
            let body = self.body(*id).expect("packed bodies are live");
            if all {
                mirror.positions.extend_from_slice(&body.data.positions);
            } else {
                let at = packed.vertex_offset as usize;
                mirror.positions[at..at + body.data.positions.len()].copy_from_slice(&body.data.positions);
            }
        }
    }
}

impl GpuMirror {
    /// Packed body `b`'s positions were handed to the GPU: its tree is brought up to date at
    /// the mirror's next update.
    pub(super) fn mark_moved(&mut self, b: usize) {
        self.changes.mark(b);
    }
}

impl Scene {
    /// Sets how the BVHs follow the bodies from frame to frame ([`BvhUpdate::Rebuild`] by
    /// default; see [`BvhUpdate`]). Takes effect at the next frame. Errors:
    /// [`Error::InvalidInput`] for an `Auto` bound that is not finite and above 1.
    ///
    /// ```
    /// use raycontact::{BvhUpdate, Scene};
    /// let mut scene = Scene::new_cpu(Some(1)).unwrap();
    /// scene.set_bvh_update(BvhUpdate::auto()).unwrap();
    /// assert!(scene.set_bvh_update(BvhUpdate::Auto { max_degradation: 0.5 }).is_err());
    /// ```
    pub fn set_bvh_update(&mut self, policy: BvhUpdate) -> Result<()> {
        if let BvhUpdate::Auto { max_degradation: d } = policy {
            if !(d.is_finite() && d > 1.0) {
                return Err(Error::InvalidInput {
                    what: format!("BvhUpdate::Auto's max_degradation must be finite and above 1, not {d}"),
                });
            }
        }
        if policy != self.bvh_update {
            // A mirror follows the GPU's trees only while it runs every frame.
            self.gpu_mirror = None;
        }
        self.bvh_update = policy;
        Ok(())
    }

    /// On the CPU backend, whether the rays walk 4-wide trees collapsed from the binary BVH after
    /// each update (`true`, the default: about twice as fast) or the binary BVH itself, as the
    /// GPU kernels do (`false`: the kernels' CPU twins end to end, e.g. to compare a GPU adapter
    /// with the CPU running the same algorithm). The contacts are the same either way (the
    /// closest hit does not depend on the walk). No effect on the GPU backend.
    pub fn set_wide_bvh(&mut self, wide: bool) {
        if let crate::backend::Engine::Cpu(c) = &mut self.engine {
            c.set_wide_bvh(wide);
        }
    }

    /// How the BVHs follow the bodies ([`Scene::set_bvh_update`]).
    pub fn bvh_update(&self) -> BvhUpdate {
        self.bvh_update
    }

    /// What this frame asks of the trees: rebuilt after a new packing (`first`), brought up to
    /// date by the policy when the frame needs them (`bvh`), else kept, with the vertex normals
    /// computed when something reads them (`normals`: the intersection stages; an iterative
    /// pass's walk computes its sources' own); nothing when nothing changed since the last
    /// frame that brought them up to date (`fresh`: no position changed, no body added, removed or
    /// made static), whose normals, boxes and trees are this frame's.
    pub(super) fn tree_work(&self, first: bool, bvh: bool, normals: bool) -> TreeWork {
        if !first && self.fresh {
            TreeWork::Untouched
        } else if first || bvh {
            TreeWork::Update { policy: self.bvh_update, force: first }
        } else if normals {
            TreeWork::NormalsOnly
        } else {
            TreeWork::Untouched
        }
    }

    /// What the GPU frame does to its trees for `work`: `Auto` decides on the mirror (after
    /// bringing it up to date with the bodies' positions), the other policies by themselves.
    pub(super) fn gpu_tree_action(&mut self, work: TreeWork) -> BvhStats {
        let (policy, force) = match work {
            TreeWork::NormalsOnly | TreeWork::Untouched => {
                return BvhStats { action: BvhAction::Kept, ..BvhStats::default() };
            }
            TreeWork::Update { policy, force } => (policy, force),
        };
        let action = if force { BvhAction::Rebuilt } else { BvhAction::Refitted };
        match policy {
            BvhUpdate::Rebuild => BvhStats { action: BvhAction::Rebuilt, ..BvhStats::default() },
            BvhUpdate::Refit => BvhStats { action, ..BvhStats::default() },
            BvhUpdate::Auto { .. } => {
                let start = Instant::now();
                let mut mirror = self.gpu_mirror.take().unwrap_or_default();
                self.mirror_positions(&mut mirror, force);
                let m = &mut *mirror;
                let follow = Follow::Trees(&mut m.changes);
                let mut stats =
                    m.frame.update(&self.packing, &m.positions, work, &mut m.quality, follow, |_, _| {});
                stats.host_ns = Some(start.elapsed().as_nanos() as f64);
                self.gpu_mirror = Some(mirror);
                stats
            }
        }
    }
}
