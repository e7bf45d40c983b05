//! Text formatting shared by the tables: byte sizes and milliseconds.

/// A byte count as B, KiB or MiB with one decimal (bytes as a whole number).
pub fn fmt_bytes(b: f64) -> String {
    if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// Milliseconds with two decimals, `-` when absent or not finite.
pub fn fmt_ms(ms: Option<f64>) -> String {
    match ms {
        Some(v) if v.is_finite() => format!("{v:.2}"),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_ms() {
        assert_eq!(fmt_bytes(512.0), "512 B");
        assert_eq!(fmt_bytes(1536.0), "1.5 KiB");
        assert_eq!(fmt_bytes(3.0 * (1u64 << 20) as f64), "3.0 MiB");
        assert_eq!(fmt_ms(Some(1.234)), "1.23");
        assert_eq!(fmt_ms(Some(f64::NAN)), "-");
        assert_eq!(fmt_ms(None), "-");
    }
}
