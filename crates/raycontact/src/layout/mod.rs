//! Data layout shared by the WGSL kernels and their CPU twins: constants, and the `#[repr(C)]`
//! Pod structs that mirror WGSL structs field for field.
//!
//! This module is the one source of truth for workgroup sizes and tile sizes: the host prepends
//! [`wgsl_prelude`] to every kernel, and the integration tests check every struct here against
//! naga's reflection of the WGSL declaration of the same name.
//!
//! The items live in submodules by concern and are all re-exported here:
//! - `frame`: the per-frame scene data (bodies, triangle boxes, BVH nodes, the radix sort);
//! - `query`: ray casts and walks over the triangle adjacency;
//! - `detect`: pairs, detection counters and parameters, contacts;
//! - `intersect`: edges, crossings, the contour, regions (the intersection analysis);
//! - `prelude`: the WGSL source of the constants, [`wgsl_prelude`].

mod detect;
mod frame;
mod intersect;
mod prelude;
mod query;
mod response;

pub use detect::*;
pub use frame::*;
pub use intersect::*;
pub use prelude::wgsl_prelude;
pub use query::*;
pub use response::*;

/// Invocations per workgroup of every kernel.
pub const WG_SIZE: u32 = 256;
/// Elements handled by one invocation of a tiled kernel.
pub const ITEMS: u32 = 16;
/// Elements in a tile: one workgroup of a tiled kernel handles one tile of one body.
pub const TILE: u32 = WG_SIZE * ITEMS;

/// "No node / no triangle".
pub const NONE: u32 = u32::MAX;

/// Workgroups per dispatch along x; larger dispatches spill into y.
pub const MAX_GROUPS_X: u32 = 65535;

/// Dynamic-offset stride of per-pass uniforms (the WebGPU minimum uniform offset alignment).
pub const UNIFORM_STRIDE: u64 = 256;

/// Workgroup counts of a dispatch of `groups` workgroups, spilling into y past [`MAX_GROUPS_X`].
pub fn dispatch_size(groups: u32) -> (u32, u32) {
    if groups <= MAX_GROUPS_X { (groups.max(1), 1) } else { (MAX_GROUPS_X, groups.div_ceil(MAX_GROUPS_X)) }
}

/// Tiles needed for `n` elements.
pub fn tiles_for(n: u32) -> u32 {
    n.div_ceil(TILE)
}
