//! A detection's contact records as its backend hands them over, in no particular order: the
//! CPU backend's vector, or the GPU's readback buffer still mapped ([`MappedContacts`]), so that
//! the scene orders them and makes its [`Contact`](crate::Contact)s straight from the mapping
//! instead of copying every record out of it first (`cloth-layers`' 40k contacts are 3.7 MiB:
//! that copy was 0.40-0.50 ms of a 3.6 ms GPU frame on the H200 machine's host; on the 2-core
//! VM, lavapipe, `host_ms.copy` 0.14-0.18 -> 0.004-0.005 ms and `copy` + `order` 0.57-0.79 ->
//! 0.46-0.72, medians 0.65 -> 0.50, 7 runs alternated). wgpu's Vulkan backend puts readback
//! buffers in host-cached memory where the adapter has it, so reading the records there costs
//! what reading a copy does.

use std::ops::Deref;

use crate::layout::ContactGpu;

/// A detection's contact records (bodies by packed index), owned or in a mapped readback.
pub(crate) enum FoundContacts {
    /// In a vector: the CPU backend's, or a readback's copied out of its mapping.
    Owned(Vec<ContactGpu>),
    /// In the GPU's readback buffer, mapped until this is dropped.
    Mapped(MappedContacts),
}

impl Default for FoundContacts {
    fn default() -> Self {
        FoundContacts::Owned(Vec::new())
    }
}

impl Deref for FoundContacts {
    type Target = [ContactGpu];

    fn deref(&self) -> &[ContactGpu] {
        match self {
            FoundContacts::Owned(v) => v,
            FoundContacts::Mapped(m) => m,
        }
    }
}

impl FoundContacts {
    /// The records in a vector: the owned one, or a copy of the mapped ones (the buffer is
    /// unmapped).
    pub fn into_vec(self) -> Vec<ContactGpu> {
        match self {
            FoundContacts::Owned(v) => v,
            FoundContacts::Mapped(m) => m.to_vec(),
        }
    }
}

/// Contact records in a mapped range of a readback buffer: read in place, and the buffer
/// unmapped when this is dropped (before the buffer is mapped again or written by a copy, which
/// a mapped buffer would fail).
pub(crate) struct MappedContacts {
    /// The records' bytes (`None` only while dropping: the view goes before the unmap).
    view: Option<wgpu::BufferView>,
    /// The mapped buffer.
    buffer: wgpu::Buffer,
}

impl MappedContacts {
    /// The records of `view`, a mapped range of `buffer` holding whole records; `Err` with the
    /// view where its bytes are not aligned for them (the caller copies them out instead). A
    /// mapped range starts at a multiple of [`wgpu::MAP_ALIGNMENT`] of the mapping, so this
    /// fails only on a range not at a multiple of a record's alignment from the buffer's start
    /// or a mapping not so aligned (in the browser the mapping is a copy in a `Vec<u8>`).
    pub fn new(buffer: &wgpu::Buffer, view: wgpu::BufferView) -> Result<Self, wgpu::BufferView> {
        if bytemuck::try_cast_slice::<u8, ContactGpu>(&view).is_err() {
            return Err(view);
        }
        Ok(MappedContacts { view: Some(view), buffer: buffer.clone() })
    }
}

impl Deref for MappedContacts {
    type Target = [ContactGpu];

    fn deref(&self) -> &[ContactGpu] {
        // Checked in `new`: the same bytes.
        self.view.as_deref().map_or(&[], bytemuck::cast_slice)
    }
}

impl Drop for MappedContacts {
    fn drop(&mut self) {
        // A buffer is unmapped once every view of it is gone.
        self.view = None;
        self.buffer.unmap();
    }
}
