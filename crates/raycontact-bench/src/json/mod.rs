//! The suite's JSON document (schema `raycontact.bench/6`, `docs/bench-json.md`), serialised by
//! derive from the structs below (an implementation's `walking` object in [`mod@walking`]), built from
//! the run's [`SuiteResult`].
//!
//! Two conventions keep the document as schemas 2 and 3 have always written it: the fields of every
//! struct are in alphabetical order (the document's key order), and `f32` figures are written
//! widened to `f64` (e.g. `0.004000000189989805` for `0.004f32`). Non-finite numbers are
//! written as `null` by serde_json.

mod walking;

use std::collections::BTreeMap;

use raycontact::{BodyKind, BvhAction, BvhStats};
use serde::Serialize;

use crate::gpu_model::{self, H100};
use crate::machine::{cpu_model, logical_cores};
use crate::results::{Classes, ImplKind, ImplResult, InstanceResult, RayFigures, SuiteResult, exponents};
use crate::scenes::SceneName;
use crate::stats::{mean, median};
use walking::{Walking, walking};

/// The schema identifier written as the document's `schema` field.
pub const SCHEMA: &str = "raycontact.bench/6";

/// The whole document.
#[derive(Serialize)]
pub struct Document {
    agreement: Agreement,
    generator: Generator,
    instances: Vec<InstanceJson>,
    machine: Machine,
    scaling: Vec<Scaling>,
    schema: &'static str,
    settings: Settings,
    wall_s: f64,
}

/// GPU against the CPU reference over the run.
#[derive(Serialize)]
struct Agreement {
    count_mismatches: usize,
    frames_compared: usize,
    max_set_difference: usize,
    unreached_mismatches: usize,
}

/// The program that wrote the document.
#[derive(Serialize)]
struct Generator {
    name: &'static str,
    version: &'static str,
}

/// The run's options.
#[derive(Serialize)]
struct Settings {
    background_trees: bool,
    cpu_background_trees: bool,
    cpu_only: bool,
    frames: Option<usize>,
    implementations: Option<Vec<String>>,
    intersections: &'static str,
    order: &'static str,
    parry: bool,
    pinned: bool,
    scenes: Vec<&'static str>,
    seed: u64,
    size: &'static str,
}

/// What the run ran on.
#[derive(Serialize)]
struct Machine {
    arch: &'static str,
    cpu: Cpu,
    gpu: Option<Adapter>,
    os: &'static str,
}

/// The CPU.
#[derive(Serialize)]
struct Cpu {
    logical_cores: usize,
    model: Option<String>,
    rayon_threads: usize,
}

/// The GPU adapter.
#[derive(Serialize)]
struct Adapter {
    backend: String,
    device: u32,
    device_type: String,
    driver: String,
    driver_info: String,
    name: String,
    /// Seconds `GpuContext` took to make every pipeline ready (created and warmed up), once per run.
    pipeline_creation_s: f64,
    /// Threads the pipelines were created on.
    pipeline_threads: usize,
    /// Whether the pipelines were created from the pipeline cache (`"cached"`), or without one
    /// (`"cold"`).
    pipeline_creation: &'static str,
    /// The pipeline cache file, when there is one.
    pipeline_cache_path: Option<String>,
    software: bool,
    timestamps: bool,
    /// The kernels' tuning (`Tuning`, its `Debug` form), the adapter kind's unless `--tuning`.
    tuning: String,
    vendor: u32,
}

/// One instance.
#[derive(Serialize)]
struct InstanceJson {
    bodies: Vec<Body>,
    description: &'static str,
    frames: usize,
    implementations: Vec<Implementation>,
    parameter: Option<f64>,
    parameter_name: Option<&'static str>,
    prediction_distance: f64,
    rays: Rays,
    scene: &'static str,
    triangles: usize,
    variant: String,
    vertices: usize,
    wall_s: f64,
}

/// One body of an instance.
#[derive(Serialize)]
struct Body {
    half_thickness: Option<f64>,
    kind: &'static str,
    moving: bool,
    name: String,
    triangles: usize,
    vertices: usize,
}

/// The ray figures of an instance's last frame.
#[derive(Serialize)]
struct Rays {
    bytes_per_ray_cpu_walk: f64,
    bytes_per_ray_gpu_walk: f64,
    bytes_per_ray_gpu_line_walk: f64,
    check_rays: u64,
    inward_rays: u64,
    largest_valence: u32,
    longest_source: String,
    longest_source_nodes_gpu_walk: u64,
    nodes_per_ray_cpu_walk: f64,
    nodes_per_ray_gpu_walk: f64,
    nodes_per_ray_gpu_line_walk: f64,
    outward_rays: u64,
    pairs: usize,
    rays_per_frame: u64,
    sources: u64,
    sources_unreached: u64,
    stack_fallbacks: u64,
    triangles_per_ray: f64,
    triangles_per_ray_cpu_walk: f64,
    wide_nodes_per_ray_cpu_walk: f64,
}

