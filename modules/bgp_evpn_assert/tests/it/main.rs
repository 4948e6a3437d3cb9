//! One integration-test binary (ARCHITECTURE.md): each file a module.

mod vtysh;
