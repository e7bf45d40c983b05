//! The per-step table (raycontact and rapier side by side) and the summary of a run (medians).

use std::fmt::Write;

use crate::sim::Step;

/// The table's header: raycontact's columns, then rapier's, then the outcome's figures.
pub fn header() -> String {
    [
        "        |------------------ raycontact -----------------| |------------ rapier ------------| |------- outcome -------|",
        "  step  detect ms  resp ms    fem  cloth-fem  self   inv  step ms  soft-soft  constr  ground  fem dpth  cloth dp  stack",
    ]
    .join("\n")
}

/// One step's row.
pub fn row(i: usize, s: &Step) -> String {
    let c = &s.contacts;
    let r = &s.rapier;
    let m = &s.measure;
    format!(
        "{i:>6}  {:>9.2}  {:>7.2}  {:>5}  {:>9}  {:>4}  {:>4}  {:>7.2}  {:>9}  {:>6}  {:>6}  {:>8.4}  {:>8.4}  {:>5.3}",
        s.detect_ms,
        s.response_ms,
        c.fem,
        c.cloth_fem,
        c.cloth_self,
        c.inverted,
        s.rapier_ms,
        r.soft_soft,
        r.constraints,
        r.ground,
        m.fem,
        m.cloth,
        m.stack,
    )
}

/// The median of `values` (0 for none).
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) }
}

/// The summary: medians over the steps of each column, the largest contact counts and depths.
pub fn summary(steps: &[Step]) -> String {
    let m = |f: &dyn Fn(&Step) -> f64| median(steps.iter().map(f));
    let max = |f: &dyn Fn(&Step) -> f64| steps.iter().map(f).fold(0.0, f64::max);
    let mut out = String::new();
    let n = steps.len();
    let _ = writeln!(out, "summary over {n} steps (median, and the largest where it says so):");
    let _ = writeln!(
        out,
        "  raycontact: detect {:.2} ms, response {:.2} ms; collision contacts slab-cube {} (max {}), cloth-slab/cube {} (max {}), cloth self {} (max {}), inverted {} (max {})",
        m(&|s| s.detect_ms),
        m(&|s| s.response_ms),
        m(&|s| s.contacts.fem as f64),
        max(&|s| s.contacts.fem as f64),
        m(&|s| s.contacts.cloth_fem as f64),
        max(&|s| s.contacts.cloth_fem as f64),
        m(&|s| s.contacts.cloth_self as f64),
        max(&|s| s.contacts.cloth_self as f64),
        m(&|s| s.contacts.inverted as f64),
        max(&|s| s.contacts.inverted as f64),
    );
    let gpu: Vec<f64> = steps.iter().filter_map(|s| s.detect_gpu_ms).collect();
    if !gpu.is_empty() {
        let _ = writeln!(
            out,
            "  raycontact's detection on the GPU by timestamps: {:.2} ms a step, {} dispatches",
            median(gpu),
            m(&|s| f64::from(s.dispatches)),
        );
    }
    let _ = writeln!(
        out,
        "  rapier: step {:.2} ms; soft-soft contacts {} (max {}), soft constraints {} (max {}), ground contacts {}",
        m(&|s| s.rapier_ms),
        m(&|s| s.rapier.soft_soft as f64),
        max(&|s| s.rapier.soft_soft as f64),
        m(&|s| s.rapier.constraints as f64),
        max(&|s| s.rapier.constraints as f64),
        m(&|s| s.rapier.ground as f64),
    );
    let _ = write!(
        out,
        "  at the end (and the largest over the run): deepest particle of a FEM body in the other {:.4} m ({:.4}), deepest cloth particle in a FEM body {:.4} m ({:.4})",
        steps.last().map_or(0.0, |s| s.measure.fem),
        max(&|s| s.measure.fem as f64),
        steps.last().map_or(0.0, |s| s.measure.cloth),
        max(&|s| s.measure.cloth as f64),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median([]), 0.0);
    }
}
