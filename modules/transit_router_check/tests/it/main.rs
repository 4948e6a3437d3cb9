//! The one integration-test binary of transit_router_check: the built module run in network
//! namespaces each test makes for itself, with the recorded ruleset loaded there. Filter by
//! module path, e.g. `cargo test -p transit_router_check --test it in_namespace::`.

pub mod in_namespace;
mod kernel;
mod traffic;
