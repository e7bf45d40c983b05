//! Simulations built on raycontact: raycontact detects contacts and turns them into forces
//! (`Scene::contact_forces`); each example owns its dynamics.
//!
//! - [`tori`]: Hermann et al. 2008's Figure 10, two deformable tori ([`shape`]: shape matching,
//!   Müller et al. 2005, stepped semi-implicitly) pushed apart by the response.
//! - [`cloth_on_ball`]: a cloth with thickness dropped on a ball and a box, predictions used as
//!   unilateral constraints.
//! - [`tangled`]: Lehericey et al. 2015's Figure 6, two cloths pushed through each other, with
//!   and without inversion handling; or started through each other, untangled by global
//!   intersection analysis.
//! - [`untangle`]: two sheets started through each other, detection with global intersection
//!   analysis and a minimal position-based step of its own.
//!
//! The cloths are position-based ([`cloth`], Müller et al. 2007) and stepped by [`world`]:
//! predict, detect at the prediction, correct, commit, with the contacts as unilateral
//! constraints ([`unilateral`]). [`convex`] measures how deep a point lies in a convex body.
//! [`render`] draws any of them offscreen through wgpu and writes PNG frames; [`cli`] holds the
//! options every example takes.

pub mod cli;
pub mod cloth;
pub mod cloth_on_ball;
pub mod convex;
pub mod render;
pub mod shape;
pub mod tangled;
pub mod tori;
pub mod unilateral;
pub mod untangle;
pub mod world;
