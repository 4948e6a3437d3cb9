//! `forbidden_interfaces` on hv02's recorded answers: one lookup generated per prefix
//! connected on a forbidden interface, and the interfaces that give none.

use super::*;

fn forbidden(interfaces: &[&str]) -> Vec<VrfCheck> {
    vec![VrfCheck {
        location: "vrfs[0]".into(),
        forbidden_interfaces: interfaces.iter().map(|s| s.to_string()).collect(),
        forwarding: false,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

#[test]
fn forbidden_interfaces_generate_a_lookup_per_connected_prefix() {
    let mut kernel = RecordedKernel::faulty();
    let report = run(&mut kernel, &forbidden(&["vmbr0"]));
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via dev vmbr0 \
             (table main: fall-through), expected not dev vmbr0"
        ]
    );
    // The node's own address (10.20.99.2) is not the one looked up, and the lookup is
    // pinned to the VRF like a hand-written one.
    assert_eq!(kernel.asked, vec![(ip("10.20.99.1"), Some(VRF_INDEX))]);
    let generated = &report.checks[1];
    assert_eq!(generated.check, "lookup 10.20.99.1");
    assert_eq!(
        generated.expected,
        json!({"not_dev": "vmbr0", "table": 1001, "connected_prefix": "10.20.99.0/24"})
    );

    let mut kernel = RecordedKernel::routes_fixed();
    let report = run(&mut kernel, &forbidden(&["vmbr0"]));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[1].msg,
        "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via 10.20.50.1 \
         dev vmbr0.50 (table 1001)"
    );
}

#[test]
fn a_forbidden_interface_without_a_prefix_is_a_warning_and_an_unknown_one_an_error() {
    let mut kernel = RecordedKernel::routes_fixed();
    let report = run(&mut kernel, &forbidden(&["vmbr0.60"]));
    assert!(report.failures().is_empty());
    assert_eq!(
        report.checks.len(),
        1,
        "only the VRF check: no lookup generated"
    );
    assert_eq!(
        report.warnings(),
        vec![
            "vrf_tdemo: vmbr0.60 (in forbidden_interfaces) has no connected IPv4 prefix in the \
             main table, so no lookup was generated for it"
        ]
    );
    let error = assert_vrfs(&mut kernel, &Request::of(forbidden(&["vmbr0", "vmbr9"]))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "vrfs[0].forbidden_interfaces[1]: 'vmbr9' is no interface on this node; give the \
         interfaces tenant traffic must never leave by as ip link names them (such as the \
         management bridge vmbr0), or remove it"
    );
}
