//! Every kernel parses and validates with naga; the Pod structs shared with WGSL have the
//! offsets and sizes naga computes; each kernel's bindings are those of `Kernel::bindings`, the
//! table the host builds its bind-group layouts from.

use std::mem::{offset_of, size_of};

use naga::{AddressSpace, StorageAccess, TypeInner};
use raycontact::Tuning;
use raycontact::internals::kernels::{Binding, Kernel, SHARED};
use raycontact::internals::layout::{
    BodyGpu, BodyPair, BodyState, ContactGpu, DetectParams, DetectState, FrameParams, Node, QueryTarget,
    RAY_COUNTS_OFFSET, Ray, RayHit, RayHitCount, RayHitTotals, RayIntersection, SortPass, SortSegment,
    TriBox,
};
use raycontact::internals::layout::{
    ContourGpu, CrossingGpu, EdgeGpu, IntersectParams, IntersectState, LoopGpu, RegionGpu,
};
use raycontact::internals::layout::{
    PAIRS_OFFSET, ResponseParams, WALK_HITS_OFFSET, WalkCounts, WalkHit, WalkParams,
};

pub(crate) fn module(k: Kernel) -> naga::Module {
    module_with(k, &Tuning::default())
}

/// Kernel `k` built with `tuning`, parsed and validated by naga.
pub(crate) fn module_with(k: Kernel, tuning: &Tuning) -> naga::Module {
    let src = k.source_with(tuning);
    let module = naga::front::wgsl::parse_str(&src)
        .unwrap_or_else(|e| panic!("shaders/{}.wgsl does not parse:\n{}", k.name(), e.emit_to_string(&src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| {
            panic!("shaders/{}.wgsl does not validate:\n{}", k.name(), e.emit_to_string(&src))
        });
    module
}

#[test]
fn every_kernel_parses_and_validates() {
    for tuning in [Tuning::SOFTWARE, Tuning::GPU] {
        for k in Kernel::ALL {
            let m = module_with(k, &tuning);
            assert!(m.entry_points.iter().any(|e| e.name == "main"), "{} has a `main` entry point", k.name());
            let wg = m.entry_points[0].workgroup_size;
            assert_eq!(wg, [k.workgroup_size(&tuning), 1, 1], "{} workgroup size, {tuning:?}", k.name());
        }
    }
}

#[test]
fn every_shader_file_is_a_kernel_or_an_include() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shaders");
    let mut kernels: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    kernels.sort();
    let mut names: Vec<String> = Kernel::ALL.iter().map(|k| format!("{}.wgsl", k.name())).collect();
    names.sort();
    assert_eq!(kernels, names);
    let mut shared: Vec<String> = std::fs::read_dir(format!("{dir}/shared"))
        .unwrap()
        .filter_map(|e| Some(format!("shared/{}", e.ok()?.file_name().into_string().ok()?)))
        .collect();
    shared.sort();
    let mut listed: Vec<String> = SHARED.iter().map(|(p, _)| p.to_string()).collect();
    listed.sort();
    assert_eq!(shared, listed);
    for (k, src) in Kernel::ALL.iter().map(|k| (k, k.raw_source())) {
        assert!(src.contains("`raycontact::internals::cpu::"), "{} names its CPU twin", k.name());
    }
}

#[test]
fn bindings_match_the_host_table() {
    for k in Kernel::ALL {
        let m = module(k);
        let mut found: Vec<(u32, Binding)> = m
            .global_variables
            .iter()
            .filter_map(|(_, g)| {
                let b = g.binding.as_ref()?;
                assert_eq!(b.group, 0, "{}: only group 0", k.name());
                let kind = match g.space {
                    AddressSpace::Uniform => Binding::Uniform,
                    AddressSpace::Storage { access } if access.contains(StorageAccess::STORE) => {
                        Binding::StorageMut
                    }
                    AddressSpace::Storage { .. } => Binding::Storage,
                    other => panic!("{}: unexpected address space {other:?}", k.name()),
                };
                Some((b.binding, kind))
            })
            .collect();
        found.sort_by_key(|f| f.0);
        let expected: Vec<(u32, Binding)> = k
            .bindings()
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u32, if *b == Binding::UniformDynamic { Binding::Uniform } else { *b }))
            .collect();
        assert_eq!(found, expected, "bindings of shaders/{}.wgsl", k.name());
    }
}

/// (offset of each member, size) of struct `name` as naga lays it out.
fn wgsl_layout(name: &str) -> (Vec<(String, u32)>, u32) {
    for k in Kernel::ALL {
        let m = module(k);
        for (_, ty) in m.types.iter() {
            if ty.name.as_deref() == Some(name)
                && let TypeInner::Struct { members, span } = &ty.inner
            {
                {
                    return (
                        members.iter().map(|mb| (mb.name.clone().unwrap_or_default(), mb.offset)).collect(),
                        *span,
                    );
                }
            }
        }
    }
    panic!("no WGSL struct named {name}");
}

