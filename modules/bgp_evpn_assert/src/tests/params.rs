use super::*;
use crate::params::{AddressFamily, Advertises, DefaultFamily};
use std::time::Duration;

#[test]
fn defaults_and_a_full_entry() {
    let request = request(full_request()).unwrap();
    assert_eq!(request.vtysh, std::path::PathBuf::from("/usr/bin/vtysh"));
    assert_eq!(request.timeout, Duration::from_secs(10));
    assert_eq!(request.settle_timeout, Duration::ZERO);
    assert_eq!(request.max_output_bytes, 16 * 1024 * 1024);
    let core = &request.peers[1];
    assert_eq!(core.location, "peers[1]");
    assert_eq!(core.remote_as, Some(CORE_AS));
    assert_eq!(
        core.address_families,
        [AddressFamily::Ipv4Unicast, AddressFamily::Ipv6Unicast]
    );
    assert_eq!(
        core.receives_default,
        [DefaultFamily::Ipv4, DefaultFamily::Ipv6]
    );
    assert_eq!(core.advertises, Advertises::AggregatesOnly);
    assert_eq!(request.peers[0].vrf, "default");
    assert_eq!(request.peers[0].advertises, Advertises::Any);
    assert_eq!(
        request.vnis[1].remote_vteps,
        Some(vec![
            "fd00:51::22".parse().unwrap(),
            "fd00:51::23".parse().unwrap()
        ])
    );
}

#[test]
fn bad_input_is_refused_naming_the_option_the_value_and_the_fix() {
    for (args, message) in [
        (json!({}), "peers and vnis are both empty: there is nothing to assert; give at least one peer (peers: [{peer: NAME}]) or one VNI (vnis: [{vni: N}])"),
        (json!({"vtysh": "vtysh", "vnis": [{"vni": 1}]}), "vtysh: 'vtysh' is not an absolute path; give the full path of FRR's vtysh, e.g. /usr/bin/vtysh"),
        (json!({"timeout": 0, "vnis": [{"vni": 1}]}), "timeout=0 is out of range; give a number of seconds from 1 to 600"),
        (json!({"max_output_bytes": 10, "vnis": [{"vni": 1}]}), "max_output_bytes=10 is out of range; give a number of bytes from 4096 to 1073741824 (4 KiB to 1 GiB: one vtysh run's output)"),
        (json!({"peers": [{"peer": "swp1 json"}]}), "peers[0].peer: 'swp1 json' is not a name FRR could show (letters, digits, '.', '_', '-', ':', at most 64); give an interface (swp1), an address (10.20.50.1, fe80::1) or a peer group (bgpv6)"),
        (json!({"peers": [{"peer": "swp1", "vrf": ""}]}), "peers[0].vrf: '' is not a name FRR could show (letters, digits, '.', '_', '-', ':', at most 64); give a VRF name (vrf_tdemo) or default"),
        (json!({"peers": [{"peer": "swp1", "remote_as": 0}]}), "peers[0].remote_as=0 is out of range; give an AS number from 1 to 4294967295"),
        (json!({"peers": [{"peer": "swp1"}, {"peer": "swp1", "vrf": "default"}]}), "peers[1].peer: 'swp1' in VRF default is listed twice; list each peer once per VRF"),
        (json!({"vnis": [{"vni": 16777216}]}), "vnis[0].vni=16777216 is out of range; give a VNI from 1 to 16777215"),
        (json!({"vnis": [{"vni": 5}, {"vni": 5}]}), "vnis[1].vni: 5 is listed twice; list each VNI once"),
        (json!({"vnis": [{"vni": 5, "remote_vteps": ["hv02"]}]}), "vnis[0].remote_vteps: 'hv02' is not an IP address; give each remote VTEP's address, e.g. 10.20.51.21 or fd00:51::21"),
    ] {
        assert_eq!(request(args.clone()).unwrap_err(), message, "{args}");
    }
    let err =
        request(json!({"peers": [{"peer": "swp1", "address_families": ["ipv4"]}]})).unwrap_err();
    assert!(
        err.contains("ipv4_unicast, ipv6_unicast, l2vpn_evpn"),
        "{err}"
    );
    let err = request(json!({"peers": [{"peer": "swp1", "advertises": "none"}]})).unwrap_err();
    assert!(err.contains("aggregates_only, any"), "{err}");
}
