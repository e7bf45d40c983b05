//! Iterative ray casts (Lehericey et al. 2013, IRTCD): a ray starts on the triangle it hit in
//! the previous frame and walks the triangle adjacency ([`crate::internals::adjacency`]) towards where it
//! now crosses the surface, instead of traversing the BVH.
//!
//! # The walk
//!
//! On the current triangle the watertight ray–triangle test (`intersect_triangle` of
//! `shaders/shared/ray.wgsl`) gives the edge functions of the ray's *line* (scaled barycentric
//! weights, whatever `t`):
//!
//! - all weights `>= 0` (the line crosses the triangle): a hit when `t` is in
//!   `[tmin, tmax]` ([`WalkOutcome::Hit`]), else the walk stops ([`WalkOutcome::Range`]: the paper's "ray
//!   behind triangle", also used beyond `tmax`);
//! - a weight `< 0`: the walk crosses the edge opposite that vertex, testing the weights in the
//!   order of the paper's Algorithm 2 (`u < 0`: weight of the second vertex, edge 1; `v < 0`:
//!   weight of the third vertex, edge 2; `u + v > 1`: weight of the first vertex, edge 0);
//! - the ray parallel to the triangle's plane (zero determinant): the walk stops
//!   ([`WalkOutcome::Parallel`]).
//!
//! Crossing a [`BOUNDARY`](crate::layout::BOUNDARY) or
//! [`NON_MANIFOLD`](crate::layout::NON_MANIFOLD) edge ends the walk ([`WalkOutcome::Boundary`]).
//!
//! **Loop rule.** The edge choice depends only on the ray and the triangle, so a walk that
//! enters a triangle it visited before would cycle forever. The walk remembers the last
//! [`WALK_HISTORY`](crate::layout::WALK_HISTORY) triangles it visited (the current one included) and stops with
//! [`WalkOutcome::Loop`] instead of entering one of them; a ping-pong across one edge (a ray trapped
//! in a concavity, the paper's Figure 3) is caught at the first return. Longer cycles run out of
//! steps: a walk crosses at most `max_steps` edges ([`WalkOutcome::Steps`]; Eq. 1 gives `max_steps`,
//! see [`max_steps`]). Checks in this order: boundary, loop, steps.
//!
//! A walk finds *a* triangle the ray hits, connected to the start: when the ray crosses the
//! surface more than once it need not be the closest one (for small displacements it is the
//! one the BVH finds). A hit exactly on an edge or vertex is the first incident triangle the
//! walk reaches, where the BVH picks the lowest index among them.
//!
//! # Fallback
//!
//! With [`WalkFallback::Bvh`] (the default) a ray whose walk did not hit is cast through the
//! body's BVH (`closest_hit`) in the same dispatch, and [`WalkHit::bvh`] says so; with
//! [`WalkFallback::Drop`] it is left a miss until the next full pass, as in the paper. The
//! outcome is recorded either way and [`WalkCounts`] counts each.

use crate::error::{Error, Result};
use crate::layout::{
    MAX_WALK_STEPS, WALK_BOUNDARY, WALK_FALLBACK_BVH, WALK_FALLBACK_DROP, WALK_HIT, WALK_LOOP, WALK_NO_START,
    WALK_PARALLEL, WALK_RANGE, WALK_STEPS,
};
use crate::layout::{WalkCounts, WalkHit};

/// How a walk ended: the host-side type of [`WalkHit::outcome`] (a `u32` code on the GPU; the
/// slots of [`WalkCounts::outcomes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WalkOutcome {
    /// The walk reached a triangle the ray hits within `[tmin, tmax]`.
    Hit,
    /// The edge to cross is a boundary or non-manifold edge.
    Boundary,
    /// The next triangle is one of the last few visited: the walk would cycle.
    Loop,
    /// The walk would have to cross more than `max_steps` edges.
    Steps,
    /// The ray's line crosses the current triangle behind `tmin` or beyond `tmax` (the paper's
    /// "ray behind triangle"): a miss.
    Range,
    /// The ray is parallel to the current triangle's plane (or the triangle is degenerate).
    Parallel,
    /// The ray had no start triangle.
    NoStart,
}

impl WalkOutcome {
    /// Every outcome, in code order.
    pub const ALL: [WalkOutcome; 7] = [
        WalkOutcome::Hit,
        WalkOutcome::Boundary,
        WalkOutcome::Loop,
        WalkOutcome::Steps,
        WalkOutcome::Range,
        WalkOutcome::Parallel,
        WalkOutcome::NoStart,
    ];