macro_rules! check_struct {
    ($wgsl:literal, $ty:ty, [$($field:ident),* $(,)?]) => {{
        let (members, span) = wgsl_layout($wgsl);
        let rust: Vec<(String, u32)> = vec![$((stringify!($field).to_string(), offset_of!($ty, $field) as u32)),*];
        assert_eq!(members, rust, "member offsets of {}", $wgsl);
        assert_eq!(span as usize, size_of::<$ty>(), "size of {}", $wgsl);
    }};
}

#[test]
fn pod_structs_match_wgsl_layout() {
    check_struct!(
        "BodyGpu",
        BodyGpu,
        [
            vertex_offset,
            vertex_count,
            tri_offset,
            tri_count,
            node_offset,
            tile_offset,
            tile_count,
            flags,
            half_thickness,
            mean_size,
            edge_offset,
            edge_count
        ]
    );
    check_struct!("BodyPair", BodyPair, [a, b, prediction, pad]);
    check_struct!(
        "DetectState",
        DetectState,
        [pair_count, sources, contact_count, walked, walk, unreached, stored, pad0]
    );
    check_struct!(
        "DetectStateRead",
        DetectState,
        [pair_count, sources, contact_count, walked, walk, unreached, stored, pad0]
    );
    check_struct!("WalkCountsRead", WalkCounts, [outcomes, fallback_casts, fallback_hits, pad0, pad1]);
    check_struct!(
        "DetectParams",
        DetectParams,
        [
            pair_capacity,
            contact_capacity,
            body_count,
            self_collision,
            prediction,
            walk_fallback,
            walk_reach,
            flags,
            source_capacity,
            vertex_count,
            tri_count,
            side
        ]
    );
    check_struct!(
        "Contact",
        ContactGpu,
        [
            source_body,
            source_vertex,
            target_body,
            target_triangle,
            source_point,
            u,
            target_point,
            v,
            normal,
            depth,
            ray_length,
            weight,
            flags,
            pair,
            exit_triangle,
            walk_steps,
            pad0,
            pad1
        ]
    );
    check_struct!("BodyStateRead", BodyState, [min_key, leaf_count, max_key, degenerate_count]);
    check_struct!("BodyState", BodyState, [min_key, leaf_count, max_key, degenerate_count]);
    check_struct!("TriBox", TriBox, [min, flags, max, pad]);
    check_struct!("Node", Node, [min, child, max, escape]);
    check_struct!("FrameParams", FrameParams, [vertex_count, tri_count, tile_count, body_count]);
    check_struct!("SortSegment", SortSegment, [offset, count, tile_offset, tile_count]);
    check_struct!("SortPass", SortPass, [shift, tile_count, passes, flags]);
    check_struct!("Ray", Ray, [origin, tmin, dir, tmax]);
    check_struct!("RayHit", RayHit, [t, triangle, u, v, nodes_visited, triangles_tested, fallback, body]);
    check_struct!("QueryTarget", QueryTarget, [body, index, pad]);
    check_struct!("RayIntersection", RayIntersection, [t, triangle, u, v, body]);
    check_struct!("RayHitCount", RayHitCount, [found, stored, nodes_visited, triangles_tested]);
    check_struct!("RayHitTotals", RayHitTotals, [found, stored, rays_hit, rays_overflowed]);
    check_struct!("WalkHit", WalkHit, [t, triangle, u, v, outcome, steps, last, bvh]);
    check_struct!("WalkCounts", WalkCounts, [outcomes, fallback_casts, fallback_hits, pad0, pad1]);
    check_struct!(
        "WalkParams",
        WalkParams,
        [body, ray_count, max_steps, fallback, tri_count, pad0, pad1, pad2]
    );
    check_struct!("Edge", EdgeGpu, [a, b, t0, t1]);
    check_struct!(
        "IntersectParams",
        IntersectParams,
        [
            mode,
            crossing_capacity,
            edge_source_capacity,
            table_mask,
            edge_count,
            vertex_count,
            body_count,
            contact_capacity,
            pair_capacity,
            tri_count,
            pad1,
            pad2
        ]
    );
    for name in ["IntersectState", "IntersectStateRead"] {
        let (members, span) = wgsl_layout(name);
        let rust = [
            ("pairs", offset_of!(IntersectState, pairs)),
            ("edge_sources", offset_of!(IntersectState, edge_sources)),
            ("crossings", offset_of!(IntersectState, crossings)),
            ("loops", offset_of!(IntersectState, loops)),
            ("multi_pass", offset_of!(IntersectState, multi_pass)),
            ("edge_contacts", offset_of!(IntersectState, edge_contacts)),
            ("pad0", offset_of!(IntersectState, pad0)),
            ("pad1", offset_of!(IntersectState, pad1)),
        ];
        let rust: Vec<(String, u32)> = rust.iter().map(|(n, o)| (n.to_string(), *o as u32)).collect();
        assert_eq!(members, rust, "member offsets of {name}");
        assert_eq!(span as usize, size_of::<IntersectState>(), "size of {name}");
    }
    check_struct!(
        "Crossing",
        CrossingGpu,
        [source_body, target_body, edge, triangle, point, t, u, v, inside_t, flags, pair, pad0, pad1, pad2]
    );
    check_struct!("ContourNode", ContourGpu, [parent, key_hi, key_lo, links, loop_id, rank, pad]);
    check_struct!("ContourRead", ContourGpu, [parent, key_hi, key_lo, links, loop_id, rank, pad]);
    check_struct!(
        "Loop",
        LoopGpu,
        [pair, start, count, flags, length, regions_a, regions_b, pad0, pad1, pad2]
    );
    check_struct!("Region", RegionGpu, [parent, other, area_lo, area_hi]);
    check_struct!("RegionRead", RegionGpu, [parent, other, area_lo, area_hi]);
    check_struct!(
        "ResponseParams",
        ResponseParams,
        [damping, inv_dt, scale, body_count, flags, vertex_count, pad1, pad2]
    );
}

