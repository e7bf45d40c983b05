//! Two cloths that start interpenetrating (no untangled previous frame): global intersection
//! analysis ([`IntersectionMode::Full`]) untangles them; inversion handling alone (Lehericey et
//! al. 2015) leaves them tangled, for it needs a previous frame on the right side.
//!
//! Sheet A lies flat; sheet B is tilted through it. raycontact detects; the sheets move by a
//! minimal position-based step of this example's own — each collision contact moves its source
//! vertex half its depth along its normal (at most a quarter of a rest edge a frame), then three
//! Jacobi passes pull every edge back towards its rest length — so that the effect of the
//! contacts shows. With `inversion_only` the analysis still counts the crossings
//! ([`IntersectionMode::Crossings`]) but its contacts are not applied: only the vertex rays'
//! (their inversions included) move the sheets.

use glam::{Affine3A, Quat, Vec3};
use raycontact::meshes::{self, TriMesh};
use raycontact::{
    BodyId, BodyKind, Contact, ContactFlags, Contacts, GpuContext, IntersectionMode, Pairs, Scene,
};

/// Half-thickness of both sheets.
pub const HALF_THICKNESS: f32 = 0.004;

/// The example's settings.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Frames to run.
    pub frames: usize,
    /// Apply the vertex rays' contacts only (inversion handling alone), not the analysis's.
    pub inversion_only: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self { frames: 60, inversion_only: false }
    }
}

/// One frame's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Edge–triangle crossings.
    pub crossings: usize,
    /// Contour loops, and how many of them are closed.
    pub loops: (usize, usize),
    /// Regions of sheet A and sheet B.
    pub regions: (usize, usize),
    /// Vertices of sheet A and sheet B on the wrong side.
    pub wrong: (usize, usize),
    /// The vertex rays' collisions, and those flagged inverted.
    pub collisions: (usize, usize),
    /// Edge and untangling contacts.
    pub intersection_contacts: (usize, usize),
}

impl Frame {
    fn of(found: &Contacts, ids: &[BodyId]) -> Self {
        let x = &found.intersections;
        let regions = |id: BodyId| x.regions_of(id).map_or(1, |r| r.regions.len());
        let wrong = |id: BodyId| x.regions_of(id).map_or(0, |r| r.wrong_side_vertices().count());
        let count = |f: ContactFlags| found.contacts.iter().filter(|c| c.flags.contains(f)).count();
        let rays = found.contacts.iter().filter(|c| c.is_collision() && !is_intersection(c)).count();
        Frame {
            crossings: x.crossings.len(),
            loops: (x.loops.len(), x.loops.iter().filter(|l| l.closed).count()),
            regions: (regions(ids[0]), regions(ids[1])),
            wrong: (wrong(ids[0]), wrong(ids[1])),
            collisions: (rays, count(ContactFlags::INVERTED)),
            intersection_contacts: (count(ContactFlags::EDGE), count(ContactFlags::UNTANGLE)),
        }
    }
}

fn is_intersection(c: &Contact) -> bool {
    c.flags.intersects(ContactFlags::EDGE | ContactFlags::UNTANGLE)
}

/// The two sheets, A flat and B tilted through it.
pub fn sheets() -> [TriMesh; 2] {
    [
        meshes::grid_sheet(1.2, 1.2, 24, 24),
        meshes::grid_sheet(0.9, 0.9, 18, 18).transformed(Affine3A::from_rotation_translation(
            Quat::from_axis_angle(Vec3::new(1.0, 0.17, 0.0).normalize(), 0.6),
            Vec3::new(0.011, 0.23, 0.0137),
        )),
    ]
}

/// Runs the example on `ctx`'s GPU (the CPU backend without one), calling `frame` with each
/// frame's figures; returns them all.
pub fn run(
    ctx: Option<&GpuContext>,
    settings: Settings,
    mut frame: impl FnMut(usize, &Frame),
) -> raycontact::Result<Vec<Frame>> {
    let mut scene = match ctx {
        Some(c) => Scene::new(c),
        None => Scene::new_cpu(None)?,
    };
    let sheets = sheets();
    let kind = BodyKind::Cloth { half_thickness: HALF_THICKNESS };
    let ids = sheets
        .iter()
        .map(|m| scene.add_body(&m.positions, &m.triangles, kind))
        .collect::<raycontact::Result<Vec<_>>>()?;
    scene.set_intersections(if settings.inversion_only {
        IntersectionMode::Crossings
    } else {
        IntersectionMode::Full
    });
    let rest: Vec<Vec<(u32, u32, f32)>> = sheets.iter().map(rest_lengths).collect();
    let mut positions: Vec<Vec<Vec3>> = sheets.iter().map(|m| m.positions.clone()).collect();
    let mut frames = Vec::with_capacity(settings.frames);
    for i in 0..settings.frames {
        let found = scene.detect(Pairs::Overlapping)?;
        let f = Frame::of(&found, &ids);
        frame(i, &f);
        frames.push(f);
        let applied = found
            .contacts
            .iter()
            .filter(|c| c.is_collision() && !(settings.inversion_only && is_intersection(c)));
        step(&mut positions, &ids, applied, &rest);
        for (k, &id) in ids.iter().enumerate() {
            scene.set_positions(id, &positions[k])?;
        }
    }
    Ok(frames)
}

/// Every edge of a mesh with its rest length.
fn rest_lengths(m: &TriMesh) -> Vec<(u32, u32, f32)> {
    let mut edges: Vec<(u32, u32)> = m
        .triangles
        .iter()
        .flat_map(|t| (0..3).map(move |i| (t[i].min(t[(i + 1) % 3]), t[i].max(t[(i + 1) % 3]))))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
        .into_iter()
        .map(|(a, b)| (a, b, m.positions[a as usize].distance(m.positions[b as usize])))
        .collect()
}

/// The example's position-based step (see the module documentation).
fn step<'a>(
    positions: &mut [Vec<Vec3>],
    ids: &[BodyId],
    contacts: impl Iterator<Item = &'a Contact>,
    rest: &[Vec<(u32, u32, f32)>],
) {
    for c in contacts {
        let k = ids.iter().position(|&i| i == c.source_body).expect("a sheet");
        positions[k][c.source_vertex as usize] += c.normal * (0.5 * c.depth).min(0.0125);
    }
    for (k, edges) in rest.iter().enumerate() {
        for _ in 0..3 {
            let mut moved = vec![Vec3::ZERO; positions[k].len()];
            let mut count = vec![0u32; positions[k].len()];
            for &(a, b, l) in edges {
                let d = positions[k][b as usize] - positions[k][a as usize];
                let len = d.length();
                if len > 0.0 {
                    let fix = d * (0.5 * (len - l) / len);
                    moved[a as usize] += fix;
                    moved[b as usize] -= fix;
                    count[a as usize] += 1;
                    count[b as usize] += 1;
                }
            }
            for (p, (m, n)) in positions[k].iter_mut().zip(moved.iter().zip(&count)) {
                if *n > 0 {
                    *p += *m / *n as f32;
                }
            }
        }
    }
}
