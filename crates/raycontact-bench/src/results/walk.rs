//! Iterative detection's figures: how a walking implementation's contacts differ from its full
//! traversal's, frame by frame.

use raycontact::{Iterative, WalkCounts};

use super::keys::Key;
use crate::scenes::WalkSetup;
use crate::stats::SetDiff;

/// How a walking implementation's contacts of one frame differ from its full traversal's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkDiff {
    /// Contacts of the full traversal.
    pub full: usize,
    /// Contacts of the walking implementation that the full traversal lacks.
    pub extra: usize,
    /// Contacts of both, but on another triangle.
    pub other_triangle: usize,
    /// Contacts of the full traversal that the walking implementation lacks.
    pub missing: usize,
}

impl WalkDiff {
    /// Compares a walking frame with the full traversal's frame (both sorted by key).
    pub fn of(walk: &[(Key, u32)], full: &[(Key, u32)]) -> Self {
        let d = SetDiff::of(walk.iter().map(|(k, t)| (k, t)), full.iter().map(|(k, t)| (k, t)));
        WalkDiff { full: full.len(), extra: d.only_a, other_triangle: d.other_value, missing: d.only_b }
    }

    /// Contacts that differ.
    pub fn differ(&self) -> usize {
        self.extra + self.other_triangle + self.missing
    }
}

/// The figures of a walking implementation (iterative detection).
#[derive(Clone, Debug)]
pub struct WalkFigures {
    /// The implementation it is compared with: its own full traversal (`gpu` or `cpu-rayon`).
    pub full: &'static str,
    /// The scene's threshold and motion.
    pub setup: WalkSetup,
    /// The settings passed to the library.
    pub iterative: Iterative,
    /// Per timed frame: the detection was an iterative pass.
    pub passes: Vec<bool>,
    /// Per timed frame: contacts re-cast by walking (0 for a full pass).
    pub walked: Vec<u32>,
    /// Walk outcomes and fallback casts, summed over the timed frames.
    pub counts: WalkCounts,
    /// Per timed frame: how the contacts differ from the full traversal's at the same frame.
    pub diff: Vec<WalkDiff>,
}

impl WalkFigures {
    /// Timed frames that were iterative passes.
    pub fn iterative_frames(&self) -> usize {
        self.passes.iter().filter(|&&p| p).count()
    }

    /// Contacts that differ from the full traversal over `frames`, as a fraction of the full
    /// traversal's contacts in those frames (0 when it has none).
    fn fraction(&self, frames: impl Iterator<Item = usize>) -> f64 {
        let (mut differ, mut full) = (0usize, 0usize);
        for f in frames {
            differ += self.diff[f].differ();
            full += self.diff[f].full;
        }
        if full == 0 { 0.0 } else { differ as f64 / full as f64 }
    }

    /// The fraction of contacts that differ, over every timed frame.
    pub fn fraction_all(&self) -> f64 {
        self.fraction(0..self.diff.len())
    }

    /// The fraction of contacts that differ, over the iterative passes.
    pub fn fraction_iterative(&self) -> f64 {
        self.fraction((0..self.diff.len()).filter(|&f| self.passes[f]))
    }

    /// The sum of the per-frame differences.
    pub fn total(&self) -> WalkDiff {
        self.diff.iter().fold(WalkDiff::default(), |a, d| WalkDiff {
            full: a.full + d.full,
            extra: a.extra + d.extra,
            other_triangle: a.other_triangle + d.other_triangle,
            missing: a.missing + d.missing,
        })
    }
}

/// Names of the walk outcome codes, in code order (`raycontact::internals::layout::WALK_*`).
pub const WALK_OUTCOMES: [&str; 7] = ["hit", "boundary", "loop", "steps", "range", "parallel", "no_start"];
