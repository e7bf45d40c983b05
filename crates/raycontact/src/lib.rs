//! # raycontact
//!
//! Collision detection between deforming triangle meshes (volumetric bodies and cloth) by ray
//! tracing on the GPU, through wgpu and WGSL compute shaders, after Hermann et al. 2008 (inward
//! rays from every surface vertex), Lehericey et al. 2015 (cloth, predictions, inversions) and
//! Lehericey et al. 2013 (iterative detection by walking the triangle adjacency).
//!
//! What an engine uses:
//! - [`GpuContext`]: a headless device on the adapter that `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`
//!   choose, or the caller's own `wgpu::Device` and `Queue`: WebGPU's default limits suffice
//!   ([`required_limits`], [`required_features`] say exactly what the kernels need).
//! - [`Scene`]: bodies ([`BodyKind::Volumetric`] or [`BodyKind::Cloth`]) added once, positions
//!   set every frame, and [`Scene::detect`]: per frame, for all bodies in one submission, vertex
//!   normals and BVHs rebuilt on the GPU, then rays from every source vertex of each tested pair
//!   ([`Pairs`]) classified into [`Contacts`] (collisions and predictions, with points, normal,
//!   depth and Hermann's `cos α` weight). [`Scene::new_cpu`] runs the same on the CPU backend.
//!   [`Scene::set_iterative`] turns on iterative detection ([`Iterative`]);
//!   [`Scene::set_bvh_update`] refits the BVHs instead of rebuilding them ([`BvhUpdate`]).
//! - [`Scene::record_update`] and [`Scene::record_detect`] record into your own encoder and
//!   leave the contacts on the GPU ([`ContactBuffers`]) for a GPU solver.
//! - [`Scene::set_intersections`]: edge–triangle crossings, the intersection contour and global
//!   intersection analysis ([`Intersections`], [`IntersectionMode`]) on the same BVHs, with edge
//!   and untangling contacts for the response.
//! - Ray queries against one body or several at once ([`RayTargets`]): [`Scene::cast_rays`]
//!   (closest hit), [`Scene::cast_rays_anyhit`] (occlusion), [`Scene::cast_rays_all`] (every hit
//!   up to a cap per ray, sorted, overflow counted), each also recorded into your encoder over
//!   your own GPU buffers ([`Scene::record_cast_rays`] and its siblings); [`Scene::walk`]
//!   (iterative casts).
//! - [`FrameStats`] (per-stage times, dispatches, bytes), typed [`Error`]s naming the body and
//!   the element, [`meshes`] (generators; OBJ, OFF, PLY and STL files).
//!
//! wgpu's backends are the application's choice: raycontact enables none of them. Its features
//! `vulkan`, `metal`, `dx12`, `gl` and `webgpu` turn on wgpu's backend of the same name (`gl` is
//! wgpu's `gles`), as does enabling them on the application's own `wgpu` dependency (the same
//! crate, re-exported as [`raycontact::wgpu`](wgpu) so that the versions always match). Without
//! any, [`GpuContext::new`] finds no adapter. The README's "wgpu and its backends" states which
//! wgpu each raycontact version uses.
//!
//! [`internals`] exposes the kernels' layout, their CPU twins and the kernel table for tests,
//! benchmarks and the curious: it is not a stable API.
//!
//! ```no_run
//! use glam::{Affine3A, Vec3};
//! use raycontact::{BodyKind, GpuContext, Pairs, Scene, meshes};
//!
//! let ctx = GpuContext::new()?; // honours WGPU_BACKEND and WGPU_ADAPTER_NAME
//! let mut scene = Scene::new(&ctx);
//! let torus = meshes::torus(1.0, 0.3, 40, 20);
//! let ball = meshes::icosphere(0.5, 3).transformed(Affine3A::from_translation(Vec3::new(1.0, 0.0, 0.3)));
//! scene.add_body(&torus.positions, &torus.triangles, BodyKind::Volumetric)?;
//! scene.add_body(&ball.positions, &ball.triangles, BodyKind::Volumetric)?;
//! let found = scene.detect(Pairs::Overlapping)?;
//! for c in &found.contacts {
//!     let _push = c.normal * c.depth * c.weight; // along the normal, by Hermann's weight
//! }
//! # Ok::<(), raycontact::Error>(())
//! ```

/// Implements `PartialEq` (always equal) and `Debug` (the type's name alone) for a type that holds
/// state that is not part of its owner's value (scratch memory, bookkeeping), so that the owner
/// can derive both.
macro_rules! not_part_of_value {
    ($t:ident) => {
        impl PartialEq for $t {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($t))
            }
        }
    };
}

mod adjacency;
mod backend;
mod blocking;
mod body;
mod bvh_update;
mod changes;
mod contact;
mod contact_order;
mod contact_parts;
mod contact_sort;
mod context;
mod cpu;
mod cpu_backend;
mod error;
mod found;
mod frame;
mod gpu;
mod id;
pub mod internals;
mod intersection;
mod kernels;
mod layout;
pub mod meshes;
mod order_runs;
mod packing;
mod pending_tree;
mod plan;
mod prefetch;
mod ray_order;
mod rays;
mod response;
mod sah_tree;
mod scene;
mod stats;
mod trace_memo;
mod tree_build;
mod tree_thread;
pub mod walk;
mod wide_background;
mod wide_bvh;
mod wide_collapse;
mod wide_direct;
mod wide_refit;
mod wide_update;
mod workers_awake;

pub use backend::Backend;
pub use body::{BodyId, BodyKind};
pub use bvh_update::{BvhUpdate, sah_cost};
pub use contact::{Contact, ContactFlags, Contacts, OverflowPolicy, Pairs, SelfCollision};
pub use context::{ContextOptions, GpuContext};
pub use error::{BufferProblem, Error, Result};
pub use gpu::{ContactBuffers, ForceBuffers, GpuRadixSort, IntersectionBuffers};
pub use intersection::{
    BodyRegions, ContourLoop, Crossing, IntersectionCounts, IntersectionMode, Intersections, LoopSides,
    Region,
};
pub use kernels::limits::{required_features, required_limits};
pub use kernels::{KernelGroups, PipelineCacheDir, PipelineCacheStatus, PipelineTime, WarmedUp};
pub use layout::{Ray, RayHit, RayHitCount, RayHitTotals, RayIntersection, Tuning, WalkCounts, WalkHit};
pub use rays::{AllHits, GpuOutput, GpuRays, RayTargets};
pub use response::{ContactForces, ForceDirection, Response};
pub use scene::{DEFAULT_CONTACT_CAPACITY, DEFAULT_CROSSING_CAPACITY, Scene};
pub use stats::{BvhAction, BvhStats, FrameStats, HostTimes, Stage, StageStats};
pub use walk::{Iterative, WalkFallback, WalkOptions, WalkOutcome, WalkResult, max_steps as max_walk_steps};
pub use workers_awake::WorkersAwake;

/// The wgpu that raycontact is built on, so that an application's devices, buffers and encoders
/// are of the same version as raycontact's (see the README's wgpu version policy).
pub use wgpu;

/// The rayon that the CPU backend runs on, so that a pool an application hands to
/// [`Scene::new_cpu_on_pool`] is of the same version as raycontact's.
pub use rayon;

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", env!("RAYCONTACT_README")))]
struct ReadmeDoctests;