#[test]
fn buffers_of_several_arrays_match_the_host_offsets() {
    // The detection's counters, then the pairs: the host writes the list at PAIRS_OFFSET.
    let offsets = |name: &str| wgsl_layout(name).0;
    for name in ["PairList", "PairListRead"] {
        assert_eq!(offsets(name), [("state".into(), 0), ("list".into(), PAIRS_OFFSET as u32)], "{name}");
    }
    // A walk's counters, then its hits: read back at WALK_HITS_OFFSET.
    assert_eq!(offsets("WalkOutput"), [("counts".into(), 0), ("hits".into(), WALK_HITS_OFFSET as u32)]);
    // An all-hits query's totals, then its counts: read back at RAY_COUNTS_OFFSET.
    assert_eq!(offsets("RayHitCounts"), [("totals".into(), 0), ("rays".into(), RAY_COUNTS_OFFSET as u32)]);
    assert_eq!(PAIRS_OFFSET as usize, size_of::<DetectState>());
    assert_eq!(WALK_HITS_OFFSET as usize, size_of::<WalkCounts>());
}

#[test]
fn each_kernel_is_its_file_and_labelled_by_its_stem() {
    // One name per kernel in the shader file, the source compiled and the pipeline label: the
    // kernel's text is the file `shaders/<name>.wgsl` (not another kernel's), no two kernels
    // share a name, a file or a label, and each label is `raycontact.` and the file's stem.
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shaders"));
    let mut stems = std::collections::BTreeSet::new();
    let mut labels = std::collections::BTreeSet::new();
    for k in Kernel::ALL {
        let path = dir.join(format!("{}.wgsl", k.name()));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("kernel {:?}: no file {}: {e}", k.name(), path.display()));
        assert_eq!(text, k.raw_source(), "{:?} compiles the text of {}", k.name(), path.display());
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap().to_string();
        assert!(stems.insert(stem.clone()), "two kernels named {stem:?}");
        let label = k.label();
        assert_eq!(label.strip_prefix("raycontact."), Some(stem.as_str()), "label of {}", path.display());
        assert!(labels.insert(label.clone()), "two kernels labelled {label:?}");
    }
    assert_eq!(stems.len(), Kernel::ALL.len());
}

/// Chrome's WGSL compiler (Tint) rejects a constant expression that evaluates to an infinity,
/// which naga accepts: every kernel makes +infinity at run time through `infinity()`
/// (`shared/common.wgsl`), from the one private variable that holds its bits.
#[test]
fn no_kernel_builds_an_infinity_as_a_constant() {
    for k in Kernel::ALL {
        let src = k.source();
        for (i, line) in src.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("0x7f800000") || code.contains("INFINITY_BITS"),
                "{} (assembled line {}): an infinity built as a constant, which Chrome rejects; use infinity(): {line}",
                k.name(),
                i + 1
            );
            assert!(
                !code.contains("3.4028235e38"),
                "{} (assembled line {}): a literal above f32::MAX, which Chrome rejects: {line}",
                k.name(),
                i + 1
            );
        }
    }
}
