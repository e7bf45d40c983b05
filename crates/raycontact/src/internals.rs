//! raycontact's internals, for tests, benchmarks and the curious: **not a stable API** (any
//! release may change them).
//!
//! - [`layout`]: the constants and `#[repr(C)]` structs shared with the WGSL kernels, and the
//!   WGSL prelude generated from them.
//! - [`kernels`]: the kernel table: each kernel's name, WGSL source, bindings and the limits it
//!   uses of a device.
//! - [`cpu`]: the CPU twin of every kernel, over the same packed layout (the reference of the
//!   GPU tests; with rayon, the CPU backend).
//! - [`Packing`] and [`FrameData`]: the packed scene and what one frame builds from it.
//! - [`adjacency`]: the triangle adjacency that iterative detection walks.
//! - [`wide_bvh`]: the CPU backend's 4-wide BVH, collapsed from the binary one.
//! - [`tree_build`]: the CPU backend's one-pass build of the binary BVH (equal to the
//!   `hierarchy` and `fit` twins).
//! - [`sah_tree`]: the binned-SAH binary tree the CPU backend collapses for a body whose tree
//!   is kept.
//! - [`trace_memo`]: the CPU backend's memo of a frame's traces that skip a vertex (a trace
//!   asked by several pairs is cast once).
//! - [`contact_parts`]: the CPU backend's per-job contact vectors, kept between frames.
//! - [`background_trees`]: a hold on the scenes' background tree builds, and a wait for them,
//!   for tests.

/// The constants and `#[repr(C)]` structs shared with the WGSL kernels.
pub mod layout {
    pub use crate::layout::*;
}

/// The kernel table.
pub mod kernels {
    pub use crate::kernels::limits::{KernelLimits, MAX_STORAGE_BUFFERS};
    pub use crate::kernels::{Binding, Kernel, SHARED};

    /// The kernels whose pipelines the compute passes of `ctx` (and of its clones) have set
    /// since the last call, in [`Kernel::ALL`] order; the record then starts again empty. What
    /// the tests check each feature's [`KernelGroups`](crate::KernelGroups) against.
    pub fn take_dispatched(ctx: &crate::GpuContext) -> Vec<Kernel> {
        ctx.pipelines().take_dispatched()
    }
}

/// The CPU twins of the kernels.
pub mod cpu {
    pub use crate::cpu::*;
}

/// The triangle adjacency of a body.
pub mod adjacency {
    pub use crate::adjacency::*;
}

/// The CPU backend's 4-wide BVH.
pub mod wide_bvh {
    pub use crate::wide_bvh::*;
    pub use crate::wide_collapse::{PARALLEL_BODY_LEAVES, PARALLEL_THREADS};
    pub use crate::wide_direct::SortedLeaves;
    pub use crate::wide_refit::PARALLEL_REFIT_RECORDS;
    pub use crate::wide_update::{Building, Motion};
}

/// The CPU backend's one-pass build of the binary BVH.
pub mod tree_build {
    pub use crate::tree_build::*;
}

/// The binned-SAH binary tree of a body whose tree is kept.
pub mod sah_tree {
    pub use crate::sah_tree::*;
}

/// The CPU backend's memo of a frame's traces that skip a vertex.
pub mod trace_memo {
    pub use crate::trace_memo::*;
}

/// The CPU backend's per-job contact vectors, kept between frames.
pub mod contact_parts {
    pub use crate::contact_parts::*;
}

/// Holding the scenes' background tree builds, and waiting for them, for tests.
pub mod background_trees {
    pub use crate::tree_thread::{
        BackgroundHold, MAX_WAITING_BUILDS, hold_background_trees, wait_background_trees,
    };
}

pub use crate::frame::{FrameData, FrameScratch};
pub use crate::packing::Packing;
