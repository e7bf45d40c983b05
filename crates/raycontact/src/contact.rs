//! Contacts: what a detection returns, and how it chooses the pairs to test.

use glam::{Vec2, Vec3};

use crate::body::BodyId;
use crate::layout::ContactGpu;
use crate::stats::FrameStats;

use crate::layout::contact_flags;

/// What a contact is: the bits of [`Contact::flags`], as the kernels write them (a `u32` on the
/// GPU, [`ContactGpu::flags`](crate::internals::layout::ContactGpu::flags)).
///
/// ```
/// use raycontact::ContactFlags;
/// let f = ContactFlags::COLLISION | ContactFlags::INWARD_RAY;
/// assert!(f.contains(ContactFlags::COLLISION) && !f.contains(ContactFlags::WALKED));
/// assert_eq!(f.to_string(), "collision|inward_ray");
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContactFlags(u32);

impl ContactFlags {
    /// A collision: the source vertex is in contact with the target body.
    pub const COLLISION: Self = Self(contact_flags::COLLISION);
    /// A prediction: a surface within the pair's prediction distance, not yet in contact.
    pub const PREDICTION: Self = Self(contact_flags::PREDICTION);
    /// Found by the inward ray (along minus the source vertex's normal).
    pub const INWARD_RAY: Self = Self(contact_flags::INWARD_RAY);
    /// Found by the outward ray (along the source vertex's normal).
    pub const OUTWARD_RAY: Self = Self(contact_flags::OUTWARD_RAY);
    /// The source vertex crossed the hit triangle since the previous frame (cloth against
    /// cloth): the normal is flipped and the contact is a collision.
    pub const INVERTED: Self = Self(contact_flags::INVERTED);
    /// Found by walking the triangle adjacency from the previous hit (iterative detection).
    pub const WALKED: Self = Self(contact_flags::WALKED);
    /// From an edge–triangle crossing ([`IntersectionMode`](crate::IntersectionMode)): pushes an
    /// end of the crossing edge out through the crossed triangle.
    pub const EDGE: Self = Self(contact_flags::EDGE);
    /// An untangling contact ([`IntersectionMode::Full`](crate::IntersectionMode::Full)): a cloth
    /// vertex on the wrong side of another cloth (or of itself), pushed back through it.
    pub const UNTANGLE: Self = Self(contact_flags::UNTANGLE);

    /// Every flag with its name, in bit order.
    pub const NAMED: [(ContactFlags, &'static str); 8] = [
        (Self::COLLISION, "collision"),
        (Self::PREDICTION, "prediction"),
        (Self::INWARD_RAY, "inward_ray"),
        (Self::OUTWARD_RAY, "outward_ray"),
        (Self::INVERTED, "inverted"),
        (Self::WALKED, "walked"),
        (Self::EDGE, "edge"),
        (Self::UNTANGLE, "untangle"),
    ];

    /// No flag.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// The flags of these bits, as the GPU writes them (unknown bits are kept).
    pub const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is set.
    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether no flag is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// These flags without those of `other`.
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// The names of the flags set, in bit order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMED.into_iter().filter(move |(f, _)| self.contains(*f)).map(|(_, n)| n)
    }
}

impl std::ops::BitOr for ContactFlags {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl std::ops::BitAnd for ContactFlags {
    type Output = Self;
    fn bitand(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

impl std::fmt::Display for ContactFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.names().collect();
        f.write_str(&names.join("|"))
    }
}

impl std::fmt::Debug for ContactFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ContactFlags({self})")
    }
}

/// A contact: a ray from `source_vertex` of `source_body`, along its inward normal (Hermann et
/// al. 2008) or its outward normal (Lehericey et al. 2015, see [`ContactFlags`]), found
/// `target_triangle` of `target_body` at `ray_length`.
///
/// The ray is re-projected onto the hit triangle's unit normal m (length `L = ray_length *
/// weight`) and the contact classified by `L` as a collision or a prediction. `normal` (±m) is
/// the direction that resolves the contact for the source vertex: towards the hit, across the
/// target, when the vertex is inside a volumetric target (or a volumetric source holds a cloth
/// inside, or the vertex crossed a cloth since the last frame: [`ContactFlags::INVERTED`]);
/// away from the hit when a surface lies in front of the vertex. A response pushes the source
/// vertex along `normal` and the target triangle's vertices the other way, by `barycentric`
/// weights. The points lie on the outer surfaces: a cloth's point is moved by its
/// half-thickness e off its mid-surface (`source_point = vertex - e_source * normal`,
/// `target_point = hit + e_target * normal`), and `depth = (target_point - source_point) ·
/// normal`: positive when in contact, the (negative) gap for a prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The body the ray starts from.
    pub source_body: BodyId,
    /// The vertex (of `source_body`) the ray starts from.
    pub source_vertex: u32,
    /// The body the ray hit.
    pub target_body: BodyId,
    /// The triangle (of `target_body`) the ray hit.
    pub target_triangle: u32,
    /// Barycentric weights (u, v) of the hit on the triangle's second and third vertices.
    pub barycentric: Vec2,
    /// The source vertex's position.
    pub source_point: Vec3,
    /// The hit point on the target body.
    pub target_point: Vec3,
    /// Unit direction that resolves the contact for the source vertex (± the hit triangle's
    /// normal).
    pub normal: Vec3,
    /// Penetration depth along `normal`; negative for a prediction (the gap).
    pub depth: f32,
    /// Length of the ray from the source vertex to the hit (on the mid-surfaces).
    pub ray_length: f32,
    /// `|cos α|` between the ray and the hit triangle's normal, in (0, 1]: Hermann's force
    /// weight, and the factor of the re-projection.
    pub weight: f32,
    /// What the contact is ([`ContactFlags`]).
    pub flags: ContactFlags,
}

