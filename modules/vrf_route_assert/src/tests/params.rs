//! The options and the request they make: each bad value refused naming its key, the
//! short form and `vrfs` entries, the default VRF, and the choices the spec declares.

use crate::params::*;
use deevnet_runtime::netlink::Family;
use deevnet_runtime::CheckModeFindings;
use std::net::IpAddr;
use std::time::Duration;

fn params() -> Params {
    Params {
        vrfs: None,
        vrf: None,
        dst: None,
        src: None,
        iif: None,
        via: None,
        dev: None,
        not_dev: None,
        table: None,
        reachable: None,
        snat_src: None,
        default_via: None,
        default_dev: None,
        forwarding: None,
        no_fall_through: None,
        undeclared_vrfs: UndeclaredVrfs::Ignore,
        settle_timeout: 0,
        check_mode_findings: CheckModeFindings::Fail,
    }
}

fn lookup(dst: &str) -> LookupParams {
    LookupParams {
        dst: dst.into(),
        src: None,
        iif: None,
        via: None,
        dev: None,
        not_dev: None,
        table: None,
        reachable: None,
        snat_src: None,
    }
}

fn entry(name: &str, lookups: Vec<LookupParams>) -> VrfParams {
    VrfParams {
        name: name.into(),
        default_via: None,
        default_dev: None,
        ipv6_default_via: None,
        ipv6_default_dev: None,
        lookups,
        forwarding: None,
        no_fall_through: false,
        forbidden_interfaces: Vec::new(),
        asymmetric_returns: false,
        l3vni_bridge: None,
    }
}

fn checks_of(vrfs: Vec<VrfParams>) -> Result<Vec<VrfCheck>, String> {
    Request::from_params(Params {
        vrfs: Some(vrfs),
        ..params()
    })
    .map(|plan| plan.vrfs)
}

fn error_of(vrfs: Vec<VrfParams>) -> String {
    checks_of(vrfs).unwrap_err()
}

