//! The one integration-test binary of qinq_probe (one binary per crate: one link). Filter by
//! module path, e.g. `cargo test -p qinq_probe --test it pair::`.

mod pair;
mod tcx;
