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
    use raycontact::Scene;
    use raycontact_web::scene::{CLOTH, DEFAULT_SEED, SceneSpec};
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
        let mut own = cpu_sim(trace.seed)?;
        let mut same_motion = Some(0u32);
        let mut cloth = Vec::new();
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
            if !ok {
                differ += 1;
            }
            println!(
                "frame {:4}: page {} | CPU backend {}{}",
                f.frame,
                counts(&f.counts),
                counts(&native),
                if ok { "" } else { "  DIFFERENT" }
            );
            if let Some(p) = &f.positions[CLOTH] {
                cloth.clone_from(p);
            }
            if let Some(n) = same_motion {
                same_motion = (own.positions(CLOTH) == cloth.as_slice()).then_some(n + 1);
                if same_motion.is_some() {
                    pollster::block_on(own.step()).map_err(|e| e.to_string())?;
                }
            }
        }
        let n = trace.frames.len();
        println!(
            "frames compared: {n}; counts and contact keys equal in {} of them; the native simulation's positions equal the page's bit for bit in frames 1..{}",
            n - differ,
            same_motion
                .map_or_else(|| "the first difference".into(), |m| m.to_string())
                .replace("the first difference", &first_difference(&own))
        );
        if differ > 0 || n == 0 {
            return Err(format!("{differ} of {n} frames differ"));
        }
        Ok(())
    }

    fn first_difference(own: &Sim) -> String {
        // `own` stopped stepping at the first frame whose positions differed.
        format!("{}", own.frame())
    }
}
