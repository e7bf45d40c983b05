//! Simulations built on raycontact: raycontact detects contacts and turns them into forces
//! (`Scene::contact_forces`); each example owns its dynamics. Shared here: a shape-matching
//! integrator for deformable bodies (Müller et al. 2005, "Meshless deformations based on shape
//! matching"), stepped semi-implicitly.

pub mod shape;
pub mod tori;
