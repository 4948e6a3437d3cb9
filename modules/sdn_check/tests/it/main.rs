//! The one integration-test binary of sdn_check (one binary per crate: one link instead of one
//! per file). Filter by module path, e.g. `cargo test -p sdn_check --test it kernel::`.

mod kernel;