    /// The kernels' code of this outcome.
    pub fn code(self) -> u32 {
        match self {
            WalkOutcome::Hit => WALK_HIT,
            WalkOutcome::Boundary => WALK_BOUNDARY,
            WalkOutcome::Loop => WALK_LOOP,
            WalkOutcome::Steps => WALK_STEPS,
            WalkOutcome::Range => WALK_RANGE,
            WalkOutcome::Parallel => WALK_PARALLEL,
            WalkOutcome::NoStart => WALK_NO_START,
        }
    }

    /// The outcome of a kernel's code (`None` for a code no walk writes).
    pub fn from_code(code: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.code() == code)
    }

    /// A short lower-case name (`"hit"`, `"no-start"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WalkOutcome::Hit => "hit",
            WalkOutcome::Boundary => "boundary",
            WalkOutcome::Loop => "loop",
            WalkOutcome::Steps => "steps",
            WalkOutcome::Range => "range",
            WalkOutcome::Parallel => "parallel",
            WalkOutcome::NoStart => "no-start",
        }
    }
}

impl WalkHit {
    /// How the walk ended, as a [`WalkOutcome`].
    pub fn walk_outcome(&self) -> Option<WalkOutcome> {
        WalkOutcome::from_code(self.outcome)
    }
}

impl WalkCounts {
    /// Walks that ended with `outcome`.
    pub fn count(&self, outcome: WalkOutcome) -> u32 {
        self.outcomes[outcome.code() as usize]
    }
}

/// What happens to a ray whose walk does not hit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WalkFallback {
    /// Cast it through the BVH in the same dispatch.
    #[default]
    Bvh,
    /// Leave it a miss until the next full pass (Lehericey et al. 2013).
    Drop,
}

impl WalkFallback {
    /// The kernel's code ([`WALK_FALLBACK_BVH`] or [`WALK_FALLBACK_DROP`]).
    pub fn code(self) -> u32 {
        match self {
            WalkFallback::Bvh => WALK_FALLBACK_BVH,
            WalkFallback::Drop => WALK_FALLBACK_DROP,
        }
    }
}

/// Options of [`Scene::walk_rays`](crate::Scene::walk_rays).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WalkOptions {
    /// Most edges one walk crosses (`maxIt` of the paper, see [`max_steps`]); at most
    /// [`MAX_WALK_STEPS`].
    pub max_steps: u32,
    /// What happens to a ray whose walk does not hit.
    pub fallback: WalkFallback,
}

impl Default for WalkOptions {
    /// 16 steps, BVH fallback.
    fn default() -> Self {
        WalkOptions { max_steps: 16, fallback: WalkFallback::Bvh }
    }
}

impl WalkOptions {
    /// Options with `max_steps` from Eq. 1 ([`max_steps`]) and the BVH fallback.
    pub fn from_threshold(confidence: f32, displacement_threshold: f32, mean_size: f32) -> Result<Self> {
        Ok(WalkOptions {
            max_steps: max_steps(confidence, displacement_threshold, mean_size)?,
            ..Self::default()
        })
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.max_steps > MAX_WALK_STEPS {
            return Err(Error::InvalidInput {
                what: format!("walk max_steps {} is over the limit of {MAX_WALK_STEPS}", self.max_steps),
            });
        }
        Ok(())
    }
}

/// `maxIt` of Eq. 1 of Lehericey et al. 2013:
/// `ceil(confidence × displacement_threshold / mean_size)`, the edges a walk may cross, where
/// `displacement_threshold` bounds the displacement between two full passes and `mean_size` is
/// the mean triangle size ([`crate::internals::adjacency::mean_triangle_size`],
/// [`Scene::mean_triangle_size`](crate::Scene::mean_triangle_size)). The paper asks for a
/// confidence of at least 1. Clamped to [`MAX_WALK_STEPS`].
///
/// Errors: [`Error::InvalidInput`] for a non-finite or negative argument, or a zero
/// `mean_size`.
///
/// ```
/// assert_eq!(raycontact::walk::max_steps(2.0, 0.1, 0.05).unwrap(), 4);
/// ```
pub fn max_steps(confidence: f32, displacement_threshold: f32, mean_size: f32) -> Result<u32> {
    let ok = |x: f32| x.is_finite() && x >= 0.0;
    if !ok(confidence) || !ok(displacement_threshold) || !ok(mean_size) || mean_size == 0.0 {
        return Err(Error::InvalidInput {
            what: format!(
                "max_steps({confidence}, {displacement_threshold}, {mean_size}): arguments must be \
                 finite and >= 0, the mean size > 0"
            ),
        });
    }
    let it = (f64::from(confidence) * f64::from(displacement_threshold) / f64::from(mean_size)).ceil();
    Ok(it.min(f64::from(MAX_WALK_STEPS)) as u32)
}

