//! Lehericey et al. 2015's Figure 6: two cloths pushed through each other and released. With
//! raycontact's inversion handling (the default) they separate; without it (`--no-inversion`)
//! they stay tangled. With `--start-tangled` (issue 13) the cloths start through each other, with
//! no untangled previous frame: global intersection analysis separates them; inversion handling
//! alone (`--no-analysis`) leaves them tangled. See `raycontact_examples::tangled` for the scene
//! and the measures.
//!
//! ```sh
//! scripts/with-gpu cargo run --release -p raycontact-examples --example tangled_cloths
//! scripts/with-gpu cargo run --release -p raycontact-examples --example tangled_cloths -- --no-inversion
//! cargo run --release -p raycontact-examples --example tangled_cloths -- --cpu --png frames
//! scripts/with-gpu cargo run --release -p raycontact-examples --example tangled_cloths -- --start-tangled
//! cargo run --release -p raycontact-examples --example tangled_cloths -- --cpu --start-tangled --no-analysis
//! ```
//!
//! Prints per frame the contacts per class (collisions, of which inverted, and predictions),
//! the tangled vertices of each cloth and how far A's centre lies above B's; with the analysis,
//! also the crossings, contour loops, wrong-side vertices, edge and untangling contacts. Exits
//! with status 1 when the outcome is not the expected one (separated with inversion handling,
//! still tangled without; started tangled: separated with the analysis, still tangled without),
//! 2 when it cannot start.

use clap::Parser;
use raycontact_examples::cli::{Common, Footprint, fail, resident_kib};
use raycontact_examples::tangled::{self, Settings, TangledCloths};

/// Two cloths pushed through each other, with or without inversion handling (raycontact example).
#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    common: Common,
    /// Vertices along each side of each cloth.
    #[arg(long, default_value_t = 32)]
    size: u32,
    /// Turn raycontact's inversion handling off (`Scene::set_inversion_handling(false)`).
    #[arg(long)]
    no_inversion: bool,
    /// Start with A's disc already through B, nothing pushing (issue 13), with global
    /// intersection analysis on (`IntersectionMode::Full`).
    #[arg(long)]
    start_tangled: bool,
    /// With --start-tangled: no analysis, inversion handling alone.
    #[arg(long, requires = "start_tangled")]
    no_analysis: bool,
}

fn main() {
    let name = "tangled_cloths";
    let args = Args::parse();
    let c = &args.common;
    let ctx = c.context(name);
    let defaults =
        if args.start_tangled { Settings::started_tangled(!args.no_analysis) } else { Settings::default() };
    let settings = Settings {
        size: args.size,
        frames: c.frames.unwrap_or(defaults.frames),
        seed: c.seed,
        inversion: !args.no_inversion,
        ..defaults
    };
    let mut sim = TangledCloths::new(ctx.as_ref(), settings).unwrap_or_else(|e| fail(name, e, 1));
    let mut png = c.png_frames(name, ctx.as_ref(), TangledCloths::camera());
    println!(
        "{name}: two {} x {} cloths, inversion handling {}, {} frames ({} push steps of {} m) on the {}",
        settings.size,
        settings.size,
        if settings.inversion { "on" } else { "off" },
        settings.frames,
        settings.push_steps,
        settings.push_step,
        sim.scene().backend()
    );
    if settings.start_tangled {
        println!(
            "started tangled, global intersection analysis {}",
            if settings.analysis { "on" } else { "off" }
        );
    }
    print!("frame  collisions  inverted  predictions  tangled A  tangled B  A over B");
    if settings.analysis {
        print!("  crossings  loops  wrong  edge  untangle");
    }
    println!();
    let mut outcome = tangled::Outcome::default();
    let mut footprint = Footprint::default();
    for i in 0..settings.frames {
        let f = sim.step().unwrap_or_else(|e| fail(name, format!("frame {i}: {e}"), 1));
        if c.rss {
            footprint.sample(sim.scene().buffer_allocations());
        }
        if c.prints(i, settings.frames) {
            print!(
                "{i:>5}  {:>10}  {:>8}  {:>11}  {:>9}  {:>9}  {:+.4}",
                f.collisions, f.inverted, f.predictions, f.tangled.0, f.tangled.1, f.lead
            );
            if settings.analysis {
                let (edge, untangle) = f.intersection_contacts;
                print!("  {:>9}  {:>5}  {:>5}  {edge:>4}  {untangle:>8}", f.crossings, f.loops, f.wrong);
            }
            println!();
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
        outcome.add(&settings, &f);
        if let Some(p) = png.as_mut() {
            p.frame(i, &sim.meshes()).unwrap_or_else(|e| fail(name, e, 1));
        }
    }
    if c.rss {
        println!("{}", footprint.line());
    }
    println!(
        "tangled vertices: at most {} during the run, {} at the end",
        outcome.most_tangled,
        outcome.last.map_or(0, |f| f.tangled_total())
    );
    match outcome.verdict(&settings) {
        Ok(()) if settings.start_tangled && settings.analysis => {
            println!("untangled by the analysis: no tangled vertex after {} frames", outcome.frames)
        }
        Ok(()) if settings.start_tangled => {
            println!(
                "still tangled after {} frames, as expected with inversion handling alone",
                outcome.frames
            )
        }
        Ok(()) if settings.inversion => {
            println!("separated: no tangled vertex after {} frames", outcome.frames)
        }
        Ok(()) => {
            println!("still tangled after {} frames, as expected without inversion handling", outcome.frames)
        }
        Err(e) => fail(name, e, 1),
    }
}
