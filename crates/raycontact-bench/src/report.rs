//! The suite's tables on stdout: the header, one table per instance (or per scaling scene) as
//! the run goes, and the footer.

use raycontact::{BodyKind, BvhAction, GpuContext, PipelineCacheStatus, Stage};

use crate::args::SuiteArgs;
use crate::fmt::{fmt_bytes, fmt_ms};
use crate::gpu_model::{self, H100};
use crate::machine::{cpu_model, logical_cores};
use crate::pools::Pools;
use crate::results::{
    ImplKind, ImplResult, InstanceResult, ORDER, SuiteResult, WALK_OUTCOMES, WalkFigures, exponents,
};
use crate::scenes::SceneName;
use crate::stats::{mean, median};

/// The lines before the first scene.
pub fn print_header(ctx: Option<&GpuContext>, args: &SuiteArgs, scenes: &[SceneName], pools: &Pools) {
    println!(
        "raycontact-bench: scene suite (size {}, seed {}, intersections {})",
        args.size.name(),
        args.seed,
        args.intersections.name()
    );
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
                match (c.has_timestamps(), args.no_gpu_timestamps) {
                    (true, false) => "GPU timestamps",
                    (true, true) => "none (--no-gpu-timestamps): frame wall time only",
                    (false, _) => "none (no timestamps): frame wall time only",
                }
            );
            println!(
                "pipelines: {} created and warmed up in {:.2} s on {} thread(s), {}, with the context, \
                 before the first scene (no frame of any scene creates one)",
                c.pipelines_created(),
                c.pipeline_creation_time().as_secs_f64(),
                c.pipeline_threads(),
                cache_words(c.pipeline_cache())
            );
            let own = if args.tuning.is_some() { "--tuning" } else { "the adapter kind's" };
            println!("kernels' tuning ({own}): {:?}", c.tuning());
        }
        None => println!("GPU: not used (--cpu)"),
    }
    println!(
        "CPU: {}, {} logical cores; CPU reference: raycontact's CPU twins, 1 thread and rayon {}; peer: {}",
        cpu_model().unwrap_or_else(|| "unknown model".into()),
        logical_cores(),
        pools.all.current_num_threads(),
        if args.no_parry {
            "none (--no-parry)"
        } else {
            "parry3d 0.31 (BVH rebuilt every frame, or its deformable TriMesh refitted; the same rays classified by the same rules)"
        }
    );
    println!("CPU threads: {}", pools.pinning.words());
    println!("scenes: {}", scenes.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "));
    println!(
        "timing: {}",
        if args.sequential {
            "sequential (--sequential): each implementation's frames back to back, one implementation \
             after another"
        } else {
            "interleaved: every implementation's set-up frame, then frame by frame across the \
             implementations (each one's frame f in turn, each frame's turn starting one implementation \
             further), so that the machine's drift during a run slows them alike"
        }
    );
    println!();
}

/// How the pipelines were created, in words: cold or from the pipeline cache.
pub fn cache_words(status: &PipelineCacheStatus) -> String {
    match (&status.path, status.loaded) {
        (None, _) => "cold (no pipeline cache)".into(),
        (Some(p), false) => {
            format!("cold (no usable pipeline cache at {}; written for the next run)", p.display())
        }
        (Some(p), true) => format!("with the pipeline cache {}", p.display()),
    }
}

/// The bodies in words: how many, of which kind, how many static.
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

