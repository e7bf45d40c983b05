//! Twins of the WGSL includes under `shaders/shared/`, one file each, named as the include:
//! what several kernels share (the ray tests, the BVH's closest hit, a ray's and its
//! opposite's together, the walk of one ray, the classification of the narrow phase).

pub mod bvh;
pub mod bvh_line;
pub mod classify;
pub mod common;
pub mod intersect;
pub mod ray;
pub mod targets;
pub mod walk;
