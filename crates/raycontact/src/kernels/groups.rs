//! The kernels by what they are run for, so that a caller warms up those it will run
//! ([`GpuContext::warm_up`](crate::GpuContext::warm_up)) and no others.
//!
//! Why: every pipeline is created with its context, but a driver that generates a pipeline's
//! machine code at its first dispatch (lavapipe) compiles it in the first frame that runs it: a
//! detection's kernels in the first detection, iterative detection's when a scene first walks,
//! the intersection stages' when they are first switched on. Warming up every kernel when the
//! context is created ([`ContextOptions::warm_up`](crate::ContextOptions::warm_up)) moves all
//! of that before the first frame, including the kernels of features the application never
//! uses; warming up the groups it uses moves only theirs. A group lists every kernel its
//! feature dispatches (tests check each feature against its group), so groups may share
//! kernels (the sort's).

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use super::Kernel;

/// A set of kernel groups: what a [`GpuContext`](crate::GpuContext) is asked to warm up
/// ([`GpuContext::warm_up`](crate::GpuContext::warm_up)). Combine them with `|`.
///
/// ```no_run
/// use raycontact::{GpuContext, KernelGroups};
/// let ctx = GpuContext::new()?;
/// // An engine that detects, walks last frame's contacts and applies the GPU response:
/// let done = ctx.warm_up(KernelGroups::DETECTION | KernelGroups::ITERATIVE | KernelGroups::RESPONSE)?;
/// println!("{} kernels warmed up in {:?}", done.kernels, done.time);
/// # Ok::<(), raycontact::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KernelGroups(u8);

impl KernelGroups {
    /// No group.
    pub const NONE: Self = Self(0);
    /// A detection's full pass, and a frame's update alone: normals and bounds, the trees (built
    /// or refitted), the broad phase, the source lists, the narrow phase and the contacts'
    /// dispatch arguments.
    pub const DETECTION: Self = Self(1);
    /// Iterative detection's walks (`Scene::set_iterative`): last frame's contacts re-cast by
    /// walking the triangle adjacency.
    pub const ITERATIVE: Self = Self(2);
    /// The intersection stages (`Scene::set_intersections`): edge crossings, contours, regions
    /// and the contacts that untangle them.
    pub const INTERSECTIONS: Self = Self(4);
    /// The contact response on the GPU (`Scene::contact_forces` on a GPU scene).
    pub const RESPONSE: Self = Self(8);
    /// The ray queries: closest, any and all hits, and the walk query.
    pub const RAY_QUERIES: Self = Self(16);
    /// The standalone radix sort ([`GpuRadixSort`](crate::GpuRadixSort)).
    pub const SORT: Self = Self(32);
    /// Every group: every kernel.
    pub const ALL: Self = Self(63);

    /// The groups by name, in the order of their bits.
    const NAMED: [(Self, &'static str); 6] = [
        (Self::DETECTION, "detection"),
        (Self::ITERATIVE, "iterative"),
        (Self::INTERSECTIONS, "intersections"),
        (Self::RESPONSE, "response"),
        (Self::RAY_QUERIES, "ray-queries"),
        (Self::SORT, "sort"),
    ];

    /// Whether every group of `other` is in this set.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set holds no group.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The group named `name` (`detection`, `iterative`, `intersections`, `response`,
    /// `ray-queries`, `sort`, or `all`).
    pub fn from_name(name: &str) -> Option<Self> {
        if name == "all" {
            return Some(Self::ALL);
        }
        Self::NAMED.iter().find(|(_, n)| *n == name).map(|(g, _)| *g)
    }

    /// The names of the kernels the set's groups run (`shaders/<name>.wgsl`, pipeline label
    /// `raycontact.<name>`), each once, in the kernel table's order.
    pub fn kernel_names(self) -> Vec<&'static str> {
        Kernel::ALL.iter().filter(|&&k| self.runs(k)).map(|k| k.name()).collect()
    }

    /// Whether kernel `k` runs in one of the set's groups.
    pub(crate) fn runs(self, k: Kernel) -> bool {
        Self::NAMED.iter().any(|&(g, _)| self.contains(g) && kernels(g).contains(&k))
    }
}

/// The kernels group `g` (one group) dispatches.
fn kernels(g: KernelGroups) -> &'static [Kernel] {
    use Kernel::*;
    match g {
        KernelGroups::DETECTION => &[
            VertexNormals,
            TriangleBounds,
            Morton,
            RadixScatter,
            RadixTiles,
            Hierarchy,
            Fit,
            BroadPhase,
            PairTiles,
            RaySources,
            SourceArgs,
            NarrowPhase,
            ContactArgs,
        ],
        KernelGroups::ITERATIVE => &[WalkContacts, ContactArgs],
        KernelGroups::INTERSECTIONS => &[
            EdgeTiles,
            EdgeSources,
            IntersectArgs,
            Crossings,
            CrossingLinks,
            ContourHook,
            ContourCompress,
            ContourStart,
            RegionsHook,
            RegionAreas,
            WrongSide,
            ContourWalk,
            EdgeContacts,
            UntangleContacts,
        ],
        KernelGroups::RESPONSE => &[Response, ContactArgs],
        KernelGroups::RAY_QUERIES => &[Raycast, RaycastAnyhit, RaycastAll, Walk],
        KernelGroups::SORT => &[RadixCount, RadixScatter, RadixTiles],
        _ => &[],
    }
}

impl BitOr for KernelGroups {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl BitOrAssign for KernelGroups {
    fn bitor_assign(&mut self, other: Self) {
        self.0 |= other.0;
    }
}

impl fmt::Debug for KernelGroups {
    /// The groups' names joined by `|` (`NONE` for none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> =
            Self::NAMED.iter().filter(|(g, _)| self.contains(*g)).map(|(_, n)| *n).collect();
        if names.is_empty() { f.write_str("NONE") } else { f.write_str(&names.join("|")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel runs in some group, every group runs some kernel, and `ALL` is every group.
    #[test]
    fn the_groups_cover_every_kernel() {
        for k in Kernel::ALL {
            assert!(KernelGroups::ALL.runs(k), "{} is in no group", k.name());
        }
        let mut all = KernelGroups::NONE;
        for (g, name) in KernelGroups::NAMED {
            assert!(!kernels(g).is_empty(), "{name} runs no kernel");
            assert_eq!(KernelGroups::from_name(name), Some(g));
            all |= g;
        }
        assert_eq!(all, KernelGroups::ALL);
        assert!(!KernelGroups::DETECTION.runs(Kernel::WalkContacts));
        assert!(
            KernelGroups::SORT.runs(Kernel::RadixScatter)
                && KernelGroups::DETECTION.runs(Kernel::RadixScatter)
        );
        assert_eq!(format!("{:?}", KernelGroups::DETECTION | KernelGroups::SORT), "detection|sort");
        assert_eq!(format!("{:?}", KernelGroups::NONE), "NONE");
    }
}