/// One implementation on one instance.
#[derive(Serialize)]
struct Implementation {
    bvh: Option<BvhJson>,
    contacts: ContactCounts,
    differ_from_reference: DifferFromReference,
    frame_kinds: BTreeMap<&'static str, KindJson>,
    frame_ms: Times,
    frame_timing: &'static str,
    gpu: Option<GpuFigures>,
    id: &'static str,
    intersections: Option<IntersectionsJson>,
    kind: &'static str,
    label: String,
    ray_stage_rays_per_s_per_core: Option<f64>,
    rays_counted: Option<Vec<u64>>,
    rays_per_s: f64,
    setup_ms: Option<f64>,
    sources_unreached_per_frame: Option<Vec<u32>>,
    speedup: Speedup,
    stage_timing: &'static str,
    stages_ms: BTreeMap<&'static str, f64>,
    stages_total_ms: Option<f64>,
    threads: Option<usize>,
    walking: Option<Walking>,
}

/// The timed frames of one kind (rebuild, refit, iterative).
#[derive(Serialize)]
struct KindJson {
    dispatches_per_frame: Option<f64>,
    frames: usize,
    median_ms: f64,
    worst_ms: f64,
    worst_over_median: f64,
}

/// What raycontact's frames did to the BVHs under its update policy.
#[derive(Serialize)]
struct BvhJson {
    degenerate_changed_frames: usize,
    degradation_max: Option<f64>,
    degradation_median: Option<f64>,
    degradation_per_frame: Vec<Option<f64>>,
    kept: usize,
    per_frame: Vec<&'static str>,
    policy: &'static str,
    rebuilt: usize,
    refitted: usize,
}

/// The intersection stages' counters per timed frame, and their time against the rays stage's.
#[derive(Serialize)]
struct IntersectionsJson {
    all_vs_rays: Option<f64>,
    crossings_per_frame: Vec<u32>,
    crossings_vs_rays: Option<f64>,
    edge_contacts_per_frame: Vec<u32>,
    edges_traced_per_frame: Vec<u32>,
    loops_per_frame: Vec<u32>,
    multi_pass_edges_per_frame: Vec<u32>,
    untangle_contacts_per_frame: Vec<u32>,
    wrong_side_vertices_per_frame: Vec<u32>,
}

/// Contacts per frame.
#[derive(Serialize)]
struct ContactCounts {
    by_class: ByClass,
    mean: f64,
    per_frame: Vec<usize>,
}

/// Contacts by class, mean per frame.
#[derive(Serialize)]
struct ByClass {
    collision: f64,
    inverted: f64,
    inward: f64,
    outward: f64,
    prediction: f64,
    walked: f64,
}

/// Contacts that differ from the CPU reference's.
#[derive(Serialize)]
struct DifferFromReference {
    max: usize,
    per_frame: Vec<usize>,
}

/// A list of times, ms, and its summary.
#[derive(Serialize)]
struct Times {
    max: f64,
    mean: f64,
    median: f64,
    min: f64,
    per_frame: Vec<f64>,
}

/// The GPU frame's figures.
#[derive(Serialize)]
struct GpuFigures {
    buffers_allocated: u64,
    bytes_bound_read: u64,
    bytes_bound_written: u64,
    bytes_read_back_per_frame: f64,
    bytes_read_back_per_frame_list: Vec<u64>,
    dispatches_per_frame: f64,
    dispatches_per_frame_list: Vec<u32>,
    timestamps_per_frame: f64,
    /// Medians of the host's steps around the GPU's work (`raycontact::HostTimes`), ms.
    host_ms: Option<HostSteps>,
    /// The model's floor for this frame on an H100 from these counts (`gpu_model.rs`), ms;
    /// full passes only.
    h100_floor_ms: Option<H100Floor>,
    /// The GPU walk's counts over this implementation's own trees (full passes only).
    trees_walked: Option<TreesWalked>,
}

/// `results::HostMs`.
#[derive(Serialize)]
struct HostSteps {
    copy: f64,
    order: f64,
    record: f64,
    submit: f64,
    total: f64,
    wait: f64,
}

/// `results::TreeWalk`, with the bytes the H100 model counts per ray.
#[derive(Serialize)]
struct TreesWalked {
    bytes_per_ray_gpu_line_walk: f64,
    nodes_per_ray_gpu_line_walk: f64,
    nodes_per_ray_gpu_walk: f64,
    triangles_per_ray: f64,
}

