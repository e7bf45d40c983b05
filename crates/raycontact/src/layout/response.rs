//! The contact response's parameters (WGSL `ResponseParams`) and constants.

use bytemuck::{Pod, Zeroable};

/// [`ResponseParams::flags`] bit: forces along the contact's re-projected normal (Lehericey et
/// al. 2015, section 3.3) instead of along the ray (Hermann et al. 2008, section 4).
pub const RESPONSE_ALONG_NORMAL: u32 = 1;
/// Slots of the response's state: contributions that overflowed the fixed-point range, collision
/// contacts applied, the lowest packed vertex that overflowed ([`super::NONE`]: none), padding.
pub const RESPONSE_STATE: usize = 4;
/// Slots per packed vertex of the force buffer: the fixed-point x, y, z force and the vertex's
/// load (the sum of the largest component of each contribution, which bounds each axis's sum).
pub const FORCE_SLOTS: usize = 4;
/// Largest load a vertex may reach: no axis sum can then overflow an `i32`.
pub const FORCE_LOAD_LIMIT: u32 = i32::MAX as u32;

/// Parameters of a contact response (WGSL `ResponseParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ResponseParams {
    /// Damping along the force direction (force per unit of relative velocity).
    pub damping: f32,
    /// `1 / time step`: velocities are (positions − previous positions) / time step.
    pub inv_dt: f32,
    /// Fixed-point units per unit of force.
    pub scale: f32,
    /// Packed bodies (the stiffness table is `body_count × body_count`).
    pub body_count: u32,
    /// [`RESPONSE_ALONG_NORMAL`].
    pub flags: u32,
    /// Packed vertices: the size of a region of the vertex buffer
    /// ([`VERTEX_REGIONS`](super::VERTEX_REGIONS)).
    pub vertex_count: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}
