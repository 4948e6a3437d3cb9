//! The one integration-test binary of vrf_route_assert (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p vrf_route_assert --test it cli::`.

mod cli;
mod in_namespace;
mod in_namespace_fleet;
mod in_namespace_input;
mod in_namespace_snat;
