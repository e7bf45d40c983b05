//! Twin of `shaders/source_args.wgsl`: the narrow phase's indirect dispatch over the listed
//! source vertices.

use super::contact_args::contact_args;

/// Twin of `source_args.wgsl`: the narrow phase's dispatch (x, y, z) over `min(count,
/// capacity)` listed source vertices, then that number.
pub fn source_args(source_count: u32, source_capacity: u32) -> [u32; 4] {
    contact_args(source_count, source_capacity)
}
