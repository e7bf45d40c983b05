//! The rapier integration at a small size (a 4x4x4 cube, a 5x3x5 slab, an 8x8 cloth) and 120
//! steps: with raycontact's response the cube rests on the slab and the cloth on both, on the GPU
//! adapter (lavapipe in CI) and on raycontact's CPU backend; without any soft–soft response (the
//! control run) the cube sinks into the slab.

use raycontact::GpuContext;
use raycontact_rapier::{Run, Settings, SoftContacts, outcome};

fn small(contacts: SoftContacts) -> Settings {
    Settings { cube: 4, cloth: 8, steps: 120, contacts, ..Settings::default() }
}

fn check_holds(run: &Run, backend: &str) {
    assert!(run.failures().is_empty(), "{backend}: {:?}", run.failures());
    assert_eq!(run.steps.len(), 120);
    // The response was at work: the cube touched the slab, the cloth landed on them.
    let touched = |f: fn(&raycontact_rapier::Step) -> usize| run.steps.iter().filter(|s| f(s) > 0).count();
    assert!(
        touched(|s| s.contacts.fem) > 40,
        "{backend}: the cube on the slab for {} steps",
        touched(|s| s.contacts.fem)
    );
    assert!(
        touched(|s| s.contacts.cloth_fem) > 20,
        "{backend}: the cloth on the bodies for {} steps",
        touched(|s| s.contacts.cloth_fem)
    );
    assert!(run.steps.iter().any(|s| s.largest_dv > 0.0), "{backend}: no velocity change applied");
    // rapier's soft–soft pairs are filtered out: raycontact alone resolves them.
    assert!(
        run.steps.iter().all(|s| s.rapier.soft_soft == 0),
        "{backend}: rapier resolved soft–soft contacts"
    );
    // rapier resolves the ground.
    assert!(run.steps.last().unwrap().rapier.ground > 0, "{backend}: nothing on the ground");
}

#[test]
fn raycontact_keeps_the_soft_bodies_apart_on_both_backends() {
    let ctx = GpuContext::new().expect("the GPU tests need an adapter");
    let settings = small(SoftContacts::Raycontact);
    let gpu = raycontact_rapier::run(Some(&ctx), &settings, |_, _| {}).unwrap();
    check_holds(&gpu, "GPU");
    let cpu = raycontact_rapier::run(None, &settings, |_, _| {}).unwrap();
    check_holds(&cpu, "CPU backend");
    // The two backends detect the same contacts at the first contact steps (later, the
    // fixed-point force sums may differ by a step and the runs drift apart).
    let first = gpu.steps.iter().position(|s| s.contacts.fem > 0).unwrap();
    assert_eq!(gpu.steps[first].contacts, cpu.steps[first].contacts, "step {first}");
    // The contact readback follows the count while the cloth lands; then no GPU buffer is
    // created (none in the second half of the run).
    let grew: Vec<usize> =
        (1..gpu.steps.len()).filter(|&i| gpu.steps[i].buffers != gpu.steps[i - 1].buffers).collect();
    assert!(grew.iter().all(|&i| i < 60), "GPU buffers created at steps {grew:?}");
}

#[test]
fn without_a_soft_response_the_cube_sinks_into_the_slab() {
    let run = raycontact_rapier::run(None, &small(SoftContacts::None), |_, _| {}).unwrap();
    let m = run.steps.last().unwrap().measure;
    assert!(m.fem > outcome::FEM_TOLERANCE, "{m:?}");
    assert!(!run.failures().is_empty());
    // raycontact still detected them.
    assert!(run.steps.iter().any(|s| s.contacts.fem > 0));
}
