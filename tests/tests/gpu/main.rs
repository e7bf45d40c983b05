//! GPU tests of raycontact on a real or software adapter (lavapipe in CI).

mod bvh;
mod cloth;
mod context;
mod errors;
mod fans;
mod host_times;
mod intersections;
mod iterative;
mod limits;
mod narrow;
mod pairs_and_bodies;
mod pipeline_cache;
mod pipelines;
mod probe;
mod random_scenes;
mod ray_queries;
mod rays;
mod reach;
mod recorded_rays;
mod refit;
mod reflection;
mod response;
mod rest_trees;
mod sort;
mod walk;
mod wgsl_grammar;
