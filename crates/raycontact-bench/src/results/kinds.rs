//! Frames by kind: a rebuild (the BVHs built anew), a refit (the BVHs' boxes refitted, the tree
//! kept) or an iterative pass (last frame's contacts re-cast by walking), each with its own
//! median and worst frame and, on the GPU, its dispatches.

use raycontact::{BvhAction, FrameStats};

use crate::stats::median;

/// What a frame did to the BVHs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FrameKind {
    /// Every BVH built anew (Morton codes, sort, hierarchy, fit): a full pass.
    Rebuild,
    /// The BVHs' boxes refitted over the same trees: a full pass.
    Refit,
    /// An iterative pass (walking from last frame's contacts).
    Iterative,
}

impl FrameKind {
    /// Every kind, in report order.
    pub const ALL: [FrameKind; 3] = [FrameKind::Rebuild, FrameKind::Refit, FrameKind::Iterative];

    /// The kind of a frame from its statistics: an iterative pass (whatever its fallback did to
    /// the BVHs), else what the frame did to the BVHs.
    pub fn of(stats: &FrameStats) -> Self {
        if stats.iterative {
            FrameKind::Iterative
        } else if stats.bvh.action == BvhAction::Refitted {
            FrameKind::Refit
        } else {
            FrameKind::Rebuild
        }
    }

    /// Its name in the report and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Rebuild => "rebuild",
            FrameKind::Refit => "refit",
            FrameKind::Iterative => "iterative",
        }
    }
}

/// The frames of one kind: how many, median and worst wall time, mean dispatches (GPU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KindFigures {
    /// The kind.
    pub kind: FrameKind,
    /// Timed frames of this kind.
    pub frames: usize,
    /// Median wall time, ms.
    pub median_ms: f64,
    /// Worst (longest) wall time, ms.
    pub worst_ms: f64,
    /// Mean compute dispatches per frame (GPU; `None` on the CPU).
    pub dispatches: Option<f64>,
}

impl KindFigures {
    /// The worst frame over the median.
    pub fn worst_over_median(&self) -> f64 {
        self.worst_ms / self.median_ms
    }
}

/// The figures of each kind that occurred, in [`FrameKind::ALL`] order: per timed frame its
/// kind, wall time and (GPU) dispatches.
pub fn by_kind(kinds: &[FrameKind], frame_ms: &[f64], dispatches: &[u32]) -> Vec<KindFigures> {
    FrameKind::ALL
        .iter()
        .filter_map(|&kind| {
            let of: Vec<usize> = (0..kinds.len().min(frame_ms.len())).filter(|&f| kinds[f] == kind).collect();
            if of.is_empty() {
                return None;
            }
            let ms: Vec<f64> = of.iter().map(|&f| frame_ms[f]).collect();
            let d: Vec<f64> = of.iter().filter_map(|&f| dispatches.get(f)).map(|&d| f64::from(d)).collect();
            Some(KindFigures {
                kind,
                frames: of.len(),
                median_ms: median(&ms),
                worst_ms: ms.iter().copied().fold(0.0, f64::max),
                dispatches: (!d.is_empty()).then(|| d.iter().sum::<f64>() / d.len() as f64),
            })
        })
        .collect()
}
