//! The types of the ray queries ([`Scene::cast_rays`](crate::Scene::cast_rays) and its
//! siblings): which bodies a query tests, what an all-hits query returns, and the caller's GPU
//! buffers that a recorded query reads and writes.

use crate::body::BodyId;
use crate::layout::{RayHitCount, RayHitTotals, RayIntersection};

/// The bodies a ray query tests: one, or a list of distinct bodies. A hit names its body by its
/// position in the list (`RayHit::body`, `RayIntersection::body`; 0 for a single body), which
/// [`RayTargets::get`] turns back into its id.
///
/// ```
/// # use raycontact::{BodyId, RayTargets};
/// fn bodies(a: BodyId, b: BodyId) {
///     let one: RayTargets = a.into();
///     let list = [a, b];
///     let both: RayTargets = (&list).into();
///     assert_eq!(both.get(1), Some(b));
///     assert_eq!(one.ids(), &[a]);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RayTargets<'a> {
    /// One body.
    Body(BodyId),
    /// Several bodies, each at most once, in the order that breaks ties between them.
    Bodies(&'a [BodyId]),
}

impl<'a> RayTargets<'a> {
    /// The bodies, in order.
    pub fn ids(&self) -> &[BodyId] {
        match self {
            RayTargets::Body(id) => std::slice::from_ref(id),
            RayTargets::Bodies(ids) => ids,
        }
    }

    /// The body at position `body` of the list (a hit's `body` field); `None` past its end (a
    /// miss's [`NONE`](crate::internals::layout::NONE) included).
    pub fn get(&self, body: u32) -> Option<BodyId> {
        self.ids().get(body as usize).copied()
    }
}

impl From<BodyId> for RayTargets<'_> {
    fn from(id: BodyId) -> Self {
        RayTargets::Body(id)
    }
}

impl<'a> From<&'a [BodyId]> for RayTargets<'a> {
    fn from(ids: &'a [BodyId]) -> Self {
        RayTargets::Bodies(ids)
    }
}

impl<'a, const N: usize> From<&'a [BodyId; N]> for RayTargets<'a> {
    fn from(ids: &'a [BodyId; N]) -> Self {
        RayTargets::Bodies(ids)
    }
}

impl<'a> From<&'a Vec<BodyId>> for RayTargets<'a> {
    fn from(ids: &'a Vec<BodyId>) -> Self {
        RayTargets::Bodies(ids)
    }
}

/// What an all-hits query ([`Scene::cast_rays_all`](crate::Scene::cast_rays_all)) found: per
/// ray, its first `max_hits` hits in [`RayIntersection::order`] (by `t`, then body, then
/// triangle) and how many it found in all; the overflow (hits found beyond `max_hits`) per ray
/// and in total.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllHits {
    /// Hits kept per ray at most.
    pub max_hits: u32,
    /// Per ray: hits found and stored, nodes visited, triangles tested.
    pub counts: Vec<RayHitCount>,
    /// Over all rays, as the kernel summed them.
    pub totals: RayHitTotals,
    /// The stored hits, ray after ray.
    hits: Vec<RayIntersection>,
    /// Where each ray's hits start in `hits`, and their end.
    starts: Vec<usize>,
}

impl AllHits {
    /// The result from the buffers of an all-hits query as the kernel leaves them (and as a
    /// recorded query leaves them in the caller's buffers, once read back): the totals, one count
    /// per ray, and `max_hits` slots per ray of which the first `stored` hold its hits.
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) when the lengths disagree or a count
    /// stores more than `max_hits`.
    pub fn from_slots(
        max_hits: u32,
        totals: RayHitTotals,
        counts: Vec<RayHitCount>,
        slots: &[RayIntersection],
    ) -> crate::Result<Self> {
        let cap = max_hits as usize;
        if slots.len() != counts.len() * cap {
            return Err(crate::Error::InvalidInput {
                what: format!("{} slots for {} rays of {max_hits} hits", slots.len(), counts.len()),
            });
        }
        if let Some(i) = counts.iter().position(|c| c.stored > max_hits || c.stored > c.found) {
            return Err(crate::Error::InvalidInput {
                what: format!(
                    "ray {i} stores {} of {} hits, max_hits {max_hits}",
                    counts[i].stored, counts[i].found
                ),
            });
        }
        let mut hits = Vec::with_capacity(counts.iter().map(|c| c.stored as usize).sum());
        let mut starts = Vec::with_capacity(counts.len() + 1);
        for (i, c) in counts.iter().enumerate() {
            starts.push(hits.len());
            hits.extend_from_slice(&slots[i * cap..i * cap + c.stored as usize]);
        }
        starts.push(hits.len());
        Ok(AllHits { max_hits, counts, totals, hits, starts })
    }

    /// Rays of the query.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the query had no ray.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The stored hits of ray `i`, sorted (empty past the last ray).
    pub fn ray(&self, i: usize) -> &[RayIntersection] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.hits[a..b],
            _ => &[],
        }
    }

    /// Every stored hit, ray after ray.
    pub fn hits(&self) -> &[RayIntersection] {
        &self.hits
    }

    /// The stored hits of every ray, in ray order.
    pub fn iter(&self) -> impl Iterator<Item = &[RayIntersection]> + '_ {
        (0..self.len()).map(|i| self.ray(i))
    }

    /// Hits found beyond `max_hits`, over all rays.
    pub fn overflow(&self) -> u32 {
        self.totals.overflow()
    }
}

/// Where a recorded ray query finds its rays: `count` [`Ray`](crate::Ray)s (32 bytes each,
/// `#[repr(C)]`: origin, tmin, dir, tmax as `f32`) in `buffer` from byte `offset`. The buffer
/// is one of the scene's device and needs `STORAGE` usage; the offset is a multiple of the device's
/// `min_storage_buffer_offset_alignment` (256 under WebGPU's defaults). It may not be a buffer
/// the query writes.
#[derive(Clone, Copy, Debug)]
pub struct GpuRays<'a> {
    /// The buffer.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of the first ray.
    pub offset: u64,
    /// Rays.
    pub count: u32,
}

/// Where a recorded ray query writes one of its outputs: `buffer` (one of the scene's device)
/// from byte `offset` (a multiple of the device's `min_storage_buffer_offset_alignment`, 256
/// under WebGPU's defaults). Each query documents the layout, size and usage it needs.
#[derive(Clone, Copy, Debug)]
pub struct GpuOutput<'a> {
    /// The buffer.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of the output.
    pub offset: u64,
}

impl<'a> From<&'a wgpu::Buffer> for GpuOutput<'a> {
    fn from(buffer: &'a wgpu::Buffer) -> Self {
        GpuOutput { buffer, offset: 0 }
    }
}
