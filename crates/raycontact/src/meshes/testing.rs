//! Assertions shared by the meshes' unit tests.

use super::TriMesh;

/// The mesh is closed and manifold, without duplicate vertices.
pub(super) fn assert_closed(mesh: &TriMesh) {
    assert_eq!(mesh.boundary_edge_count(), 0, "boundary edges");
    assert_eq!(mesh.non_manifold_edge_count(), 0, "non-manifold edges");
    let (_, merged) = mesh.weld(0.0);
    assert_eq!(merged, 0, "duplicate vertices");
}

/// `actual` is within the relative tolerance `rel` of `expected`.
pub(super) fn assert_close(actual: f32, expected: f32, rel: f32) {
    assert!(
        (actual - expected).abs() <= rel * expected.abs(),
        "{actual} not within {}% of {expected}",
        rel * 100.0
    );
}

/// For a convex body around the origin every outward normal points away from it.
pub(super) fn assert_convex_outward(mesh: &TriMesh) {
    for &t in &mesh.triangles {
        let [a, b, c] = mesh.corners(t);
        let normal = (b - a).cross(c - a);
        assert!(normal.dot(a + b + c) > 0.0, "inward triangle {t:?}");
    }
}
