//! The one integration-test binary of egress_probe. Filter by module, e.g.
//! `cargo test -p egress_probe --test it in_namespace::`.

mod cli;
mod in_namespace;
mod in_namespace_honesty;
mod in_namespace_peers;
mod in_namespace_probes;
mod lifecycle;
