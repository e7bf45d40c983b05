//! The WGSL prelude: the layout's constants as WGSL source, prepended to every kernel.

use super::*;

/// WGSL source of the layout's constants for `tuning`, prepended to every kernel.
pub fn wgsl_prelude(tuning: &Tuning) -> String {
    assert!(tuning.is_valid(), "{tuning:?}: {}", Tuning::requirements());
    format!(
        "const WG_SIZE: u32 = {WG_SIZE}u;\n\
         const ITEMS: u32 = {items}u;\n\
         const TILE_SPLIT: u32 = {split}u;\n\
         const SORT_ITEMS: u32 = {SORT_ITEMS}u;\n\
         const BARRIER_GROUP: u32 = {barrier_group}u;\n\
         const SCATTER_ITEMS: u32 = {scatter_items}u;\n\
         const TILE: u32 = {TILE}u;\n\
         const RADIX_BITS: u32 = {RADIX_BITS}u;\n\
         const SORT_PASSES: u32 = {SORT_PASSES}u;\n\
         const SORT_IDENTITY_VALUES: u32 = {SORT_IDENTITY_VALUES}u;\n\
         const SORT_COUNT_NEXT: u32 = {SORT_COUNT_NEXT}u;\n\
         const RADIX_BUCKETS: u32 = {RADIX_BUCKETS}u;\n\
         const RADIX_MATRIX: u32 = {matrix}u;\n\
         const LEAF_BIT: u32 = {LEAF_BIT:#x}u;\n\
         const NONE: u32 = {NONE:#x}u;\n\
         const DEGENERATE_KEY: u32 = {DEGENERATE_KEY:#x}u;\n\
         const SHORT_KEY_SHIFT: u32 = {SHORT_KEY_SHIFT}u;\n\
         const SHORT_KEY_TILES: u32 = {SHORT_KEY_TILES}u;\n\
         const SHORT_DEGENERATE_KEY: u32 = {SHORT_DEGENERATE_KEY:#x}u;\n\
         const TINY_KEY_SHIFT: u32 = {TINY_KEY_SHIFT}u;\n\
         const TINY_KEY_TRIANGLES: u32 = {TINY_KEY_TRIANGLES}u;\n\
         const TINY_DEGENERATE_KEY: u32 = {TINY_DEGENERATE_KEY:#x}u;\n\
         const MAX_GROUPS_X: u32 = {MAX_GROUPS_X}u;\n\
         const SHORT_STACK: u32 = {SHORT_STACK}u;\n\
         const PAIR_Q_MAX: u32 = {PAIR_Q_MAX:#x}u;\n\
         const LINE_WALKS: bool = {line_walks};\n\
         const FAN_WALKS: bool = {fan_walks};\n\
         const CHILD_PAIRS: bool = {child_pairs};\n\
         const WORKGROUP_TALLIES: bool = {tallies};\n\
         const DEGENERATE_SIN2: f32 = {DEGENERATE_SIN2:e};\n\
         const NORMAL_CANCELLED: f32 = {cancelled};\n\
         const ONE_THIRD: f32 = {third};\n\
         const SELF_HIT_GAP: f32 = {gap};\n\
         const SELF_REACH_SIZE: f32 = {self_reach};\n\
         const BODY_CLOTH: u32 = {BODY_CLOTH}u;\n\
         const BODY_STATIC: u32 = {BODY_STATIC}u;\n\
         const BODY_KEEP: u32 = {BODY_KEEP}u;\n\
         const BODY_FANS: u32 = {BODY_FANS}u;\n\
         const SELF_CLOTH: u32 = {SELF_CLOTH}u;\n\
         const SELF_VOLUMETRIC: u32 = {SELF_VOLUMETRIC}u;\n\
         const DETECT_REMEMBER_EXIT: u32 = {DETECT_REMEMBER_EXIT}u;\n\
         const DETECT_NO_INVERSION: u32 = {DETECT_NO_INVERSION}u;\n\
         const DETECT_BROAD_IN_TILES: u32 = {DETECT_BROAD_IN_TILES}u;\n\
         const BROAD_IN_TILES_BODIES: u32 = {BROAD_IN_TILES_BODIES}u;\n\
         const RESPONSE_ALONG_NORMAL: u32 = {RESPONSE_ALONG_NORMAL}u;\n\
         const FORCE_LOAD_LIMIT: u32 = {FORCE_LOAD_LIMIT}u;\n\
         const VERTEX_PREVIOUS: u32 = {VERTEX_PREVIOUS}u;\n\
         const VERTEX_NORMALS: u32 = {VERTEX_NORMALS}u;\n\
         const TRIANGLE_ADJACENCY: u32 = {TRIANGLE_ADJACENCY}u;\n\
         const TRIANGLE_INCIDENT: u32 = {TRIANGLE_INCIDENT}u;\n\
         const TRIANGLE_REGIONS: u32 = {TRIANGLE_REGIONS}u;\n\
         const TRIANGLE_WORDS: u32 = {TRIANGLE_WORDS}u;\n\
         const FAN_VALENCE: u32 = {FAN_VALENCE}u;\n{walk}{intersect}",
        items = tuning.items,
        split = tuning.tile_split(),
        barrier_group = tuning.barrier_group,
        scatter_items = TILE / tuning.barrier_group,
        matrix = RADIX_BUCKETS * tuning.barrier_group,
        third = bits_literal(ONE_THIRD),
        cancelled = bits_literal(NORMAL_CANCELLED),
        gap = bits_literal(SELF_HIT_GAP),
        self_reach = bits_literal(SELF_REACH_SIZE),
        line_walks = tuning.line_walks,
        fan_walks = tuning.fan_walks,
        child_pairs = tuning.child_pairs,
        tallies = tuning.workgroup_tallies,
        walk = walk_prelude(),
        intersect = intersect_prelude(),
    )
}