/// `gpu_model::Estimate` by part, ms.
#[derive(Serialize)]
struct H100Floor {
    fixed: f64,
    bound_bytes: f64,
    read_back: f64,
    total: f64,
    traversal: f64,
}

/// Another implementation's median frame time over this one's.
#[derive(Serialize)]
struct Speedup {
    vs_cpu_1: Option<f64>,
    vs_cpu_rayon: Option<f64>,
    vs_cpu_twins: Option<f64>,
    vs_gpu: Option<f64>,
    vs_parry_1: Option<f64>,
    vs_parry_rayon: Option<f64>,
    vs_parry_refit_1: Option<f64>,
    vs_parry_refit_rayon: Option<f64>,
}

/// A scaling scene: frame time against its parameter.
#[derive(Serialize)]
struct Scaling {
    fitted_exponent: BTreeMap<&'static str, Option<f64>>,
    parameter_name: Option<&'static str>,
    points: Vec<Point>,
    scene: &'static str,
}

/// One variant of a scaling scene.
#[derive(Serialize)]
struct Point {
    frame_ms: BTreeMap<&'static str, f64>,
    parameter: Option<f64>,
    variant: String,
}

/// The whole run as a `raycontact.bench/6` document.
pub fn document(result: &SuiteResult) -> Document {
    let args = &result.args;
    let (frames_compared, count_mismatches, max_set_difference, unreached_mismatches) = result.agreement();
    Document {
        agreement: Agreement { count_mismatches, frames_compared, max_set_difference, unreached_mismatches },
        generator: Generator { name: "raycontact-bench", version: env!("CARGO_PKG_VERSION") },
        instances: result.instances.iter().map(instance).collect(),
        machine: Machine {
            arch: std::env::consts::ARCH,
            cpu: Cpu { logical_cores: logical_cores(), model: cpu_model(), rayon_threads: result.threads },
            gpu: result.gpu.as_ref().map(|c| {
                let i = c.adapter_info();
                Adapter {
                    backend: format!("{:?}", i.backend),
                    device: i.device,
                    device_type: format!("{:?}", i.device_type),
                    driver: i.driver.clone(),
                    driver_info: i.driver_info.clone(),
                    name: i.name.clone(),
                    pipeline_creation_s: c.pipeline_creation_time().as_secs_f64(),
                    pipeline_threads: c.pipeline_threads(),
                    pipeline_creation: if c.pipeline_cache().loaded { "cached" } else { "cold" },
                    pipeline_cache_path: c.pipeline_cache().path.as_ref().map(|p| p.display().to_string()),
                    software: c.is_software(),
                    timestamps: c.has_timestamps() && !args.no_gpu_timestamps,
                    tuning: format!("{:?}", c.tuning()),
                    vendor: i.vendor,
                }
            }),
            os: std::env::consts::OS,
        },
        scaling: SceneName::ALL
            .iter()
            .filter(|s| s.is_scaling())
            .filter_map(|s| scaling(result, *s))
            .collect(),
        schema: SCHEMA,
        settings: Settings {
            background_trees: !args.cpu && !args.trees_in_frame,
            cpu_background_trees: !args.trees_in_frame,
            cpu_only: args.cpu,
            frames: args.frames,
            implementations: (!args.implementations.is_empty()).then(|| args.implementations.clone()),
            intersections: args.intersections.name(),
            order: if args.sequential { "sequential" } else { "interleaved" },
            parry: !args.no_parry,
            pinned: result.pinned,
            scenes: args.selected_scenes().iter().map(|s| s.name()).collect(),
            seed: args.seed,
            size: args.size.name(),
        },
        wall_s: result.wall_s,
    }
}

/// A scaling scene's points and fits (`None` when it did not run).
fn scaling(result: &SuiteResult, scene: SceneName) -> Option<Scaling> {
    let results: Vec<&InstanceResult> = result.instances.iter().filter(|r| r.scene == scene).collect();
    if results.is_empty() {
        return None;
    }
    let points = results
        .iter()
        .map(|r| Point {
            frame_ms: r.ordered().iter().map(|i| (i.id, i.median_ms())).collect(),
            parameter: r.parameter,
            variant: r.variant.clone(),
        })
        .collect();
    Some(Scaling {
        fitted_exponent: exponents(&results).into_iter().collect(),
        parameter_name: scene.parameter_name(),
        points,
        scene: scene.name(),
    })
}

