//! The one integration-test binary of egress_probe. Filter by module, e.g.
//! `cargo test -p egress_probe --test it in_namespace::`.

// The fuzz crate's invariant code (fuzz/src), included by path as the other crates do: that is
// how the stable smoke test shares it with `make fuzz`. Its files refer to each other as
// `crate::input`, so they sit at this binary's root.
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/egress.rs"]
mod egress;
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/input.rs"]
mod input;

mod cli;
mod in_namespace;
mod in_namespace_honesty;
mod robustness_fuzz_smoke;
