//! What every implementation of the suite does with an instance, a frame at a time ([`Run`]):
//! raycontact's `crate::suite` runner and the peer's `crate::peers::ParryRun`.

use raycontact::Scene;

use crate::results::{FrameKeys, ImplResult};
use crate::scenes::Instance;

/// One implementation's run of an instance, a frame at a time: the set-up frame (frame 0,
/// untimed), then each timed frame, then its figures. The suite steps every implementation's
/// run in turn (`crate::suite`), frame by frame unless `--sequential`.
pub trait Run {
    /// Frame 0: layout, first buffers and trees (timed apart, as the set-up).
    fn setup(&mut self, inst: &Instance) -> Result<(), String>;
    /// Timed frame `f` (from 1).
    fn frame(&mut self, inst: &Instance, f: usize) -> Result<(), String>;
    /// The figures, the keys of every timed frame, and the raycontact scene (none for a peer).
    fn finish(self: Box<Self>) -> Finished;
}

/// A finished run: its figures, the keys of every timed frame, and its raycontact scene (none
/// for a peer).
pub type Finished = (ImplResult, Vec<FrameKeys>, Option<Scene>);

/// A run with its implementation's id.
pub type Named = (&'static str, Box<dyn Run>);
