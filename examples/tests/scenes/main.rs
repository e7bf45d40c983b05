//! The examples at a small size, on the GPU adapter (lavapipe in CI) and on the CPU backend,
//! each asserting its outcome; and the offscreen renderer. One test binary, so that the GPU
//! context (and its pipelines) is created once for all of them.

mod cloth_on_ball;
mod render;
mod tangled_cloths;
mod tori;

use std::sync::OnceLock;

/// The GPU context shared by the tests.
fn ctx() -> &'static raycontact::GpuContext {
    static CTX: OnceLock<raycontact::GpuContext> = OnceLock::new();
    CTX.get_or_init(|| raycontact::GpuContext::new().expect("the GPU tests need an adapter"))
}
