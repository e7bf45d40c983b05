//! The suite's outputs: the table on stdout and the JSON document (schema `raycontact.bench/2`,
//! documented in `docs/bench-json.md`).

use raycontact::{BodyKind, GpuContext, Stage};
use serde_json::{Value, json};

use crate::scenes::SceneName;
use crate::suite::{
    ImplKind, ImplResult, InstanceResult, SuiteArgs, SuiteResult, WALK_OUTCOMES, WalkFigures,
    fitted_exponent, mean, median,
};

/// The schema identifier written as the document's `schema` field.
pub const SCHEMA: &str = "raycontact.bench/2";

/// Implementation ids in table order.
const ORDER: [&str; 7] = ["gpu", "cpu-1", "cpu-rayon", "gpu-walk", "cpu-walk", "parry-1", "parry-rayon"];

/// The CPU's model name (from /proc/cpuinfo on Linux).
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Logical cores.
pub fn logical_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn fmt_bytes(b: f64) -> String {
    if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

fn fmt_ms(ms: Option<f64>) -> String {
    match ms {
        Some(v) if v.is_finite() => format!("{v:.2}"),
        _ => "-".into(),
    }
}

/// The lines before the first scene.
pub fn print_header(ctx: Option<&GpuContext>, args: &SuiteArgs, scenes: &[SceneName]) {
    println!("raycontact-bench: scene suite (size {}, seed {})", args.size.name(), args.seed);
    match ctx {
        Some(c) => {
            let i = c.adapter_info();
            println!(
                "GPU adapter: {} ({:?}, {:?}{}), driver {} {}; stage times: {}",
                i.name,
                i.device_type,
                i.backend,
                if c.is_software() { ", software" } else { "" },
                i.driver,
                i.driver_info,
                if c.has_timestamps() {
                    "GPU timestamps"
                } else {
                    "none (no timestamps): frame wall time only"
                }
            );
        }
        None => println!("GPU: not used (--cpu)"),
    }
    println!(
        "CPU: {}, {} logical cores; CPU reference: raycontact's CPU twins, 1 thread and rayon {}; peer: {}",
        cpu_model().unwrap_or_else(|| "unknown model".into()),
        logical_cores(),
        rayon::current_num_threads(),
        if args.no_parry {
            "none (--no-parry)"
        } else {
            "parry3d 0.31 (BVH rebuilt every frame, the same rays classified by the same rules)"
        }
    );
    println!("scenes: {}", scenes.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "));
    println!();
}

fn kind_summary(r: &InstanceResult) -> String {
    let cloth = r.bodies.iter().filter(|b| matches!(b.1, BodyKind::Cloth { .. })).count();
    let moving = r.bodies.iter().filter(|b| b.4).count();
    let mut s = format!("{} bodies", r.bodies.len());
    if cloth > 0 {
        s += &format!(" ({} volumetric, {cloth} cloth)", r.bodies.len() - cloth);
    }
    if moving < r.bodies.len() {
        s += &format!(", {} static", r.bodies.len() - moving);
    }
    s
}

fn speedup(of: Option<&ImplResult>, this: &ImplResult) -> String {
    match of {
        Some(o) => format!("{:.2}x", o.median_ms() / this.median_ms()),
        None => "-".into(),
    }
}

fn ordered(r: &InstanceResult) -> Vec<&ImplResult> {
    ORDER.iter().filter_map(|id| r.get(id)).collect()
}

/// The table of one (non-scaling) instance.
pub fn print_instance(r: &InstanceResult) {
    let title = if r.variant.is_empty() { String::new() } else { format!(" ({})", r.variant) };
    println!(
        "== {}{title}: {}, {} triangles, {} vertices; {} timed frames ==",
        r.scene.name(),
        kind_summary(r),
        r.triangles(),
        r.vertices(),
        r.frames
    );
    println!("   {}", r.scene.description());
    if r.prediction > 0.0 {
        println!("   prediction distance {:.4} on every implementation", r.prediction);
    }
    let f = &r.rays;
    println!(
        "pairs tested {}; source vertices {}; rays/frame {} ({} inward + {} outward + {} own-body); BVH nodes/ray {:.1} (GPU walk), {:.1} (CPU walk); triangles/ray {:.1}",
        f.pairs,
        f.sources,
        f.rays(),
        f.inward_rays,
        f.outward_rays,
        f.check_rays,
        f.nodes_per_ray_gpu_walk,
        f.nodes_per_ray_cpu_walk,
        f.triangles_per_ray
    );
    println!(
        "{:<42} {:>9} {:>8} {:>9} {:>7} {:>9} {:>9} {:>10}",
        "implementation", "frame ms", "Mrays/s", "contacts", "differ", "vs cpu-1", "vs rayon", "vs parry-1"
    );
    let (c1, cr, p1) = (r.get("cpu-1"), r.get("cpu-rayon"), r.get("parry-1"));
    for i in ordered(r) {
        let ms = i.median_ms();
        println!(
            "{:<42} {:>9.2} {:>8.3} {:>9.1} {:>7} {:>9} {:>9} {:>10}",
            i.label,
            ms,
            f.rays() as f64 / ms / 1e3,
            i.mean_contacts(),
            i.differ.iter().max().copied().unwrap_or(0),
            speedup(c1, i),
            speedup(cr, i),
            speedup(p1, i),
        );
    }
    println!(
        "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "by class", "collision", "prediction", "inward", "outward", "inverted", "walked"
    );
    for i in ordered(r) {
        let c = &i.classes;
        println!(
            "{:<12} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            i.id, c.collision, c.prediction, c.inward, c.outward, c.inverted, c.walked
        );
    }
    print_walking(r);
    print_gpu_frame(r);
    print_stages(r);
    println!();
}

/// The walking implementations against their full traversals.
fn print_walking(r: &InstanceResult) {
    let walks: Vec<(&ImplResult, &WalkFigures)> =
        ordered(r).into_iter().filter_map(|i| Some((i, i.walking.as_ref()?))).collect();
    let Some((_, first)) = walks.first() else { return };
    let (s, it) = (&first.setup, &first.iterative);
    println!(
        "walking: threshold {:.4} (fastest vertex {:.5}/frame), confidence {}, fallback {:?}, a full pass at least every {} frames",
        s.threshold, s.step, it.confidence, it.fallback, it.full_pass_every
    );
    println!(
        "{:<9} {:>6} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}  outcomes {}",
        "walk",
        "vs",
        "iter/all",
        "full ms",
        "iter ms",
        "speedup",
        "mean x",
        "differ%",
        "iter%",
        "walked",
        WALK_OUTCOMES.join("/")
    );
    for (i, w) in walks {
        let Some(full) = r.get(w.full) else { continue };
        let t = w.total();
        let walked = mean(&w.walked.iter().map(|&x| x as f64).collect::<Vec<_>>());
        println!(
            "{:<9} {:>6} {:>9} {:>9.2} {:>9.2} {:>7.2}x {:>7.2}x {:>8.3} {:>8.3} {:>8.0}  {} (fallback casts {}); differ: {} extra, {} other triangle, {} missing of {}",
            i.id,
            w.full,
            format!("{}/{}", w.iterative_frames(), w.passes.len()),
            full.median_ms(),
            i.median_ms_of(true),
            full.median_ms() / i.median_ms_of(true),
            full.mean_ms() / i.mean_ms(),
            100.0 * w.fraction_all(),
            100.0 * w.fraction_iterative(),
            walked,
            w.counts.outcomes[..WALK_OUTCOMES.len()]
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join("/"),
            w.counts.fallback_casts,
            t.extra,
            t.other_triangle,
            t.missing,
            t.full
        );
    }
}

fn walking_json(i: &ImplResult, r: &InstanceResult) -> Option<Value> {
    let w = i.walking.as_ref()?;
    let full = r.get(w.full)?;
    let t = w.total();
    let outcomes: serde_json::Map<String, Value> =
        WALK_OUTCOMES.iter().zip(w.counts.outcomes).map(|(n, c)| (n.to_string(), json!(c))).collect();
    let finite = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    Some(json!({
        "full": w.full,
        "threshold": w.setup.threshold,
        "step": w.setup.step,
        "confidence": w.iterative.confidence,
        "full_pass_every": w.iterative.full_pass_every,
        "fallback": match w.iterative.fallback { raycontact::WalkFallback::Bvh => "bvh", _ => "drop" },
        "iterative_frames": w.iterative_frames(),
        "full_frames": w.passes.len() - w.iterative_frames(),
        "iterative_fraction": w.iterative_frames() as f64 / w.passes.len().max(1) as f64,
        "per_frame_iterative": w.passes,
        "iterative_ms": finite(i.median_ms_of(true)),
        "full_pass_ms": finite(i.median_ms_of(false)),
        "full_traversal_ms": full.median_ms(),
        "speedup_iterative": finite(full.median_ms() / i.median_ms_of(true)),
        "speedup_mean": full.mean_ms() / i.mean_ms(),
        "walked_per_frame": w.walked,
        "outcomes": outcomes,
        "fallback_casts": w.counts.fallback_casts,
        "fallback_hits": w.counts.fallback_hits,
        "differ_from_full": {
            "full_contacts": t.full,
            "extra": t.extra,
            "other_triangle": t.other_triangle,
            "missing": t.missing,
            "fraction": w.fraction_all(),
            "fraction_iterative": w.fraction_iterative(),
            "per_frame": w.diff.iter().map(|d| d.differ()).collect::<Vec<_>>(),
        },
    }))
}

fn print_gpu_frame(r: &InstanceResult) {
    let Some(g) = r.get("gpu") else { return };
    let dispatches = mean(&g.dispatches.iter().map(|&d| d as f64).collect::<Vec<_>>());
    let back = mean(&g.bytes_read_back.iter().map(|&d| d as f64).collect::<Vec<_>>());
    let (read, written) = g.bytes_bound.unwrap_or((0, 0));
    println!(
        "GPU frame: {dispatches:.0} dispatches, {} read back, {} bound for reading, {} for writing, {} buffers allocated over the timed frames",
        fmt_bytes(back),
        fmt_bytes(read as f64),
        fmt_bytes(written as f64),
        g.buffers_allocated.unwrap_or(0)
    );
}

fn print_stages(r: &InstanceResult) {
    let cols: Vec<&ImplResult> = ordered(r).into_iter().filter(|i| i.stage_timing != "none").collect();
    if cols.is_empty() {
        return;
    }
    let head: Vec<String> = cols
        .iter()
        .map(|i| match i.id {
            "gpu" => "GPU ts".to_string(),
            id => id.to_string(),
        })
        .collect();
    println!("stage ms   {}", head.iter().map(|h| format!("{h:>10}")).collect::<String>());
    for s in Stage::ALL {
        if cols.iter().all(|i| i.stage_median(s).is_none()) {
            continue;
        }
        println!(
            "{:<10} {}",
            s.name(),
            cols.iter().map(|i| format!("{:>10}", fmt_ms(i.stage_median(s)))).collect::<String>()
        );
    }
    println!(
        "{:<10} {}",
        "sum",
        cols.iter().map(|i| format!("{:>10}", fmt_ms(i.stages_total_ms()))).collect::<String>()
    );
}

/// The fitted exponent of each implementation's frame time against the scene's parameter.
pub fn exponents(results: &[InstanceResult]) -> Vec<(&'static str, Option<f64>)> {
    ORDER
        .iter()
        .filter(|id| results.iter().any(|r| r.get(id).is_some()))
        .map(|id| {
            let pts: Vec<(f64, f64)> =
                results.iter().filter_map(|r| Some((r.parameter?, r.get(id)?.median_ms()))).collect();
            (*id, fitted_exponent(&pts))
        })
        .collect()
}

/// The table of a scaling scene: one row per variant.
pub fn print_scaling(scene: SceneName, results: &[InstanceResult]) {
    let Some(first) = results.first() else { return };
    let param = scene.parameter_name().unwrap_or("size");
    println!(
        "== {}: median frame ms against {param}; {} timed frames per size ==",
        scene.name(),
        first.frames
    );
    println!("   {}", scene.description());
    let ids: Vec<&str> = ORDER.iter().copied().filter(|id| first.get(id).is_some()).collect();
    let triangles_column = param != "triangles";
    print!("{param:>9}");
    if triangles_column {
        print!(" {:>9}", "triangles");
    }
    print!(" {:>6} {:>10} {:>9} {:>7} {:>9}", "pairs", "rays/frame", "contacts", "differ", "nodes/ray");
    for id in &ids {
        print!(" {id:>11}");
    }
    println!(" {:>9}", "GPU ts ms");
    for r in results {
        let reference = r.get("cpu-rayon").expect("reference");
        let differ = r.impls.iter().filter(|i| i.kind != ImplKind::Parry).flat_map(|i| i.differ.iter()).max();
        print!("{:>9}", r.parameter.map_or("-".into(), |p| format!("{p}")));
        if triangles_column {
            print!(" {:>9}", r.triangles());
        }
        print!(
            " {:>6} {:>10} {:>9.1} {:>7} {:>9.1}",
            r.rays.pairs,
            r.rays.rays(),
            reference.mean_contacts(),
            differ.copied().unwrap_or(0),
            r.rays.nodes_per_ray_gpu_walk,
        );
        for id in &ids {
            print!(" {:>11}", fmt_ms(r.get(id).map(|i| i.median_ms())));
        }
        println!(" {:>9}", fmt_ms(r.get("gpu").and_then(|g| g.stages_total_ms())));
    }
    let fits = exponents(results);
    println!(
        "fitted exponent of frame time against {param} (1 = linear): {}",
        fits.iter()
            .map(|(id, e)| format!("{id} {}", e.map_or("-".into(), |e| format!("{e:.2}"))))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(last) = results.last() {
        let ratios: Vec<String> = ["cpu-1", "cpu-rayon", "parry-1", "parry-rayon"]
            .iter()
            .filter_map(|id| {
                let g = last.get("gpu")?;
                Some(format!("{id}/gpu {:.2}x", last.get(id)?.median_ms() / g.median_ms()))
            })
            .collect();
        if !ratios.is_empty() {
            println!("at {param} = {}: {}", last.parameter.unwrap_or(f64::NAN), ratios.join(", "));
        }
        print_gpu_frame(last);
    }
    println!();
}

/// GPU against CPU reference: (frames compared, frames whose counts differ, worst set difference).
pub fn agreement(result: &SuiteResult) -> (usize, usize, usize) {
    let (mut frames, mut mismatched, mut worst) = (0, 0, 0);
    for r in &result.instances {
        let (Some(g), Some(c)) = (r.get("gpu"), r.get("cpu-rayon")) else { continue };
        for (k, (a, b)) in g.contacts.iter().zip(&c.contacts).enumerate() {
            frames += 1;
            mismatched += usize::from(a != b);
            worst = worst.max(g.differ.get(k).copied().unwrap_or(0));
        }
    }
    (frames, mismatched, worst)
}

/// The lines after the last scene.
pub fn print_footer(result: &SuiteResult) {
    let (frames, mismatched, worst) = agreement(result);
    if frames > 0 {
        println!(
            "GPU vs CPU reference: {frames} frames compared, {mismatched} with a different contact count, worst set difference {worst} contacts"
        );
    }
    println!("suite wall time: {:.1} s", result.wall_s);
}

fn ms_figures(v: &[f64]) -> Value {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    json!({ "median": median(v), "mean": mean(v), "min": min, "max": max, "per_frame": v })
}

fn impl_json(r: &InstanceResult, i: &ImplResult) -> Value {
    let ms = i.median_ms();
    let vs = |id: &str| r.get(id).map(|o| o.median_ms() / ms);
    let stages: serde_json::Map<String, Value> =
        i.stage_ms.iter().map(|(s, v)| (s.name().to_string(), json!(median(v)))).collect();
    let gpu = (i.kind == ImplKind::Gpu).then(|| {
        let (read, written) = i.bytes_bound.unwrap_or((0, 0));
        json!({
            "dispatches_per_frame": mean(&i.dispatches.iter().map(|&d| d as f64).collect::<Vec<_>>()),
            "bytes_read_back_per_frame": mean(&i.bytes_read_back.iter().map(|&d| d as f64).collect::<Vec<_>>()),
            "dispatches_per_frame_list": i.dispatches,
            "bytes_read_back_per_frame_list": i.bytes_read_back,
            "bytes_bound_read": read,
            "bytes_bound_written": written,
            "buffers_allocated": i.buffers_allocated.unwrap_or(0),
        })
    });
    json!({
        "id": i.id,
        "label": i.label,
        "kind": match i.kind { ImplKind::Gpu => "gpu", ImplKind::Cpu => "cpu", ImplKind::Parry => "parry" },
        "frame_timing": "wall",
        "frame_ms": ms_figures(&i.frame_ms),
        "rays_per_s": r.rays.rays() as f64 / (ms / 1e3),
        "stage_timing": i.stage_timing,
        "stages_ms": stages,
        "stages_total_ms": i.stages_total_ms(),
        "contacts": {
            "mean": i.mean_contacts(),
            "per_frame": i.contacts,
            "by_class": i.classes,
        },
        "differ_from_reference": {
            "max": i.differ.iter().max().copied().unwrap_or(0),
            "per_frame": i.differ,
        },
        "rays_counted": (!i.rays.is_empty()).then(|| i.rays.clone()),
        "walking": walking_json(i, r),
        "gpu": gpu,
        "speedup": {
            "vs_gpu": vs("gpu"),
            "vs_cpu_1": vs("cpu-1"),
            "vs_cpu_rayon": vs("cpu-rayon"),
            "vs_parry_1": vs("parry-1"),
            "vs_parry_rayon": vs("parry-rayon"),
        },
    })
}

fn instance_json(r: &InstanceResult) -> Value {
    let bodies: Vec<Value> = r
        .bodies
        .iter()
        .map(|(name, kind, triangles, vertices, moving)| {
            let (k, h) = match kind {
                BodyKind::Volumetric => ("volumetric", None),
                BodyKind::Cloth { half_thickness } => ("cloth", Some(*half_thickness)),
            };
            json!({
                "name": name, "kind": k, "half_thickness": h,
                "triangles": triangles, "vertices": vertices, "moving": moving,
            })
        })
        .collect();
    let f = &r.rays;
    json!({
        "scene": r.scene.name(),
        "description": r.scene.description(),
        "variant": r.variant,
        "parameter_name": r.scene.parameter_name(),
        "parameter": r.parameter,
        "bodies": bodies,
        "triangles": r.triangles(),
        "vertices": r.vertices(),
        "frames": r.frames,
        "prediction_distance": r.prediction,
        "wall_s": r.wall_s,
        "rays": {
            "pairs": f.pairs,
            "sources": f.sources,
            "inward_rays": f.inward_rays,
            "outward_rays": f.outward_rays,
            "check_rays": f.check_rays,
            "rays_per_frame": f.rays(),
            "nodes_per_ray_gpu_walk": f.nodes_per_ray_gpu_walk,
            "nodes_per_ray_cpu_walk": f.nodes_per_ray_cpu_walk,
            "triangles_per_ray": f.triangles_per_ray,
            "stack_fallbacks": f.stack_fallbacks,
        },
        "implementations": ordered(r).into_iter().map(|i| impl_json(r, i)).collect::<Vec<_>>(),
    })
}

/// The whole run as a `raycontact.bench/2` document.
pub fn json(result: &SuiteResult) -> Value {
    let args = &result.args;
    let gpu = result.gpu.as_ref().map(|c| {
        let i = c.adapter_info();
        json!({
            "name": i.name,
            "vendor": i.vendor,
            "device": i.device,
            "device_type": format!("{:?}", i.device_type),
            "backend": format!("{:?}", i.backend),
            "driver": i.driver,
            "driver_info": i.driver_info,
            "software": c.is_software(),
            "timestamps": c.has_timestamps(),
        })
    });
    let mut scaling = Vec::new();
    for scene in SceneName::ALL.iter().filter(|s| s.is_scaling()) {
        let results: Vec<InstanceResult> =
            result.instances.iter().filter(|r| r.scene == *scene).cloned().collect();
        if results.is_empty() {
            continue;
        }
        let points: Vec<Value> = results
            .iter()
            .map(|r| {
                let ms: serde_json::Map<String, Value> =
                    ordered(r).iter().map(|i| (i.id.to_string(), json!(i.median_ms()))).collect();
                json!({ "parameter": r.parameter, "variant": r.variant, "frame_ms": ms })
            })
            .collect();
        let fits: serde_json::Map<String, Value> =
            exponents(&results).into_iter().map(|(id, e)| (id.to_string(), json!(e))).collect();
        scaling.push(json!({
            "scene": scene.name(),
            "parameter_name": scene.parameter_name(),
            "points": points,
            "fitted_exponent": fits,
        }));
    }
    let (frames, mismatched, worst) = agreement(result);
    let scenes = crate::suite::selected_scenes(args);
    json!({
        "schema": SCHEMA,
        "generator": { "name": "raycontact-bench", "version": env!("CARGO_PKG_VERSION") },
        "settings": {
            "size": args.size.name(),
            "seed": args.seed,
            "frames": args.frames,
            "scenes": scenes.iter().map(|s| s.name()).collect::<Vec<_>>(),
            "cpu_only": args.cpu,
            "parry": !args.no_parry,
        },
        "machine": {
            "gpu": gpu,
            "cpu": {
                "model": cpu_model(),
                "logical_cores": logical_cores(),
                "rayon_threads": result.threads,
            },
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
        },
        "wall_s": result.wall_s,
        "instances": result.instances.iter().map(instance_json).collect::<Vec<_>>(),
        "scaling": scaling,
        "agreement": {
            "frames_compared": frames,
            "count_mismatches": mismatched,
            "max_set_difference": worst,
        },
    })
}