/// Results of [`Scene::walk`](crate::Scene::walk): one [`WalkHit`] per ray and the counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WalkResult {
    /// Per ray, in order.
    pub hits: Vec<WalkHit>,
    /// Rays per outcome and fallback casts, as the kernel counted them.
    pub counts: WalkCounts,
}

/// Iterative detection (Lehericey et al. 2013, IRTCD) for [`Scene::detect`](crate::Scene::detect),
/// enabled with [`Scene::set_iterative`](crate::Scene::set_iterative).
///
/// A **full pass** rebuilds every BVH and casts every ray, as without this setting, and
/// remembers its contacts (each with the target triangle it hit and the source body's triangle
/// where its ray leaves that body). An **iterative pass** re-casts only the remembered rays: each
/// trace starts on last frame's triangle and walks the adjacency (at most
/// `ceil(confidence × displacement_threshold / mean triangle size)` edges, Eq. 1), the contact is
/// classified again by the same rules, and it is kept or dropped. Vertices that come into contact
/// during iterative passes are found at the next full pass.
///
/// The decision, per frame: a full pass when there is nothing remembered, the bodies or the pair
/// list changed, `full_pass_every` frames have passed since the last full pass, or a pair may have
/// moved by more than `displacement_threshold` since it (the rule of the paper's §3.3: for each
/// pair, the displacement bounds of its two bodies added — see
/// [`Scene::displacement`](crate::Scene::displacement); with [`Pairs::Overlapping`](crate::Pairs::Overlapping)
/// the two largest bounds of the scene, since any two bodies may pair up). Otherwise an iterative
/// pass. With [`WalkFallback::Bvh`] the iterative pass still rebuilds the BVHs (a walk that fails
/// is cast through them, as are the rays without a remembered triangle: a volumetric self pair's
/// second hit, an exit never found); with [`WalkFallback::Drop`] it computes only the vertex
/// normals and those rays are lost until the next full pass (the paper's behaviour).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Iterative {
    /// The largest displacement (scene units) of one pair since the last full pass for which
    /// walking is used (`displacementThreshold`).
    pub displacement_threshold: f32,
    /// `confidence` of Eq. 1 (at least 1): walks may cross
    /// `ceil(confidence × displacement_threshold / mean triangle size)` edges.
    pub confidence: f32,
    /// A full pass at least every this many detections (1: always), so that vertices that
    /// newly come into contact are found.
    pub full_pass_every: u32,
    /// What a walk that does not hit does.
    pub fallback: WalkFallback,
}

impl Iterative {
    /// Iterative detection for displacements up to `displacement_threshold`, with a confidence
    /// of 2, a full pass every 10 detections and the BVH fallback.
    ///
    /// ```
    /// let it = raycontact::walk::Iterative::new(0.05);
    /// assert_eq!((it.confidence, it.full_pass_every), (2.0, 10));
    /// ```
    pub fn new(displacement_threshold: f32) -> Self {
        Iterative {
            displacement_threshold,
            confidence: 2.0,
            full_pass_every: 10,
            fallback: WalkFallback::Bvh,
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let t = self.displacement_threshold;
        if !(t.is_finite() && t >= 0.0 && self.confidence.is_finite() && self.confidence >= 1.0) {
            return Err(Error::InvalidInput {
                what: format!(
                    "iterative detection: the displacement threshold ({t}) must be finite and >= 0 \
                     and the confidence ({}) finite and >= 1",
                    self.confidence
                ),
            });
        }
        if self.full_pass_every == 0 {
            return Err(Error::InvalidInput {
                what: "iterative detection: full_pass_every must be >= 1".into(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq1() {
        assert_eq!(max_steps(1.0, 1.0, 0.5).unwrap(), 2);
        assert_eq!(max_steps(1.5, 1.0, 0.5).unwrap(), 3);
        assert_eq!(max_steps(1.0, 0.0, 0.5).unwrap(), 0);
        assert_eq!(max_steps(1.0, 1.0e30, 1.0e-30).unwrap(), MAX_WALK_STEPS);
        assert!(max_steps(1.0, 1.0, 0.0).is_err());
        assert!(max_steps(f32::NAN, 1.0, 1.0).is_err());
        assert!(max_steps(1.0, -1.0, 1.0).is_err());
        assert!(WalkOptions { max_steps: MAX_WALK_STEPS + 1, ..Default::default() }.validate().is_err());
    }
}
