//! How deep a point lies inside a convex closed mesh: the smallest distance to the planes of
//! its faces (exact for a convex polytope), for the examples' outcome checks.

use glam::Vec3;
use raycontact::meshes::TriMesh;

/// A convex closed mesh as the intersection of its faces' half-spaces.
#[derive(Clone, Debug)]
pub struct Convex {
    /// Unit outward normal `n` and offset `d` of each distinct face plane (`n · x = d`).
    planes: Vec<(Vec3, f32)>,
    /// A sphere around the mesh, to skip far points.
    center: Vec3,
    radius: f32,
}

impl Convex {
    /// The planes of an outward-oriented convex mesh (faces of zero area skipped, coplanar
    /// faces merged).
    pub fn new(mesh: &TriMesh) -> Self {
        let mut planes: Vec<(Vec3, f32)> = Vec::new();
        for t in &mesh.triangles {
            let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
            let n = (b - a).cross(c - a).normalize_or_zero();
            if n == Vec3::ZERO {
                continue;
            }
            let d = n.dot(a);
            if !planes.iter().any(|(m, e)| m.dot(n) > 1.0 - 1e-6 && (e - d).abs() < 1e-5) {
                planes.push((n, d));
            }
        }
        let center = mesh.positions.iter().copied().sum::<Vec3>() / mesh.positions.len().max(1) as f32;
        let radius = mesh.positions.iter().map(|p| p.distance(center)).fold(0.0, f32::max);
        Self { planes, center, radius }
    }

    /// How far `p` lies inside (positive) or outside (negative, not the distance then) of the
    /// mesh; `None` when it is outside its bounding sphere.
    pub fn depth(&self, p: Vec3) -> Option<f32> {
        if p.distance(self.center) > self.radius {
            return None;
        }
        Some(self.planes.iter().map(|(n, d)| d - n.dot(p)).fold(f32::INFINITY, f32::min))
    }

    /// The deepest of `points` inside the mesh (0 when none is inside).
    pub fn deepest(&self, points: &[Vec3]) -> f32 {
        points.iter().filter_map(|p| self.depth(*p)).fold(0.0, f32::max)
    }

    /// How many of `points` lie deeper than `limit` inside.
    pub fn deeper_than(&self, points: &[Vec3], limit: f32) -> usize {
        points.iter().filter(|p| self.depth(**p).is_some_and(|d| d > limit)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use raycontact::meshes;

    #[test]
    fn depth_inside_a_box_and_a_sphere() {
        let b = Convex::new(&meshes::cuboid(Vec3::new(1.0, 2.0, 3.0), 4));
        assert_eq!(b.planes.len(), 6);
        assert!((b.depth(Vec3::new(0.5, 0.0, 0.0)).unwrap() - 0.5).abs() < 1e-6);
        assert!(b.depth(Vec3::new(1.5, 0.0, 0.0)).unwrap() < 0.0);
        let s = Convex::new(&meshes::icosphere(1.0, 3));
        assert!((s.depth(Vec3::ZERO).unwrap() - 1.0).abs() < 0.02);
        assert_eq!(s.deepest(&[Vec3::X * 2.0, Vec3::X * 0.75]), s.depth(Vec3::X * 0.75).unwrap());
        assert_eq!(s.deeper_than(&[Vec3::ZERO, Vec3::X * 0.9, Vec3::X * 3.0], 0.5), 1);
    }
}
