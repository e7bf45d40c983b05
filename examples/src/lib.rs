//! Simulations built on raycontact: raycontact detects contacts and turns them into forces
//! (`Scene::contact_forces`); each example owns its dynamics. Shared here: a shape-matching
//! integrator for deformable bodies (Müller et al. 2005, "Meshless deformations based on shape
//! matching"), stepped semi-implicitly. `untangle` runs detection with global intersection
//! analysis and a minimal position-based step of its own.

pub mod shape;
pub mod tori;
pub mod untangle;
