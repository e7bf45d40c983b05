//! Recorded ray queries over the caller's buffers: each buffer checked against what the query
//! binds of it (usage, offset alignment, size, the device's binding limit, no overlap with
//! another buffer of the query) before anything is recorded, with a typed error naming the
//! buffer.

use super::{QueryIo, QueryKind, Region};
use crate::error::{BufferProblem, Error, Result};
use crate::gpu::GpuScene;
use crate::layout::{QueryTarget, RAY_COUNTS_OFFSET, Ray};
use crate::rays::{GpuOutput, GpuRays};

/// One buffer of a recorded query, before its check.
struct Asked<'a> {
    name: &'static str,
    buffer: &'a wgpu::Buffer,
    offset: u64,
    bytes: u64,
    usage: wgpu::BufferUsages,
}

impl GpuScene {
    /// Checks `a` on this device: the usage, the offset's alignment, the binding limit, the
    /// size.
    fn check_region<'a>(&self, query: &'static str, a: Asked<'a>) -> Result<Region<'a>> {
        let limits = self.ctx.device().limits();
        let fail = |problem| Err(Error::QueryBuffer { query, buffer: a.name, problem });
        let has = a.buffer.usage();
        if !has.contains(a.usage) {
            return fail(BufferProblem::Usage { needs: a.usage, has });
        }
        let alignment = limits.min_storage_buffer_offset_alignment as u64;
        if !a.offset.is_multiple_of(alignment) {
            return fail(BufferProblem::Misaligned { offset: a.offset, alignment });
        }
        if a.bytes > limits.max_storage_buffer_binding_size {
            return fail(BufferProblem::OverBindingLimit {
                bytes: a.bytes,
                limit: limits.max_storage_buffer_binding_size,
            });
        }
        let size = a.buffer.size();
        if a.offset.checked_add(a.bytes).is_none_or(|end| end > size) {
            return fail(BufferProblem::TooSmall { offset: a.offset, needed: a.bytes, size });
        }
        Ok(Region { buffer: a.buffer, offset: a.offset, size: a.bytes })
    }

    /// Records query `kind` (named `query` in errors) of `rays` against `targets` (not empty)
    /// into `encoder`, writing `hits` and, for all-hits, `counts` (its totals zeroed in the
    /// encoder first; zero rays record only that). Nothing is recorded when a buffer is refused,
    /// by this check or by wgpu when it creates the bind group.
    #[allow(clippy::too_many_arguments)]
    pub fn record_rays(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        query: &'static str,
        kind: QueryKind,
        targets: &[QueryTarget],
        rays: GpuRays<'_>,
        hits: GpuOutput<'_>,
        counts: Option<GpuOutput<'_>>,
    ) -> Result<()> {
        use wgpu::BufferUsages as U;
        let n = rays.count as u64;
        let rays_region = self.check_region(
            query,
            Asked {
                name: "rays",
                buffer: rays.buffer,
                offset: rays.offset,
                bytes: n * size_of::<Ray>() as u64,
                usage: U::STORAGE,
            },
        )?;
        let hits_region = self.check_region(
            query,
            Asked {
                name: "hits",
                buffer: hits.buffer,
                offset: hits.offset,
                bytes: n * kind.hit_bytes(),
                usage: U::STORAGE,
            },
        )?;
        let counts_region = match counts {
            Some(c) => Some(self.check_region(
                query,
                Asked {
                    name: "counts",
                    buffer: c.buffer,
                    offset: c.offset,
                    bytes: kind.count_bytes(n),
                    usage: U::STORAGE | U::COPY_DST,
                },
            )?),
            None => None,
        };
        let overlap = |a: &Region<'_>, b: &Region<'_>| {
            a.buffer == b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size
        };
        let outputs = [Some(("hits", &hits_region)), counts_region.as_ref().map(|c| ("counts", c))];
        for (name, out) in outputs.into_iter().flatten() {
            if out.buffer == rays.buffer {
                return Err(Error::QueryBuffer {
                    query,
                    buffer: name,
                    problem: BufferProblem::Overlaps { other: "rays" },
                });
            }
        }
        if counts_region.as_ref().is_some_and(|c| overlap(c, &hits_region)) {
            return Err(Error::QueryBuffer {
                query,
                buffer: "counts",
                problem: BufferProblem::Overlaps { other: "hits" },
            });
        }
        let io = QueryIo { rays: rays_region, hits: hits_region, counts: counts_region };
        if n == 0 {
            if let Some(c) = &io.counts {
                encoder.clear_buffer(c.buffer, c.offset, Some(RAY_COUNTS_OFFSET));
            }
            return Ok(());
        }
        let slot = self.target_slot(targets);
        let ctx = self.ctx.clone();
        let group = ctx.scoped("recording a ray query", || Ok(self.query_group(kind, &slot, &io)))?;
        self.record_dispatch(encoder, kind, &group, io.counts.as_ref(), rays.count);
        Ok(())
    }
}
