//! Hermann et al. 2008's Figure 10: two deformable tori started interpenetrating, pushed apart
//! by raycontact's contact response (shape-matching bodies, Müller et al. 2005, stepped
//! semi-implicitly: see `raycontact_examples::shape`).
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-examples --example tori
//! cargo run --release -p raycontact-examples --example tori -- --cpu --frames 200
//! scripts/with-gpu cargo run --release -p raycontact-examples --example tori -- --png frames
//! ```
//!
//! Prints the collision contacts, the deepest penetration and the distance between the centres
//! per frame; exits with status 1 if the tori still interpenetrate at the end (a collision
//! deeper than [`tori::RESOLVED`]), 2 when it cannot start.

use clap::Parser;
use raycontact_examples::cli::{Common, Footprint, fail, resident_kib};
use raycontact_examples::tori::{self, Settings, Tori};

/// Two deformable tori pushed apart by the contact response (raycontact example).
#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    common: Common,
}

fn main() {
    let name = "tori";
    let args = Args::parse();
    let c = &args.common;
    let ctx = c.context(name);
    let defaults = Settings::default();
    let settings = Settings { frames: c.frames.unwrap_or(defaults.frames), seed: c.seed, ..defaults };
    let mut sim = Tori::new(ctx.as_ref(), settings).unwrap_or_else(|e| fail(name, e, 1));
    let mut png = c.png_frames(name, ctx.as_ref(), Tori::camera());
    println!("{name}: {} frames on the {}", settings.frames, sim.scene().backend());
    println!("frame  contacts  depth     distance");
    let mut last = None;
    let mut footprint = Footprint::default();
    for i in 0..settings.frames {
        let f = sim.step().unwrap_or_else(|e| fail(name, format!("frame {i}: {e}"), 1));
        if c.rss {
            footprint.sample(f.buffers);
        }
        if c.prints(i, settings.frames) {
            println!("{i:>5}  {:>8}  {:<8.5}  {:.4}", f.contacts, f.depth, f.distance);
            if c.rss {
                println!(
                    "       resident {} KiB, GPU buffers {}",
                    resident_kib().unwrap_or(0),
                    footprint.last.map_or(0, |l| l.1)
                );
            }
        }
        if !sim.is_finite() {
            fail(name, format!("frame {i}: a position or velocity is not finite"), 1);
        }
        last = Some(f);
        if let Some(p) = png.as_mut() {
            p.frame(i, &sim.meshes()).unwrap_or_else(|e| fail(name, e, 1));
        }
    }
    if c.rss {
        println!("{}", footprint.line());
    }
    if last.is_some_and(|f| f.depth > tori::RESOLVED) {
        fail(name, format!("still interpenetrating after {} frames", settings.frames), 1);
    }
    println!("separated: no collision deeper than {} after {} frames", tori::RESOLVED, settings.frames);
}
