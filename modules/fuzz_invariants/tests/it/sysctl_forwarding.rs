//! The stable smoke run of the fuzz targets on sysctl_forwarding (`sysctl_d`, and `spec_args` with the
//! module's real spec): the seed corpus, the kept regressions and a bounded number of generated
//! inputs through the same invariant code as `make fuzz` (`deevnet_fuzz_invariants`).
//! `DEEVNET_FUZZ_CASES=N` runs N generated inputs instead of the default.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{input, spec_args, sysctl_d};
use std::collections::BTreeMap;

#[test]
fn fuzz_smoke_sysctl_d() {
    input::smoke(
        &fuzz_root(),
        "sysctl_d",
        input::case_count(5000),
        sysctl_d::check_bytes,
    );
}

/// Names the kernel accepts but sysctl.d cannot hold: a glob character or `=` would make the
/// written line mean something else at boot. The module refuses them, so they never render.
#[test]
fn interface_names_that_sysctl_d_cannot_hold_read_back_or_are_refused() {
    for name in ["eth*", "vmbr?", "a[b]", "a=b"] {
        let err = sysctl_forwarding::managed_file::check_interface_name("rp_filter", name)
            .expect_err(name);
        assert!(err.contains("cannot hold literally"), "{err}");
    }
    assert_eq!(
        sysctl_forwarding::managed_file::check_interface_name("rp_filter", "vmbr0.50"),
        Ok(())
    );
    for name in ["eth*", "vmbr?", "a[b]", "a=b", "vmbr0.50"] {
        let rp_filter = BTreeMap::from([(name.to_string(), 2)]);
        sysctl_d::render_invariants(false, &rp_filter);
    }
}

#[test]
fn fuzz_smoke_spec_args_with_the_real_spec() {
    let spec = &sysctl_forwarding::SPEC;
    input::smoke(&fuzz_root(), "spec_args", input::case_count(3000), |data| {
        sysctl_d::typed_arguments(spec_args::check_args(
            "deevnet.net.sysctl_forwarding",
            spec,
            data.get(1..).unwrap_or_default(),
        ));
    });
}