/// The message the arguments are refused with.
fn refused(given: Params) -> String {
    Request::from_params(given).unwrap_err()
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn the_short_form_is_one_vrf_with_one_lookup() {
    let plan = Request::from_params(Params {
        vrf: Some("vrf_tdemo".into()),
        dst: Some("10.20.99.5".into()),
        dev: Some("vmbr0.50".into()),
        not_dev: Some("vmbr0".into()),
        table: Some("1001".into()),
        no_fall_through: Some(true),
        ..params()
    })
    .unwrap();
    assert_eq!(
        plan.vrfs,
        vec![VrfCheck {
            lookups: vec![LookupCheck {
                dev: Some("vmbr0.50".into()),
                not_dev: Some("vmbr0".into()),
                table: Some(ExpectedTable::Id(1001)),
                ..LookupCheck::of(ip("10.20.99.5"))
            }],
            no_fall_through: true,
            ..VrfCheck::new("vrf_tdemo")
        }]
    );
    assert_eq!(plan.undeclared_vrfs, UndeclaredVrfs::Ignore);
    assert_eq!(plan.settle_timeout, Duration::ZERO);
}

#[test]
fn short_form_errors_name_the_top_level_key() {
    let error = Request::from_params(Params {
        vrf: Some("vrf_tdemo".into()),
        dst: Some("10.20.99.300".into()),
        ..params()
    })
    .unwrap_err();
    assert!(
        error.starts_with("dst: '10.20.99.300' is not an IP address;"),
        "{error}"
    );
    let error = Request::from_params(Params {
        vrf: Some("vrf_tdemo_is_too_long".into()),
        ..params()
    })
    .unwrap_err();
    assert!(
        error.starts_with("vrf: 'vrf_tdemo_is_too_long' is not a valid interface name"),
        "{error}"
    );
    let error = Request::from_params(Params {
        vrf: Some("vrf_tdemo".into()),
        dev: Some("vmbr0.50".into()),
        ..params()
    })
    .unwrap_err();
    assert!(error.starts_with("dev needs dst"), "{error}");
}

#[test]
fn vrf_and_vrfs_together_or_neither_are_refused() {
    let error = Request::from_params(Params {
        vrf: Some("a".into()),
        vrfs: Some(vec![]),
        ..params()
    })
    .unwrap_err();
    assert!(error.starts_with("vrf and vrfs are mutually exclusive"));
    assert!(Request::from_params(params())
        .unwrap_err()
        .starts_with("nothing to check"));
    for key in ["dst", "no_fall_through"] {
        let mut given = Params {
            vrfs: Some(vec![entry("a", vec![])]),
            ..params()
        };
        match key {
            "dst" => given.dst = Some("10.0.0.1".into()),
            _ => given.no_fall_through = Some(true),
        }
        let error = Request::from_params(given).unwrap_err();
        let inside = if key == "dst" {
            "vrfs[].lookups[].dst"
        } else {
            "vrfs[].no_fall_through"
        };
        assert!(error.contains(inside), "{error}");
    }
}

#[test]
fn undeclared_vrfs_alone_inspects_the_node() {
    let plan = Request::from_params(Params {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        settle_timeout: 30,
        ..params()
    })
    .unwrap();
    assert!(plan.vrfs.is_empty());
    assert_eq!(plan.undeclared_vrfs, UndeclaredVrfs::Fail);
    assert_eq!(plan.settle_timeout, Duration::from_secs(30));
}

#[test]
fn settle_timeout_out_of_range_is_refused() {
    for seconds in [-1, 601] {
        let error = Request::from_params(Params {
            vrf: Some("a".into()),
            settle_timeout: seconds,
            ..params()
        })
        .unwrap_err();
        assert_eq!(
            error,
            format!(
                "settle_timeout={seconds} is out of range; give a number of seconds from 0 to \
                 600 (0: check once)"
            )
        );
    }
}

#[test]
fn list_errors_name_the_entry() {
    let mut bad_table = lookup("10.0.0.1");
    bad_table.table = Some("mian".into());
    let error = error_of(vec![
        entry("a", vec![]),
        entry("b", vec![lookup("10.0.0.1"), bad_table]),
    ]);
    assert_eq!(
        error,
        "vrfs[1].lookups[1].table: 'mian' is not a routing table; give main, local, default \
         or a table number from 1 to 4294967295, such as 1001, or any to accept an answer from \
         any table"
    );
    let error = error_of(vec![entry("a", vec![lookup("10.20.99.0/24")])]);
    assert!(
        error.starts_with("vrfs[0].lookups[0].dst: '10.20.99.0/24' is a prefix;"),
        "{error}"
    );
    let error = error_of(vec![entry("a", vec![]), entry("a", vec![])]);
    assert!(
        error.starts_with("vrfs[1].name: a is declared twice"),
        "{error}"
    );
    let mut bad_dev = entry("a", vec![]);
    bad_dev.default_dev = Some("vmbr0:1".into());
    let error = error_of(vec![bad_dev]);
    assert!(
        error.starts_with("vrfs[0].default_dev: 'vmbr0:1'"),
        "{error}"
    );
}

#[test]
fn ipv6_defaults_are_their_own_expectation_and_make_the_entry_check_ipv6() {
    let mut both = entry("vrf_tdemo", vec![]);
    both.default_via = Some("10.20.50.1".into());
    both.ipv6_default_via = Some("fe80::1".into());
    both.ipv6_default_dev = Some("vmbr0.50".into());
    let check = checks_of(vec![both]).unwrap().remove(0);
    assert_eq!(
        check.defaults,
        vec![
            DefaultExpectation {
                family: Family::V4,
                via: Some(ip("10.20.50.1")),
                dev: None
            },
            DefaultExpectation {
                family: Family::V6,
                via: Some(ip("fe80::1")),
                dev: Some("vmbr0.50".into())
            },
        ]
    );
    assert!(check.ipv6);
    assert_eq!(check.families(), vec![Family::V4, Family::V6]);

    let v4_only = checks_of(vec![entry("a", vec![lookup("10.0.0.1")])]).unwrap();
    assert!(!v4_only[0].ipv6);
    let v6_lookup = checks_of(vec![entry("a", vec![lookup("2001:db8::1")])]).unwrap();
    assert!(v6_lookup[0].ipv6, "an IPv6 destination checks IPv6");

    let mut v4_as_v6 = entry("a", vec![]);
    v4_as_v6.ipv6_default_via = Some("10.20.50.1".into());
    assert!(error_of(vec![v4_as_v6]).starts_with(
        "vrfs[0].ipv6_default_via: '10.20.50.1' is an IPv4 address; give the IPv6 gateway"
    ));
    let mut twice = entry("a", vec![]);
    twice.default_via = Some("fd00::1".into());
    twice.ipv6_default_dev = Some("vmbr0.50".into());
    assert!(error_of(vec![twice])
        .starts_with("vrfs[0].default_via: 'fd00::1' is an IPv6 gateway, and the IPv6 default"));
}

#[test]
fn forbidden_interfaces_are_checked_names_given_once_and_never_an_expected_exit() {
    let mut good = entry("a", vec![]);
    good.forbidden_interfaces = vec!["vmbr0".into(), "vmbr0.60".into()];
    assert_eq!(
        checks_of(vec![good]).unwrap()[0].forbidden_interfaces,
        ["vmbr0", "vmbr0.60"]
    );
    let mut bad_name = entry("a", vec![]);
    bad_name.forbidden_interfaces = vec!["vmbr0".into(), "vmbr0:mgmt".into()];
    assert!(error_of(vec![bad_name])
        .starts_with("vrfs[0].forbidden_interfaces[1]: 'vmbr0:mgmt' is not a valid interface"));
    let mut twice = entry("a", vec![]);
    twice.forbidden_interfaces = vec!["vmbr0".into(), "vmbr0".into()];
    assert_eq!(
        error_of(vec![twice]),
        "vrfs[0].forbidden_interfaces[1]: vmbr0 is listed twice; list each interface once"
    );
    let mut exit = entry("a", vec![]);
    exit.default_dev = Some("vmbr0.50".into());
    exit.forbidden_interfaces = vec!["vmbr0.50".into()];
    assert_eq!(
        error_of(vec![exit]),
        "vrfs[0].forbidden_interfaces[0]: vmbr0.50 is also a default_dev of this entry: tenant \
         traffic cannot both leave by it and never leave by it; remove it from one of them"
    );
}

#[test]
fn the_default_vrf_asserts_its_defaults_and_refuses_tenant_checks() {
    let check = checks_of(vec![entry("default", vec![lookup("2001:db8::1")])])
        .unwrap()
        .remove(0);
    assert!(check.is_default_vrf());
    assert!(!check.forwarding, "the node's own traffic is not forwarded");
    assert_eq!(
        check.defaults,
        vec![
            DefaultExpectation {
                family: Family::V4,
                via: None,
                dev: None
            },
            DefaultExpectation {
                family: Family::V6,
                via: None,
                dev: None
            },
        ],
        "the IPv4 default, and the IPv6 one since the entry checks IPv6"
    );
    let mut v6_dev = entry("default", vec![]);
    v6_dev.ipv6_default_dev = Some("nic5".into());
    assert_eq!(
        checks_of(vec![v6_dev]).unwrap()[0].defaults[1]
            .dev
            .as_deref(),
        Some("nic5")
    );

    let refused = |edit: fn(&mut VrfParams)| {
        let mut given = entry("default", vec![]);
        edit(&mut given);
        error_of(vec![given])
    };
    assert!(refused(|e| e.no_fall_through = true).starts_with(
        "vrfs[0].no_fall_through: not for the default VRF (default is the main table): the \
         default VRF is the main table, where the lookups of other VRFs fall through to"
    ));
    assert!(refused(|e| e.forbidden_interfaces = vec!["vmbr0".into()])
        .starts_with("vrfs[0].forbidden_interfaces: not for the default VRF"));
    let forwarding = refused(|e| e.forwarding = Some(true));
    assert!(
        forwarding.starts_with("vrfs[0].forwarding: not for the default VRF")
            && forwarding.ends_with("remove forwarding from this entry"),
        "{forwarding}"
    );
    assert!(refused(|e| e.asymmetric_returns = true)
        .starts_with("vrfs[0].asymmetric_returns: not for the default VRF"));
    let mut quiet = entry("default", vec![]);
    quiet.forwarding = Some(false);
    assert!(
        checks_of(vec![quiet]).is_ok(),
        "forwarding=false says what holds anyway"
    );
}

#[test]
fn tables_by_name_or_number() {
    assert_eq!(table("t", "main"), Ok(ExpectedTable::Id(254)));
    assert_eq!(table("t", " 1001 "), Ok(ExpectedTable::Id(1001)));
    assert_eq!(table("t", "any"), Ok(ExpectedTable::Any));
    assert!(table("t", "0").is_err());
    assert_eq!(
        address("x", " fd00::1 "),
        Ok("fd00::1".parse::<IpAddr>().unwrap())
    );
}

/// `undeclared_vrfs` was a String whose `_ => Ignore` arm took any word for `ignore`; now the
/// enum's words are the SPEC's choices and the only words it reads.
#[test]
fn undeclared_vrfs_reads_exactly_the_choices_the_spec_declares() {
    let option = SPEC.iter().find(|o| o.name == "undeclared_vrfs").unwrap();
    assert_eq!(option.choices, UndeclaredVrfs::CHOICES);
    for word in UndeclaredVrfs::CHOICES {
        let params: Params = serde_json::from_value(
            serde_json::json!({"undeclared_vrfs": word, "settle_timeout": 0, "check_mode_findings": "fail"}),
        )
        .unwrap();
        assert_eq!(params.undeclared_vrfs.as_str(), *word);
    }
    let typo = serde_json::from_value::<Params>(
        serde_json::json!({"undeclared_vrfs": "fial", "settle_timeout": 0, "check_mode_findings": "fail"}),
    );
    assert!(typo.is_err(), "a typo must not read as ignore");
}

#[test]
fn l3vni_bridge_is_an_interface_name_checked_with_asymmetric_returns_only() {
    let mut given = entry("vrf_tdemo", vec![]);
    given.l3vni_bridge = Some("vrfbr_tdemo".into());
    assert_eq!(
        error_of(vec![given]),
        "vrfs[0].l3vni_bridge: vrfbr_tdemo is checked only with asymmetric_returns (its \
         rp_filter must let in the returns other nodes deliver); set asymmetric_returns: true \
         in this entry, or remove l3vni_bridge"
    );
    let mut given = entry("vrf_tdemo", vec![]);
    given.asymmetric_returns = true;
    given.l3vni_bridge = Some("vrfbr_a_name_too_long".into());
    assert!(error_of(vec![given]).starts_with("vrfs[0].l3vni_bridge: "));
    let mut given = entry("vrf_tdemo", vec![]);
    given.asymmetric_returns = true;
    given.l3vni_bridge = Some("vrfbr_tdemo".into());
    let checks = checks_of(vec![given]).unwrap();
    assert_eq!(checks[0].l3vni_bridge.as_deref(), Some("vrfbr_tdemo"));
}

#[test]
fn src_and_iif_make_an_input_lookup_in_an_entry_and_in_the_short_form() {
    let mut given = lookup("192.0.2.11");
    given.src = Some("203.0.113.8".into());
    given.iif = Some("nic5".into());
    given.table = Some("any".into());
    let checks = checks_of(vec![entry("default", vec![given])]).unwrap();
    assert_eq!(
        checks[0].lookups,
        vec![LookupCheck {
            src: Some(ip("203.0.113.8")),
            iif: Some("nic5".into()),
            table: Some(ExpectedTable::Any),
            ..LookupCheck::of(ip("192.0.2.11"))
        }]
    );
    let plan = Request::from_params(Params {
        vrf: Some("default".into()),
        dst: Some("192.0.2.11".into()),
        src: Some("203.0.113.8".into()),
        iif: Some("nic5".into()),
        ..params()
    })
    .unwrap();
    assert_eq!(plan.vrfs[0].lookups[0].iif.as_deref(), Some("nic5"));
}

#[test]
fn src_of_the_other_family_is_refused_naming_the_key_and_both_addresses() {
    let mut given = lookup("192.0.2.11");
    given.src = Some("2001:db8::8".into());
    assert_eq!(
        error_of(vec![entry("default", vec![lookup("10.0.0.1"), given])]),
        "vrfs[0].lookups[1].src: '2001:db8::8' is an IPv6 address and dst 192.0.2.11 is IPv4; \
         give a source of dst's family (a packet has both of one family)"
    );
    let error = refused(Params {
        vrf: Some("default".into()),
        dst: Some("2001:db8::11".into()),
        src: Some("203.0.113.8".into()),
        ..params()
    });
    assert!(
        error.starts_with("src: '203.0.113.8' is an IPv4 address and dst 2001:db8::11 is IPv6;"),
        "{error}"
    );
}

#[test]
fn iif_needs_src_and_a_valid_interface_name() {
    let mut given = lookup("192.0.2.11");
    given.iif = Some("nic5".into());
    assert_eq!(
        error_of(vec![entry("default", vec![given])]),
        "vrfs[0].lookups[0].iif: nic5 needs src: a packet that arrives by an interface has a \
         source, and the kernel checks it (rp_filter) before it forwards the packet (without \
         one it refuses the lookup); add src, the packet's source address (for a return, the \
         address that answers, such as 203.0.113.8)"
    );
    let mut given = lookup("192.0.2.11");
    given.src = Some("203.0.113.8".into());
    given.iif = Some("uplink-nic5-to-core".into());
    let error = error_of(vec![entry("default", vec![given])]);
    assert!(
        error.starts_with(
            "vrfs[0].lookups[0].iif: 'uplink-nic5-to-core' is not a valid interface name"
        ),
        "{error}"
    );
    let error = refused(Params {
        vrf: Some("default".into()),
        iif: Some("nic5".into()),
        ..params()
    });
    assert!(
        error.starts_with(
            "iif needs dst: it is the packet whose destination dst is (its source, the \
             interface it arrives by); add dst=ADDRESS"
        ),
        "{error}"
    );
    let error = refused(Params {
        vrfs: Some(vec![entry("default", vec![])]),
        src: Some("203.0.113.8".into()),
        ..params()
    });
    assert!(error.contains("vrfs[].lookups[].src"), "{error}");
}

#[test]
fn snat_src_is_one_ipv4_address_for_an_ipv4_destination() {
    let with = |dst: &str, snat_src: &str| LookupParams {
        snat_src: Some(snat_src.into()),
        ..lookup(dst)
    };
    let checks = checks_of(vec![entry(
        "vrf_tdemo",
        vec![with("203.0.113.8", " 10.20.129.250 ")],
    )])
    .unwrap();
    assert_eq!(
        checks[0].lookups[0].snat_src,
        Some("10.20.129.250".parse().unwrap())
    );
    let cases = [
        (
            with("203.0.113.8", "2001:db8::5"),
            "vrfs[0].lookups[0].snat_src: '2001:db8::5' is an IPv6 address; the prediction \
             walks the IPv4 NAT chains",
        ),
        (
            with("2001:db8::1", "10.20.129.250"),
            "vrfs[0].lookups[0].snat_src: '10.20.129.250' is an IPv4 address and dst \
             2001:db8::1 is IPv6",
        ),
        (
            with("203.0.113.8", "10.20.129.0/24"),
            "vrfs[0].lookups[0].snat_src: '10.20.129.0/24' is a prefix; give one address",
        ),
        (
            with("203.0.113.8", "workload"),
            "vrfs[0].lookups[0].snat_src: 'workload' is not an IP address",
        ),
    ];
    for (lookup, words) in cases {
        let error = error_of(vec![entry("vrf_tdemo", vec![lookup])]);
        assert!(error.starts_with(words), "{error}");
    }
    let error = refused(Params {
        vrf: Some("vrf_tdemo".into()),
        snat_src: Some("10.20.129.250".into()),
        ..params()
    });
    assert!(
        error.starts_with(
            "snat_src needs dst: it is the workload whose packets to dst take the answer's device"
        ),
        "{error}"
    );
}
