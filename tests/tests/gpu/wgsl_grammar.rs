//! The WGSL grammar's operator rules that naga does not enforce and Chrome's compiler (Tint) does.
//!
//! naga parses expressions by precedence and accepts `a * b ^ c`; the WGSL grammar does not: the
//! operands of `&`, `|` and `^` are unary expressions (a chain of one of them is allowed), the
//! operands of `<<` and `>>` are unary expressions, and `&&` does not mix with `||`. A kernel that
//! breaks these rules runs natively and fails to compile in the browser, so every kernel, the web
//! demo's shader and the examples' shader are checked here, token by token, at each nesting level.

use raycontact::internals::kernels::Kernel;

/// A binary operator's family, for the mixing rules.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    /// `&`, `|` or `^` (the operator itself is kept: a chain of one is allowed).
    Bitwise(&'static str),
    /// `<<` or `>>`.
    Shift,
    /// `+ - * / %`.
    Arithmetic,
    /// `== != < > <= >=`.
    Relational,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

/// Type generators and built-ins written with a template list (`vec3<f32>`, `bitcast<u32>(x)`).
const TEMPLATED: &[&str] = &[
    "vec2",
    "vec3",
    "vec4",
    "mat2x2",
    "mat2x3",
    "mat2x4",
    "mat3x2",
    "mat3x3",
    "mat3x4",
    "mat4x2",
    "mat4x3",
    "mat4x4",
    "array",
    "ptr",
    "atomic",
    "bitcast",
    "var",
    "texture_1d",
    "texture_2d",
    "texture_2d_array",
    "texture_3d",
    "texture_cube",
    "texture_storage_2d",
    "texture_multisampled_2d",
];

/// Keywords after which `-`, `&`, `*` are unary.
const KEYWORDS: &[&str] = &[
    "return",
    "if",
    "else",
    "for",
    "while",
    "loop",
    "switch",
    "case",
    "let",
    "var",
    "const",
    "break",
    "continue",
    "continuing",
    "fn",
    "struct",
    "default",
    "discard",
    "override",
    "alias",
];

/// Tokens: identifiers and numbers as words, punctuation as the longest operator that matches.
fn tokens(src: &str) -> Vec<String> {
    const PUNCT: &[&str] = &[
        "<<=", ">>=", "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "->", "++", "--", "+=", "-=", "*=",
        "/=", "%=", "&=", "|=", "^=",
    ];
    let mut out = Vec::new();
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        let b = code.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i] as char;
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_alphanumeric()
                || c == '_'
                || c == '.' && i + 1 < b.len() && b[i + 1].is_ascii_digit()
            {
                let start = i;
                while i < b.len() {
                    let d = b[i] as char;
                    let exponent_sign = (d == '-' || d == '+')
                        && matches!(b[i - 1] as char, 'e' | 'E')
                        && b[start].is_ascii_digit()
                        && !code[start..i].starts_with("0x");
                    if d.is_ascii_alphanumeric() || d == '_' || d == '.' || exponent_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push(code[start..i].to_string());
            } else if let Some(p) = PUNCT.iter().find(|p| code[i..].starts_with(**p)) {
                out.push(p.to_string());
                i += p.len();
            } else {
                out.push(c.to_string());
                i += 1;
            }
        }
    }
    out
}

fn family(op: &str) -> Option<Family> {
    Some(match op {
        "&" => Family::Bitwise("&"),
        "|" => Family::Bitwise("|"),
        "^" => Family::Bitwise("^"),
        "<<" | ">>" => Family::Shift,
        "+" | "-" | "*" | "/" | "%" => Family::Arithmetic,
        "==" | "!=" | "<" | ">" | "<=" | ">=" => Family::Relational,
        "&&" => Family::And,
        "||" => Family::Or,
        _ => return None,
    })
}

fn is_operand_end(tok: &str) -> bool {
    tok == ")"
        || tok == "]"
        || tok.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && !KEYWORDS.contains(&tok)
}

