//! The scene's settings of the intersection stages ([`crate::IntersectionMode`]): which run, and
//! how many crossings a detection may store.

use super::Scene;
use crate::intersection::IntersectionMode;
use crate::plan::IntersectPlan;

impl Scene {
    /// Sets which intersection stages every detection runs after the vertex rays:
    /// [`IntersectionMode::Off`] (the default), [`IntersectionMode::Crossings`] (edge–triangle
    /// crossings and their contacts), or [`IntersectionMode::Full`] (also the contour, global
    /// intersection analysis and untangling contacts). They run on the pairs the detection
    /// tests, in every detection that rebuilds the BVHs (a full pass, or an iterative pass with
    /// the BVH fallback), in the same submission; their results are
    /// [`Contacts::intersections`](crate::Contacts::intersections), their contacts are among
    /// [`Contacts::contacts`](crate::Contacts::contacts) (flagged
    /// [`ContactFlags::EDGE`](crate::ContactFlags::EDGE) and
    /// [`ContactFlags::UNTANGLE`](crate::ContactFlags::UNTANGLE)).
    ///
    /// ```
    /// use raycontact::{IntersectionMode, Scene};
    /// let mut scene = Scene::new_cpu(Some(1)).unwrap();
    /// assert_eq!(scene.intersections(), IntersectionMode::Off);
    /// scene.set_intersections(IntersectionMode::Full);
    /// assert_eq!(scene.intersections(), IntersectionMode::Full);
    /// ```
    pub fn set_intersections(&mut self, mode: IntersectionMode) {
        self.intersections = mode;
    }

    /// Which intersection stages a detection runs.
    pub fn intersections(&self) -> IntersectionMode {
        self.intersections
    }

    /// Sets how many edge–triangle crossings one detection may store (65536 by default). Past
    /// it the scene's [`OverflowPolicy`](crate::OverflowPolicy) applies, as for contacts:
    /// [`OverflowPolicy::Grow`](crate::OverflowPolicy::Grow) raises it (to twice the number
    /// needed, plus 256) and runs the detection again;
    /// [`OverflowPolicy::Error`](crate::OverflowPolicy::Error) returns
    /// [`Error::CrossingOverflow`](crate::Error::CrossingOverflow). Under `Grow` a detection that
    /// fills more than three quarters of it also raises it, to twice what it found (plus 256),
    /// for the next detection, as the contact capacity
    /// ([`Scene::set_contact_capacity`](crate::Scene::set_contact_capacity)).
    pub fn set_crossing_capacity(&mut self, crossings: u64) {
        self.crossing_capacity = crossings.max(1);
    }

    /// The crossing capacity: as set, or as the last [`OverflowPolicy::Grow`](crate::OverflowPolicy::Grow) raised it.
    pub fn crossing_capacity(&self) -> u64 {
        self.crossing_capacity
    }

    /// The GPU buffers the intersection stages of the last detection left their results in,
    /// for a GPU consumer (`None` on the CPU backend, or before they first ran).
    pub fn intersection_buffers(&self) -> Option<crate::IntersectionBuffers<'_>> {
        match &self.engine {
            crate::backend::Engine::Gpu(g) => g.intersection_buffers(),
            crate::backend::Engine::Cpu(_) => None,
        }
    }

    /// The intersection stages of a detection that rebuilds the BVHs (`rebuild`), or none.
    pub(super) fn intersect_plan(&self, rebuild: bool) -> IntersectPlan {
        IntersectPlan {
            mode: if rebuild { self.intersections.code() } else { 0 },
            crossing_capacity: self.crossing_capacity,
        }
    }
}
