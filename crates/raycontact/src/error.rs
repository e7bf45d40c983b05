//! Errors of raycontact.

use crate::id::BodyId;

/// What can go wrong in raycontact. Bad input is reported here, naming the body and the element,
/// never by a panic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No GPU adapter matched the request.
    #[error(
        "no GPU adapter found{detail}. For a software Vulkan adapter (lavapipe) on Debian/Ubuntu run \
         `apt-get install mesa-vulkan-drivers`; WGPU_BACKEND and WGPU_ADAPTER_NAME narrow the choice"
    )]
    NoAdapter {
        /// What was asked for and what was found, ready to print (may be empty).
        detail: String,
    },
    /// The adapter cannot give a limit or feature that raycontact needs.
    #[error("adapter `{adapter}` does not support what raycontact needs: {what}")]
    Unsupported {
        /// The adapter's name.
        adapter: String,
        /// The missing limit or feature.
        what: String,
    },
    /// The device (or the adapter) has a limit below what raycontact's kernels need: create the
    /// device with [`required_limits`](crate::required_limits).
    #[error(
        "the device on adapter `{adapter}` has {limit} = {device}, raycontact needs {needed}; request \
         raycontact::required_limits() when creating the device"
    )]
    Limit {
        /// The adapter's name.
        adapter: String,
        /// The limit, as `wgpu::Limits` names its field.
        limit: &'static str,
        /// The value raycontact needs.
        needed: u64,
        /// The value the device has.
        device: u64,
    },
    /// Creating the device failed.
    #[error("could not create a device on adapter `{adapter}`: {source}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's error.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// The GPU reported an error while raycontact used it (validation, out of memory, lost device).
    #[error("GPU error in {context}: {message}")]
    Gpu {
        /// What raycontact was doing.
        context: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// Reading a buffer back from the GPU failed.
    #[error("reading back `{buffer}` from the GPU failed: {message}")]
    Readback {
        /// The buffer's label.
        buffer: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// A triangle refers to a vertex that does not exist.
    #[error(
        "body {body}: triangle {triangle} refers to vertex {index}, but the body has {vertex_count} vertices"
    )]
    IndexOutOfRange {
        /// The body (for a body being added, the id it would have had).
        body: BodyId,
        /// The triangle.
        triangle: usize,
        /// The offending index.
        index: u32,
        /// Vertices of the body.
        vertex_count: usize,
    },
    /// A vertex coordinate is NaN or infinite.
    #[error("body {body}: vertex {vertex} has a non-finite coordinate {position:?}")]
    NonFinite {
        /// The body.
        body: BodyId,
        /// The vertex.
        vertex: usize,
        /// Its position.
        position: [f32; 3],
    },
    /// A body has no triangles.
    #[error("body {body}: a body needs at least one triangle")]
    NoTriangles {
        /// The body.
        body: BodyId,
    },
    /// A body is larger than the device (or the packed scene) can hold.
    #[error("body {body}: {what} is {value}, over the limit of {limit}")]
    TooLarge {
        /// The body.
        body: BodyId,
        /// What is too large.
        what: &'static str,
        /// Its size.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A cloth half-thickness is negative, NaN or infinite.
    #[error("body {body}: cloth half-thickness {value} must be finite and >= 0")]
    BadThickness {
        /// The body.
        body: BodyId,
        /// The value given.
        value: f32,
    },
    /// `set_positions` got the wrong number of positions.
    #[error("body {body}: got {got} positions, the body has {expected} vertices")]
    WrongVertexCount {
        /// The body.
        body: BodyId,
        /// Positions given.
        got: usize,
        /// Vertices of the body.
        expected: usize,
    },
    /// The body id does not name a live body (never added, or removed).
    #[error("body {body} does not exist (never added, or removed)")]
    UnknownBody {
        /// The body.
        body: BodyId,
    },
    /// A blocking call made on the web, where the page's thread must never wait for the GPU:
    /// the call's asynchronous variant is the one to use there ([`GpuContext::from_device_async`](crate::GpuContext::from_device_async),
    /// [`Scene::detect_async`](crate::Scene::detect_async)).
    #[error("`{call}` would block until the GPU is done, which a web page cannot do: use its async variant")]
    WouldBlock {
        /// The call, or what it waited for.
        call: &'static str,
    },
    /// An argument that is wrong on its face (mismatched lengths, out of range).
    #[error("invalid input: {what}")]
    InvalidInput {
        /// What is wrong.
        what: String,
    },
    /// More contacts than the contact buffer holds (with [`OverflowPolicy::Error`](crate::OverflowPolicy::Error)).
    #[error(
        "contact buffer overflow: {needed} contacts found, capacity {capacity} (raise it with Scene::set_contact_capacity, or use OverflowPolicy::Grow)"
    )]
    ContactOverflow {
        /// Contacts found.
        needed: u64,
        /// Capacity of the contact buffer.
        capacity: u64,
    },
    /// More edge–triangle crossings than the crossing buffer holds (with
    /// [`OverflowPolicy::Error`](crate::OverflowPolicy::Error)).
    #[error(
        "crossing buffer overflow: {needed} crossings found, capacity {capacity} (raise it with Scene::set_crossing_capacity, or use OverflowPolicy::Grow)"
    )]
    CrossingOverflow {
        /// Crossings found.
        needed: u64,
        /// Capacity of the crossing buffer.
        capacity: u64,
    },
    /// A query needs the BVH, but the scene changed since the last `update`.
    #[error("the BVH is out of date: call `update` after adding bodies or setting positions")]
    StaleBvh,
    /// A vertex's contact forces could exceed the fixed-point range of the response's sums.
    #[error(
        "body {body}: the contact forces on vertex {vertex} overflow the fixed-point sums at a resolution of \
         {resolution} force units a step; raise `Response::resolution`"
    )]
    ForceOverflow {
        /// The body.
        body: BodyId,
        /// The lowest vertex of the body whose sum could overflow.
        vertex: u32,
        /// The resolution in use.
        resolution: f32,
    },
    /// A GPU buffer handed to a recorded ray query ([`Scene::record_cast_rays`](crate::Scene::record_cast_rays)
    /// and its siblings) cannot be used as the query needs it.
    #[error("{query}: the `{buffer}` buffer: {problem}")]
    QueryBuffer {
        /// The query (`record_cast_rays`, `record_cast_rays_anyhit`, `record_cast_rays_all`).
        query: &'static str,
        /// Which of its buffers (`rays`, `hits`, `counts`).
        buffer: &'static str,
        /// What is wrong with it.
        problem: BufferProblem,
    },
}

