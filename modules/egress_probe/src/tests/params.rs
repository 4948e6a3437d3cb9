use super::{params, target};
use crate::params::{Expect, Proto, Request, Target, TargetParams};
use std::net::Ipv4Addr;

fn refused(edit: impl FnOnce(&mut crate::params::Params)) -> String {
    let mut p = params(vec![target("203.0.113.8")]);
    edit(&mut p);
    Request::from_params(p).expect_err("must be refused")
}

#[test]
fn a_valid_request_is_parsed_with_its_defaults() {
    let mut udp = target("203.0.113.8");
    udp.proto = Proto::Udp;
    let request = Request::from_params(params(vec![target("203.0.113.8"), udp])).unwrap();
    assert_eq!(request.address.to_string(), "10.20.129.250/24");
    assert_eq!(
        request.targets[1],
        Target {
            address: Ipv4Addr::new(203, 0, 113, 8).into(),
            proto: Proto::Udp,
            port: Some(53),
            expect: Expect::Reply,
            size: None,
            peer: false,
            via: None,
        }
    );
    assert_eq!((request.count, request.timeout_secs), (3, 2));
}

#[test]
fn addresses_without_prefix_or_outside_unicast_are_refused() {
    for (address, words) in [
        ("10.20.129.250", "has no prefix length"),
        ("nonsense", "is not an address with prefix length"),
        ("2001:db8::5/127", "/127 prefix"),
        ("2001:db8::/64", "network address"),
        ("fe80::5/64", "link-local"),
        ("ff02::5/64", "multicast"),
        ("10.20.129.250/31", "/31 prefix"),
        ("10.20.129.0/24", "network address"),
        ("10.20.129.255/24", "broadcast address"),
        ("224.0.0.5/24", "multicast"),
        ("127.0.0.5/8", "loopback"),
    ] {
        let msg = refused(|p| p.address = address.into());
        assert!(msg.starts_with("address:"), "{msg}");
        assert!(msg.contains(words), "{address}: {msg}");
    }
}

/// Left out, `address` is named as missing with the fix, not as "'' is not an address".
#[test]
fn a_missing_address_is_named_with_its_fix() {
    let msg = refused(|p| p.address = String::new());
    assert_eq!(
        msg,
        "address is missing: the probe's workload needs its own address in the VNet; give address, \
         e.g. 10.20.129.250/24: an unused address in the tenant's subnet, with the subnet's prefix length"
    );
}

#[test]
fn targets_in_forbidden_ranges_are_refused() {
    for (address, words) in [
        ("255.255.255.255", "broadcast"),
        ("239.1.2.3", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("127.0.0.1", "loopback"),
        ("169.254.1.1", "link-local"),
        (
            "10.20.129.255",
            "broadcast address of the workload's subnet",
        ),
        ("10.20.129.250", "workload's own address"),
        ("example.org", "not an IP address"),
        (
            "2001:db8::8",
            "is IPv6 but address 10.20.129.250/24 is IPv4; one probe probes one family",
        ),
    ] {
        let msg = refused(|p| p.targets = vec![target(address)]);
        assert!(msg.starts_with("targets[0].address"), "{msg}");
        assert!(msg.contains(words), "{address}: {msg}");
    }
}

#[test]
fn ports_follow_the_protocol() {
    let with = |proto, port| {
        refused(|p| {
            p.targets = vec![TargetParams {
                address: "203.0.113.8".into(),
                proto,
                port,
                expect: Expect::Reply,
                size: None,
                peer: false,
                via: None,
            }]
        })
    };
    assert!(with(Proto::Icmp, Some(7)).contains("ICMP has no ports"));
    assert!(with(Proto::Tcp, None).contains("a tcp target needs the port"));
    assert!(with(Proto::Tcp, Some(0)).contains("0 is not a port"));
    assert!(with(Proto::Udp, Some(70000)).contains("70000 is not a port"));
}

#[test]
fn count_timeout_and_lists_are_bounded() {
    assert!(refused(|p| p.count = 0)
        .starts_with("count=0 is out of range; give a number of probes per target from 1 to 20"));
    assert!(refused(|p| p.count = 21).contains("1 to 20"));
    assert!(refused(|p| p.timeout = 31).starts_with(
        "timeout=31 is out of range; give a number of seconds per reply from 1 to 30"
    ));
    assert!(refused(|p| p.targets.clear()).starts_with("targets is empty"));
    let twice = refused(|p| p.targets = vec![target("203.0.113.8"), target("203.0.113.8")]);
    assert!(
        twice.contains("targets[1]: 203.0.113.8 icmp is listed twice"),
        "{twice}"
    );
}

#[test]
fn gateway_and_interfaces_are_checked() {
    assert!(refused(|p| p.gateway = Some("10.20.130.1".into()))
        .contains("not a host address of 10.20.129.0/24"));
    assert!(
        refused(|p| p.gateway = Some("10.20.129.250".into())).contains("workload's own address")
    );
    assert!(refused(|p| p.vnet = Some("a/b".into()))
        .starts_with("vnet: 'a/b' is not a valid interface name"));
    assert!(refused(|p| p.vrf = String::new()).starts_with("vrf is empty"));
    let both = refused(|p| p.forbidden_interfaces = Some(vec!["vmbr0".into(), "vmbr0.50".into()]));
    assert!(
        both.starts_with("forbidden_interfaces[1]: vmbr0.50 is also expect_egress_interface"),
        "{both}"
    );
}

#[test]
fn targets_are_capped_and_wait_together() {
    let many = |n: usize| -> Vec<crate::params::TargetParams> {
        (0..n)
            .map(|i| target(&format!("203.0.113.{}", i + 1)))
            .collect()
    };
    // The targets are probed at once: 32 of them with the largest count and timeout wait
    // 600 s, as one does.
    let mut p = params(many(32));
    p.count = 20;
    p.timeout = 30;
    assert!(
        Request::from_params(p).is_ok(),
        "32 targets wait 20 × 30 s together"
    );
    assert_eq!(
        refused(|p| p.targets = many(33)),
        "targets: 33 entries are more than the 32 one run probes; give at most 32, and split the \
         others over more egress_probe tasks (a run stays short and bounded)"
    );
}
