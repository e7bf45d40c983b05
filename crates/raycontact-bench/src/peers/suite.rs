//! The suite's runner of the peer: an instance, frame by frame, on [`Parry`].

use std::time::Instant;

use glam::Vec3;

use super::Parry;
use crate::progress::Progress;
use crate::results::{Classes, FrameKeys, ImplResult, keys_of_packed};
use crate::scenes::Instance;

/// Runs an instance on parry3d.
pub fn run_parry(
    parry: &mut Parry,
    inst: &Instance,
    mut result: ImplResult,
    progress: &mut Progress,
) -> (ImplResult, Vec<FrameKeys>) {
    let mut keys = Vec::new();
    let mut classes = Classes::default();
    let at = |f: usize| -> Vec<&[Vec3]> { (0..inst.bodies.len()).map(|b| inst.positions_at(f, b)).collect() };
    parry.frame(&at(0));
    progress.inc();
    for f in 1..inst.positions.len() {
        let positions = at(f);
        let start = Instant::now();
        let found = parry.frame(&positions);
        result.frame_ms.push(start.elapsed().as_secs_f64() * 1e3);
        result.contacts.push(found.contacts.len());
        result.rays.push(found.rays);
        classes.add(&Classes::of(found.contacts.iter().map(|c| c.flags)));
        keys.push(keys_of_packed(&found.contacts));
        progress.inc();
    }
    result.classes = classes.scaled(1.0 / inst.timed_frames().max(1) as f64);
    (result, keys)
}
