//! The scene suite: every named scene run, frame by frame, by the GPU adapter, the CPU reference
//! (single-threaded and with rayon) and parry3d, in one run, with the contact sets compared.
//!
//! This module is the frame of a run, top to bottom: [`run`] builds every scene, then runs
//! each instance ([`run_instance`]: every implementation, then the comparisons), prints the
//! tables as it goes, and writes the JSON and the plot. The runners are [`runner`] (raycontact,
//! GPU or CPU) and [`crate::peers`] (parry3d); the ray figures come from [`rays`].

mod rays;
mod runner;

use std::time::Instant;

use raycontact::{BvhUpdate, GpuContext, Iterative, Scene, WorkersAwake};

use crate::args::SuiteArgs;
use crate::peers::{Parry, ParryMode, ParryRun};
use crate::pools::Pools;
use crate::progress::Progress;
use crate::results::{FrameKeys, ImplKind, ImplResult, InstanceResult, ORDER, SuiteResult, WalkDiff, differ};
use crate::run::{Finished, Named};
use crate::scenes::{self, Instance, SceneName};
use crate::{gpu_model, json, plot, report};
use runner::RaycontactRun;

/// Runs the suite: prints the table, writes the JSON and the plot. Returns the exit code.
pub fn run(args: SuiteArgs) -> i32 {
    match run_inner(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("raycontact-bench: error: {e}");
            2
        }
    }
}

fn run_inner(args: SuiteArgs) -> Result<(), String> {
    let start = Instant::now();
    let scenes = args.selected_scenes();
    let opts = args.scene_options()?;
    if args.frames == Some(0) {
        return Err("--frames must be at least 1".into());
    }
    // Every scene first, so that a bad option fails before any work.
    let mut built: Vec<(SceneName, Vec<Instance>)> = Vec::new();
    for &s in &scenes {
        built.push((s, scenes::build(s, &opts)?));
    }
    let ctx = crate::gpu_context(args.cpu, args.adapter.clone(), args.tuning.as_deref());
    let pools = Pools::new(args.pin)?;
    let total: usize = built
        .iter()
        .flat_map(|(_, v)| v)
        .map(|i| i.positions.len() * impl_count(i, &args, ctx.is_some()))
        .sum();
    let mut progress = Progress::new(total as u64, !args.no_progress);
    report::print_header(ctx.as_ref(), &args, &scenes, &pools);
    let mut instances = Vec::new();
    for (scene, list) in built {
        let mut results = Vec::new();
        for inst in &list {
            let r = run_instance(inst, ctx.as_ref(), &args, &pools, &mut progress)?;
            if !scene.is_scaling() {
                progress.suspend(|| report::print_instance(&r));
            }
            results.push(r);
        }
        if scene.is_scaling() {
            progress.suspend(|| report::print_scaling(scene, &results));
        }
        instances.extend(results);
    }
    progress.finish();
    let result = SuiteResult {
        args: args.clone(),
        gpu: ctx,
        instances,
        wall_s: start.elapsed().as_secs_f64(),
        threads: pools.all.current_num_threads(),
        pinned: pools.pinning.pinned(),
    };
    report::print_footer(&result);
    if let Some(path) = &args.json {
        let doc = json::document(&result);
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("--json {}: {e}", path.display()))?;
        println!("JSON written to {}", path.display());
    }
    if let Some(path) = &args.plot {
        match plot::draw(&result, path)? {
            0 => println!("--plot: no scaling scene in this run; nothing drawn"),
            n => println!("plot of {n} scaling scene(s) written to {}", path.display()),
        }
    }
    Ok(())
}

