//! Twin of `shaders/contact_args.wgsl`: the indirect dispatch over the stored contacts.

/// Twin of `contact_args.wgsl`: the indirect dispatch arguments (x, y, z) over `min(count,
/// capacity)` contacts in workgroups of `WG_SIZE`, then that number (which the kernel also
/// writes to the detection state's `stored`, for the next iterative pass).
pub fn contact_args(contact_count: u32, contact_capacity: u32) -> [u32; 4] {
    let stored = contact_count.min(contact_capacity);
    let (x, y) = crate::layout::dispatch_size(stored.div_ceil(crate::layout::WG_SIZE));
    [if stored == 0 { 0 } else { x }, y, 1, stored]
}
