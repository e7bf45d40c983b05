//! CPU twins of the kernels: each function computes what the kernel of the same name computes,
//! over the same packed layout, in plain Rust (rayon where the work is parallel). They are the
//! references of the GPU tests and, through [`Scene::new_cpu`](crate::Scene::new_cpu), the CPU
//! backend.
//!
//! The files mirror `shaders/`: the twin of kernel `shaders/k.wgsl` is in `cpu/k.rs` (the radix
//! sort's three kernels share `cpu/radix_sort.rs`), and the twin of an include
//! `shaders/shared/i.wgsl` in `cpu/shared/i.rs`. Three files are not twins: `cpu/traverse.rs`
//! and `cpu/traverse_line.rs`, the CPU backend's own BVH traversals ([`closest_hit_wide`] over
//! its 4-wide trees, [`closest_hits_line`] for a ray and its opposite in one walk,
//! [`closest_hit_ordered`], [`raycast_ordered`]), which find the same closest hits as the GPU's
//! by another walk, and `cpu/reference.rs`, the
//! references only the tests and benchmarks use ([`raycast_brute_force`]). Every public item
//! is re-exported here, as `raycontact::internals::cpu::<name>`.
//!
//! Exactness: integer stages (Morton codes, sort, hierarchy) and box fitting (min/max) equal the
//! GPU bit for bit; normals agree within 1e-5; ray hits agree on the triangle and within 1e-5
//! relative on `t` (the GPU divides with up to 2.5 ulp error).

mod broad_phase;
mod contact_args;
mod contour_compress;
mod contour_hook;
mod contour_start;
mod contour_walk;
mod crossing_links;
mod crossings;
mod edge_contacts;
mod edge_sources;
mod edge_tiles;
mod fit;
mod hierarchy;
mod intersect_args;
mod morton;
mod narrow_phase;
mod pair_tiles;
mod radix_sort;
mod ray_sources;
mod raycast;
mod raycast_all;
mod raycast_anyhit;
mod reference;
mod region_areas;
mod regions_hook;
mod response;
mod shared;
mod source_args;
mod traverse;
mod traverse_line;
mod triangle_bounds;
mod untangle_contacts;
mod vertex_normals;
mod walk;
mod walk_contacts;
mod wrong_side;

pub use crate::frame::{FrameData, used_nodes};
pub use broad_phase::broad_phase;
pub use contact_args::contact_args;
pub use contour_compress::contour_compress;
pub use contour_hook::contour_hook;
pub use contour_start::contour_start;
pub use contour_walk::contour_walk;
pub use crossing_links::{crossing_links, half_key};
pub use crossings::crossings;
pub use edge_contacts::{edge_contact, edge_contacts};
pub use edge_sources::edge_sources;
pub use edge_tiles::{edge_tiles, traces_edges};
pub use fit::{child_pairs, fit, fit_fans};
pub use hierarchy::hierarchy;
pub use intersect_args::intersect_args;
pub use morton::{expand_bits, morton, morton_code, quantisation_scale};
pub use narrow_phase::{BvhTracer, ExitMemo, ExitMemoTracer, is_exit_trace, narrow_phase};
pub use pair_tiles::pair_tiles;
pub(crate) use radix_sort::radix_sort_with;
pub use radix_sort::{radix_sort, radix_sort_segment};
pub(crate) use ray_sources::SourceLists;
pub use ray_sources::ray_sources;
pub use raycast::{raycast, raycast_one, raycast_ray};
pub use raycast_all::{raycast_all, raycast_all_ray};
pub use raycast_anyhit::{raycast_anyhit, raycast_anyhit_ray};
pub use reference::raycast_brute_force;
pub use region_areas::{region_areas, vertex_area_steps};
pub use regions_hook::regions_hook;
pub use response::{ResponseSums, response};
pub use shared::bvh::{
    closest_hit, closest_hit_in, closest_hit_paired, fan_to_pass, leaf_near, other_near,
    other_triangle_within, triangle_within,
};
pub use shared::bvh_line::closest_hits_line_binary;
pub use shared::classify::{Classified, Narrow, Rays, Traced, Tracer, asks_reach, classify, classify_at};
pub use shared::common::reach;
pub use shared::intersect::{crossing_key, edge_side};
pub use shared::ray::{Sheared, hit_box, intersect_triangle, ray_axes, safe_inverse, shear};
pub use shared::targets::{QueryScene, query_targets};
pub use shared::walk::walk_ray;
pub use source_args::source_args;
pub use traverse::{
    WideHit, closest_hit_ordered, closest_hit_wide, closest_hit_wide_counted, other_near_wide,
    raycast_ordered,
};
pub use traverse_line::{closest_hits_line, closest_hits_line_counted};
pub(crate) use triangle_bounds::{NO_BOX, set_box_keys, union};
pub use triangle_bounds::{body_bounds, triangle_bounds, triangle_box, triangle_box_crossed, triangle_boxes};
pub use untangle_contacts::untangle_contacts;
pub use vertex_normals::{body_boxes, unit_or_cancelled, vertex_normal, vertex_normals, with_length};
pub use walk::walk;
pub use walk_contacts::{WalkTracer, walk_contacts};
pub use wrong_side::{wrong_end, wrong_side};
