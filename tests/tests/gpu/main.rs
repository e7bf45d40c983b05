//! GPU tests of raycontact on a real or software adapter (lavapipe in CI).

mod bvh;
mod errors;
mod rays;
mod reflection;
mod sort;
