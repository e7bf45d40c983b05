//! The suite's run of the peer: an instance, a frame at a time, on [`Parry`].

use std::time::Instant;

use glam::Vec3;

use super::Parry;
use crate::results::{Classes, FrameKeys, ImplResult, keys_of_packed};
use crate::run::{Finished, Run};
use crate::scenes::Instance;

/// An instance on parry3d.
pub struct ParryRun {
    parry: Parry,
    result: ImplResult,
    keys: Vec<FrameKeys>,
    classes: Classes,
}

impl ParryRun {
    /// The run of an instance on `parry`, its figures in `result`.
    pub fn new(parry: Parry, result: ImplResult) -> Self {
        ParryRun { parry, result, keys: Vec::new(), classes: Classes::default() }
    }
}

/// Every body's positions at frame `f`.
fn at(inst: &Instance, f: usize) -> Vec<&[Vec3]> {
    (0..inst.bodies.len()).map(|b| inst.positions_at(f, b)).collect()
}

impl Run for ParryRun {
    fn setup(&mut self, inst: &Instance) -> Result<(), String> {
        self.parry.frame(&at(inst, 0));
        Ok(())
    }

    fn frame(&mut self, inst: &Instance, f: usize) -> Result<(), String> {
        let positions = at(inst, f);
        let start = Instant::now();
        let found = self.parry.frame(&positions);
        self.result.frame_ms.push(start.elapsed().as_secs_f64() * 1e3);
        self.result.contacts.push(found.contacts.len());
        self.result.rays.push(found.rays);
        self.classes.add(&Classes::of(found.contacts.iter().map(|c| c.flags)));
        self.keys.push(keys_of_packed(&found.contacts));
        Ok(())
    }

    fn finish(self: Box<Self>) -> Finished {
        let ParryRun { mut result, keys, classes, .. } = *self;
        result.classes = classes.scaled(1.0 / result.frame_ms.len().max(1) as f64);
        (result, keys, None)
    }
}
