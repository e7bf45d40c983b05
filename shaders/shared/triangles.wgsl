// A triangle's box and whether it is degenerate, decided by one function wherever a kernel needs
// it (the vertex kernel's body boxes, `triangle_bounds`, `morton`), so that every kernel decides
// alike. CPU twin: `raycontact::internals::cpu::triangle_box`.

// Box of the triangle (a, b, c) and its degenerate flag: degenerate when
// |e1 x e2|^2 <= DEGENERATE_SIN2 * |e1|^2 |e2|^2 (zero area up to rounding; a NaN too) or when a
// coordinate is not finite.
fn triangle_box(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> TriBox {
    let bmin = min(min(a, b), c);
    let bmax = max(max(a, b), c);
    let e1 = b - a;
    let e2 = c - a;
    let n = cross(e1, e2);
    let n2 = dot(n, n);
    let l2 = dot(e1, e1) * dot(e2, e2);
    let finite = all(abs(bmin) <= vec3<f32>(3.4028234663852886e38)) && all(abs(bmax) <= vec3<f32>(3.4028234663852886e38));
    var flags = 0u;
    if !(n2 > DEGENERATE_SIN2 * l2) || !finite {
        flags = 1u;
    }
    return TriBox(bmin, flags, bmax, 0u);
}