/// `of`'s median frame time over `this`'s, as "1.23x".
fn speedup(of: Option<&ImplResult>, this: &ImplResult) -> String {
    match of {
        Some(o) => format!("{:.2}x", o.median_ms() / this.median_ms()),
        None => "-".into(),
    }
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
    // The GPU tuning's walk (a cloth vertex's two rays together), where it differs.
    let line = f.nodes_per_ray_gpu_line_walk != f.nodes_per_ray_gpu_walk;
    let together = |what: String| {
        if line {
            format!("; {what} with a cloth vertex's two rays walked together, as on a GPU")
        } else {
            String::new()
        }
    };
    println!(
        "pairs tested {}; source vertices {} ({} turned away: nothing within reach); rays/frame {} ({} inward + {} outward + {} own-body); BVH nodes/ray {:.1} (GPU walk{}), {:.1} (CPU walk); triangles/ray {:.1}",
        f.pairs,
        f.sources,
        f.unreached,
        f.rays(),
        f.inward_rays,
        f.outward_rays,
        f.check_rays,
        f.nodes_per_ray_gpu_walk,
        together(format!("{:.1}", f.nodes_per_ray_gpu_line_walk)),
        f.nodes_per_ray_cpu_walk,
        f.triangles_per_ray
    );
    println!(
        "traversal bytes/ray: {} in the kernels' binary layout (GPU walk: {:.1} nodes of 16 B, two a 32-byte child pair, {:.2} triangles of 128 B{}), {} in the 4-wide one (CPU walk: {:.1} wide nodes of 128 B, {:.2} triangle records of 64 B)",
        fmt_bytes(gpu_model::binary_bytes_per_ray(f, false)),
        f.nodes_per_ray_gpu_walk,
        f.triangles_per_ray,
        together(fmt_bytes(gpu_model::binary_bytes_per_ray(f, true))),
        fmt_bytes(gpu_model::wide_bytes_per_ray(f)),
        f.wide_nodes_per_ray_cpu_walk,
        f.triangles_per_ray_cpu_walk
    );
    if f.longest_source.is_some() {
        println!(
            "longest source: {} nodes ({}), the GPU ray stage's serial floor; largest valence {} triangles",
            f.longest_source_nodes,
            f.longest_source_name(&r.bodies),
            f.largest_valence
        );
    }
    println!(
        "{:<38} {:>9} {:>9} {:>8} {:>8} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "implementation",
        "frame ms",
        "worst ms",
        "Mrays/s",
        "ray/core",
        "contacts",
        "differ",
        "vs cpu-1",
        "vs rayon",
        "vs p-1",
        "vs p-ray",
        "vs pr-ray"
    );
    let (c1, cr, p1) = (r.get("cpu-1"), r.get("cpu-rayon"), r.get("parry-1"));
    let (pr, prr) = (r.get("parry-rayon"), r.get("parry-refit-rayon"));
    for i in r.ordered() {
        let ms = i.median_ms();
        let per_core = i.ray_rate_per_core(f.rays()).map_or("-".into(), |x| format!("{:.3}", x / 1e6));
        println!(
            "{:<38} {:>9.2} {:>9.2} {:>8.3} {:>8} {:>9.1} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}",
            i.label,
            ms,
            i.worst_ms(),
            f.rays() as f64 / ms / 1e3,
            per_core,
            i.mean_contacts(),
            i.differ.iter().max().copied().unwrap_or(0),
            speedup(c1, i),
            speedup(cr, i),
            speedup(p1, i),
            speedup(pr, i),
            speedup(prr, i),
        );
    }
    println!(
        "{:<17} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "by class", "collision", "prediction", "inward", "outward", "inverted", "walked"
    );
    for i in r.ordered() {
        let c = &i.classes;
        println!(
            "{:<17} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            i.id, c.collision, c.prediction, c.inward, c.outward, c.inverted, c.walked
        );
    }
    print_same_algorithm(r);
    print_walking(r);
    print_frame_kinds(r);
    print_bvh(r);
    print_gpu_frame(r);
    print_stages(r);
    print_intersections(r);
    println!();
}

/// What the refitting implementations did to their BVHs.
fn print_bvh(r: &InstanceResult) {
    for i in r.ordered() {
        let Some((policy, frames)) = &i.bvh else { continue };
        if *policy == "rebuild" {
            continue;
        }
        let count = |a: BvhAction| frames.iter().filter(|s| s.action == a).count();
        let d: Vec<f64> = frames.iter().filter_map(|s| s.degradation.map(f64::from)).collect();
        let degradation = if d.is_empty() {
            "not measured (GPU refit)".to_string()
        } else {
            let max = d.iter().copied().fold(f64::MIN, f64::max);
            format!("median {:.3}, max {max:.3}", median(&d))
        };
        // The host's part of the GPU's tree work (`Auto`'s measure, the binned-SAH trees
        // written): every timed frame's, none counting as 0.
        let host: Vec<f64> = frames.iter().map(|s| s.host_ns.unwrap_or(0.0) / 1e6).collect();
        let host = if i.kind == ImplKind::Gpu && host.iter().any(|&h| h > 0.0) {
            let max = host.iter().copied().fold(0.0, f64::max);
            format!("; host BVH work median {:.3} ms, max {max:.3}", median(&host))
        } else {
            String::new()
        };
        println!(
            "BVH {:<10} {policy}: {} rebuilt, {} refitted, {} kept of {} timed frames; SAH cost over the last rebuild's: {degradation}{host}",
            i.id,
            count(BvhAction::Rebuilt),
            count(BvhAction::Refitted),
            count(BvhAction::Kept),
            frames.len()
        );
    }
}

