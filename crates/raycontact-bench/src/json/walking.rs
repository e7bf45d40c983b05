//! The `walking` object of an implementation in the suite's JSON document: a walking
//! implementation's iterative passes against its full traversal (`docs/bench-json.md`).

use std::collections::BTreeMap;

use raycontact::WalkFallback;
use serde::Serialize;

use crate::results::{ImplResult, InstanceResult, WALK_OUTCOMES};

/// Iterative detection against the full traversal.
#[derive(Serialize)]
pub(super) struct Walking {
    confidence: f64,
    differ_from_full: DifferFromFull,
    fallback: &'static str,
    fallback_casts: u32,
    fallback_hits: u32,
    full: &'static str,
    full_frames: usize,
    full_pass_every: u32,
    full_pass_ms: f64,
    full_traversal_ms: f64,
    iterative_fraction: f64,
    iterative_frames: usize,
    iterative_ms: f64,
    outcomes: BTreeMap<&'static str, u32>,
    per_frame_iterative: Vec<bool>,
    speedup_iterative: f64,
    speedup_mean: f64,
    step: f64,
    threshold: f64,
    walked_per_frame: Vec<u32>,
}

/// Contacts that differ from the full traversal's at the same frame.
#[derive(Serialize)]
struct DifferFromFull {
    extra: usize,
    fraction: f64,
    fraction_iterative: f64,
    full_contacts: usize,
    missing: usize,
    other_triangle: usize,
    per_frame: Vec<usize>,
}

/// A walking implementation against its full traversal (`None` for the others).
pub(super) fn walking(i: &ImplResult, r: &InstanceResult) -> Option<Walking> {
    let w = i.walking.as_ref()?;
    let full = r.get(w.full)?;
    let t = w.total();
    Some(Walking {
        confidence: f64::from(w.iterative.confidence),
        differ_from_full: DifferFromFull {
            extra: t.extra,
            fraction: w.fraction_all(),
            fraction_iterative: w.fraction_iterative(),
            full_contacts: t.full,
            missing: t.missing,
            other_triangle: t.other_triangle,
            per_frame: w.diff.iter().map(|d| d.differ()).collect(),
        },
        fallback: match w.iterative.fallback {
            WalkFallback::Bvh => "bvh",
            _ => "drop",
        },
        fallback_casts: w.counts.fallback_casts,
        fallback_hits: w.counts.fallback_hits,
        full: w.full,
        full_frames: w.passes.len() - w.iterative_frames(),
        full_pass_every: w.iterative.full_pass_every,
        full_pass_ms: i.median_ms_of(false),
        full_traversal_ms: full.median_ms(),
        iterative_fraction: w.iterative_frames() as f64 / w.passes.len().max(1) as f64,
        iterative_frames: w.iterative_frames(),
        iterative_ms: i.median_ms_of(true),
        outcomes: WALK_OUTCOMES.iter().copied().zip(w.counts.outcomes).collect(),
        per_frame_iterative: w.passes.clone(),
        speedup_iterative: full.median_ms() / i.median_ms_of(true),
        speedup_mean: full.mean_ms() / i.mean_ms(),
        step: f64::from(w.setup.step),
        threshold: f64::from(w.setup.threshold),
        walked_per_frame: w.walked.clone(),
    })
}
