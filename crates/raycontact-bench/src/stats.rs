//! Small statistics shared by the benchmarks: median, mean, the fitted exponent of a scaling
//! series and the difference of two sorted sets.

/// Median of a list: the upper middle element of the sorted list (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// Mean of a list (NaN when empty).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// Slope of the least-squares line through (ln x, ln y): the exponent of y against x (points
/// with x or y not positive left out; `None` with fewer than two points or a single x).
pub fn fitted_exponent(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> =
        points.iter().filter(|(x, y)| *x > 0.0 && *y > 0.0).map(|(x, y)| (x.ln(), y.ln())).collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// How two sets of keyed entries differ (each sorted by key, each key at most once).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetDiff {
    /// Keys of the first set only.
    pub only_a: usize,
    /// Keys of the second set only.
    pub only_b: usize,
    /// Keys of both whose values differ.
    pub other_value: usize,
}

impl SetDiff {
    /// Compares two sets given as (key, value) entries sorted by key, in one merge.
    pub fn of<K: Ord, V: PartialEq>(
        a: impl IntoIterator<Item = (K, V)>,
        b: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut d = SetDiff::default();
        let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
        loop {
            let order = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x.0.cmp(&y.0),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => return d,
            };
            match order {
                std::cmp::Ordering::Less => {
                    d.only_a += 1;
                    a.next();
                }
                std::cmp::Ordering::Greater => {
                    d.only_b += 1;
                    b.next();
                }
                std::cmp::Ordering::Equal => {
                    let (x, y) = (a.next(), b.next());
                    d.other_value += usize::from(x.map(|x| x.1) != y.map(|y| y.1));
                }
            }
        }
    }

    /// The size of the symmetric difference of the two key sets (values ignored).
    pub fn symmetric(&self) -> usize {
        self.only_a + self.only_b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_is_the_upper_middle_and_nan_when_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median(&[]).is_nan());
        assert!(mean(&[]).is_nan());
        assert_eq!(mean(&[1.0, 2.0]), 1.5);
    }

    #[test]
    fn fitted_exponent_of_a_power_law() {
        let pts: Vec<(f64, f64)> = (1..6).map(|x| (x as f64, 3.0 * (x as f64).powi(2))).collect();
        assert!((fitted_exponent(&pts).expect("fit") - 2.0).abs() < 1e-9);
        assert_eq!(fitted_exponent(&[(1.0, 2.0)]), None);
    }

    #[test]
    fn set_diff_counts_each_side_and_changed_values() {
        let a = [(1, 'x'), (2, 'y'), (4, 'z')];
        let b = [(2, 'y'), (3, 'q'), (4, 'w'), (5, 'v')];
        let d = SetDiff::of(a, b);
        assert_eq!(d, SetDiff { only_a: 1, only_b: 2, other_value: 1 });
        assert_eq!(d.symmetric(), 3);
        assert_eq!(SetDiff::of(Vec::<(u8, ())>::new(), [(1, ())]).symmetric(), 1);
    }
}
