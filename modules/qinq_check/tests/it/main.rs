//! The one integration-test binary of qinq_check (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p qinq_check --test it in_namespace::`.

mod in_namespace;
mod recorded;