impl Contact {
    pub(crate) fn from_gpu(c: &ContactGpu, ids: &[BodyId]) -> Self {
        Contact {
            source_body: ids[c.source_body as usize],
            source_vertex: c.source_vertex,
            target_body: ids[c.target_body as usize],
            target_triangle: c.target_triangle,
            barycentric: Vec2::new(c.u, c.v),
            source_point: c.source_point,
            target_point: c.target_point,
            normal: c.normal,
            depth: c.depth,
            ray_length: c.ray_length,
            weight: c.weight,
            flags: ContactFlags::from_bits(c.flags),
        }
    }

    /// Whether this is a collision (not a prediction).
    pub fn is_collision(&self) -> bool {
        self.flags.contains(ContactFlags::COLLISION)
    }

    /// Whether this is a prediction: a surface within the prediction distance, not yet in
    /// contact.
    pub fn is_prediction(&self) -> bool {
        self.flags.contains(ContactFlags::PREDICTION)
    }

    /// Whether the source vertex changed side of the hit triangle since the previous frame
    /// (cloth against cloth): the normal was flipped to undo the crossing.
    pub fn is_inverted(&self) -> bool {
        self.flags.contains(ContactFlags::INVERTED)
    }

    /// Whether the outward ray (along the vertex normal) found it, rather than the inward one.
    pub fn is_outward(&self) -> bool {
        self.flags.contains(ContactFlags::OUTWARD_RAY)
    }
}

/// Which pairs of bodies a detection tests: each pair (A, B) in both directions, A -> B and
/// B -> A; a self pair (A, A) once. A self pair of a cloth finds where the cloth touches
/// itself; of a volumetric body, where it passes through itself (Hermann's section 3.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pairs<'a> {
    /// Every pair whose boxes, grown by the pair's reach (the larger of the prediction
    /// distance and the sum of the cloth half-thicknesses), overlap, found on the GPU (on the
    /// CPU backend, by its twin); and the self pairs that
    /// [`Scene::set_self_collision`](crate::Scene::set_self_collision) asks for. The
    /// prediction distance is [`Scene::set_prediction_distance`](crate::Scene::set_prediction_distance)'s.
    Overlapping,
    /// These pairs, with the scene's prediction distance.
    List(&'a [(BodyId, BodyId)]),
    /// These pairs, each with its own prediction distance (finite, >= 0).
    WithDistance(&'a [(BodyId, BodyId, f32)]),
}

/// Which bodies [`Pairs::Overlapping`] tests against themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelfCollision {
    /// None.
    None,
    /// Every cloth (Lehericey et al. 2015 add the test (C, C) for each cloth C).
    #[default]
    Cloth,
    /// Every cloth and every volumetric body (the volumetric test costs a second ray query
    /// for each vertex whose first hit is on its own inward surface).
    All,
}

/// What a detection does when it finds more contacts than the contact buffer holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverflowPolicy {
    /// Grow the buffer to the number needed and run the narrow phase again (the BVHs are kept).
    #[default]
    Grow,
    /// Return [`Error::ContactOverflow`](crate::Error::ContactOverflow) with the number needed.
    Error,
}

/// The result of a detection.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contacts {
    /// The contacts, sorted by (source body, target body, source vertex, the vertex rays'
    /// contacts before [`ContactFlags::EDGE`] before [`ContactFlags::UNTANGLE`] ones, inward ray
    /// before outward ray, target triangle): a deterministic order, the same on the GPU and on
    /// the CPU backend.
    pub contacts: Vec<Contact>,
    /// Pairs of bodies tested (each in both directions).
    pub pairs: u32,
    /// The frame's figures (update and detection).
    pub stats: FrameStats,
    /// The surfaces' intersections, when
    /// [`Scene::set_intersections`](crate::Scene::set_intersections) asks for them.
    pub intersections: crate::Intersections,
}
