//! `raycontact-bench`: the headless benchmark of raycontact.
//!
//! `raycontact-bench` runs the scene suite (see `--help`): named, seeded scenes from the papers
//! (Hermann et al. 2008's tori, the IRTCD resting pile, Lehericey et al. 2015's cloth scenes,
//! mesh scaling, or two mesh files), each driven by scripted motion over a number of frames, on
//! the GPU adapter, on the CPU reference (single-threaded and with rayon) and in parry3d, in the
//! same run, with a table on stdout, `--json` (schema `raycontact.bench/6`), `--plot` and a
//! progress bar. `fig8` reproduces Hermann et al. 2008's Figure 8 with the contact response. The
//! subcommands `bvh`, `contacts` and `detect` are the older single-purpose
//! benchmarks and the one-step JSON front end.

mod args;
mod bvh;
mod contacts;
mod detect;
mod fig8;
mod fmt;
mod gpu_model;
mod json;
mod machine;
mod peers;
mod pipelines;
mod plot;
mod pools;
mod progress;
mod report;
mod results;
mod run;
mod sah;
mod scenes;
mod stats;
mod suite;
mod tuning;

use clap::{Parser, Subcommand};

/// Headless benchmark of raycontact: ray-traced collision detection between deforming meshes on
/// the GPU, against its CPU reference and parry3d, on the scenes of the papers.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None, after_long_help = args::AFTER_HELP)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    suite: args::SuiteArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Per-frame BVH rebuild of one deforming torus: GPU, CPU backend and parry3d.
    Bvh(bvh::BvhArgs),
    /// Full detection frames on the tori and two real scans: GPU, CPU backend and parry3d.
    Contacts(contacts::ContactsArgs),
    /// One detection step between two meshes; contacts as JSON.
    Detect(Box<detect::DetectArgs>),
    /// Hermann et al. 2008's Figure 8: the tangential error of the response force on a cylinder
    /// resting in a box, against its number of sides.
    Fig8(fig8::Fig8Args),
    /// How long each kernel's pipeline takes to create and warm up, and the pipeline cache.
    Pipelines(pipelines::PipelinesArgs),
}

/// The GPU context the benchmarks run on (`None` with `cpu`), its kernels built for the tuning
/// `tuning` names (`--tuning`, [`tuning::parse`]; `None`: the adapter kind's); exits with a
/// message when no adapter matches or the tuning is not one.
fn gpu_context(cpu: bool, adapter: Option<String>, tuning: Option<&str>) -> Option<raycontact::GpuContext> {
    if cpu {
        return None;
    }
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("raycontact-bench: {e}\n(run with --cpu for the CPU backend and parry3d only)");
        std::process::exit(2);
    };
    // Every kernel compiled (and, on drivers that compile at the first dispatch, run once)
    // before any timed frame.
    let mut options = raycontact::ContextOptions { warm_up: true, ..raycontact::ContextOptions::from_env() };
    if adapter.is_some() {
        options.adapter_name = adapter;
    }
    // The adapter asked for once, its kind read for the tuning.
    let adapter = options.adapter().unwrap_or_else(|e| fail(&e));
    if let Some(spec) = tuning {
        let kind = adapter.get_info().device_type;
        let t = tuning::parse(spec, raycontact::Tuning::for_device_type(kind)).unwrap_or_else(|e| fail(&e));
        options.tuning = Some(t);
    }
    Some(raycontact::GpuContext::with_options_on(&adapter, &options).unwrap_or_else(|e| fail(&e)))
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        None => std::process::exit(suite::run(cli.suite)),
        Some(Command::Bvh(args)) => bvh::run(args),
        Some(Command::Contacts(args)) => contacts::run(args),
        Some(Command::Detect(args)) => std::process::exit(detect::run(*args)),
        Some(Command::Fig8(args)) => std::process::exit(fig8::run(args)),
        Some(Command::Pipelines(args)) => std::process::exit(pipelines::run(args)),
    }
}
