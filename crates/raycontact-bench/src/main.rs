//! `raycontact-bench`: the headless benchmark of raycontact.
//!
//! `raycontact-bench` (or `raycontact-bench bvh`) measures the per-frame BVH rebuild of a
//! deforming mesh of 10k, 100k and 1M triangles on the GPU adapter, on the CPU backend
//! (single-threaded and with rayon) and in parry3d, side by side in one run, with the tree
//! quality and the machine-independent figures of a GPU frame. `raycontact-bench detect A B`
//! runs one detection step between two mesh files and writes the contacts as JSON.

mod bvh;
mod contacts;
mod detect;
mod sah;

use clap::{Parser, Subcommand};

/// Headless benchmark and command-line front end of raycontact.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Per-frame BVH rebuild: GPU, CPU backend and parry3d (the default).
    Bvh(bvh::BvhArgs),
    /// Full detection frames: GPU, CPU backend and parry3d casting the same rays.
    Contacts(contacts::ContactsArgs),
    /// One detection step between two meshes; contacts as JSON.
    Detect(Box<detect::DetectArgs>),
}

/// The GPU context the benchmarks run on (`None` with `cpu`); exits with a message when no
/// adapter matches.
fn gpu_context(cpu: bool, adapter: Option<String>) -> Option<raycontact::GpuContext> {
    if cpu {
        return None;
    }
    let mut options = raycontact::ContextOptions::from_env();
    if adapter.is_some() {
        options.adapter_name = adapter;
    }
    match raycontact::GpuContext::with_options(options) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("raycontact-bench: {e}\n(run with --cpu for the CPU backend and parry3d only)");
            std::process::exit(2);
        }
    }
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        None => bvh::run(bvh::BvhArgs::default()),
        Some(Command::Bvh(args)) => bvh::run(args),
        Some(Command::Contacts(args)) => contacts::run(args),
        Some(Command::Detect(args)) => std::process::exit(detect::run(*args)),
    }
}
