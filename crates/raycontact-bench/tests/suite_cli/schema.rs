//! The `raycontact.bench/6` JSON schema the suite's document is checked against, written out
//! strictly (a field missing, of the wrong type or not in the schema fails), and the check.

use serde_json::Value;

/// A JSON type of the schema.
pub enum T {
    /// Any number.
    Num,
    /// A non-negative integer.
    Uint,
    /// A string.
    Str,
    /// `true` or `false`.
    Bool,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// `null` or the type.
    Nullable(Box<T>),
    /// An array of the type.
    Arr(Box<T>),
    /// An object with exactly these fields.
    Obj(Vec<(&'static str, T)>),
    /// An object with any keys among these, each of the type.
    MapOf(&'static [&'static str], Box<T>),
}

pub fn nullable(t: T) -> T {
    T::Nullable(Box::new(t))
}

pub fn arr(t: T) -> T {
    T::Arr(Box::new(t))
}

pub const STAGES: &[&str] = &[
    "upload",
    "normals",
    "bounds",
    "morton",
    "sort",
    "hierarchy",
    "fit",
    "pairs",
    "rays",
    "crossings",
    "contour",
    "analysis",
    "readback",
];
pub const IMPLS: &[&str] = &[
    "gpu",
    "gpu-refit",
    "gpu-auto",
    "cpu-1",
    "cpu-rayon",
    "cpu-refit",
    "cpu-auto",
    "cpu-twins",
    "gpu-walk",
    "cpu-walk",
    "parry-1",
    "parry-rayon",
    "parry-refit-1",
    "parry-refit-rayon",
];
/// The implementations that run only when named (`--implementations`).
pub const OPT_IN_IMPLS: &[&str] = &["gpu-auto", "cpu-auto"];
/// The implementations of every scene.
pub const FULL_IMPLS: &[&str] = &[
    "gpu",
    "gpu-refit",
    "cpu-1",
    "cpu-rayon",
    "cpu-refit",
    "cpu-twins",
    "parry-1",
    "parry-rayon",
    "parry-refit-1",
    "parry-refit-rayon",
];
/// The scenes that compare walking with full traversal.
pub const WALK_SCENES: &[&str] = &["resting-pile", "slow-pair"];
pub const OUTCOMES: &[&str] = &["hit", "boundary", "loop", "steps", "range", "parallel", "no_start"];
pub const SCENES: &[&str] = &[
    "hermann-tori",
    "tori-scaling",
    "resting-pile",
    "slow-pair",
    "cloth-layers",
    "eight-sheets",
    "mesh-scaling",
    "files",
];

/// The `raycontact.bench/6` schema, as docs/bench-json.md describes it.
pub fn schema() -> T {
    use T::*;
    let ms =
        || Obj(vec![("median", Num), ("mean", Num), ("min", Num), ("max", Num), ("per_frame", arr(Num))]);
    let classes = || {
        Obj(vec![
            ("collision", Num),
            ("prediction", Num),
            ("inward", Num),
            ("outward", Num),
            ("inverted", Num),
            ("walked", Num),
        ])
    };
    let implementation = Obj(vec![
        ("id", OneOf(IMPLS)),
        (
            "intersections",
            nullable(Obj(vec![
                ("all_vs_rays", nullable(Num)),
                ("crossings_per_frame", arr(Uint)),
                ("crossings_vs_rays", nullable(Num)),
                ("edge_contacts_per_frame", arr(Uint)),
                ("edges_traced_per_frame", arr(Uint)),
                ("loops_per_frame", arr(Uint)),
                ("multi_pass_edges_per_frame", arr(Uint)),
                ("untangle_contacts_per_frame", arr(Uint)),
                ("wrong_side_vertices_per_frame", arr(Uint)),
            ])),
        ),
        ("label", Str),
        ("kind", OneOf(&["gpu", "cpu", "parry"])),
        ("frame_timing", OneOf(&["wall"])),
        ("frame_ms", ms()),
        (
            "frame_kinds",
            MapOf(
                &["rebuild", "refit", "iterative"],
                Box::new(Obj(vec![
                    ("frames", Uint),
                    ("median_ms", Num),
                    ("worst_ms", Num),
                    ("worst_over_median", Num),
                    ("dispatches_per_frame", nullable(Num)),
                ])),
            ),
        ),
        ("setup_ms", nullable(Num)),
        ("sources_unreached_per_frame", nullable(arr(Uint))),
        ("rays_per_s", Num),
        ("stage_timing", OneOf(&["gpu-timestamps", "cpu-wall", "none"])),
        ("stages_ms", MapOf(STAGES, Box::new(Num))),
        ("stages_total_ms", nullable(Num)),
        ("contacts", Obj(vec![("mean", Num), ("per_frame", arr(Uint)), ("by_class", classes())])),
        ("differ_from_reference", Obj(vec![("max", Uint), ("per_frame", arr(Uint))])),
        ("rays_counted", nullable(arr(Uint))),
        ("threads", nullable(Uint)),
        ("ray_stage_rays_per_s_per_core", nullable(Num)),
        (
            "bvh",
            nullable(Obj(vec![
                ("policy", OneOf(&["rebuild", "refit", "auto"])),
                ("rebuilt", Uint),
                ("refitted", Uint),
                ("kept", Uint),
                ("per_frame", arr(OneOf(&["none", "rebuilt", "refitted", "kept"]))),
                ("degradation_median", nullable(Num)),
                ("degradation_max", nullable(Num)),
                ("degradation_per_frame", arr(nullable(Num))),
                ("degenerate_changed_frames", Uint),
            ])),
        ),
        (
            "walking",
            nullable(Obj(vec![
                ("full", OneOf(&["gpu", "cpu-rayon"])),
                ("threshold", Num),
                ("step", Num),
                ("confidence", Num),
                ("full_pass_every", Uint),
                ("fallback", OneOf(&["drop", "bvh"])),
                ("iterative_frames", Uint),
                ("full_frames", Uint),
                ("iterative_fraction", Num),
                ("per_frame_iterative", arr(Bool)),
                ("iterative_ms", nullable(Num)),
                ("full_pass_ms", nullable(Num)),
                ("full_traversal_ms", Num),
                ("speedup_iterative", nullable(Num)),
                ("speedup_mean", Num),
                ("walked_per_frame", arr(Uint)),
                ("outcomes", Obj(OUTCOMES.iter().map(|o| (*o, Uint)).collect())),
                ("fallback_casts", Uint),
                ("fallback_hits", Uint),
                (
                    "differ_from_full",
                    Obj(vec![
                        ("full_contacts", Uint),
                        ("extra", Uint),
                        ("other_triangle", Uint),
                        ("missing", Uint),
                        ("fraction", Num),
                        ("fraction_iterative", Num),
                        ("per_frame", arr(Uint)),
                    ]),
                ),
            ])),
        ),
        (
            "gpu",
            nullable(Obj(vec![
                ("dispatches_per_frame", Num),
                ("bytes_read_back_per_frame", Num),
                ("dispatches_per_frame_list", arr(Uint)),
                ("timestamps_per_frame", Num),
                ("bytes_read_back_per_frame_list", arr(Uint)),
                ("bytes_bound_read", Uint),
                ("bytes_bound_written", Uint),
                ("buffers_allocated", Uint),
                (
                    "host_ms",
                    nullable(Obj(vec![
                        ("record", Num),
                        ("submit", Num),
                        ("wait", Num),
                        ("copy", Num),
                        ("order", Num),
                        ("total", Num),
                    ])),
                ),
                (
                    "h100_floor_ms",
                    nullable(Obj(vec![
                        ("fixed", Num),
                        ("bound_bytes", Num),
                        ("traversal", Num),
                        ("read_back", Num),
                        ("total", Num),
                    ])),
                ),
                (
                    "trees_walked",
                    nullable(Obj(vec![
                        ("nodes_per_ray_gpu_walk", Num),
                        ("nodes_per_ray_gpu_line_walk", Num),
                        ("triangles_per_ray", Num),
                        ("bytes_per_ray_gpu_line_walk", Num),
                    ])),
                ),
            ])),
        ),
        (
            "speedup",
            Obj(vec![
                ("vs_gpu", nullable(Num)),
                ("vs_cpu_1", nullable(Num)),
                ("vs_cpu_rayon", nullable(Num)),
                ("vs_cpu_twins", nullable(Num)),
                ("vs_parry_1", nullable(Num)),
                ("vs_parry_rayon", nullable(Num)),
                ("vs_parry_refit_1", nullable(Num)),
                ("vs_parry_refit_rayon", nullable(Num)),
            ]),
        ),
    ]);
    let instance = Obj(vec![
        ("scene", OneOf(SCENES)),
        ("description", Str),
        ("variant", Str),
        ("parameter_name", nullable(OneOf(&["tori", "triangles"]))),
        ("parameter", nullable(Num)),
        (
            "bodies",
            arr(Obj(vec![
                ("name", Str),
                ("kind", OneOf(&["volumetric", "cloth"])),
                ("half_thickness", nullable(Num)),
                ("triangles", Uint),
                ("vertices", Uint),
                ("moving", Bool),
            ])),
        ),
        ("triangles", Uint),
        ("vertices", Uint),
        ("frames", Uint),
        ("prediction_distance", Num),
        ("wall_s", Num),
        (
            "rays",
            Obj(vec![
                ("pairs", Uint),
                ("sources", Uint),
                ("sources_unreached", Uint),
                ("inward_rays", Uint),
                ("outward_rays", Uint),
                ("check_rays", Uint),
                ("rays_per_frame", Uint),
                ("nodes_per_ray_gpu_walk", Num),
                ("nodes_per_ray_gpu_line_walk", Num),
                ("nodes_per_ray_cpu_walk", Num),
                ("triangles_per_ray", Num),
                ("wide_nodes_per_ray_cpu_walk", Num),
                ("triangles_per_ray_cpu_walk", Num),
                ("bytes_per_ray_gpu_walk", Num),
                ("bytes_per_ray_gpu_line_walk", Num),
                ("bytes_per_ray_cpu_walk", Num),
                ("stack_fallbacks", Uint),
                ("longest_source_nodes_gpu_walk", Uint),
                ("longest_source", Str),
                ("largest_valence", Uint),
            ]),
        ),
        ("implementations", arr(implementation)),
    ]);
    Obj(vec![
        ("schema", OneOf(&["raycontact.bench/6"])),
        ("generator", Obj(vec![("name", OneOf(&["raycontact-bench"])), ("version", Str)])),
        (
            "settings",
            Obj(vec![
                ("size", OneOf(&["tiny", "default", "paper"])),
                ("seed", Uint),
                ("frames", nullable(Uint)),
                ("scenes", arr(OneOf(SCENES))),
                ("cpu_only", Bool),
                ("parry", Bool),
                ("implementations", nullable(arr(OneOf(IMPLS)))),
                ("intersections", OneOf(&["off", "crossings", "full"])),
                ("order", OneOf(&["interleaved", "sequential"])),
                ("pinned", Bool),
                ("background_trees", Bool),
                ("cpu_background_trees", Bool),
            ]),
        ),
        (
            "machine",
            Obj(vec![
                (
                    "gpu",
                    nullable(Obj(vec![
                        ("name", Str),
                        ("vendor", Uint),
                        ("device", Uint),
                        ("device_type", Str),
                        ("backend", Str),
                        ("driver", Str),
                        ("driver_info", Str),
                        ("pipeline_creation_s", Num),
                        ("pipeline_threads", Uint),
                        ("pipeline_creation", OneOf(&["cold", "cached"])),
                        ("pipeline_cache_path", nullable(Str)),
                        ("software", Bool),
                        ("timestamps", Bool),
                        ("tuning", Str),
                    ])),
                ),
                (
                    "cpu",
                    Obj(vec![("model", nullable(Str)), ("logical_cores", Uint), ("rayon_threads", Uint)]),
                ),
                ("os", Str),
                ("arch", Str),
            ]),
        ),
        ("wall_s", Num),
        ("instances", arr(instance)),
        (
            "scaling",
            arr(Obj(vec![
                ("scene", OneOf(&["tori-scaling", "mesh-scaling"])),
                ("parameter_name", OneOf(&["tori", "triangles"])),
                (
                    "points",
                    arr(Obj(vec![
                        ("parameter", Num),
                        ("variant", Str),
                        ("frame_ms", MapOf(IMPLS, Box::new(Num))),
                    ])),
                ),
                ("fitted_exponent", MapOf(IMPLS, Box::new(nullable(Num)))),
            ])),
        ),
        (
            "agreement",
            Obj(vec![
                ("frames_compared", Uint),
                ("count_mismatches", Uint),
                ("max_set_difference", Uint),
                ("unreached_mismatches", Uint),
            ]),
        ),
    ])
}

/// Checks `v` against `t`; errors name the path.
pub fn check(v: &Value, t: &T, path: &str) -> Result<(), String> {
    let bad = |what: &str| Err(format!("{path}: expected {what}, found {v}"));
    match t {
        T::Num => {
            if !v.is_number() {
                return bad("a number");
            }
        }
        T::Uint => {
            if !v.is_u64() {
                return bad("a non-negative integer");
            }
        }
        T::Str => {
            if !v.is_string() {
                return bad("a string");
            }
        }
        T::Bool => {
            if !v.is_boolean() {
                return bad("a boolean");
            }
        }
        T::OneOf(options) => {
            if !v.as_str().is_some_and(|s| options.contains(&s)) {
                return bad(&format!("one of {options:?}"));
            }
        }
        T::Nullable(inner) => {
            if !v.is_null() {
                check(v, inner, path)?;
            }
        }
        T::Arr(inner) => {
            let Some(items) = v.as_array() else { return bad("an array") };
            for (i, item) in items.iter().enumerate() {
                check(item, inner, &format!("{path}[{i}]"))?;
            }
        }
        T::Obj(fields) => {
            let Some(map) = v.as_object() else { return bad("an object") };
            for (name, ft) in fields {
                let Some(fv) = map.get(*name) else { return Err(format!("{path}: missing field `{name}`")) };
                check(fv, ft, &format!("{path}.{name}"))?;
            }
            for key in map.keys() {
                if !fields.iter().any(|(n, _)| n == key) {
                    return Err(format!("{path}: field `{key}` is not in the schema"));
                }
            }
        }
        T::MapOf(keys, inner) => {
            let Some(map) = v.as_object() else { return bad("an object") };
            for (k, fv) in map {
                if !keys.contains(&k.as_str()) {
                    return Err(format!("{path}: key `{k}` is not one of {keys:?}"));
                }
                check(fv, inner, &format!("{path}.{k}"))?;
            }
        }
    }
    Ok(())
}
