//! `--tuning`: the GPU kernels' tuning ([`Tuning`]) a run's context builds its kernels for, so
//! that one adapter can time one switch against the other (e.g. the child pairs on a GPU).

use raycontact::Tuning;

/// The tuning that `spec` names, starting from `default` (the adapter kind's): comma-separated
/// items, each a preset (`software`, `gpu`: replaces the tuning so far) or a `field=value`
/// override (`items`, `barrier_group`, `whole_sort_tiles`: numbers; `line_walks`, `fan_walks`,
/// `child_pairs`, `workgroup_tallies`: `true` or `false`). Whether the result is a valid tuning
/// is the context's to check.
pub fn parse(spec: &str, default: Tuning) -> Result<Tuning, String> {
    let mut t = default;
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((field, value)) = item.split_once('=') else {
            t = match item {
                "software" => Tuning::SOFTWARE,
                "gpu" => Tuning::GPU,
                _ => return Err(format!("--tuning: `{item}` is neither `software`, `gpu` nor field=value")),
            };
            continue;
        };
        let (field, value) = (field.trim(), value.trim());
        let number =
            || value.parse::<u32>().map_err(|_| format!("--tuning: {field} takes a number, not `{value}`"));
        let flag = || {
            value.parse::<bool>().map_err(|_| format!("--tuning: {field} takes true or false, not `{value}`"))
        };
        match field {
            "items" => t.items = number()?,
            "barrier_group" => t.barrier_group = number()?,
            "whole_sort_tiles" => t.whole_sort_tiles = number()?,
            "line_walks" => t.line_walks = flag()?,
            "fan_walks" => t.fan_walks = flag()?,
            "child_pairs" => t.child_pairs = flag()?,
            "workgroup_tallies" => t.workgroup_tallies = flag()?,
            _ => return Err(format!("--tuning: no tuning field `{field}`")),
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_then_overrides_in_order() {
        assert_eq!(parse("", Tuning::SOFTWARE), Ok(Tuning::SOFTWARE));
        assert_eq!(parse("gpu", Tuning::SOFTWARE), Ok(Tuning::GPU));
        let t = parse("gpu, child_pairs=false,items=4", Tuning::SOFTWARE).unwrap();
        assert_eq!(t, Tuning { child_pairs: false, items: 4, ..Tuning::GPU });
        // A preset after an override replaces it.
        assert_eq!(parse("child_pairs=true,software", Tuning::GPU), Ok(Tuning::SOFTWARE));
        assert!(parse("fast", Tuning::GPU).unwrap_err().contains("`fast`"));
        assert!(parse("items=many", Tuning::GPU).unwrap_err().contains("number"));
        assert!(parse("line_walks=1", Tuning::GPU).unwrap_err().contains("true or false"));
        assert!(parse("depth=3", Tuning::GPU).unwrap_err().contains("`depth`"));
    }
}
