//! Contacts as the suite compares them: a key per contact and the triangle it hit.

use raycontact::internals::layout::ContactGpu;
use raycontact::internals::layout::contact_flags;
use raycontact::{ContactFlags, Contacts};

use crate::stats::SetDiff;

/// A contact as the suite compares them: (source body, source vertex, target body, outward ray).
pub type Key = (u32, u32, u32, bool);

/// A frame's contacts as compared: each key with the triangle it hit, sorted by key.
pub type FrameKeys = Vec<(Key, u32)>;

/// The key of a contact and the triangle it hit.
fn key_of(source: u32, vertex: u32, target: u32, flags: u32, triangle: u32) -> (Key, u32) {
    ((source, vertex, target, flags & contact_flags::OUTWARD_RAY != 0), triangle)
}

/// Sorts a frame's keys (a key appears once: a source vertex casts each side once per pair).
fn sorted(mut k: FrameKeys) -> FrameKeys {
    k.sort_unstable();
    k.dedup_by(|a, b| a.0 == b.0);
    k
}

/// The keys of the contacts a raycontact scene found by its vertex rays (the intersection
/// stages' edge and untangling contacts, which no peer finds, are left out).
pub fn keys_of(found: &Contacts) -> FrameKeys {
    let intersection = ContactFlags::EDGE | ContactFlags::UNTANGLE;
    sorted(
        found
            .contacts
            .iter()
            .filter(|c| !c.flags.intersects(intersection))
            .map(|c| {
                let (s, t) = (c.source_body.index(), c.target_body.index());
                key_of(s, c.source_vertex, t, c.flags.bits(), c.target_triangle)
            })
            .collect(),
    )
}

/// The keys of contacts in the GPU layout (packed body index = instance body).
pub fn keys_of_packed(contacts: &[ContactGpu]) -> FrameKeys {
    sorted(
        contacts
            .iter()
            .map(|c| key_of(c.source_body, c.source_vertex, c.target_body, c.flags, c.target_triangle))
            .collect(),
    )
}

/// Contacts found in one frame and not in the other (keys only: the triangle hit is ignored).
pub fn differ(a: &[(Key, u32)], b: &[(Key, u32)]) -> usize {
    SetDiff::of(a.iter().map(|(k, _)| (k, ())), b.iter().map(|(k, _)| (k, ()))).symmetric()
}
