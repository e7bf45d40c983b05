//! Two FEM soft bodies (a slab and a cube dropped on it) and a cloth dropped over them in
//! rapier3d, with raycontact detecting the soft–soft and cloth self contacts every step and its
//! response applied as particle velocity changes (see the crate's documentation). Headless and
//! seeded; raycontact on the GPU by default, on its CPU backend with `--cpu`.
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-rapier --example rapier_soft_bodies
//! cargo run --release -p raycontact-rapier --example rapier_soft_bodies -- --cpu --steps 120
//! ```
//!
//! Prints per step raycontact's detection and response times and its collision contacts per
//! kind of pair, rapier's step time and its own soft contacts, and the outcome's figures; then
//! the medians. Exits with status 1 when the outcome fails at the last step (a particle of a FEM
//! body deeper than 2 cm in the other, a cloth particle deeper than 2 cm in a FEM body, the cube
//! sunk into the slab, a cloth edge through the cloth, or a non-finite particle), 2 when it
//! cannot start.

use clap::Parser;
use raycontact::{ForceDirection, GpuContext, KernelGroups};
use raycontact_rapier::{Settings, SoftContacts, report};

/// rapier3d soft bodies with raycontact as their soft–soft collision detector.
#[derive(Parser, Debug)]
struct Args {
    /// Run raycontact on its CPU backend (the kernels' CPU twins) instead of the GPU.
    #[arg(long)]
    cpu: bool,
    /// Steps to simulate.
    #[arg(long, default_value_t = Settings::default().steps)]
    steps: usize,
    /// rapier's time step (s).
    #[arg(long, default_value_t = Settings::default().dt)]
    dt: f32,
    /// Seed of the placement (the cube's offset and yaw, the cloth's tilt).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Particles along each edge of the FEM cube (at least 2; the slab has one more along its
    /// sides).
    #[arg(long, default_value_t = Settings::default().cube)]
    cube: usize,
    /// Particles along each edge of the cloth.
    #[arg(long, default_value_t = Settings::default().cloth)]
    cloth: usize,
    /// Who resolves the soft bodies' contacts: raycontact's response, rapier's own contacts
    /// (raycontact still detects), or nobody (the control run).
    #[arg(long, value_enum, default_value_t = SoftContacts::Raycontact)]
    contacts: SoftContacts,
    /// raycontact's stiffness κ: k = κ m / dt² (m: the lighter particle of the pair).
    #[arg(long, default_value_t = Settings::default().stiffness)]
    stiffness: f32,
    /// raycontact's damping ζ: c = ζ m / dt (m: the lightest particle).
    #[arg(long, default_value_t = Settings::default().damping)]
    damping: f32,
    /// raycontact's forces along the ray (Hermann et al. 2008) instead of along the hit
    /// triangle's normal (Lehericey et al. 2015, the default here: flat faces resting on flat
    /// faces get no sideways push from the vertices' slanted normals at edges and corners).
    #[arg(long)]
    along_ray: bool,
    /// Coulomb friction coefficient at raycontact's contacts (applied by the coupling; 0: none).
    #[arg(long, default_value_t = Settings::default().friction)]
    friction: f32,
    /// Print one row every K steps (and the last).
    #[arg(long, value_name = "K", default_value_t = 1)]
    print_every: usize,
}

fn fail(message: impl std::fmt::Display, code: i32) -> ! {
    eprintln!("rapier_soft_bodies: {message}");
    std::process::exit(code)
}

fn main() {
    let a = Args::parse();
    if a.cube < 2 || a.cloth < 2 {
        fail("--cube and --cloth must be at least 2", 2);
    }
    let settings = Settings {
        cube: a.cube,
        cloth: a.cloth,
        steps: a.steps,
        dt: a.dt,
        seed: a.seed,
        contacts: a.contacts,
        stiffness: a.stiffness,
        damping: a.damping,
        friction: a.friction,
        direction: if a.along_ray { ForceDirection::AlongRay } else { ForceDirection::AlongNormal },
        ..Settings::default()
    };
    // The kernels the steps run (the detection's and the response's) warmed up before the first
    // step, so that no step's time includes a driver compiling a kernel at its first dispatch
    // (lavapipe does), and no other kernel is compiled.
    let (ctx, backend) = if a.cpu {
        (None, "raycontact's CPU backend".to_string())
    } else {
        let ctx = GpuContext::new()
            .unwrap_or_else(|e| fail(format!("{e} (run with --cpu for the CPU backend)"), 2));
        let warmed = ctx
            .warm_up(KernelGroups::DETECTION | KernelGroups::RESPONSE)
            .unwrap_or_else(|e| fail(format!("warming up the kernels: {e}"), 2));
        let backend = format!(
            "the GPU ({}; pipelines created in {:.1} s, the {} kernels of the detection and the response warmed up in {:.1} s)",
            ctx.adapter_info().name,
            ctx.pipeline_creation_time().as_secs_f64(),
            warmed.kernels,
            warmed.time.as_secs_f64()
        );
        (Some(ctx), backend)
    };
    println!(
        "rapier_soft_bodies: a FEM cube ({0}x{0}x{0} particles) on a FEM slab ({1}x{2}x{1}), a {3}x{3} cloth, {4} steps of {5:.5} s, raycontact on {backend}, soft contacts resolved by {6:?}",
        settings.cube,
        settings.cube + 1,
        settings.cube / 2 + 1,
        settings.cloth,
        settings.steps,
        settings.dt,
        settings.contacts
    );
    println!("{}", report::header());
    let every = a.print_every.max(1);
    let n = settings.steps;
    let run = raycontact_rapier::run(ctx.as_ref(), &settings, |i, s| {
        if i % every == 0 || i + 1 == n {
            println!("{}", report::row(i, s));
        }
    })
    .unwrap_or_else(|e| fail(e, 1));
    println!("{}", report::summary(&run.steps));
    println!("  cloth edges through the cloth at the end: {}", run.crossings);
    let failures = run.failures();
    if !failures.is_empty() {
        fail(format!("the outcome fails: {}", failures.join("; ")), 1);
    }
    println!(
        "outcome holds: no particle of a FEM body deeper than {} m in the other, no cloth particle deeper than {} m in a FEM body, the cube resting on the slab, no cloth edge through the cloth",
        raycontact_rapier::outcome::FEM_TOLERANCE,
        raycontact_rapier::outcome::CLOTH_TOLERANCE
    );
}
