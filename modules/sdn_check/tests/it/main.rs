//! The one integration-test binary of sdn_check (one binary per crate, as the other module
//! crates have). Each area is a module here; filter by its path, e.g.
//! `cargo test -p sdn_check --test it intent::` or `... --test it kernel::`.

mod binary_kernel;
mod intent;
mod kernel;
