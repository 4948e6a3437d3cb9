//! FRR's JSON shapes across releases, and one vtysh run's output split per command.

use crate::frr;
use crate::node::split_answers;
use crate::params::AddressFamily;
use serde_json::json;
use std::path::Path;

#[test]
fn older_frr_spells_families_for_display_and_lists_vteps_under_num_remote_vteps() {
    let vrfs = frr::parse_neighbors(&json!({"default": {
        "vrfId": 0,
        "fd35:1:1:2::1": {"remoteAs": 1, "bgpState": "Established",
            "addressFamilyInfo": {"IPv6 Unicast": {"acceptedPrefixCounter": 2}},
            "neighborCapabilities": {"multiprotocolExtensions": {"ipv6Unicast": {"advertisedAndReceived": true}}}}
    }}))
    .unwrap();
    let neighbor = &vrfs["default"].neighbors[0];
    assert_eq!(neighbor.activated, [AddressFamily::Ipv6Unicast]);
    assert_eq!(neighbor.negotiated, [AddressFamily::Ipv6Unicast]);
    assert_eq!(neighbor.prefixes_received["ipv6_unicast"], 2);

    let vnis = frr::parse_vnis(&json!({"174374": {"vni": 174374, "type": "L2",
        "numRemoteVteps": ["10.0.0.13"], "tenantVrf": "default"}}))
    .unwrap();
    assert_eq!(
        vnis[0].remote_vteps,
        ["10.0.0.13".parse::<std::net::IpAddr>().unwrap()]
    );
    let vnis = frr::parse_vnis(&json!({"174374": {"vni": 174374, "type": "L2",
        "numRemoteVteps": 1, "remoteVteps": ["10.0.0.13"]}}))
    .unwrap();
    assert_eq!(vnis[0].remote_vteps.len(), 1);
    assert_eq!(frr::parse_vnis(&json!({})).unwrap(), []);
    assert!(frr::parse_vnis(&json!("x"))
        .unwrap_err()
        .contains("not VNIs"));
}

#[test]
fn a_warning_instead_of_routes_is_an_error_and_no_routes_key_is_none() {
    let err = frr::route_prefixes(
        &json!({"warning": "No such neighbor in this view/vrf"}),
        "routes",
        "show x",
    )
    .unwrap_err();
    assert_eq!(
        err,
        "`show x`: FRR answered: No such neighbor in this view/vrf"
    );
    assert_eq!(
        frr::route_prefixes(&json!({"bgpTableVersion": 1}), "advertisedRoutes", "show x").unwrap(),
        []
    );
}

#[test]
fn one_run_answers_one_json_value_per_command() {
    let vtysh = Path::new("/usr/bin/vtysh");
    let commands = ["show a json".to_string(), "show b json".to_string()];
    let values = split_answers(vtysh, &commands, b"{\"a\": 1}\n[\n]\n").unwrap();
    assert_eq!(values, [json!({"a": 1}), json!([])]);
    let err = split_answers(
        vtysh,
        &commands,
        b"{\"a\": 1}\n% Unknown command: show b json\n",
    )
    .unwrap_err();
    assert!(
        err.starts_with("vtysh: /usr/bin/vtysh did not print JSON for `show b json` ("),
        "{err}"
    );
    assert!(err.ends_with("'{\"a\": 1}\n% Unknown command: show b json'; is it FRR's vtysh, and does this FRR know these commands?"), "{err}");
    let err = split_answers(vtysh, &commands, b"{}").unwrap_err();
    assert!(
        err.starts_with("vtysh: /usr/bin/vtysh printed 1 JSON value(s) for 2 command(s)"),
        "{err}"
    );
}