/// One instance.
fn instance(r: &InstanceResult) -> InstanceJson {
    let bodies = r
        .bodies
        .iter()
        .map(|(name, kind, triangles, vertices, moving)| {
            let (kind, half_thickness) = match kind {
                BodyKind::Volumetric => ("volumetric", None),
                BodyKind::Cloth { half_thickness } => ("cloth", Some(f64::from(*half_thickness))),
            };
            Body {
                half_thickness,
                kind,
                moving: *moving,
                name: name.clone(),
                triangles: *triangles,
                vertices: *vertices,
            }
        })
        .collect();
    InstanceJson {
        bodies,
        description: r.scene.description(),
        frames: r.frames,
        implementations: r.ordered().into_iter().map(|i| implementation(r, i)).collect(),
        parameter: r.parameter,
        parameter_name: r.scene.parameter_name(),
        prediction_distance: f64::from(r.prediction),
        rays: rays(&r.rays, &r.bodies),
        scene: r.scene.name(),
        triangles: r.triangles(),
        variant: r.variant.clone(),
        vertices: r.vertices(),
        wall_s: r.wall_s,
    }
}

/// The ray figures.
fn rays(f: &RayFigures, bodies: &[(String, raycontact::BodyKind, usize, usize, bool)]) -> Rays {
    Rays {
        bytes_per_ray_cpu_walk: gpu_model::wide_bytes_per_ray(f),
        bytes_per_ray_gpu_walk: gpu_model::binary_bytes_per_ray(f, false),
        bytes_per_ray_gpu_line_walk: gpu_model::binary_bytes_per_ray(f, true),
        check_rays: f.check_rays,
        inward_rays: f.inward_rays,
        largest_valence: f.largest_valence,
        longest_source: f.longest_source_name(bodies),
        longest_source_nodes_gpu_walk: f.longest_source_nodes,
        nodes_per_ray_cpu_walk: f.nodes_per_ray_cpu_walk,
        nodes_per_ray_gpu_walk: f.nodes_per_ray_gpu_walk,
        nodes_per_ray_gpu_line_walk: f.nodes_per_ray_gpu_line_walk,
        outward_rays: f.outward_rays,
        pairs: f.pairs,
        rays_per_frame: f.rays(),
        sources: f.sources,
        sources_unreached: f.unreached,
        stack_fallbacks: f.stack_fallbacks,
        triangles_per_ray: f.triangles_per_ray,
        triangles_per_ray_cpu_walk: f.triangles_per_ray_cpu_walk,
        wide_nodes_per_ray_cpu_walk: f.wide_nodes_per_ray_cpu_walk,
    }
}

/// A list of times and its summary.
fn times(v: &[f64]) -> Times {
    Times {
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean: mean(v),
        median: median(v),
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        per_frame: v.to_vec(),
    }
}

/// Contacts by class.
fn by_class(c: &Classes) -> ByClass {
    ByClass {
        collision: c.collision,
        inverted: c.inverted,
        inward: c.inward,
        outward: c.outward,
        prediction: c.prediction,
        walked: c.walked,
    }
}

