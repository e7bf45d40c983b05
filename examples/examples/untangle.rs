//! Two cloths that start interpenetrating, untangled by global intersection analysis, or left
//! tangled by inversion handling alone ([`raycontact_examples::untangle`] explains the scene and
//! the example's own position-based step).
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-examples --example untangle
//! cargo run --release -p raycontact-examples --example untangle -- --cpu --frames 40
//! # the vertex rays' contacts only: inversion handling alone (Lehericey et al. 2015)
//! cargo run --release -p raycontact-examples --example untangle -- --cpu --inversion-only
//! ```
//!
//! Prints per frame the crossings, the contour's loops, each sheet's regions and its vertices on
//! the wrong side, and the contacts by kind; exits with status 1 when the sheets still cross at
//! the end (unless `--inversion-only`).

use raycontact_examples::untangle::{self, Settings};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut settings =
        Settings { inversion_only: args.iter().any(|a| a == "--inversion-only"), ..Settings::default() };
    if let Some(i) = args.iter().position(|a| a == "--frames") {
        match args.get(i + 1).and_then(|n| n.parse().ok()) {
            Some(n) => settings.frames = n,
            None => {
                eprintln!("untangle: --frames needs a number");
                std::process::exit(2);
            }
        }
    }
    let ctx = if args.iter().any(|a| a == "--cpu") {
        None
    } else {
        match raycontact::GpuContext::new() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("untangle: {e} (run with --cpu for the CPU backend)");
                std::process::exit(2);
            }
        }
    };
    println!(
        "{}",
        if settings.inversion_only { "inversion handling alone" } else { "global intersection analysis" }
    );
    println!("frame  crossings  loops (closed)  regions A/B  wrong A/B  collisions inverted  edge  untangle");
    let frames = untangle::run(ctx.as_ref(), settings, |i, f| {
        println!(
            "{i:>5}  {:>9}  {:>5} ({:>2})     {:>4}/{:<4}  {:>4}/{:<4} {:>10} {:>8}  {:>4}  {:>8}",
            f.crossings,
            f.loops.0,
            f.loops.1,
            f.regions.0,
            f.regions.1,
            f.wrong.0,
            f.wrong.1,
            f.collisions.0,
            f.collisions.1,
            f.intersection_contacts.0,
            f.intersection_contacts.1
        )
    });
    match frames {
        Ok(frames) => {
            let crossing = frames.last().is_some_and(|f| f.crossings > 0);
            if crossing && !settings.inversion_only {
                eprintln!("untangle: the sheets still cross after {} frames", frames.len());
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("untangle: {e}");
            std::process::exit(1);
        }
    }
}
