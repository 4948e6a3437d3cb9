//! The one integration-test binary of deevnet_runtime (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p deevnet_runtime --test it panic_hook::`.

mod panic_hook;
mod robustness_security;
