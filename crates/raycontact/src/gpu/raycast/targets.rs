//! The bodies of the ray queries on the GPU: each distinct list of [`QueryTarget`] records is
//! written once into an arena buffer, at an offset aligned for a storage binding, and bound there
//! by every query of that list. A region never changes once written, so any number of queries
//! recorded before a submission each read their own list (a query's parameters are the lengths
//! of its bindings, and its bind group is its own: nothing a later query writes can reach it).
//! A full arena is replaced by a new, larger one, and queries already recorded keep the old one
//! alive through their bind groups; a scene that queries the same lists every frame allocates
//! nothing after the first.

use std::collections::HashMap;

use super::super::buffers::{STORAGE, create_buffer};
use crate::context::GpuContext;
use crate::layout::QueryTarget;

/// Bytes of the first arena.
const FIRST_BYTES: u64 = 4096;
/// An arena grows by doubling up to this size; past it a full arena is replaced by one of the
/// same size (or of the one list that needs more).
const MOST_BYTES: u64 = 1 << 20;

/// Where one list of targets lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TargetSlot {
    /// The arena it lies in ([`TargetArena::generation`] when it was written).
    pub generation: u64,
    /// Byte offset in the arena.
    pub offset: u64,
    /// Bytes of the records.
    pub size: u64,
}

/// The arena of target lists.
#[derive(Debug, Default)]
pub(crate) struct TargetArena {
    buffer: Option<wgpu::Buffer>,
    used: u64,
    /// Each list written to the current arena (its records as words), and where.
    slots: HashMap<Vec<u32>, TargetSlot>,
    /// Changes whenever a new arena buffer replaces the old one.
    generation: u64,
}

impl TargetArena {
    /// The slot of `records` (not empty), written into the arena the first time this list is
    /// asked for (by `queue.write_buffer`, so before the next submission runs).
    pub fn slot(&mut self, ctx: &GpuContext, allocations: &mut u64, records: &[QueryTarget]) -> TargetSlot {
        let words: Vec<u32> = bytemuck::cast_slice(records).to_vec();
        if let Some(s) = self.slots.get(&words) {
            return *s;
        }
        let size = std::mem::size_of_val(records) as u64;
        let align = ctx.device().limits().min_storage_buffer_offset_alignment.max(4) as u64;
        let offset = self.used.next_multiple_of(align);
        let capacity = self.buffer.as_ref().map_or(0, |b| b.size());
        let offset = if offset + size <= capacity {
            offset
        } else {
            let bytes = (2 * capacity).clamp(FIRST_BYTES, MOST_BYTES.max(capacity)).max(size);
            self.buffer = Some(create_buffer(ctx, allocations, "raycontact.raycast.targets", bytes, STORAGE));
            self.slots.clear();
            self.generation += 1;
            0
        };
        let buffer = self.buffer.as_ref().expect("an arena");
        ctx.queue().write_buffer(buffer, offset, bytemuck::cast_slice(records));
        self.used = offset + size;
        let slot = TargetSlot { generation: self.generation, offset, size };
        self.slots.insert(words, slot);
        slot
    }

    /// The binding of a slot of the current arena.
    pub fn binding(&self, slot: &TargetSlot) -> wgpu::BindingResource<'_> {
        debug_assert_eq!(slot.generation, self.generation, "a slot of the current arena");
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buffer.as_ref().expect("an arena"),
            offset: slot.offset,
            size: std::num::NonZeroU64::new(slot.size),
        })
    }
}
