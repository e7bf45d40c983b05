//! `raycontact-bench pipelines`: how long each kernel's pipeline takes to get ready.

use std::path::PathBuf;

use raycontact::{ContextOptions, GpuContext, KernelGroups, PipelineCacheDir};

/// Creates a GPU context, warms up the pipelines of the kernel groups asked for (every one by
/// default; one empty dispatch each, alone, in which a driver that compiles at the first
/// dispatch, such as lavapipe, generates the machine code) and prints each kernel's creation
/// and warm-up times, longest first, and the pipeline cache used. Time a fresh machine with
/// `MESA_SHADER_CACHE_DISABLE=true` (Mesa's own cache off) and `--no-cache`, or run it twice
/// with a cache directory to see what the cache saves.
#[derive(clap::Args, Debug)]
pub struct PipelinesArgs {
    /// Pick the first adapter whose name contains this (default: WGPU_ADAPTER_NAME, then the
    /// default adapter).
    #[arg(long)]
    adapter: Option<String>,
    /// Keep the pipeline cache in this directory (default: RAYCONTACT_PIPELINE_CACHE, then the
    /// platform's cache directory).
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,
    /// No pipeline cache.
    #[arg(long)]
    no_cache: bool,
    /// Threads that create the pipelines (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// The kernel groups to warm up (`GpuContext::warm_up`; comma-separated): detection,
    /// iterative, intersections, response, ray-queries, sort, or all.
    #[arg(long, value_name = "GROUPS", value_delimiter = ',', default_value = "all", value_parser = group)]
    warm_up: Vec<KernelGroups>,
}

/// A kernel group by its name (`KernelGroups::from_name`).
fn group(name: &str) -> Result<KernelGroups, String> {
    KernelGroups::from_name(name).ok_or_else(|| {
        format!("unknown kernel group {name:?} (detection, iterative, intersections, response, ray-queries, sort, all)")
    })
}

/// Runs the command; returns the exit code.
pub fn run(args: PipelinesArgs) -> i32 {
    let mut options =
        ContextOptions { warm_up: false, pipeline_threads: args.threads, ..ContextOptions::from_env() };
    if args.adapter.is_some() {
        options.adapter_name = args.adapter;
    }
    if let Some(dir) = args.cache_dir {
        options.pipeline_cache = PipelineCacheDir::At(dir);
    }
    if args.no_cache {
        options.pipeline_cache = PipelineCacheDir::Off;
    }
    let ctx = match GpuContext::with_options(options) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("raycontact-bench pipelines: error: {e}");
            return 2;
        }
    };
    let groups = args.warm_up.iter().fold(KernelGroups::NONE, |a, &g| a | g);
    let warmed = match ctx.warm_up(groups) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("raycontact-bench pipelines: error: {e}");
            return 2;
        }
    };
    let cache = ctx.pipeline_cache();
    println!(
        "adapter: {} ({:?}, {})",
        ctx.adapter_name(),
        ctx.adapter_info().backend,
        ctx.adapter_info().driver_info
    );
    let created = ctx.pipeline_creation_time().as_secs_f64();
    println!(
        "{} pipelines ready in {:.3} s: created in {created:.3} s on {} thread(s), then {} of them ({groups:?}) \
         warmed up in {:.3} s, each alone",
        ctx.pipelines_created(),
        created + warmed.time.as_secs_f64(),
        ctx.pipeline_threads(),
        warmed.kernels,
        warmed.time.as_secs_f64()
    );
    match &cache.path {
        Some(p) => println!(
            "pipeline cache: {} ({}; {} bytes written)",
            p.display(),
            if cache.loaded { "loaded" } else { "not loaded" },
            cache.stored_bytes
        ),
        None => println!("pipeline cache: none"),
    }
    let mut times = ctx.pipeline_times();
    let total = |t: &raycontact::PipelineTime| t.create + t.warm_up.unwrap_or_default();
    times.sort_by_key(|t| std::cmp::Reverse(total(t)));
    println!("{:<16} {:>10} {:>10} {:>10}", "kernel", "create s", "warm-up s", "sum s");
    for t in &times {
        let w = t.warm_up.unwrap_or_default().as_secs_f64();
        println!(
            "{:<16} {:>10.3} {:>10.3} {:>10.3}",
            t.kernel,
            t.create.as_secs_f64(),
            w,
            t.create.as_secs_f64() + w
        );
    }
    let (c, w): (f64, f64) = times
        .iter()
        .map(|t| (t.create.as_secs_f64(), t.warm_up.unwrap_or_default().as_secs_f64()))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    println!("{:<16} {c:>10.3} {w:>10.3} {:>10.3}", "sum", c + w);
    0
}
