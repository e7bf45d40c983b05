//! The demo's scene, defined once for the page and the native runner: the Stanford bunny (the
//! shipped `assets/bunny.obj`) and a torus, both fixed, and a cloth that falls on them from a
//! seeded start. Everything here is computed in plain `f32` arithmetic (the torus's sines and
//! cosines by the `libm` crate, never the platform's), so the scene is the same bits in the
//! browser and natively.

use glam::Vec3;
use raycontact::BodyKind;
use raycontact::meshes::{self, TriMesh};

/// The bunny, as shipped (about 10 units tall, standing on y = 0, y up).
const BUNNY_OBJ: &str = include_str!("../../assets/bunny.obj");

/// The cloth's half-thickness.
pub const CLOTH_HALF_THICKNESS: f32 = 0.006;
/// The prediction distance: a vertex within it of another surface gets a prediction, which
/// the integrator keeps from closing (speculative contacts). No vertex moves further in a frame.
pub const PREDICTION_DISTANCE: f32 = 0.04;
/// The time step (one detection per step).
pub const TIME_STEP: f32 = 1.0 / 60.0;
/// The default seed.
pub const DEFAULT_SEED: u64 = 1;

/// A body of the scene.
#[derive(Clone, Debug)]
pub struct BodySpec {
    /// Its name (on the page and in reports).
    pub name: &'static str,
    /// Its starting mesh.
    pub mesh: TriMesh,
    /// Its kind for raycontact.
    pub kind: BodyKind,
    /// Whether the integrator moves it (the cloth); the others stay where they are.
    pub dynamic: bool,
    /// Its colour (linear RGB), front and back faces.
    pub colors: [[f32; 3]; 2],
}

/// The scene of one seed: its bodies (the bunny, the torus, then the cloth) and the cloth's
/// grid.
#[derive(Clone, Debug)]
pub struct SceneSpec {
    /// The seed it was made from.
    pub seed: u64,
    /// The bodies, in the order they are added to raycontact.
    pub bodies: Vec<BodySpec>,
    /// The cloth's vertices along x and along z (row-major, x fastest).
    pub cloth_grid: (u32, u32),
}

/// Index of the cloth in [`SceneSpec::bodies`].
pub const CLOTH: usize = 2;

impl SceneSpec {
    /// The scene of `seed`: the seed shifts the cloth sideways (up to ±0.08) and ruffles its
    /// vertices' heights (up to ±0.004), so every seed drapes differently.
    pub fn new(seed: u64) -> Self {
        let mut rng = SplitMix64(seed);
        let bunny = bunny();
        let torus = torus(0.32, 0.11, 40, 14, Vec3::new(0.7, 0.11, 0.05));
        let (nx, nz) = (56u32, 40u32);
        let spacing = 0.04;
        let shift = Vec3::new(rng.signed() * 0.08, 0.0, rng.signed() * 0.08);
        let corner = Vec3::new(-0.92, 1.12, -0.78) + shift;
        let mut cloth =
            meshes::grid_sheet(spacing * (nx - 1) as f32, spacing * (nz - 1) as f32, nx - 1, nz - 1);
        // grid_sheet lies in z = 0 along x and y, facing +z: lay it flat, facing up (+y).
        for (k, p) in cloth.positions.iter_mut().enumerate() {
            let (i, j) = (k as u32 % nx, k as u32 / nx);
            let x = corner.x + spacing * i as f32;
            let z = corner.z + spacing * (nz - 1 - j) as f32;
            *p = Vec3::new(x, corner.y + rng.signed() * 0.004, z);
        }
        Self {
            seed,
            bodies: vec![
                BodySpec {
                    name: "bunny",
                    mesh: bunny,
                    kind: BodyKind::Volumetric,
                    dynamic: false,
                    colors: [[0.80, 0.62, 0.45]; 2],
                },
                BodySpec {
                    name: "torus",
                    mesh: torus,
                    kind: BodyKind::Volumetric,
                    dynamic: false,
                    colors: [[0.35, 0.55, 0.80]; 2],
                },
                BodySpec {
                    name: "cloth",
                    mesh: cloth,
                    kind: BodyKind::Cloth { half_thickness: CLOTH_HALF_THICKNESS },
                    dynamic: true,
                    colors: [[0.85, 0.25, 0.22], [0.95, 0.85, 0.40]],
                },
            ],
            cloth_grid: (nx, nz),
        }
    }
}

/// The shipped bunny, scaled to about one unit tall and moved left, standing on y = 0.
fn bunny() -> TriMesh {
    let mut m = meshes::read_obj(BUNNY_OBJ).expect("the shipped bunny parses");
    for p in &mut m.positions {
        *p = *p * 0.1 + Vec3::new(-0.3, 0.0, 0.0);
    }
    m
}

/// A torus lying in the xz plane around `centre` (same topology as [`meshes::torus`]), its
/// sines and cosines from `libm` so that it is the same on every target.
fn torus(major: f32, minor: f32, nu: u32, nv: u32, centre: Vec3) -> TriMesh {
    let tau = core::f32::consts::TAU;
    let mut positions = Vec::with_capacity((nu * nv) as usize);
    for i in 0..nu {
        let (su, cu) = libm::sincosf(tau * i as f32 / nu as f32);
        for j in 0..nv {
            let (sv, cv) = libm::sincosf(tau * j as f32 / nv as f32);
            let r = major + minor * cv;
            // (x, y, z) of meshes::torus is (x, -z, y) here: the ring in xz, outward normals kept.
            positions.push(centre + Vec3::new(r * cu, minor * sv, -r * su));
        }
    }
    let at = |i: u32, j: u32| (i % nu) * nv + j % nv;
    let mut triangles = Vec::with_capacity((2 * nu * nv) as usize);
    for i in 0..nu {
        for j in 0..nv {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    TriMesh { positions, triangles }
}

/// Sebastiano Vigna's SplitMix64: a seeded generator whose numbers are the same everywhere.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), exactly representable (24 bits).
    fn signed(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u32 << 23) as f32 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_valid_and_apart() {
        let s = SceneSpec::new(DEFAULT_SEED);
        let torus = &s.bodies[1].mesh;
        assert_eq!(torus.boundary_edge_count(), 0);
        assert!(torus.signed_volume() > 0.0, "the torus faces out");
        assert!(s.bodies[0].mesh.signed_volume() > 0.0, "the bunny faces out");
        let (nx, nz) = s.cloth_grid;
        assert_eq!(s.bodies[CLOTH].mesh.positions.len(), (nx * nz) as usize);
        // Every cloth triangle faces up.
        let c = &s.bodies[CLOTH].mesh;
        for t in &c.triangles {
            let [a, b, d] = t.map(|i| c.positions[i as usize]);
            assert!((b - a).cross(d - a).y > 0.0);
        }
        let top = s.bodies[..CLOTH].iter().flat_map(|b| &b.mesh.positions).map(|p| p.y).fold(0.0, f32::max);
        let low = c.positions.iter().map(|p| p.y).fold(f32::MAX, f32::min);
        assert!(low > top + PREDICTION_DISTANCE, "the cloth starts above everything");
    }

    #[test]
    fn seeds_differ_and_repeat() {
        let a = SceneSpec::new(1).bodies[CLOTH].mesh.positions.clone();
        assert_eq!(a, SceneSpec::new(1).bodies[CLOTH].mesh.positions);
        assert_ne!(a, SceneSpec::new(2).bodies[CLOTH].mesh.positions);
    }
}
