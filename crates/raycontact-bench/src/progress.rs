//! The progress bar on stderr: hidden for the first seconds, so that short runs print none.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before its progress bar shows.
const SHOW_AFTER: Duration = Duration::from_secs(3);

/// A progress bar over the frames of every implementation and scene.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    enabled: bool,
    shown: bool,
}

impl Progress {
    /// A bar over `total` frames; never drawn when `enabled` is false (or stderr is no terminal).
    pub fn new(total: u64, enabled: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} frames  {msg}")
                .expect("template")
                .progress_chars("=> "),
        );
        Progress { bar, start: Instant::now(), enabled, shown: false }
    }

    fn maybe_show(&mut self) {
        if self.enabled && !self.shown && self.start.elapsed() >= SHOW_AFTER {
            self.shown = true;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(250));
        }
    }

    /// What is running now.
    pub fn set_message(&mut self, msg: String) {
        self.bar.set_message(msg);
        self.maybe_show();
    }

    /// One frame done.
    pub fn inc(&mut self) {
        self.bar.inc(1);
        self.maybe_show();
    }

    /// Runs `f` (which prints on stdout) with the bar cleared.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