/// What is wrong with a buffer handed to a recorded ray query ([`Error::QueryBuffer`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BufferProblem {
    /// The buffer ends before what the query reads or writes does.
    #[error("the query needs {needed} bytes from offset {offset}, but the buffer has {size} bytes")]
    TooSmall {
        /// Byte offset given.
        offset: u64,
        /// Bytes the query reads or writes from there.
        needed: u64,
        /// Bytes of the buffer.
        size: u64,
    },
    /// The offset is not a multiple of the device's `min_storage_buffer_offset_alignment`.
    #[error(
        "offset {offset} is not a multiple of the device's min_storage_buffer_offset_alignment ({alignment})"
    )]
    Misaligned {
        /// Byte offset given.
        offset: u64,
        /// The device's alignment.
        alignment: u64,
    },
    /// The buffer lacks a usage the query needs.
    #[error("its usages {has:?} lack {needs:?}")]
    Usage {
        /// Usages the query needs.
        needs: wgpu::BufferUsages,
        /// The buffer's usages.
        has: wgpu::BufferUsages,
    },
    /// The range the query binds is larger than the device binds at once.
    #[error(
        "the query binds {bytes} bytes of it, over the device's max_storage_buffer_binding_size ({limit})"
    )]
    OverBindingLimit {
        /// Bytes the query binds.
        bytes: u64,
        /// The device's `max_storage_buffer_binding_size`.
        limit: u64,
    },
    /// It is the buffer of the rays, which the query reads while it writes this one, or its
    /// range overlaps that of another output.
    #[error("it overlaps the `{other}` buffer's range, or is the rays' buffer")]
    Overlaps {
        /// The other buffer.
        other: &'static str,
    },
}

/// `Result` with raycontact's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