/// The intersection stages' figures (`--intersections`), one line per raycontact implementation
/// that ran them: counts per frame (mean), then the crossings stage's median time and the three
/// stages' together over the rays stage's.
fn print_intersections(r: &InstanceResult) {
    let rows: Vec<&ImplResult> = r.ordered().into_iter().filter(|i| !i.intersections.is_empty()).collect();
    if rows.is_empty() {
        return;
    }
    println!(
        "{:<12} {:>10} {:>10} {:>8} {:>10} {:>10} {:>11} {:>11}",
        "intersect", "traced", "crossings", "loops", "edge c.", "untangle", "cross/rays", "all/rays"
    );
    for i in rows {
        let m = |f: fn(&raycontact::IntersectionCounts) -> u32| i.intersection_mean(f).unwrap_or(0.0);
        let ratio = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}x"));
        let ratios = i.intersection_ratios();
        println!(
            "{:<12} {:>10.0} {:>10.1} {:>8.1} {:>10.1} {:>10.1} {:>11} {:>11}",
            i.id,
            m(|c| c.edges_traced),
            m(|c| c.crossings),
            m(|c| c.loops),
            m(|c| c.edge_contacts),
            m(|c| c.untangle_contacts),
            ratio(ratios.map(|r| r.0)),
            ratio(ratios.map(|r| r.1)),
        );
    }
}

/// The walking implementations against their full traversals.
/// The GPU implementations' frames over the CPU running the same algorithm (the kernels' twins
/// on the binary BVH, `cpu-twins`) and over the CPU backend's own (4-wide trees, `cpu-rayon`).
fn print_same_algorithm(r: &InstanceResult) {
    let (Some(twins), Some(rayon)) = (r.get("cpu-twins"), r.get("cpu-rayon")) else { return };
    let ratios: Vec<String> = r
        .ordered()
        .into_iter()
        .filter(|i| i.kind == ImplKind::Gpu && i.walking.is_none())
        .map(|i| {
            let ms = i.median_ms();
            format!(
                "{} {:.2}x cpu-twins, {:.2}x cpu-rayon",
                i.id,
                ms / twins.median_ms(),
                ms / rayon.median_ms()
            )
        })
        .collect();
    if !ratios.is_empty() {
        println!("GPU frame over the CPU's (same algorithm: cpu-twins): {}", ratios.join("; "));
    }
}

