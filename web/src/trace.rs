//! A run's trace: for every frame, the positions the detection ran on (each body's when they
//! changed) and what it found. The page records one; the native runner replays it on the CPU
//! backend, detecting on exactly those positions, and compares.
//!
//! Format (little-endian): `RCWEBTR1`, the seed (`u64`), the body count and each body's vertex
//! count (`u32`s); then per frame: the frame number, contacts, collisions, predictions
//! (`u32`s), the key hash (`u64`), a mask of the bodies whose positions follow (`u32`, bit b
//! for body b), and those positions (`f32` x, y, z per vertex).

use glam::Vec3;

use crate::sim::Counts;

const MAGIC: &[u8; 8] = b"RCWEBTR1";

/// One recorded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceFrame {
    /// The frame's number.
    pub frame: u32,
    /// What the recorded run's detection found.
    pub counts: Counts,
    /// The positions of each body that moved since the previous frame (all of them in the
    /// first frame).
    pub positions: Vec<Option<Vec<Vec3>>>,
}

/// A trace being recorded.
#[derive(Clone, Debug)]
pub struct Recorder {
    bytes: Vec<u8>,
    last: Vec<Option<Vec<Vec3>>>,
}

impl Recorder {
    /// A trace of a run of `seed` whose bodies have these vertex counts.
    pub fn new(seed: u64, vertex_counts: &[u32]) -> Self {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&seed.to_le_bytes());
        bytes.extend_from_slice(&(vertex_counts.len() as u32).to_le_bytes());
        for n in vertex_counts {
            bytes.extend_from_slice(&n.to_le_bytes());
        }
        Self { bytes, last: vec![None; vertex_counts.len()] }
    }

    /// Records a frame: the positions each body had when it was detected, and what was found.
    pub fn push(&mut self, frame: u32, counts: Counts, positions: &[&[Vec3]]) {
        let mask = positions
            .iter()
            .zip(&self.last)
            .enumerate()
            .filter(|(_, (p, last))| last.as_deref() != Some(**p))
            .fold(0u32, |m, (b, _)| m | 1 << b);
        for w in [frame, counts.contacts, counts.collisions, counts.predictions] {
            self.bytes.extend_from_slice(&w.to_le_bytes());
        }
        self.bytes.extend_from_slice(&counts.keys.to_le_bytes());
        self.bytes.extend_from_slice(&mask.to_le_bytes());
        for (b, p) in positions.iter().enumerate() {
            if mask & 1 << b != 0 {
                self.bytes.extend_from_slice(bytemuck::cast_slice(p));
                self.last[b] = Some(p.to_vec());
            }
        }
    }

    /// The trace so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A recorded trace, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The seed of the recorded run.
    pub seed: u64,
    /// Each body's vertex count.
    pub vertex_counts: Vec<u32>,
    /// The frames.
    pub frames: Vec<TraceFrame>,
}

impl Trace {
    /// Reads a trace; the error says what is wrong and where.
    pub fn read(bytes: &[u8]) -> Result<Self, String> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(8)? != MAGIC {
            return Err("not a raycontact-web trace (no RCWEBTR1 header)".into());
        }
        let seed = r.u64()?;
        let bodies = r.u32()? as usize;
        if bodies > 32 {
            return Err(format!("{bodies} bodies: at most 32"));
        }
        let vertex_counts = (0..bodies).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
        let mut frames = Vec::new();
        while r.at < bytes.len() {
            let frame = r.u32()?;
            let (contacts, collisions, predictions) = (r.u32()?, r.u32()?, r.u32()?);
            let keys = r.u64()?;
            let mask = r.u32()?;
            let mut positions = Vec::with_capacity(bodies);
            for (b, n) in vertex_counts.iter().enumerate() {
                positions.push(if mask & 1 << b != 0 {
                    let raw = r.take(12 * *n as usize)?;
                    Some(
                        raw.chunks_exact(12)
                            .map(|c| Vec3::from_array(bytemuck::pod_read_unaligned(c)))
                            .collect(),
                    )
                } else {
                    None
                });
            }
            if frames.is_empty() && positions.iter().any(Option::is_none) {
                return Err(format!("frame {frame}: the first frame must hold every body's positions"));
            }
            frames.push(TraceFrame {
                frame,
                counts: Counts { contacts, collisions, predictions, keys },
                positions,
            });
        }
        Ok(Self { seed, vertex_counts, frames })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {} (wanted {n} more)", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_only_what_moved() {
        let a = vec![Vec3::new(1.0, 2.0, 3.0); 3];
        let b = vec![Vec3::splat(-0.5); 2];
        let b2 = vec![Vec3::splat(0.25); 2];
        let counts = Counts { contacts: 5, collisions: 3, predictions: 2, keys: 0xdead_beef_0123_4567 };
        let mut rec = Recorder::new(7, &[3, 2]);
        rec.push(1, counts, &[&a, &b]);
        rec.push(2, counts, &[&a, &b2]);
        let t = Trace::read(rec.bytes()).unwrap();
        assert_eq!(t.seed, 7);
        assert_eq!(t.vertex_counts, vec![3, 2]);
        assert_eq!(t.frames[0].positions, vec![Some(a.clone()), Some(b)]);
        assert_eq!(t.frames[1].positions, vec![None, Some(b2)]);
        assert_eq!(t.frames[1].counts, counts);
        let cut = &rec.bytes()[..rec.bytes().len() - 1];
        assert!(Trace::read(cut).unwrap_err().contains("truncated"));
    }
}
