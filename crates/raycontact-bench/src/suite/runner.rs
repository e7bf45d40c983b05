//! The suite's runner of raycontact: an instance, frame by frame, on a [`Scene`] (GPU adapter
//! or CPU reference), with iterative detection for the walking implementations.

use std::time::Instant;

use raycontact::{
    BodyId, BvhUpdate, FrameStats, IntersectionMode, Iterative, Pairs, Scene, Stage, WalkCounts, WalkFallback,
};

use crate::progress::Progress;
use crate::results::{Classes, FrameKeys, FrameKind, ImplKind, ImplResult, WalkFigures, keys_of};
use crate::scenes::{Instance, WalkSetup};

/// Iterative detection as the walking implementations run it (the paper's drop fallback).
pub fn iterative_of(setup: &WalkSetup) -> Iterative {
    Iterative {
        displacement_threshold: setup.threshold,
        confidence: 2.0,
        full_pass_every: setup.full_pass_every,
        fallback: WalkFallback::Drop,
    }
}

/// Runs an instance on a raycontact scene (GPU or CPU backend), with iterative detection when
/// `iterative` is given. Returns the figures, the keys of every timed frame and the scene (for
/// the ray figures).
pub fn run_raycontact(
    mut scene: Scene,
    inst: &Instance,
    mut result: ImplResult,
    iterative: Option<(Iterative, &'static str)>,
    progress: &mut Progress,
) -> Result<(ImplResult, Vec<FrameKeys>, Scene), String> {
    let err = |e: raycontact::Error| format!("{} {}: {e}", inst.scene.name(), result.id);
    let mut ids: Vec<BodyId> = Vec::new();
    for (b, body) in inst.bodies.iter().enumerate() {
        let id = scene.add_body(inst.positions_at(0, b), &body.mesh.triangles, body.kind).map_err(err)?;
        // A body the scene never moves is static: no pair of two of them is tested.
        scene.set_static(id, !body.moving).map_err(err)?;
        ids.push(id);
    }
    scene.set_prediction_distance(inst.prediction).map_err(err)?;
    let mut walking = None;
    if let (Some((it, full)), Some(setup)) = (iterative, inst.walking) {
        scene.set_iterative(Some(it)).map_err(err)?;
        walking = Some(WalkFigures {
            full,
            setup,
            iterative: it,
            passes: Vec::new(),
            walked: Vec::new(),
            counts: WalkCounts::default(),
            diff: Vec::new(),
        });
    }
    let pairs: Option<Vec<(BodyId, BodyId)>> =
        inst.pairs.as_ref().map(|p| p.iter().map(|&(a, b)| (ids[a], ids[b])).collect());
    let pairs_arg = || match &pairs {
        Some(p) => Pairs::List(p),
        None => Pairs::Overlapping,
    };
    let gpu = result.kind == ImplKind::Gpu;
    let mut keys = Vec::new();
    let mut classes = Classes::default();
    let mut stage_ms: Vec<(Stage, Vec<f64>)> = Vec::new();
    let mut last_stats = FrameStats::default();
    let policy = match scene.bvh_update() {
        BvhUpdate::Rebuild => "rebuild",
        BvhUpdate::Refit => "refit",
        _ => "auto",
    };
    let mut bvh = Vec::new();
    // Set-up frame: layout, first buffers and BVHs (the pipelines exist with the context).
    let start = Instant::now();
    scene.detect(pairs_arg()).map_err(err)?;
    result.setup_ms = Some(start.elapsed().as_secs_f64() * 1e3);
    progress.inc();
    let allocated_before = scene.buffer_allocations();
    for f in 1..inst.positions.len() {
        let start = Instant::now();
        for (b, body) in inst.bodies.iter().enumerate() {
            if body.moving && !inst.positions[f][b].is_empty() {
                scene.set_positions(ids[b], &inst.positions[f][b]).map_err(err)?;
            }
        }
        let found = scene.detect(pairs_arg()).map_err(err)?;
        result.frame_ms.push(start.elapsed().as_secs_f64() * 1e3);
        result.frame_kinds.push(FrameKind::of(&found.stats));
        for (s, st) in &found.stats.stages {
            let t = if gpu { st.gpu_ns } else { st.cpu_ns };
            if let Some(ns) = t {
                match stage_ms.iter_mut().find(|(x, _)| x == s) {
                    Some((_, v)) => v.push(ns / 1e6),
                    None => stage_ms.push((*s, vec![ns / 1e6])),
                }
            }
        }
        result.contacts.push(found.contacts.len());
        if scene.intersections() != IntersectionMode::Off {
            result.intersections.push(found.stats.intersections);
        }
        classes.add(&Classes::of(found.contacts.iter().map(|c| c.flags.bits())));
        if gpu {
            result.dispatches.push(found.stats.dispatches());
            result.bytes_read_back.push(found.stats.bytes_read_back);
        }
        if let Some(w) = &mut walking {
            w.passes.push(found.stats.iterative);
            w.walked.push(found.stats.walked);
            w.counts.add_counts(&found.stats.walk);
        }
        bvh.push(found.stats.bvh);
        keys.push(keys_of(&found));
        last_stats = found.stats;
        progress.inc();
    }
    stage_ms.sort_by_key(|(s, _)| *s);
    result.stage_timing = match (gpu, stage_ms.is_empty()) {
        (_, true) => "none",
        (true, false) => "gpu-timestamps",
        (false, false) => "cpu-wall",
    };
    result.stage_ms = stage_ms;
    result.classes = classes.scaled(1.0 / inst.timed_frames().max(1) as f64);
    result.walking = walking;
    result.bvh = Some((policy, bvh));
    if gpu {
        result.bytes_bound = Some((last_stats.bytes_read(), last_stats.bytes_written()));
        result.buffers_allocated = Some(scene.buffer_allocations() - allocated_before);
    }
    Ok((result, keys, scene))
}
