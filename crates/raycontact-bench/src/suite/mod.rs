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

use raycontact::{BvhUpdate, GpuContext, Scene};

use crate::args::SuiteArgs;
use crate::peers::{self, Parry, ParryMode};
use crate::progress::Progress;
use crate::results::{FrameKeys, ImplKind, ImplResult, InstanceResult, ORDER, SuiteResult, WalkDiff, differ};
use crate::scenes::{self, Instance, SceneName};
use crate::{json, plot, report};

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
    let ctx = crate::gpu_context(args.cpu, args.adapter.clone());
    let total: usize = built
        .iter()
        .flat_map(|(_, v)| v)
        .map(|i| i.positions.len() * impl_count(i, &args, ctx.is_some()))
        .sum();
    let mut progress = Progress::new(total as u64, !args.no_progress);
    report::print_header(ctx.as_ref(), &args, &scenes);
    let mut instances = Vec::new();
    for (scene, list) in built {
        let mut results = Vec::new();
        for inst in &list {
            let r = run_instance(inst, ctx.as_ref(), &args, &mut progress)?;
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
        threads: rayon::current_num_threads(),
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
    progress: &mut Progress,
) -> Result<InstanceResult, String> {
    let start = Instant::now();
    let intersections = args.intersections.mode();
    let threads = rayon::current_num_threads();
    // Every raycontact implementation runs the intersection stages that --intersections asks.
    let cpu = |t: Option<usize>, policy: BvhUpdate| -> Result<Scene, String> {
        let mut s = Scene::new_cpu(t).map_err(|e| e.to_string())?;
        s.set_bvh_update(policy).map_err(|e| e.to_string())?;
        s.set_intersections(intersections);
        Ok(s)
    };
    let gpu = |c: &GpuContext, policy: BvhUpdate| -> Result<Scene, String> {
        let mut s = Scene::new(c);
        s.set_bvh_update(policy).map_err(|e| e.to_string())?;
        s.set_intersections(intersections);
        Ok(s)
    };
    progress.set_message(label(inst, "cpu-rayon"));
    let label_rayon = format!("CPU reference, rayon {threads}");
    let (reference, ref_keys, mut cpu_scene) = runner::run_raycontact(
        cpu(None, BvhUpdate::Rebuild)?,
        inst,
        ImplResult::new("cpu-rayon", label_rayon, ImplKind::Cpu).on_threads(threads),
        None,
        progress,
    )?;
    let rays = rays::ray_figures(&mut cpu_scene, inst)?;
    drop(cpu_scene);
    let mut impls = vec![reference];
    impls[0].differ = vec![0; ref_keys.len()];
    let mut full_keys: Vec<(&'static str, Vec<FrameKeys>)> = vec![("cpu-rayon", ref_keys.clone())];
    let mut push =
        |mut r: ImplResult, keys: Vec<FrameKeys>, full_keys: &mut Vec<(&'static str, Vec<FrameKeys>)>| {
            r.differ = keys.iter().zip(&ref_keys).map(|(a, b)| differ(a, b)).collect();
            if let Some(w) = &mut r.walking {
                let full = &full_keys.iter().find(|(id, _)| *id == w.full).expect("full traversal ran").1;
                w.diff = keys.iter().zip(full).map(|(a, b)| WalkDiff::of(a, b)).collect();
            } else if r.kind != ImplKind::Parry {
                full_keys.push((r.id, keys));
            }
            impls.push(r);
        };
    if let Some(c) = ctx {
        for (id, policy, what) in
            [("gpu", BvhUpdate::Rebuild, "GPU"), ("gpu-refit", BvhUpdate::Refit, "GPU refit")]
        {
            if !args.runs(id) {
                continue;
            }
            progress.set_message(label(inst, id));
            let r = ImplResult::new(id, format!("{what} ({})", c.adapter_name()), ImplKind::Gpu);
            let (r, keys, _) = runner::run_raycontact(gpu(c, policy)?, inst, r, None, progress)?;
            push(r, keys, &mut full_keys);
        }
    }
    if args.runs("cpu-1") {
        progress.set_message(label(inst, "cpu-1"));
        let r = ImplResult::new("cpu-1", "CPU reference, 1 thread".into(), ImplKind::Cpu).on_threads(1);
        let scene = cpu(Some(1), BvhUpdate::Rebuild)?;
        let (r, keys, _) = runner::run_raycontact(scene, inst, r, None, progress)?;
        push(r, keys, &mut full_keys);
    }
    if args.runs("cpu-refit") {
        progress.set_message(label(inst, "cpu-refit"));
        let r = ImplResult::new("cpu-refit", format!("CPU refit, rayon {threads}"), ImplKind::Cpu)
            .on_threads(threads);
        let scene = cpu(None, BvhUpdate::Refit)?;
        let (r, keys, _) = runner::run_raycontact(scene, inst, r, None, progress)?;
        push(r, keys, &mut full_keys);
    }
    if args.runs("cpu-twins") {
        progress.set_message(label(inst, "cpu-twins"));
        let what = format!("CPU twins, binary BVH, rayon {threads}");
        let r = ImplResult::new("cpu-twins", what, ImplKind::Cpu).on_threads(threads);
        let mut twins = cpu(None, BvhUpdate::Rebuild)?;
        twins.set_wide_bvh(false);
        let (r, keys, _) = runner::run_raycontact(twins, inst, r, None, progress)?;
        push(r, keys, &mut full_keys);
    }
    if let Some(setup) = &inst.walking {
        let it = runner::iterative_of(setup);
        if let Some(c) = ctx.filter(|_| args.runs("gpu-walk")) {
            progress.set_message(label(inst, "gpu-walk"));
            let label = format!("GPU walking ({})", c.adapter_name());
            let r = ImplResult::new("gpu-walk", label, ImplKind::Gpu);
            let scene = gpu(c, BvhUpdate::Rebuild)?;
            let (r, keys, _) = runner::run_raycontact(scene, inst, r, Some((it, "gpu")), progress)?;
            push(r, keys, &mut full_keys);
        }
        if args.runs("cpu-walk") {
            progress.set_message(label(inst, "cpu-walk"));
            let label = format!("CPU reference walking, rayon {threads}");
            let r = ImplResult::new("cpu-walk", label, ImplKind::Cpu).on_threads(threads);
            let scene = cpu(None, BvhUpdate::Rebuild)?;
            let walk = Some((it, "cpu-rayon"));
            let (r, keys, _) = runner::run_raycontact(scene, inst, r, walk, progress)?;
            push(r, keys, &mut full_keys);
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
            progress.set_message(label(inst, id));
            let mut p = Parry::new(inst, threads, mode)?;
            let what = if mode == ParryMode::Refit { "parry3d refit" } else { "parry3d" };
            let label = match threads {
                Some(1) => format!("{what}, 1 thread"),
                _ => format!("{what}, rayon {}", p.threads()),
            };
            let r = ImplResult::new(id, label, ImplKind::Parry).on_threads(p.threads());
            let (r, keys) = peers::run_parry(&mut p, inst, r, progress);
            push(r, keys, &mut full_keys);
        }
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
