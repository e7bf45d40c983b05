//! Readback: the detection's counters and contacts (one copy in the frame's submission, sized by
//! the last frame's count, and a copy-only submission for the rest when there are more), the
//! stage timings, and debugging reads of any buffer.

use bytemuck::Pod;
use web_time::Instant;

use super::buffers::{B, READBACK, create_buffer};
use super::timer::TIMES_BYTES;
use super::{ContactBuffers, GpuScene, buffers::contact_sides};
use crate::error::{Error, Result};
use crate::found::{FoundContacts, MappedContacts};
use crate::frame::FrameData;
use crate::layout::{
    BodyState, ContactGpu, DetectState, Node, TRIANGLE_REGIONS, TriBox, VERTEX_NORMALS, VERTEX_PREVIOUS,
};
use crate::stats::{FrameStats, Stage};

/// Bytes of one contact record.
const CONTACT_BYTES: u64 = size_of::<ContactGpu>() as u64;
/// The contact readback buffer's label.
const READ_LABEL: &str = "raycontact.contacts.read";
/// Bytes of the detection counters at the head of the contact readback (and of the pair list).
const HEAD_BYTES: u64 = size_of::<DetectState>() as u64;
/// Where the frame's stage timestamps lie in the contact readback, after the counters
/// ([`TIMES_BYTES`], written where the frame is timed): read with the contacts, so that a
/// detection maps one buffer, not two (`timer.rs`).
const TIMES_AT: u64 = HEAD_BYTES;
/// Where the contacts lie in the contact readback.
const CONTACTS_AT: u64 = TIMES_AT + TIMES_BYTES;
// Each part's view of the mapping starts where a mapped range may, and the contacts where they
// can be read in place.
const _: () = assert!(
    TIMES_AT.is_multiple_of(wgpu::MAP_ALIGNMENT)
        && CONTACTS_AT.is_multiple_of(wgpu::MAP_ALIGNMENT)
        && CONTACTS_AT.is_multiple_of(align_of::<ContactGpu>() as u64)
);

impl GpuScene {
    /// How many contacts the frame's own copy reads back (the last frame's count plus a margin,
    /// at most `capacity`). The readback buffer holds all `capacity` contacts: it is created by
    /// the scene's first detection and again only when the contact capacity grows (an overflow,
    /// counted), never because the count rose; only the copied contacts move, so its size costs
    /// host memory, not traffic.
    pub(super) fn readback_contacts(&mut self, capacity: u64) -> u64 {
        self.ensure_contact_read(capacity);
        (self.last_contact_count + self.last_contact_count / 4 + 64).min(capacity)
    }

    /// Records the copy of the counters, of the frame's stage timestamps (where it is timed:
    /// resolved here, [`Self::read_detect`] reads them) and of the first `k` contacts of buffer
    /// `cur`.
    pub(super) fn record_contact_copy(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        cur: B,
        k: u64,
        stats: &mut FrameStats,
    ) {
        let (read, _) = self.contact_read.as_ref().expect("contact readback");
        if let Some(t) = self.timer() {
            t.resolve_into(encoder, true, read, TIMES_AT);
        }
        encoder.copy_buffer_to_buffer(self.bufs.get(B::Pairs), 0, read, 0, Some(HEAD_BYTES));
        encoder.copy_buffer_to_buffer(self.bufs.get(cur), 0, read, CONTACTS_AT, Some(k * CONTACT_BYTES));
        stats.stage(Stage::Readback).add_copy(HEAD_BYTES + k * CONTACT_BYTES);
    }

    fn ensure_contact_read(&mut self, contacts: u64) {
        if self.contact_read.as_ref().is_none_or(|(_, cap)| *cap < contacts) {
            let cap = contacts;
            let bytes = CONTACTS_AT + cap * CONTACT_BYTES;
            let b = create_buffer(&self.ctx, &mut self.bufs.allocations, READ_LABEL, bytes, READBACK);
            self.contact_read = Some((b, cap));
        }
    }

