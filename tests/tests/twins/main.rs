//! The CPU twins (`raycontact::internals::cpu`), the reference of the GPU tests, against references of
//! their own: analytic cases and brute force written independently of them. No GPU needed.

mod backend_update;
mod casting;
mod child_pairs;
mod classify;
mod fan;
mod intersections;
mod pairs;
mod pools;
mod positions;
mod queries;
mod ray_queries;
mod ray_triangle;
mod reach;
mod rebuild;
mod reference;
mod refit;
mod trace_memo;
mod tree_build;
mod wide;
mod wide_background;
mod wide_collapse;
mod wide_direct;
mod wide_refit;
