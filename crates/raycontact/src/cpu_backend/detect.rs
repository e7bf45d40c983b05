//! A detection plan on the CPU backend: the broad phase or the listed pairs, then the narrow
//! phase's twin (or the iterative pass's walks), with the contact capacity and the
//! [`OverflowPolicy`](crate::OverflowPolicy) applied as on the GPU. The CPU finds every contact
//! in one run, so growing needs no re-run: the result and the grown capacity equal the GPU's.

use web_time::Instant;

use super::CpuScene;
use super::narrow::PassMemo;
use crate::cpu::{self, ExitMemo, Narrow, WalkTracer};
use crate::error::Result;
use crate::found::FoundContacts;
use crate::packing::Packing;
use crate::plan::{DetectPlan, Outcome, Pass, on_overflow, with_headroom};
use crate::stats::{FrameStats, Stage};

fn elapsed_ns(start: Instant) -> Option<f64> {
    Some(start.elapsed().as_nanos() as f64)
}

impl CpuScene {
    /// Runs `plan` on this frame (its update already done), with the stage times in `stats`.
    pub fn detect(
        &mut self,
        packing: &Packing,
        plan: &DetectPlan,
        stats: &mut FrameStats,
    ) -> Result<Outcome> {
        // The pair list of a full pass, before the trees it reads are built.
        let full_list = match plan.pass {
            Pass::Iterative { .. } => None,
            Pass::Full => {
                let start = Instant::now();
                let list = match plan.pairs.list() {
                    Some(l) => l.to_vec(),
                    None => {
                        let (bits, prediction) = plan.pairs.broad_phase();
                        cpu::broad_phase(&packing.bodies, &self.frame.body_state, bits, prediction)
                    }
                };
                stats.stage(Stage::Pairs).cpu_ns = elapsed_ns(start);
                Some(list)
            }
        };
        // A full pass walks the wide trees of its pairs' bodies alone, built now where the
        // update deferred them (`super::deferred`); the intersection stages read the binary
        // trees, and an iterative pass fits those left behind (`lag`), but builds none that
        // its walks do not read (but for the deferred bodies of its pairs).
        if plan.intersect.mode != 0 {
            // Every deferred body, timed with the frame's stages.
            self.build_deferred(packing, None, Some(stats));
            self.fit_lagging(packing);
        } else if let Some(list) = &full_list {
            self.build_deferred(packing, Some(list), Some(stats));
        } else {
            let pairs = std::mem::take(&mut self.memory_pairs);
            self.build_deferred(packing, Some(&pairs), Some(stats));
            self.memory_pairs = pairs;
            self.fit_left_behind(packing);
        }
        let cx = Narrow {
            packing,
            frame: &self.frame,
            positions: &self.current,
            previous: &self.previous,
            remember_exit: plan.remember,
            inversions: plan.inversions,
        };
        let mut out = Outcome::default();
        let mut contacts = std::mem::take(&mut self.spare);
        let mut full_pairs = None;
        match plan.pass {
            Pass::Iterative { fallback, reach } => {
                let start = Instant::now();
                let tracer = WalkTracer { fallback, reach };
                let (pairs, memory, parts, found) =
                    (&self.memory_pairs, &self.last, &mut self.parts, &mut contacts);
                let (counts, walked) =
                    self.pool.install(|| cpu::walk_contacts(&cx, &tracer, pairs, memory, parts, found));
                stats.stage(Stage::Rays).cpu_ns = elapsed_ns(start);
                (out.walked, out.walk) = (walked, counts);
                out.pairs = pairs.len() as u32;
            }
            Pass::Full => {
                let list = full_list.unwrap_or_default();
                let start = Instant::now();
                // The backend's own memo, not with the twins' binary trees
                // (`set_wide_bvh(false)`), which answer the exit traces asked again from the
                // kernel's memo, nor where it does not pay (`trace_memo::pays`).
                let memo = if self.frame.wide.off {
                    self.memo.forget();
                    if ExitMemo::asked(&packing.bodies, &list, plan.remember) {
                        self.exits.keep_unmoved(&packing.bodies, &self.memo_moved);
                        PassMemo::Exits(&self.exits)
                    } else {
                        self.exits.forget();
                        PassMemo::None
                    }
                } else {
                    self.exits.forget();
                    match self.memo.for_pass(&packing.bodies, &list, &self.memo_moved) {
                        Some(m) => PassMemo::Traces(m),
                        None => PassMemo::None,
                    }
                };
                self.memo_moved.fill(false);
                let (order, runs, sources) = (&self.order, &mut self.runs, &mut self.sources);
                let (parts, found) = (&mut self.parts, &mut contacts);
                (out.sources, out.unreached) = self.pool.install(|| {
                    runs.update(packing, cx.positions, order);
                    super::narrow::full_pass(&cx, &list, (order, runs), sources, memo, parts, found)
                });
                stats.stage(Stage::Rays).cpu_ns = elapsed_ns(start);
                out.pairs = list.len() as u32;
                full_pairs = Some(list);
            }
        }
        out.crossing_capacity = plan.intersect.crossing_capacity;
        if plan.intersect.mode != 0 {
            let pairs = full_pairs.as_deref().unwrap_or(&self.memory_pairs);
            let (raw, capacity) = self.intersections(packing, plan, pairs, &mut contacts, stats)?;
            out.intersections = raw;
            out.crossing_capacity = capacity;
        }
        let found = contacts.len() as u64;
        out.contacts = FoundContacts::Owned(contacts);
        let capacity = on_overflow(plan.overflow, found, plan.contact_capacity)?;
        // As the GPU's: more room for the next detection when this one came near the end.
        out.contact_capacity = with_headroom(plan.overflow, found, capacity);
        if let (true, Some(list)) = (plan.remember, full_pairs) {
            self.memory_pairs = list;
        }
        Ok(out)
    }
}
