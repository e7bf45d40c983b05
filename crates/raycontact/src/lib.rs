//! # raycontact
//!
//! Collision detection between deforming triangle meshes (volumetric bodies and cloth) by ray
//! tracing on the GPU, through wgpu and WGSL compute shaders, after Hermann et al. 2008 and
//! Lehericey et al. 2013, 2015.
//!
//! This release provides the foundation: a [`GpuContext`] (headless, or wrapping your
//! `wgpu::Device` and `Queue`), a [`Scene`] of bodies whose BVHs are rebuilt on the GPU every
//! frame (area-weighted vertex normals, triangle and body boxes, 30-bit Morton codes, a radix
//! sort, a Karras hierarchy and bottom-up fit, laid out for a stackless depth-first traversal),
//! closest-hit ray casts through that BVH, and the CPU backend: the CPU twin of every kernel,
//! run with rayon ([`Scene::new_cpu`]). The ray-traced narrow phase builds on it.
//!
//! ```no_run
//! use glam::Vec3;
//! use raycontact::{BodyKind, GpuContext, Ray, Scene, meshes};
//!
//! let ctx = GpuContext::new()?; // honours WGPU_BACKEND and WGPU_ADAPTER_NAME
//! let mut scene = Scene::new(&ctx);
//! let torus = meshes::torus(1.0, 0.3, 40, 20);
//! let body = scene.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric)?;
//! scene.update()?; // normals + BVH for every body, one submission
//! let hit = scene.cast_rays(body, &[Ray::new(Vec3::new(1.0, 0.0, 2.0), -Vec3::Z)])?[0];
//! assert!(hit.is_hit());
//! # Ok::<(), raycontact::Error>(())
//! ```

pub mod adjacency;
pub mod body;
pub mod contact;
pub mod context;
pub mod cpu;
pub mod error;
pub mod frame;
mod gpu;
pub mod kernels;
pub mod layout;
pub mod meshes;
pub mod scene;
pub mod stats;
pub mod walk;

pub use body::{BodyId, BodyKind};
pub use contact::{Contact, Contacts, OverflowPolicy, Pairs, SelfCollision, contact_flags};
pub use context::{ContextOptions, GpuContext};
pub use error::{Error, Result};
pub use gpu::{ContactBuffers, GpuRadixSort};
pub use layout::{Ray, RayHit};
pub use layout::{WalkCounts, WalkHit};
pub use scene::{Backend, Scene};
pub use stats::{FrameStats, Stage, StageStats};
pub use walk::{Iterative, WalkFallback, WalkOptions, WalkResult};

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
