//! The one integration-test binary of change_guard. Each test works in a temp folder of its
//! own (root's, 0700) holding the guard's `state_dir`, the files a change touches and the
//! reload scripts; never /var/lib or /etc. Filter by module, e.g.
//! `cargo test -p change_guard --test it switch::`.

mod guard;
mod support;
mod switch;
