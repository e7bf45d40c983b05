//! Criterion benchmarks of raycontact: see `benches/bvh.rs`.
