//! Contacts: what a detection returns, and how it chooses the pairs to test.

use glam::{Vec2, Vec3};

use crate::body::BodyId;
use crate::layout::ContactGpu;
use crate::stats::FrameStats;

pub use crate::layout::contact_flags;

/// A contact: the ray from `source_vertex` of `source_body` along its inward normal found
/// `target_triangle` of `target_body` (Hermann et al. 2008). The penalty force pushes the source
/// vertex along `normal` (towards `target_point`) and the target triangle's vertices the other
/// way, by `barycentric` weights; `weight` is Hermann's `cos α`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The body the ray starts from.
    pub source_body: BodyId,
    /// The vertex (of `source_body`) the ray starts from.
    pub source_vertex: u32,
    /// The body the ray hit.
    pub target_body: BodyId,
    /// The triangle (of `target_body`) the ray hit.
    pub target_triangle: u32,
    /// Barycentric weights (u, v) of the hit on the triangle's second and third vertices.
    pub barycentric: Vec2,
    /// The source vertex's position.
    pub source_point: Vec3,
    /// The hit point on the target body.
    pub target_point: Vec3,
    /// Unit direction that pushes the source vertex out of the target body.
    pub normal: Vec3,
    /// Penetration depth along `normal`.
    pub depth: f32,
    /// Length of the ray from the source vertex to the hit.
    pub ray_length: f32,
    /// `cos α` between the ray and the hit triangle's normal, in (0, 1].
    pub weight: f32,
    /// [`contact_flags`].
    pub flags: u32,
}

impl Contact {
    pub(crate) fn from_gpu(c: &ContactGpu, ids: &[BodyId]) -> Self {
        Contact {
            source_body: ids[c.source_body as usize],
            source_vertex: c.source_vertex,
            target_body: ids[c.target_body as usize],
            target_triangle: c.target_triangle,
            barycentric: Vec2::new(c.u, c.v),
            source_point: c.source_point,
            target_point: c.target_point,
            normal: c.normal,
            depth: c.depth,
            ray_length: c.ray_length,
            weight: c.weight,
            flags: c.flags,
        }
    }

    /// Whether this is a collision (not a prediction).
    pub fn is_collision(&self) -> bool {
        self.flags & contact_flags::COLLISION != 0
    }
}

/// Which pairs of bodies a detection tests (each in both directions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pairs<'a> {
    /// Every pair whose boxes overlap, found on the GPU (on the CPU backend, by its twin).
    Overlapping,
    /// These pairs.
    List(&'a [(BodyId, BodyId)]),
}

/// What a detection does when it finds more contacts than the contact buffer holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverflowPolicy {
    /// Grow the buffer to the number needed and run the narrow phase again (the BVHs are kept).
    #[default]
    Grow,
    /// Return [`Error::ContactOverflow`](crate::Error::ContactOverflow) with the number needed.
    Error,
}

/// The result of a detection.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contacts {
    /// The contacts, sorted by (source body, target body, source vertex): a deterministic order,
    /// the same on the GPU and on the CPU backend.
    pub contacts: Vec<Contact>,
    /// Pairs of bodies tested (each in both directions).
    pub pairs: u32,
    /// The frame's figures (update and detection).
    pub stats: FrameStats,
}

/// Sorts contacts into the documented order.
pub(crate) fn sort_contacts(contacts: &mut [ContactGpu], ids: &[BodyId]) {
    contacts.sort_by_key(|c| (ids[c.source_body as usize], ids[c.target_body as usize], c.source_vertex));
}
