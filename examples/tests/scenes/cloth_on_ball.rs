//! The `cloth_on_ball` example at a small size (16 x 16 vertices, 40 frames) on the GPU and on
//! the CPU backend: the cloth lands on the ball and the box, no vertex ends deeper than its
//! half-thickness, the energy stays bounded, and the two backends agree.

use raycontact_examples::cloth_on_ball::{self, ClothOnBall, Frame, Settings};

fn run(ctx: Option<&raycontact::GpuContext>, s: Settings) -> (f32, Vec<Frame>, Vec<glam::Vec3>) {
    let mut sim = ClothOnBall::new(ctx, s).unwrap();
    let frames: Vec<Frame> = (0..s.frames).map(|_| sim.step().unwrap()).collect();
    (sim.initial_energy, frames, sim.cloth().positions.clone())
}

#[test]
fn a_small_cloth_lands_on_the_ball_and_the_box_on_both_backends() {
    let s = Settings { size: 16, frames: 40, ..Settings::default() };
    let ctx = super::ctx();
    let gpu = run(Some(ctx), s);
    let cpu = run(None, s);
    for (what, (e0, frames, positions)) in [("GPU", &gpu), ("CPU", &cpu)] {
        cloth_on_ball::verdict(*e0, frames).unwrap_or_else(|e| panic!("{what}: {e}"));
        let last = frames.last().unwrap();
        assert!(last.collisions + last.predictions > 100, "{what}: it landed: {last:?}");
        assert!(last.energy < 0.6 * e0, "{what}: it fell: {last:?}");
        // Resting on the ball's top (0.6 m) and the box's (0.44 m): nothing left up high, nothing
        // fell through.
        let top = positions.iter().map(|p| p.z).fold(f32::MIN, f32::max);
        assert!(top < 0.62 && top > 0.6, "{what}: highest vertex {top}");
        // The contact readback grows with the contacts while the cloth lands, then never again.
        assert!(
            frames[30..].iter().all(|f| f.buffers == last.buffers),
            "{what}: a GPU buffer created after landing"
        );
    }
    // The same contacts until the first forces; then forces equal up to the response's
    // fixed-point rounding keep the runs close (a vertex near a class boundary may differ).
    let close = |a: usize, b: usize| a.abs_diff(b) <= 3 + a.max(b) / 20;
    for (i, (g, c)) in gpu.1.iter().zip(&cpu.1).enumerate() {
        if c.collisions == 0 && i < 15 {
            assert_eq!(
                (g.collisions, g.predictions, g.energy),
                (c.collisions, c.predictions, c.energy),
                "frame {i}"
            );
        }
        assert!(
            close(g.collisions, c.collisions) && close(g.predictions, c.predictions),
            "frame {i}: {g:?} {c:?}"
        );
        assert!((g.energy - c.energy).abs() < 1e-3 * c.energy.abs().max(1.0), "frame {i}: {g:?} {c:?}");
    }
    let apart = gpu.2.iter().zip(&cpu.2).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
    eprintln!("the backends' cloths end {apart} m apart at most");
    assert!(apart < 0.01, "the backends' cloths end {apart} m apart");
}