/// Whether the operators met at one nesting level form an expression the grammar accepts.
fn level_error(ops: &[Family]) -> Option<String> {
    let has = |f: Family| ops.contains(&f);
    let bitwise: Vec<_> = ops.iter().filter(|f| matches!(f, Family::Bitwise(_))).collect();
    if let Some(first) = bitwise.first() {
        if ops.iter().any(|f| f != *first) {
            return Some(format!("{first:?} mixed with another operator without parentheses"));
        }
    }
    if has(Family::Shift) {
        let shifts = ops.iter().filter(|f| **f == Family::Shift).count();
        if shifts > 1 || has(Family::Arithmetic) {
            return Some("a shift's operands must be unary expressions: parenthesise".into());
        }
    }
    if has(Family::And) && has(Family::Or) {
        return Some("&& mixed with || without parentheses".into());
    }
    None
}

/// The first place in `src` that breaks the operator rules, as a message with its context.
fn first_violation(src: &str) -> Option<String> {
    let toks = tokens(src);
    // One list of operators per open level; a level also ends at `;`, `,`, `{`, `}`, `:`, `=`.
    let mut levels: Vec<Vec<Family>> = vec![Vec::new()];
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].as_str();
        let prev = if i > 0 { toks[i - 1].as_str() } else { "" };
        let context = || toks[i.saturating_sub(8)..(i + 8).min(toks.len())].join(" ");
        match t {
            "<" if TEMPLATED.contains(&prev) => {
                // Skip the template list, nested ones included.
                let mut depth = 0i32;
                while i < toks.len() {
                    match toks[i].as_str() {
                        "<" => depth += 1,
                        ">" => depth -= 1,
                        ">>" => depth -= 2,
                        _ => {}
                    }
                    i += 1;
                    if depth <= 0 {
                        break;
                    }
                }
                continue;
            }
            "(" | "[" => levels.push(Vec::new()),
            ")" | "]" => {
                let ops = levels.pop().unwrap_or_default();
                if let Some(e) = level_error(&ops) {
                    return Some(format!("{e}: … {} …", context()));
                }
                if levels.is_empty() {
                    levels.push(Vec::new());
                }
            }
            ";" | "," | "{" | "}" | ":" | "->" | "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|="
            | "^=" | "<<=" | ">>=" => {
                let ops = std::mem::take(levels.last_mut().expect("a level"));
                if let Some(e) = level_error(&ops) {
                    return Some(format!("{e}: … {} …", context()));
                }
            }
            _ => {
                if let Some(f) = family(t) {
                    if is_operand_end(prev) {
                        levels.last_mut().expect("a level").push(f);
                    }
                } else if KEYWORDS.contains(&t) {
                    let ops = std::mem::take(levels.last_mut().expect("a level"));
                    if let Some(e) = level_error(&ops) {
                        return Some(format!("{e}: … {} …", context()));
                    }
                }
            }
        }
        i += 1;
    }
    None
}

#[test]
fn the_checker_knows_the_rules() {
    for bad in [
        "let h = k.x * 0x9e3779b1u ^ k.y;",
        "h = (h ^ (h >> 16u)) * 0x85ebca6bu ^ k.z;",
        "if a & b == 0u { }",
        "let x = a + b << 2u;",
        "let x = a << b << c;",
        "let x = f(a | b & c);",
        "let ok = a && b || c;",
        "let y = v[i & m + 1u];",
    ] {
        assert!(first_violation(bad).is_some(), "accepted {bad:?}");
    }
    for good in [
        "let h = (k.x * 0x9e3779b1u) ^ k.y;",
        "if (a & b) == 0u { }",
        "let x = (a + b) << 2u;",
        "let x = a | b | c;",
        "let s = a << 3u == b;",
        "let ok = (a && b) || c;",
        "let ok = a < b && c >= d;",
        "var<storage, read_write> xs: array<vec4<f32>>; let v = vec3<f32>(1.0, -2.0, 3e-4 * x);",
        "let p = &xs[i + 1u]; let q = *p - 1.0; return -q * 2.0;",
        "let m = bitcast<u32>(x) & 0xffu;",
    ] {
        assert_eq!(first_violation(good), None, "refused {good:?}");
    }
}

#[test]
fn every_kernel_follows_the_operator_rules_chrome_enforces() {
    let mut failures = Vec::new();
    for k in Kernel::ALL {
        if let Some(e) = first_violation(&k.source()) {
            failures.push(format!("{}: {e}", k.name()));
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for path in ["web/src/render.wgsl", "examples/src/render/mesh.wgsl"] {
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Some(e) = first_violation(&text) {
            failures.push(format!("{path}: {e}"));
        }
    }
    assert!(failures.is_empty(), "WGSL that Chrome rejects:\n{}", failures.join("\n"));
}