/// WGSL source of the intersection stages' constants, part of [`wgsl_prelude`].
fn intersect_prelude() -> String {
    format!(
        "const MAX_EDGE_HITS: u32 = {MAX_EDGE_HITS}u;\n\
         const INTERSECT_CROSSINGS: u32 = {INTERSECT_CROSSINGS}u;\n\
         const INTERSECT_FULL: u32 = {INTERSECT_FULL}u;\n\
         const CROSSING_FORWARD: u32 = {CROSSING_FORWARD}u;\n\
         const CROSSING_FIRST: u32 = {CROSSING_FIRST}u;\n\
         const CROSSING_LAST: u32 = {CROSSING_LAST}u;\n\
         const CROSSING_WRONG_A: u32 = {CROSSING_WRONG_A}u;\n\
         const CROSSING_WRONG_B: u32 = {CROSSING_WRONG_B}u;\n\
         const LOOP_CLOSED: u32 = {LOOP_CLOSED}u;\n\
         const CROSSING_PARALLEL_SIN2: f32 = {parallel};\n\
         const AREA_UNIT_SCALE: f32 = {scale};\n",
        scale = bits_literal(AREA_UNIT_SCALE),
        parallel = bits_literal(CROSSING_PARALLEL_SIN2),
    )
}

/// A WGSL literal for exactly this f32 (Rust's shortest round-trip form).
fn bits_literal(x: f32) -> String {
    format!("{x:?}f")
}

/// WGSL source of the walk's constants, part of [`wgsl_prelude`].
fn walk_prelude() -> String {
    format!(
        "const BOUNDARY: u32 = {BOUNDARY:#x}u;\n\
         const NON_MANIFOLD: u32 = {NON_MANIFOLD:#x}u;\n\
         const WALK_HIT: u32 = {WALK_HIT}u;\n\
         const WALK_BOUNDARY: u32 = {WALK_BOUNDARY}u;\n\
         const WALK_LOOP: u32 = {WALK_LOOP}u;\n\
         const WALK_STEPS: u32 = {WALK_STEPS}u;\n\
         const WALK_RANGE: u32 = {WALK_RANGE}u;\n\
         const WALK_PARALLEL: u32 = {WALK_PARALLEL}u;\n\
         const WALK_NO_START: u32 = {WALK_NO_START}u;\n\
         const WALK_OUTCOMES: u32 = {WALK_OUTCOMES}u;\n\
         const WALK_HISTORY: u32 = {WALK_HISTORY}u;\n\
         const MAX_WALK_STEPS: u32 = {MAX_WALK_STEPS}u;\n\
         const WALK_FALLBACK_BVH: u32 = {WALK_FALLBACK_BVH}u;\n\
         const WALK_FALLBACK_DROP: u32 = {WALK_FALLBACK_DROP}u;\n"
    )
}
