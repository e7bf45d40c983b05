//! The suite's run of raycontact ([`RaycontactRun`], a [`Run`]): an instance, a frame at a
//! time, on a [`Scene`] (GPU adapter or CPU backend), with iterative detection for the walking
//! implementations.

use std::time::Instant;

use raycontact::{
    BodyId, BvhStats, BvhUpdate, FrameStats, IntersectionMode, Iterative, Pairs, Scene, Stage, WalkCounts,
    WalkFallback,
};

use crate::results::{Classes, FrameKeys, FrameKind, ImplKind, ImplResult, WalkFigures, keys_of};
use crate::run::{Finished, Run};
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

/// The error of implementation `id` on `inst`, naming both.
fn failed<'a>(inst: &'a Instance, id: &'a str) -> impl Fn(raycontact::Error) -> String + Copy + 'a {
    move |e| format!("{} {id}: {e}", inst.scene.name())
}

/// An instance on a raycontact scene (GPU or CPU backend), with iterative detection when
/// the run was made with it.
pub struct RaycontactRun {
    scene: Scene,
    ids: Vec<BodyId>,
    pairs: Option<Vec<(BodyId, BodyId)>>,
    result: ImplResult,
    keys: Vec<FrameKeys>,
    classes: Classes,
    stage_ms: Vec<(Stage, Vec<f64>)>,
    last_stats: FrameStats,
    bvh: Vec<BvhStats>,
    walking: Option<WalkFigures>,
    allocated_before: u64,
    /// The last detection's contacts, kept so that the next one reuses their vector
    /// ([`Scene::detect_into`], as an engine keeping its contacts from frame to frame would).
    found: raycontact::Contacts,
}

impl RaycontactRun {
    /// The run of `inst` on `scene` (its bodies added, static where the instance never moves
    /// them), with iterative detection when `iterative` is given (and the instance walks).
    pub fn new(
        mut scene: Scene,
        inst: &Instance,
        result: ImplResult,
        iterative: Option<(Iterative, &'static str)>,
    ) -> Result<Self, String> {
        let err = failed(inst, result.id);
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
        let pairs = inst.pairs.as_ref().map(|p| p.iter().map(|&(a, b)| (ids[a], ids[b])).collect());
        Ok(RaycontactRun {
            scene,
            ids,
            pairs,
            result,
            keys: Vec::new(),
            classes: Classes::default(),
            stage_ms: Vec::new(),
            last_stats: FrameStats::default(),
            bvh: Vec::new(),
            walking,
            allocated_before: 0,
            found: raycontact::Contacts::default(),
        })
    }

    fn gpu(&self) -> bool {
        self.result.kind == ImplKind::Gpu
    }

    /// Detection on the scene's current positions, into `self.found`.
    fn detect(&mut self, inst: &Instance) -> Result<(), String> {
        let pairs = match &self.pairs {
            Some(p) => Pairs::List(p),
            None => Pairs::Overlapping,
        };
        self.scene.detect_into(pairs, &mut self.found).map_err(failed(inst, self.result.id))
    }
}

impl Run for RaycontactRun {
    fn setup(&mut self, inst: &Instance) -> Result<(), String> {
        // Layout, first buffers and BVHs (the pipelines exist with the context). A scene (GPU
        // or CPU) under a refitting policy builds the binned-SAH trees of the bodies this first
        // rebuild rebuilds in this frame, not in the background (`Scene::set_background_trees`):
        // the timed frames refit those trees from the first, as they would long after a rebuild,
        // instead of walking the LBVHs while the builds share the cores with them.
        let background = self.scene.background_trees();
        self.scene.set_background_trees(false);
        let start = Instant::now();
        let detected = self.detect(inst);
        self.scene.set_background_trees(background);
        detected?;
        self.result.setup_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        self.allocated_before = self.scene.buffer_allocations();
        Ok(())
    }

    fn frame(&mut self, inst: &Instance, f: usize) -> Result<(), String> {
        let start = Instant::now();
        for (b, body) in inst.bodies.iter().enumerate() {
            if body.moving && !inst.positions[f][b].is_empty() {
                let at = &inst.positions[f][b];
                self.scene.set_positions(self.ids[b], at).map_err(failed(inst, self.result.id))?;
            }
        }
        self.detect(inst)?;
        // Taken for the figures and put back, its vector for the next frame.
        let found = std::mem::take(&mut self.found);
        let gpu = self.gpu();
        let result = &mut self.result;
        result.frame_ms.push(start.elapsed().as_secs_f64() * 1e3);
        result.frame_kinds.push(FrameKind::of(&found.stats));
        for (s, st) in &found.stats.stages {
            let t = if gpu { st.gpu_ns } else { st.cpu_ns };
            if let Some(ns) = t {
                match self.stage_ms.iter_mut().find(|(x, _)| x == s) {
                    Some((_, v)) => v.push(ns / 1e6),
                    None => self.stage_ms.push((*s, vec![ns / 1e6])),
                }
            }
        }
        result.contacts.push(found.contacts.len());
        result.unreached.push(found.stats.unreached);
        if self.scene.intersections() != IntersectionMode::Off {
            result.intersections.push(found.stats.intersections);
        }
        self.classes.add(&Classes::of(found.contacts.iter().map(|c| c.flags.bits())));
        if gpu {
            result.dispatches.push(found.stats.dispatches());
            result.timestamps.push(found.stats.timestamps());
            result.bytes_read_back.push(found.stats.bytes_read_back);
            result.host.push(found.stats.host);
        }
        if let Some(w) = &mut self.walking {
            w.passes.push(found.stats.iterative);
            w.walked.push(found.stats.walked);
            w.counts.add_counts(&found.stats.walk);
        }
        self.bvh.push(found.stats.bvh);
        self.keys.push(keys_of(&found));
        self.last_stats = found.stats.clone();
        self.found = found;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Finished {
        let gpu = self.gpu();
        let policy = match self.scene.bvh_update() {
            BvhUpdate::Rebuild => "rebuild",
            BvhUpdate::Refit => "refit",
            _ => "auto",
        };
        let RaycontactRun {
            scene,
            mut result,
            keys,
            classes,
            mut stage_ms,
            last_stats,
            bvh,
            walking,
            allocated_before,
            ..
        } = *self;
        stage_ms.sort_by_key(|(s, _)| *s);
        result.stage_timing = match (gpu, stage_ms.is_empty()) {
            (_, true) => "none",
            (true, false) => "gpu-timestamps",
            (false, false) => "cpu-wall",
        };
        result.stage_ms = stage_ms;
        result.classes = classes.scaled(1.0 / result.frame_ms.len().max(1) as f64);
        result.walking = walking;
        result.bvh = Some((policy, bvh));
        if gpu {
            result.bytes_bound = Some((last_stats.bytes_read(), last_stats.bytes_written()));
            result.buffers_allocated = Some(scene.buffer_allocations() - allocated_before);
        }
        (result, keys, Some(scene))
    }
}
