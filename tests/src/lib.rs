//! Shared helpers of raycontact's integration tests: one GPU context for the whole run (a
//! missing adapter fails the test that asks for it, with the installation hint), seeded random
//! data, and the shipped meshes.

use std::sync::OnceLock;

use glam::Vec3;
use rand::{Rng, SeedableRng};
use raycontact::GpuContext;
use raycontact::meshes::{self, TriMesh};

/// The GPU context shared by every test. Panics (failing the test, never skipping it) when no
/// adapter is found, with raycontact's message on how to get one.
pub fn ctx() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| match GpuContext::new() {
        Ok(c) => {
            eprintln!("raycontact tests on adapter {:?} ({:?})", c.adapter_name(), c.adapter_info().backend);
            c
        }
        Err(e) => panic!("raycontact's GPU tests need an adapter: {e}"),
    })
}

/// A seeded random number generator.
pub fn rng(seed: u64) -> rand_pcg::Pcg64 {
    rand_pcg::Pcg64::seed_from_u64(seed)
}

/// A uniformly random unit vector.
pub fn random_unit(rng: &mut impl Rng) -> Vec3 {
    loop {
        let v =
            Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        let l = v.length_squared();
        if l > 1e-4 && l <= 1.0 {
            return v / l.sqrt();
        }
    }
}

/// The Stanford bunny shipped in `assets/bunny.obj`.
pub fn bunny() -> TriMesh {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bunny.obj");
    meshes::load_mesh(std::path::Path::new(path)).expect("assets/bunny.obj loads")
}
