//! raycontact in the browser: a cloth falls on the Stanford bunny and a torus; raycontact
//! detects the contacts on the page's own WebGPU device every frame, the demo's own
//! position-based integrator ([`cloth`]) resolves them, and the page's own small renderer
//! ([`render`]) draws the frame into a canvas, with the frame's contact count and times.
//!
//! The scene ([`scene`]) and the simulation ([`sim`]) are the same code natively, where the
//! `raycontact-web` binary runs them on raycontact's CPU backend: alone, or replaying a trace
//! the page recorded ([`trace`]: the positions of every frame and what its detection found) to
//! check that the CPU backend finds exactly what WebGPU found on the page. `web/build` builds
//! the page, `web/test-browser` runs it in headless Chromium and compares.

pub mod cloth;
#[cfg(target_arch = "wasm32")]
mod page;
pub mod render;
pub mod scene;
pub mod sim;
pub mod trace;