fn print_walking(r: &InstanceResult) {
    let walks: Vec<(&ImplResult, &WalkFigures)> =
        r.ordered().into_iter().filter_map(|i| Some((i, i.walking.as_ref()?))).collect();
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

/// Per raycontact implementation, its frames by kind (rebuild, refit, iterative): median and
/// worst frame, the worst over the median, and the GPU's dispatches; and the set-up frame.
fn print_frame_kinds(r: &InstanceResult) {
    let impls: Vec<&ImplResult> = r.ordered().into_iter().filter(|i| i.kind != ImplKind::Parry).collect();
    if impls.is_empty() {
        return;
    }
    println!(
        "{:<12} {:>10} {:>7} {:>9} {:>9} {:>7} {:>10}",
        "frames", "kind", "frames", "median", "worst", "worst/", "dispatches"
    );
    for i in impls {
        for (n, k) in i.kinds().iter().enumerate() {
            println!(
                "{:<12} {:>10} {:>7} {:>9.2} {:>9.2} {:>6.2}x {:>10}",
                if n == 0 { i.id } else { "" },
                k.kind.name(),
                k.frames,
                k.median_ms,
                k.worst_ms,
                k.worst_over_median(),
                k.dispatches.map_or("-".into(), |d| format!("{d:.1}")),
            );
        }
        if let Some(ms) = i.setup_ms {
            println!("{:<12} {:>10} {:>7} {:>9.2}", "", "set-up", 1, ms);
        }
    }
}

/// The GPU frames' dispatches and bytes (rebuilding and refitting).
fn print_gpu_frame(r: &InstanceResult) {
    for (id, what) in [("gpu", "GPU frame"), ("gpu-refit", "GPU refit frame"), ("gpu-auto", "GPU auto frame")]
    {
        let Some(g) = r.get(id) else { continue };
        let dispatches = mean(&g.dispatches.iter().map(|&d| d as f64).collect::<Vec<_>>());
        let timestamps = mean(&g.timestamps.iter().map(|&d| d as f64).collect::<Vec<_>>());
        let back = mean(&g.bytes_read_back.iter().map(|&d| d as f64).collect::<Vec<_>>());
        let (read, written) = g.bytes_bound.unwrap_or((0, 0));
        println!(
            "{what}: {dispatches:.0} dispatches, {timestamps:.0} timestamps written, {} read back, {} bound for reading, {} for writing, {} buffers allocated over the timed frames",
            fmt_bytes(back),
            fmt_bytes(read as f64),
            fmt_bytes(written as f64),
            g.buffers_allocated.unwrap_or(0)
        );
        if let Some(h) = g.host_ms() {
            println!(
                "  host steps (medians of the timed frames, ms): record {:.3}, submit {:.3}, wait for the GPU {:.3}, copy {:.3}, order {:.3}; together {:.3} of the {:.3} frame",
                h.record,
                h.submit,
                h.wait,
                h.copy,
                h.order,
                h.total,
                g.median_ms()
            );
        }
        if let Some(w) = g.trees_walked {
            let together = if w.nodes_per_ray_line != w.nodes_per_ray {
                format!(" ({:.1} with a cloth vertex's two rays walked together)", w.nodes_per_ray_line)
            } else {
                String::new()
            };
            println!(
                "  its trees (the last frame's, read back): {:.1} nodes/ray{together}, {:.2} triangles/ray",
                w.nodes_per_ray, w.triangles_per_ray
            );
        }
        if let Some(c) = gpu_model::frame_counts(g, &r.rays) {
            let e = H100.estimate(&c);
            println!(
                "  {} floor from these counts (gpu_model.rs; not a measurement): {:.3} ms = fixed {:.3} + bound bytes {:.3} + traversal {:.3} + read-back {:.3}",
                H100.name,
                e.total_ms(),
                e.fixed_ms,
                e.memory_ms,
                e.traversal_ms,
                e.read_back_ms
            );
        }
    }
}

/// The median time of each stage, one column per implementation with stage times.
fn print_stages(r: &InstanceResult) {
    let cols: Vec<&ImplResult> = r.ordered().into_iter().filter(|i| i.stage_timing != "none").collect();
    if cols.is_empty() {
        return;
    }
    let head: Vec<String> = cols
        .iter()
        .map(|i| match i.id {
            "gpu" => "GPU ts".to_string(),
            "gpu-refit" => "refit ts".to_string(),
            "gpu-auto" => "auto ts".to_string(),
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

/// The table of a scaling scene: one row per variant.
pub fn print_scaling(scene: SceneName, results: &[InstanceResult]) {
    let Some(first) = results.first() else { return };
    let param = scene.parameter_name().unwrap_or("size");
    let (fewest, most) =
        results.iter().fold((first.frames, first.frames), |(lo, hi), r| (lo.min(r.frames), hi.max(r.frames)));
    let frames = if fewest == most { format!("{most}") } else { format!("{fewest} to {most}") };
    println!("== {}: median frame ms against {param}; {frames} timed frames per size ==", scene.name());
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
    let fits = exponents(&results.iter().collect::<Vec<_>>());
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

/// The lines after the last scene.
pub fn print_footer(result: &SuiteResult) {
    let (frames, mismatched, worst, unreached) = result.agreement();
    if frames > 0 {
        println!(
            "GPU vs CPU reference: {frames} frames compared, {mismatched} with a different contact count, worst set difference {worst} contacts, {unreached} with a different count of sources turned away"
        );
    }
    println!("suite wall time: {:.1} s", result.wall_s);
}