/// Runs every implementation on one instance.
fn run_instance(
    inst: &Instance,
    ctx: Option<&GpuContext>,
    args: &SuiteArgs,
    pools: &Pools,
    progress: &mut Progress,
) -> Result<InstanceResult, String> {
    let start = Instant::now();
    let runs = runs(inst, ctx, args, pools)?;
    let mut done = step(inst, runs, args.sequential, progress)?.into_iter();
    let (mut reference, ref_keys, cpu_scene) = done.next().expect("cpu-rayon runs first");
    let mut cpu_scene = cpu_scene.expect("cpu-rayon's scene");
    let rays = rays::ray_figures(&mut cpu_scene, inst)?;
    reference.differ = vec![0; ref_keys.len()];
    let mut impls = vec![reference];
    let mut full_keys: Vec<(&'static str, Vec<FrameKeys>)> = vec![("cpu-rayon", ref_keys.clone())];
    for (mut r, keys, scene) in done {
        r.differ = keys.iter().zip(&ref_keys).map(|(a, b)| differ(a, b)).collect();
        // A full-pass GPU implementation's own trees: the H100 model's traversal term.
        if let (true, Some(mut scene)) = (gpu_model::counted(r.id), scene) {
            r.trees_walked = Some(rays::trees_walked(&mut cpu_scene, &mut scene, inst)?);
        }
        if let Some(w) = &mut r.walking {
            let full = &full_keys.iter().find(|(id, _)| *id == w.full).expect("full traversal ran").1;
            w.diff = keys.iter().zip(full).map(|(a, b)| WalkDiff::of(a, b)).collect();
        } else if r.kind != ImplKind::Parry {
            full_keys.push((r.id, keys));
        }
        impls.push(r);
    }
    Ok(InstanceResult {
        scene: inst.scene,
        variant: inst.variant.clone(),
        parameter: inst.parameter,
        bodies: inst
            .bodies
            .iter()
            .map(|b| (b.name.clone(), b.kind, b.mesh.triangles.len(), b.mesh.positions.len(), b.moving))
            .collect(),
        frames: inst.timed_frames(),
        prediction: inst.prediction,
        rays,
        impls,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The runs of an instance, in the tables' order: `cpu-rayon` (the reference) first, then every
/// other implementation that runs (`impl_count`'s rules). The CPU ones run on the run's
/// `pools`.
fn runs(
    inst: &Instance,
    ctx: Option<&GpuContext>,
    args: &SuiteArgs,
    pools: &Pools,
) -> Result<Vec<Named>, String> {
    let intersections = args.intersections.mode();
    let threads = pools.all.current_num_threads();
    // Every raycontact implementation runs the intersection stages that --intersections asks.
    let with = |mut s: Scene, policy: BvhUpdate| -> Result<Scene, String> {
        s.set_bvh_update(policy).map_err(|e| e.to_string())?;
        s.set_intersections(intersections);
        Ok(s)
    };
    let cpu = |t: Option<usize>, policy| {
        let mut s = Scene::new_cpu_on_pool(pools.of(t));
        s.set_background_trees(!args.trees_in_frame);
        // The implementations take the shared pool one at a time (`pools.rs`), so each scene
        // keeps its workers awake through its whole calls, as on a pool of its own
        // (`Scene::new_cpu`), not for `WorkersAwake::SHARED` alone.
        s.set_workers_awake(WorkersAwake::WholeCall).map_err(|e| e.to_string())?;
        with(s, policy)
    };
    let gpu = |c: &GpuContext, policy| {
        let mut s = Scene::new(c);
        s.set_gpu_timestamps(!args.no_gpu_timestamps);
        s.set_background_trees(!args.trees_in_frame);
        with(s, policy)
    };
    let mut runs: Vec<Named> = Vec::new();
    let mut add =
        |scene: Scene, r: ImplResult, walk: Option<(Iterative, &'static str)>| -> Result<(), String> {
            let id = r.id;
            runs.push((id, Box::new(RaycontactRun::new(scene, inst, r, walk)?)));
            Ok(())
        };
    let rayon = |id, what: &str| {
        ImplResult::new(id, format!("{what}, rayon {threads}"), ImplKind::Cpu).on_threads(threads)
    };
    add(cpu(None, BvhUpdate::Rebuild)?, rayon("cpu-rayon", "CPU reference"), None)?;
    if let Some(c) = ctx {
        let gpus = [
            ("gpu", BvhUpdate::Rebuild, "GPU"),
            ("gpu-refit", BvhUpdate::Refit, "GPU refit"),
            ("gpu-auto", BvhUpdate::auto(), "GPU auto"),
        ];
        for (id, policy, what) in gpus {
            if args.runs(id) {
                let r = ImplResult::new(id, format!("{what} ({})", c.adapter_name()), ImplKind::Gpu);
                add(gpu(c, policy)?, r, None)?;
            }
        }
    }
    if args.runs("cpu-1") {
        let r = ImplResult::new("cpu-1", "CPU reference, 1 thread".into(), ImplKind::Cpu).on_threads(1);
        add(cpu(Some(1), BvhUpdate::Rebuild)?, r, None)?;
    }
    if args.runs("cpu-refit") {
        add(cpu(None, BvhUpdate::Refit)?, rayon("cpu-refit", "CPU refit"), None)?;
    }
    if args.runs("cpu-auto") {
        add(cpu(None, BvhUpdate::auto())?, rayon("cpu-auto", "CPU auto"), None)?;
    }
    if args.runs("cpu-twins") {
        let mut twins = cpu(None, BvhUpdate::Rebuild)?;
        twins.set_wide_bvh(false);
        add(twins, rayon("cpu-twins", "CPU twins, binary BVH"), None)?;
    }
    if let Some(setup) = &inst.walking {
        let it = runner::iterative_of(setup);
        if let Some(c) = ctx.filter(|_| args.runs("gpu-walk")) {
            let r = ImplResult::new("gpu-walk", format!("GPU walking ({})", c.adapter_name()), ImplKind::Gpu);
            add(gpu(c, BvhUpdate::Rebuild)?, r, Some((it, "gpu")))?;
        }
        if args.runs("cpu-walk") {
            let r = rayon("cpu-walk", "CPU reference walking");
            add(cpu(None, BvhUpdate::Rebuild)?, r, Some((it, "cpu-rayon")))?;
        }
    }
    if !args.no_parry {
        let peers = [
            ("parry-1", Some(1), ParryMode::Rebuild),
            ("parry-rayon", None, ParryMode::Rebuild),
            ("parry-refit-1", Some(1), ParryMode::Refit),
            ("parry-refit-rayon", None, ParryMode::Refit),
        ];
        for (id, threads, mode) in peers.into_iter().filter(|(id, ..)| args.runs(id)) {
            let p = Parry::new(inst, pools.of(threads), mode)?;
            let what = if mode == ParryMode::Refit { "parry3d refit" } else { "parry3d" };
            let label = match threads {
                Some(1) => format!("{what}, 1 thread"),
                _ => format!("{what}, rayon {}", p.threads()),
            };
            let r = ImplResult::new(id, label, ImplKind::Parry).on_threads(p.threads());
            runs.push((id, Box::new(ParryRun::new(p, r))));
        }
    }
    Ok(runs)
}

/// Every run through the instance: each one's set-up frame, then the timed frames, frame by
/// frame across the runs (every run's frame `f` in turn, so that a machine whose speed drifts
/// over a run slows every implementation alike; each frame's turn starting one run further than
/// the last's), or with `sequential` each run's frames back to back, one run after the other.
/// Returns each run's figures in order, with the scenes of the first run and of the full-pass
/// GPU runs (`gpu_model::counted`: their trees are counted after the run); the others' are
/// dropped as they finish.
fn step(
    inst: &Instance,
    mut runs: Vec<Named>,
    sequential: bool,
    progress: &mut Progress,
) -> Result<Vec<Finished>, String> {
    let frames = inst.positions.len();
    let mut done = Vec::with_capacity(runs.len());
    let mut keep = |(r, keys, scene): Finished, first: bool| {
        let kept = first || gpu_model::counted(r.id);
        done.push((r, keys, scene.filter(|_| kept)));
    };
    if sequential {
        for (i, (id, mut run)) in runs.into_iter().enumerate() {
            progress.set_message(label(inst, id));
            run.setup(inst)?;
            progress.inc();
            for f in 1..frames {
                run.frame(inst, f)?;
                progress.inc();
            }
            keep(run.finish(), i == 0);
        }
        return Ok(done);
    }
    for (id, run) in &mut runs {
        progress.set_message(label(inst, id));
        run.setup(inst)?;
        progress.inc();
    }
    // Frame f's turn starts one run further than frame f - 1's, so that no run always follows
    // the same one (whose frame leaves the caches as it used them).
    let n = runs.len();
    for f in 1..frames {
        progress.set_message(label(inst, &format!("frame {f}")));
        for k in 0..n {
            runs[(f - 1 + k) % n].1.frame(inst, f)?;
            progress.inc();
        }
    }
    for (i, (_, run)) in runs.into_iter().enumerate() {
        keep(run.finish(), i == 0);
    }
    Ok(done)
}

/// Implementations that run on an instance (`gpu`: whether a GPU context is there): those of
/// the table that `--implementations` lets run, but the GPU's without a context, the walking
/// ones on a scene that does not walk, and parry3d's with `--no-parry`.
fn impl_count(inst: &Instance, args: &SuiteArgs, gpu: bool) -> usize {
    ORDER
        .iter()
        .filter(|id| {
            args.runs(id)
                && (gpu || !id.starts_with("gpu"))
                && (inst.walking.is_some() || !id.ends_with("-walk"))
                && (!args.no_parry || !id.starts_with("parry"))
        })
        .count()
}

/// The progress bar's message for an implementation running an instance.
fn label(inst: &Instance, id: &str) -> String {
    if inst.variant.is_empty() {
        format!("{} {id}", inst.scene.name())
    } else {
        format!("{} ({}) {id}", inst.scene.name(), inst.variant)
    }
}
