//! Hermann et al. 2008's Figure 10: two deformable tori started interpenetrating, pushed apart
//! by raycontact's contact response.
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-examples --example tori
//! cargo run --release -p raycontact-examples --example tori -- --cpu --frames 200
//! ```
//!
//! Prints the collision contacts, the deepest penetration and the distance between the centres
//! per frame; exits with status 1 if the tori still interpenetrate at the end (a collision
//! deeper than [`tori::RESOLVED`]).

use raycontact_examples::tori::{self, Settings};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cpu = args.iter().any(|a| a == "--cpu");
    let mut settings = Settings::default();
    if let Some(i) = args.iter().position(|a| a == "--frames") {
        match args.get(i + 1).and_then(|n| n.parse().ok()) {
            Some(n) => settings.frames = n,
            None => {
                eprintln!("tori: --frames needs a number");
                std::process::exit(2);
            }
        }
    }
    let ctx = if cpu {
        None
    } else {
        match raycontact::GpuContext::new() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("tori: {e} (run with --cpu for the CPU backend)");
                std::process::exit(2);
            }
        }
    };
    println!("frame  contacts  depth     distance");
    let frames = tori::run(ctx.as_ref(), settings, |i, f| {
        println!("{i:>5}  {:>8}  {:<8.5}  {:.4}", f.contacts, f.depth, f.distance)
    });
    match frames {
        Ok(frames) => {
            let last = frames.last().copied();
            if last.is_some_and(|f| f.depth > tori::RESOLVED) {
                eprintln!("tori: still interpenetrating after {} frames", frames.len());
                std::process::exit(1);
            }
            println!("separated: no collision deeper than {} after {} frames", tori::RESOLVED, frames.len());
        }
        Err(e) => {
            eprintln!("tori: {e}");
            std::process::exit(1);
        }
    }
}