/// One implementation on instance `r`.
fn implementation(r: &InstanceResult, i: &ImplResult) -> Implementation {
    let ms = i.median_ms();
    let vs = |id: &str| r.get(id).map(|o| o.median_ms() / ms);
    let gpu = (i.kind == ImplKind::Gpu).then(|| {
        let (read, written) = i.bytes_bound.unwrap_or((0, 0));
        GpuFigures {
            buffers_allocated: i.buffers_allocated.unwrap_or(0),
            bytes_bound_read: read,
            bytes_bound_written: written,
            bytes_read_back_per_frame: mean(&i.bytes_read_back.iter().map(|&d| d as f64).collect::<Vec<_>>()),
            bytes_read_back_per_frame_list: i.bytes_read_back.clone(),
            dispatches_per_frame: mean(&i.dispatches.iter().map(|&d| f64::from(d)).collect::<Vec<_>>()),
            dispatches_per_frame_list: i.dispatches.clone(),
            timestamps_per_frame: mean(&i.timestamps.iter().map(|&d| f64::from(d)).collect::<Vec<_>>()),
            host_ms: i.host_ms().map(|h| HostSteps {
                copy: h.copy,
                order: h.order,
                record: h.record,
                submit: h.submit,
                total: h.total,
                wait: h.wait,
            }),
            h100_floor_ms: gpu_model::frame_counts(i, &r.rays).map(|c| {
                let e = H100.estimate(&c);
                H100Floor {
                    fixed: e.fixed_ms,
                    bound_bytes: e.memory_ms,
                    read_back: e.read_back_ms,
                    total: e.total_ms(),
                    traversal: e.traversal_ms,
                }
            }),
            trees_walked: i.trees_walked.map(|w| TreesWalked {
                bytes_per_ray_gpu_line_walk: gpu_model::walk_bytes_per_ray(
                    w.nodes_per_ray_line,
                    w.triangles_per_ray,
                ),
                nodes_per_ray_gpu_line_walk: w.nodes_per_ray_line,
                nodes_per_ray_gpu_walk: w.nodes_per_ray,
                triangles_per_ray: w.triangles_per_ray,
            }),
        }
    });
    Implementation {
        bvh: i.bvh.as_ref().map(|(policy, frames)| bvh(policy, frames)),
        contacts: ContactCounts {
            by_class: by_class(&i.classes),
            mean: i.mean_contacts(),
            per_frame: i.contacts.clone(),
        },
        differ_from_reference: DifferFromReference {
            max: i.differ.iter().max().copied().unwrap_or(0),
            per_frame: i.differ.clone(),
        },
        frame_kinds: i
            .kinds()
            .iter()
            .map(|k| {
                let figures = KindJson {
                    dispatches_per_frame: k.dispatches,
                    frames: k.frames,
                    median_ms: k.median_ms,
                    worst_ms: k.worst_ms,
                    worst_over_median: k.worst_over_median(),
                };
                (k.kind.name(), figures)
            })
            .collect(),
        frame_ms: times(&i.frame_ms),
        frame_timing: "wall",
        gpu,
        id: i.id,
        intersections: (!i.intersections.is_empty()).then(|| {
            let per = |f: fn(&raycontact::IntersectionCounts) -> u32| i.intersections.iter().map(f).collect();
            let ratios = i.intersection_ratios();
            IntersectionsJson {
                all_vs_rays: ratios.map(|r| r.1),
                crossings_per_frame: per(|c| c.crossings),
                crossings_vs_rays: ratios.map(|r| r.0),
                edge_contacts_per_frame: per(|c| c.edge_contacts),
                edges_traced_per_frame: per(|c| c.edges_traced),
                loops_per_frame: per(|c| c.loops),
                multi_pass_edges_per_frame: per(|c| c.multi_pass_edges),
                untangle_contacts_per_frame: per(|c| c.untangle_contacts),
                wrong_side_vertices_per_frame: per(|c| c.wrong_side_vertices),
            }
        }),
        kind: match i.kind {
            ImplKind::Gpu => "gpu",
            ImplKind::Cpu => "cpu",
            ImplKind::Parry => "parry",
        },
        label: i.label.clone(),
        ray_stage_rays_per_s_per_core: i.ray_rate_per_core(r.rays.rays()),
        rays_counted: (!i.rays.is_empty()).then(|| i.rays.clone()),
        rays_per_s: r.rays.rays() as f64 / (ms / 1e3),
        setup_ms: i.setup_ms,
        sources_unreached_per_frame: (!i.unreached.is_empty()).then(|| i.unreached.clone()),
        speedup: Speedup {
            vs_cpu_1: vs("cpu-1"),
            vs_cpu_rayon: vs("cpu-rayon"),
            vs_cpu_twins: vs("cpu-twins"),
            vs_gpu: vs("gpu"),
            vs_parry_1: vs("parry-1"),
            vs_parry_rayon: vs("parry-rayon"),
            vs_parry_refit_1: vs("parry-refit-1"),
            vs_parry_refit_rayon: vs("parry-refit-rayon"),
        },
        stage_timing: i.stage_timing,
        stages_ms: i.stage_ms.iter().map(|(s, v)| (s.name(), median(v))).collect(),
        stages_total_ms: i.stages_total_ms(),
        threads: i.threads,
        walking: walking(i, r),
    }
}

/// The BVH figures of a raycontact implementation.
fn bvh(policy: &'static str, frames: &[BvhStats]) -> BvhJson {
    let count = |a: BvhAction| frames.iter().filter(|s| s.action == a).count();
    let d: Vec<f64> = frames.iter().filter_map(|s| s.degradation.map(f64::from)).collect();
    BvhJson {
        degenerate_changed_frames: frames.iter().filter(|s| s.degenerate_changed).count(),
        degradation_max: d.iter().copied().reduce(f64::max),
        degradation_median: (!d.is_empty()).then(|| median(&d)),
        degradation_per_frame: frames.iter().map(|s| s.degradation.map(f64::from)).collect(),
        kept: count(BvhAction::Kept),
        per_frame: frames.iter().map(|s| s.action.name()).collect(),
        policy,
        rebuilt: count(BvhAction::Rebuilt),
        refitted: count(BvhAction::Refitted),
    }
}
