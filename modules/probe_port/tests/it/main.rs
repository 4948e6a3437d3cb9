//! The one integration-test binary of deevnet_probe_port. What needs a kernel (the veth into a
//! namespace, its removal on every way out, kill -9 included, and the sweep) is tested through
//! the modules that use it: `egress_probe`'s `tests/it/lifecycle.rs` and `qinq_probe`'s
//! `tests/it/pair.rs`.

mod mark;
