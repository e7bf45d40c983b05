//! A 64 x 64 cloth with thickness dropped on a ball and a box, predictions
//! on: raycontact detects the contacts and gives the collisions' penalty forces; the example's
//! position-based cloth uses the predictions as unilateral constraints (see
//! `raycontact_examples::cloth_on_ball` and `raycontact_examples::world`).
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-examples --example cloth_on_ball
//! cargo run --release -p raycontact-examples --example cloth_on_ball -- --cpu --frames 600
//! scripts/with-gpu cargo run --release -p raycontact-examples --example cloth_on_ball -- --png frames --png-every 5
//! ```
//!
//! Prints per frame the contacts (collisions, predictions, inverted, active prediction
//! constraints), the deepest cloth vertex inside a body, the energy against its initial value
//! and the largest stretch. Exits with status 1 if a vertex ends deeper than the cloth's
//! half-thickness inside a body, the energy ever exceeds its initial value by more than 1%, or
//! anything becomes non-finite; 2 when it cannot start (no adapter; with --cpu --png, no adapter
//! to render with).

use clap::Parser;
use raycontact_examples::cli::{Common, Footprint, fail, resident_kib};
use raycontact_examples::cloth_on_ball::{self, ClothOnBall, Settings};

/// A cloth dropped on a ball and a box (raycontact example).
#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    common: Common,
    /// Vertices along each side of the cloth.
    #[arg(long, default_value_t = 64)]
    size: u32,
}

fn main() {
    let name = "cloth_on_ball";
    let args = Args::parse();
    let c = &args.common;
    let ctx = c.context(name);
    let defaults = Settings::default();
    let settings =
        Settings { size: args.size, frames: c.frames.unwrap_or(defaults.frames), seed: c.seed, ..defaults };
    let mut sim = ClothOnBall::new(ctx.as_ref(), settings).unwrap_or_else(|e| fail(name, e, 1));
    let mut png = c.png_frames(name, ctx.as_ref(), ClothOnBall::camera());
    println!(
        "{name}: {} x {} cloth (half-thickness {} m), {} frames on the {}; initial energy {:.4} J",
        settings.size,
        settings.size,
        settings.half_thickness,
        settings.frames,
        sim.scene().backend(),
        sim.initial_energy
    );
    println!("frame  collisions  predictions  inverted  rows  depth     too_deep  energy/E0  strain");
    let mut outcome = cloth_on_ball::Outcome::default();
    let mut footprint = Footprint::default();
    for i in 0..settings.frames {
        let f = sim.step().unwrap_or_else(|e| fail(name, format!("frame {i}: {e}"), 1));
        if c.rss {
            footprint.sample(f.buffers);
        }
        if c.prints(i, settings.frames) {
            println!(
                "{i:>5}  {:>10}  {:>11}  {:>8}  {:>4}  {:<8.5}  {:>8}  {:<9.5}  {:.4}",
                f.collisions,
                f.predictions,
                f.inverted,
                f.active_rows,
                f.depth,
                f.too_deep,
                f.energy / sim.initial_energy,
                f.strain
            );
            if c.rss {
                println!(
                    "       resident {} KiB, GPU buffers {}",
                    resident_kib().unwrap_or(0),
                    footprint.last.map_or(0, |l| l.1)
                );
            }
        }
        if !f.finite {
            fail(name, format!("frame {i}: a position or velocity is not finite"), 1);
        }
        outcome.add(&f);
        if let Some(p) = png.as_mut() {
            p.frame(i, &sim.meshes()).unwrap_or_else(|e| fail(name, e, 1));
        }
    }
    if c.rss {
        println!("{}", footprint.line());
    }
    if let Some((i, worst)) = outcome.most_energy {
        println!("largest energy: {:.5} of the initial, at frame {i}", worst / sim.initial_energy);
    }
    match outcome.verdict(sim.initial_energy) {
        Ok(()) => println!(
            "resting: no vertex deeper than {} m inside a body after {} frames, energy bounded",
            settings.half_thickness, outcome.frames
        ),
        Err(e) => fail(name, e, 1),
    }
}
