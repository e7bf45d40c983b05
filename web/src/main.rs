//! The demo's native runner, on raycontact's CPU backend:
//!
//! ```text
//! raycontact-web [--seed S] [--frames N]   the scene of seed S (1) for N frames (120): each
//!                                          frame's contacts and times
//! raycontact-web replay TRACE              detects on the positions a page recorded (TRACE,
//!                                          from web/test-browser), frame by frame, and
//!                                          compares with what the page found; exits 1 on
//!                                          any difference
//! ```

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    if let Err(e) = native::main() {
        eprintln!("raycontact-web: {e}");
        std::process::exit(2);
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use glam::Vec3;
    use raycontact::Scene;
    use raycontact_web::scene::{DEFAULT_SEED, SceneSpec};
    use raycontact_web::sim::{Counts, Sim};
    use raycontact_web::trace::Trace;

    pub fn main() -> Result<(), String> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str) {
            Some("replay") => match &args[1..] {
                [path] => replay(path),
                _ => Err("usage: raycontact-web replay TRACE".into()),
            },
            Some("-h" | "--help") => {
                println!("usage: raycontact-web [--seed S] [--frames N] | raycontact-web replay TRACE");
                Ok(())
            }
            _ => run(&args),
        }
    }

    fn flag(args: &[String], name: &str, default: u64) -> Result<u64, String> {
        match args.iter().position(|a| a == name) {
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a whole number")),
            None => Ok(default),
        }
    }

    fn cpu_sim(seed: u64) -> Result<Sim, String> {
        let scene = Scene::new_cpu(None).map_err(|e| e.to_string())?;
        Sim::new(scene, SceneSpec::new(seed)).map_err(|e| e.to_string())
    }

    fn counts(c: &Counts) -> String {
        format!(
            "{} contacts ({} collisions, {} predictions), keys {:016x}",
            c.contacts, c.collisions, c.predictions, c.keys
        )
    }

    /// The scene on its own.
    fn run(args: &[String]) -> Result<(), String> {
        let seed = flag(args, "--seed", DEFAULT_SEED)?;
        let frames = flag(args, "--frames", 120)?;
        let mut sim = cpu_sim(seed)?;
        println!("raycontact-web: seed {seed}, {} on the CPU backend", describe(&sim));
        for _ in 0..frames {
            let f = pollster::block_on(sim.step()).map_err(|e| e.to_string())?;
            println!(
                "frame {:4}: {}; detection {:.2} ms, integration {:.2} ms",
                f.frame,
                counts(&f.counts),
                f.detect_ms,
                f.integrate_ms
            );
        }
        Ok(())
    }

    fn describe(sim: &Sim) -> String {
        let bodies: Vec<String> = sim
            .spec()
            .bodies
            .iter()
            .map(|b| {
                format!(
                    "{} ({} vertices, {} triangles)",
                    b.name,
                    b.mesh.positions.len(),
                    b.mesh.triangles.len()
                )
            })
            .collect();
        bodies.join(", ")
    }

    /// A page's trace replayed on the CPU backend. Also runs the same seeded scene natively
    /// from its start and reports the last frame up to which its positions equal the page's
    /// bit for bit (after that, the contacts' floating-point fields, computed by WebGPU on the
    /// page and by the CPU twins here, may differ in their last bits, and so do the motions).
    fn replay(path: &str) -> Result<(), String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        let trace = Trace::read(&bytes).map_err(|e| format!("{path}: {e}"))?;
        let mut sim = cpu_sim(trace.seed)?;
        let want: Vec<u32> = sim.spec().bodies.iter().map(|b| b.mesh.positions.len() as u32).collect();
        if want != trace.vertex_counts {
            return Err(format!(
                "{path}: bodies of {:?} vertices, the scene has {want:?}",
                trace.vertex_counts
            ));
        }
        // The page's positions of every body, as the frames update them.
        let mut page: Vec<Vec<Vec3>> = vec![Vec::new(); want.len()];
        // The same scene simulated here, from its start, while it moves as the page's did.
        let mut own = cpu_sim(trace.seed)?;
        let mut same_motion = true;
        let mut differ = 0;
        println!(
            "raycontact-web replay: seed {}, {} frames; {}",
            trace.seed,
            trace.frames.len(),
            describe(&sim)
        );
        for (i, f) in trace.frames.iter().enumerate() {
            if f.frame != i as u32 + 1 {
                return Err(format!("{path}: frame {} where {} was expected", f.frame, i + 1));
            }
            let native = pollster::block_on(sim.detect_at(&f.positions)).map_err(|e| e.to_string())?;
            let ok = native == f.counts;
            differ += usize::from(!ok);
            println!(
                "frame {:4}: page {} | CPU backend {}{}",
                f.frame,
                counts(&f.counts),
                counts(&native),
                if ok { "" } else { "  DIFFERENT" }
            );
            for (b, p) in f.positions.iter().enumerate() {
                if let Some(p) = p {
                    page[b].clone_from(p);
                }
            }
            same_motion = same_motion && (0..page.len()).all(|b| own.positions(b) == page[b].as_slice());
            if same_motion {
                pollster::block_on(own.step()).map_err(|e| e.to_string())?;
            }
        }
        let n = trace.frames.len();
        // `own` stepped through every frame whose positions were the page's.
        let motion = match own.frame() {
            0 => "in no frame".to_string(),
            m => format!("in frames 1..{m}"),
        };
        println!(
            "frames compared: {n}; counts and contact keys equal in {} of them; the native simulation's positions equal the page's bit for bit {motion}",
            n - differ
        );
        if differ > 0 || n == 0 {
            return Err(format!("{differ} of {n} frames differ"));
        }
        Ok(())
    }
}
