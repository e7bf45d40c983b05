//! raycontact-bench: placeholder until the next commit.
fn main() {}