    /// Reads the counters, the stage times (into `stats`, where the frame was timed) and the
    /// contacts of a submitted detection whose first `copied` contacts were copied for
    /// readback; copies the rest (a second, copy-only submission) when there were more.
    /// Returns the counters and at most `capacity` contacts.
    ///
    /// The counters and the copied contacts are mapped once. In the usual case, where the count
    /// did not outgrow the frame's copy, the contacts are handed over in the mapping
    /// ([`FoundContacts::Mapped`]: no copy of them here; the buffer is unmapped when they are
    /// dropped, before the next frame's copy into it); else, or where the mapping is not aligned
    /// for them, they are copied out of it, once.
    pub(super) async fn read_detect(
        &mut self,
        copied: u64,
        capacity: u64,
        stats: &mut FrameStats,
        blocking: bool,
    ) -> Result<(DetectState, FoundContacts)> {
        let (read, _) = self.contact_read.as_ref().expect("contact readback");
        let read = read.clone();
        let size = CONTACTS_AT + copied * CONTACT_BYTES;
        // The host's time, split into the wait for the mapping and the reads out of it.
        let start = Instant::now();
        self.ctx.map_for_read(read.slice(0..size), READ_LABEL, blocking).await?;
        let copy = Instant::now();
        let (state, taken) = match self.take_mapped(&read, copied, capacity, stats) {
            Ok(taken) => taken,
            Err(e) => {
                read.unmap();
                return Err(e);
            }
        };
        let mut copy_ns = copy.elapsed().as_nanos() as f64;
        // Mapped until the contacts are dropped where they are read in place; else now.
        if !matches!(taken, Some(FoundContacts::Mapped(_))) {
            read.unmap();
        }
        self.last_contact_count = state.contact_count as u64;
        let count = (state.contact_count as u64).min(capacity);
        let contacts = match taken {
            Some(contacts) => contacts,
            None => {
                // The readback holds `capacity` contacts (see `readback_contacts`).
                let mut enc = self
                    .ctx
                    .device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(READ_LABEL) });
                let ((cur, _), _) = contact_sides(self.side);
                enc.copy_buffer_to_buffer(
                    self.bufs.get(cur),
                    0,
                    &read,
                    CONTACTS_AT,
                    Some(count * CONTACT_BYTES),
                );
                self.ctx.queue().submit([enc.finish()]);
                stats.stage(Stage::Readback).add_copy(count * CONTACT_BYTES);
                let bytes = count * CONTACT_BYTES;
                let mut contacts = self.spare_contacts();
                self.ctx
                    .map_read_async(&read, READ_LABEL, CONTACTS_AT, bytes, blocking, |b| {
                        let copy = Instant::now();
                        refill(&mut contacts, b);
                        copy_ns += copy.elapsed().as_nanos() as f64;
                    })
                    .await?;
                FoundContacts::Owned(contacts)
            }
        };
        stats.host.copy_ns += copy_ns;
        stats.host.wait_ns += start.elapsed().as_nanos() as f64 - copy_ns;
        stats.bytes_read_back += HEAD_BYTES + count * CONTACT_BYTES;
        Ok((state, contacts))
    }

    /// From the mapped readback `read` (the counters, the stage timestamps, then `copied`
    /// contacts): the counters, the stage times (into `stats`, where the frame was timed), and
    /// the contacts (at most `capacity`) where the copy holds them all (`None`: more were
    /// found); the buffer stays mapped (the caller unmaps it but where the contacts are
    /// [`FoundContacts::Mapped`]).
    fn take_mapped(
        &mut self,
        read: &wgpu::Buffer,
        copied: u64,
        capacity: u64,
        stats: &mut FrameStats,
    ) -> Result<(DetectState, Option<FoundContacts>)> {
        let view = |range: std::ops::Range<u64>| {
            read.get_mapped_range(range)
                .map_err(|e| Error::Readback { buffer: READ_LABEL, message: e.to_string() })
        };
        let state: DetectState = bytemuck::pod_read_unaligned(&view(0..HEAD_BYTES)?);
        if let Some(t) = self.timer() {
            t.times(&self.ctx, true, &view(TIMES_AT..CONTACTS_AT)?, stats);
        }
        let count = (state.contact_count as u64).min(capacity);
        if count > copied {
            return Ok((state, None));
        }
        if count == 0 {
            return Ok((state, Some(FoundContacts::Owned(self.spare_contacts()))));
        }
        let contacts =
            match MappedContacts::new(read, view(CONTACTS_AT..CONTACTS_AT + count * CONTACT_BYTES)?) {
                Ok(mapped) => FoundContacts::Mapped(mapped),
                Err(view) => {
                    let mut contacts = self.spare_contacts();
                    refill(&mut contacts, &view);
                    FoundContacts::Owned(contacts)
                }
            };
        Ok((state, Some(contacts)))
    }

    /// The vector of an earlier detection, emptied, to be refilled (`recycle_contacts` handed it
    /// back).
    fn spare_contacts(&mut self) -> Vec<ContactGpu> {
        let mut contacts = std::mem::take(&mut self.spare);
        contacts.clear();
        contacts
    }

    /// Takes back the contacts of a detection that the scene has ordered (or of a run that
    /// [`GpuScene::detect`] runs again): a vector is kept for the next readback to refill; a
    /// mapping is dropped, which unmaps the readback buffer.
    pub fn recycle_contacts(&mut self, contacts: FoundContacts) {
        if let FoundContacts::Owned(v) = contacts {
            self.spare = v;
        }
    }

    /// The contact buffer, the counters buffer and the indirect arguments buffer of the last
    /// recorded detection, for a GPU consumer.
    pub fn contact_buffers(&self) -> ContactBuffers<'_> {
        let ((contacts, args), _) = contact_sides(self.side);
        ContactBuffers {
            contacts: self.bufs.get(contacts),
            state: self.bufs.get(B::Pairs),
            dispatch_args: self.bufs.get(args),
        }
    }

    /// Records the resolve of an update's timestamps (its stages: a detection resolves its own
    /// into the contact readback, [`Self::record_contact_copy`]) for [`Self::read_timings`].
    pub fn resolve_timings(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(t) = self.timer() {
            t.resolve(encoder);
        }
    }

    /// The GPU times of the stages the last submitted update ran into `stats` (nanoseconds),
    /// with the bytes read back; nothing without timestamps. Waits for the GPU where there are
    /// some to read: returns whether it did.
    pub fn read_timings(&self, stats: &mut FrameStats) -> Result<bool> {
        self.timer().map_or(Ok(false), |t| t.read(&self.ctx, stats))
    }

    /// Reads back `count` elements of type `T` from buffer `b` at element `first` (debugging and
    /// tests; reuses one readback buffer, grown when needed).
    pub fn read<T: Pod>(&mut self, b: B, first: u64, count: u64) -> Result<Vec<T>> {
        let ctx = self.ctx.clone();
        ctx.scoped("readback", || {
            let size = size_of::<T>() as u64;
            let bytes = (count * size).div_ceil(4) * 4;
            if bytes == 0 {
                return Ok(Vec::new());
            }
            self.ensure_readback(bytes);
            let (rb, _) = self.readback.as_ref().expect("readback buffer");
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("raycontact.read") });
            enc.copy_buffer_to_buffer(self.bufs.get(b), first * size, rb, 0, Some(bytes));
            ctx.queue().submit([enc.finish()]);
            let data = ctx.read_mapped(rb, "raycontact.readback", 0, bytes)?;
            Ok(bytemuck::pod_collect_to_vec(&data[..(count * size) as usize]))
        })
    }

    fn ensure_readback(&mut self, bytes: u64) {
        if self.readback.as_ref().is_none_or(|(_, cap)| *cap < bytes) {
            let cap = bytes.max(self.readback.as_ref().map_or(0, |r| r.1 * 2));
            let b =
                create_buffer(&self.ctx, &mut self.bufs.allocations, "raycontact.readback", cap, READBACK);
            self.readback = Some((b, cap));
        }
    }

    /// The detection counters of the last detection (waits for the GPU).
    pub fn read_detect_state(&mut self) -> Result<DetectState> {
        Ok(self.read::<DetectState>(B::Pairs, 0, 1)?[0])
    }

    /// The previous frame's positions of packed vertices `first .. first + count` (waits for the
    /// GPU).
    pub fn read_previous(&mut self, first: u64, count: u64) -> Result<Vec<glam::Vec3>> {
        let region = VERTEX_PREVIOUS as u64 * self.params.vertex_count as u64;
        self.read::<glam::Vec3>(B::Vertices, region + first, count)
    }

    /// Reads back everything a frame built, in the CPU twins' layout.
    pub fn read_frame(&mut self) -> Result<FrameData> {
        let p = self.params;
        let (v, t, n) = (p.vertex_count as u64, p.tri_count as u64, p.body_count as u64);
        Ok(FrameData {
            normals: self.read::<glam::Vec3>(B::Vertices, VERTEX_NORMALS as u64 * v, v)?,
            tri_boxes: self.read::<TriBox>(B::TriBoxes, 0, t)?,
            body_state: self.read::<BodyState>(B::BodyState, 0, n)?,
            keys: self.read::<u32>(B::Keys0, 0, t)?,
            values: self.read::<u32>(B::Values0, 0, t)?,
            nodes: self.read::<Node>(B::Nodes, 0, 2 * t)?,
            child_pairs: if self.ctx.tuning().child_pairs {
                let first = self.bufs.child_pairs_offset() / size_of::<Node>() as u64;
                self.read::<Node>(B::Nodes, first, t)?
            } else {
                Vec::new()
            },
            parents: self.read::<u32>(B::Parents, 0, 2 * t)?,
            // Written only where the tuning passes fans.
            fans: if self.ctx.tuning().fan_walks {
                self.read::<u32>(B::Triangles, 3 * TRIANGLE_REGIONS as u64 * t, t)?
            } else {
                Vec::new()
            },
            // The CPU backend's own: the GPU walks its binary trees.
            faces: Vec::new(),
            sah_trees: self.sah_trees().to_vec(),
            wide: Default::default(),
            scratch: Default::default(),
            lag: Default::default(),
        })
    }
}

/// Fills `contacts` (emptied: [`GpuScene::spare_contacts`]) with the records of `bytes` (whole
/// [`ContactGpu`]s, as mapped: maybe not aligned for them), in its own memory when it holds
/// enough.
fn refill(contacts: &mut Vec<ContactGpu>, bytes: &[u8]) {
    contacts
        .extend(bytes.chunks_exact(CONTACT_BYTES as usize).map(bytemuck::pod_read_unaligned::<ContactGpu>));
}
