use super::*;
use crate::report::DefaultReceived;

fn neighbors(fake: &FakeVtysh) -> Value {
    fake.answers[NEIGHBORS].clone()
}

fn set_neighbor(fake: &mut FakeVtysh, vrf: &str, name: &str, value: Value) {
    let mut all = neighbors(fake);
    all[vrf][name] = value;
    fake.answer(NEIGHBORS, all);
}

#[test]
fn a_healthy_node_passes_every_check_in_two_vtysh_runs() {
    let mut fake = node();
    let report = assert_on(&mut fake, full_request()).unwrap();
    assert_eq!(lines(&report), Vec::<String>::new());
    let names: Vec<&str> = report.peers.iter().map(|p| p.peer.as_str()).collect();
    assert_eq!(names, ["ens19", "ens20", CORE]);
    let core = &report.peers[2];
    assert_eq!(core.state, "Established");
    assert_eq!(core.remote_as, Some(CORE_AS));
    assert_eq!(core.local_as, Some(CORE_LOCAL_AS));
    assert_eq!(core.address_families, ["ipv4_unicast", "ipv6_unicast"]);
    assert_eq!(
        core.default_received,
        DefaultReceived {
            ipv4: Some(true),
            ipv6: Some(true)
        }
    );
    assert_eq!(core.advertised_host_routes, Some(vec![]));
    assert_eq!(core.advertised_default, Some(false));
    assert_eq!(report.peers[0].peer_group.as_deref(), Some("bgpv6"));
    assert_eq!(report.peers[0].advertised_default, None);
    assert_eq!(report.vnis[0].kind.as_deref(), Some("L2"));
    assert_eq!(report.vnis[1].remote_vteps, ["fd00:51::22", "fd00:51::23"]);
    // One run for the state, one for the core's routes: four commands per family pair.
    assert_eq!(fake.runs.len(), 2, "{:?}", fake.runs);
    assert_eq!(fake.runs[0], [NEIGHBORS, SUMMARY, VNIS, NEXT_HOPS]);
    assert_eq!(fake.runs[1].len(), 4, "{:?}", fake.runs[1]);
    assert!(fake.runs[1]
        .iter()
        .all(|c| c.contains(&format!("vrf {TENANT_VRF} ")) && c.contains(CORE)));
}

#[test]
fn without_route_checks_there_is_one_run_and_no_vni_commands_without_vnis() {
    let mut fake = node();
    let report = assert_on(&mut fake, json!({"peers": [{"peer": "bgpv6"}]})).unwrap();
    assert!(report.findings.is_empty());
    assert_eq!(fake.runs, [[NEIGHBORS, SUMMARY]]);
    let mut fake = node();
    assert_on(&mut fake, json!({"vnis": [{"vni": 10100}]})).unwrap();
    assert_eq!(fake.runs, [[VNIS, NEXT_HOPS]]);
}

#[test]
fn a_peer_group_is_each_of_its_members_and_a_member_down_is_named() {
    let mut fake = node();
    set_neighbor(
        &mut fake,
        "default",
        "ens20",
        neighbor("Active", 0, Some("bgpv6"), &[]),
    );
    let report = assert_on(
        &mut fake,
        json!({"peers": [{"peer": "bgpv6", "address_families": ["ipv6_unicast"]}]}),
    )
    .unwrap();
    assert_eq!(report.peers.len(), 2);
    assert_eq!(
        lines(&report),
        ["peer ens20 in VRF default, member of peer group bgpv6: expected the session Established, found state Active; no BGP connection: bgpv6 does not answer on TCP port 179 (Active); check the link and addresses, and that bgpv6 has this node configured as its neighbor"]
    );
}

#[test]
fn the_core_announcing_the_base_as_is_named_in_the_reports_words() {
    let mut fake = node();
    let mut core = neighbor("Idle", 0, None, &[]);
    core["lastResetDueTo"] = json!("BGP Notification send");
    core["lastErrorCodeSubcode"] = json!("0202");
    core["lastNotificationReason"] = json!("OPEN Message Error/Bad Peer AS");
    core["localAs"] = json!(CORE_LOCAL_AS);
    set_neighbor(&mut fake, TENANT_VRF, CORE, core.clone());
    let args = json!({"peers": [{"peer": CORE, "vrf": TENANT_VRF}]});
    let report = assert_on(&mut fake, args).unwrap();
    let finding = &report.findings[0];
    assert_eq!(finding.object, format!("peer {CORE} in VRF {TENANT_VRF}"));
    assert_eq!(
        finding.found,
        "state Idle; last notification: OPEN Message Error/Bad Peer AS (code/subcode 0202); last reset: BGP Notification send"
    );
    assert_eq!(
        finding.fix,
        format!("{CORE} announces an AS this node refuses (bad peer AS), most likely AS 45689, this node's base AS (or 65021, its local-as), which `remote-as external` refuses: give {CORE} an AS of its own; or an AS other than `neighbor {CORE} remote-as` under `router bgp 45689 vrf {TENANT_VRF}` names: make the two agree")
    );
    assert_eq!(
        report.peers[0].last_notification.as_deref(),
        Some("OPEN Message Error/Bad Peer AS")
    );

    // When the plan says which AS the core has, and it is the base AS: said as it is.
    let args = json!({"peers": [{"peer": CORE, "vrf": TENANT_VRF, "remote_as": BASE_AS}]});
    let report = assert_on(&mut fake, args).unwrap();
    assert_eq!(
        report.findings[0].fix,
        format!("{CORE} announces AS 45689, this node's base AS: give {CORE} an AS of its own")
    );
    // Received, not sent: the peer refused this node's AS.
    core["lastResetDueTo"] = json!("BGP Notification received");
    set_neighbor(&mut fake, TENANT_VRF, CORE, core);
    let report = assert_on(
        &mut fake,
        json!({"peers": [{"peer": CORE, "vrf": TENANT_VRF}]}),
    )
    .unwrap();
    assert!(
        report.findings[0].fix.starts_with(&format!(
            "{CORE} refuses AS 65021, the AS this node announces to it (bad peer AS, notification received)"
        )),
        "{}",
        report.findings[0].fix
    );
}

#[test]
fn other_reasons_for_a_session_down_are_put_in_words() {
    for (notification, words) in [
        (
            "Hold Timer Expired",
            "the session timed out (hold timer expired)",
        ),
        ("Cease/Administrative Shutdown", "shut down by an operator"),
        (
            "Cease/Other Configuration Change",
            "FRR's last notification says why: Cease/Other Configuration Change",
        ),
    ] {
        let mut fake = node();
        let mut core = neighbor("Active", CORE_AS, None, &[]);
        core["lastNotificationReason"] = json!(notification);
        set_neighbor(&mut fake, TENANT_VRF, CORE, core);
        let report = assert_on(
            &mut fake,
            json!({"peers": [{"peer": CORE, "vrf": TENANT_VRF}]}),
        )
        .unwrap();
        assert!(
            report.findings[0].fix.contains(words),
            "{}",
            report.findings[0].fix
        );
    }
}

#[test]
fn a_remote_as_other_than_the_plans_is_a_finding() {
    let mut fake = node();
    let args = json!({"peers": [{"peer": CORE, "vrf": TENANT_VRF, "remote_as": 65200}]});
    let report = assert_on(&mut fake, args).unwrap();
    assert_eq!(
        lines(&report),
        [format!("peer {CORE} in VRF {TENANT_VRF}: expected remote AS 65200, found remote AS 65100; the peer announces another AS than the plan's: set the plan's remote_as to the peer's AS, or give the peer AS 65200 (and `neighbor {CORE} remote-as 65200` under `router bgp 45689 vrf {TENANT_VRF}`)")]
    );
}

#[test]
fn ipv4_missing_on_an_ipv6_only_fabric_is_the_activation_fault_with_its_stanza() {
    let args = |ipv6_only: bool| {
        json!({"fabric_ipv6_only": ipv6_only,
               "peers": [{"peer": "bgpv6", "address_families": ["ipv4_unicast", "ipv6_unicast"]}]})
    };
    let mut fake = node();
    let report = assert_on(&mut fake, args(true)).unwrap();
    assert_eq!(report.findings.len(), 2, "one per member");
    assert_eq!(
        report.findings[0].line(),
        "peer ens19 in VRF default, member of peer group bgpv6: expected address family ipv4_unicast negotiated, found IPv4 unicast not activated: the activation fault of an IPv6-only fabric (IPv6 defaults arrive, IPv4 ones do not: FRR activates IPv4 only by default on IPv4 sessions); add `neighbor bgpv6 activate` under `address-family ipv4 unicast` of `router bgp 45689`"
    );
    let report = assert_on(&mut fake, args(false)).unwrap();
    assert_eq!(
        report.findings[0].found,
        "ipv4_unicast not activated on this node"
    );
    assert_eq!(
        report.findings[0].fix,
        "add `neighbor bgpv6 activate` under `address-family ipv4 unicast` of `router bgp 45689`"
    );
}

#[test]
fn a_family_activated_here_but_not_by_the_peer_is_the_peers_to_fix() {
    let mut fake = node();
    let mut core = neighbor("Established", CORE_AS, None, &["ipv6Unicast"]);
    core["addressFamilyInfo"]["ipv4Unicast"] = json!({"acceptedPrefixCounter": 0});
    set_neighbor(&mut fake, TENANT_VRF, CORE, core);
    let args = json!({"peers": [{"peer": CORE, "vrf": TENANT_VRF, "address_families": ["ipv4_unicast", "ipv6_unicast"], "receives_default": ["ipv4", "ipv6"]}]});
    let report = assert_on(&mut fake, args).unwrap();
    assert_eq!(report.findings.len(), 2, "{:#?}", report.findings);
    assert_eq!(
        report.findings[0].found,
        "ipv4_unicast activated on this node but not negotiated: the peer does not activate it"
    );
    // The IPv4 default cannot arrive either: said, and not asked of FRR.
    assert_eq!(
        report.findings[1].expected,
        "the default 0.0.0.0/0 received"
    );
    assert_eq!(
        report.findings[1].found,
        "no ipv4 route at all: ipv4_unicast is not negotiated"
    );
    assert_eq!(
        report.peers[0].default_received,
        DefaultReceived {
            ipv4: Some(false),
            ipv6: Some(true)
        }
    );
    assert!(
        fake.runs[1].iter().all(|c| c.contains("ipv6 unicast")),
        "{:?}",
        fake.runs
    );
}

#[test]
fn the_default_is_checked_per_family() {
    let mut fake = node();
    core_routes(
        &mut fake,
        &["203.0.113.0/24"],
        &["::/0", "2001:db8:ffff::/48"],
    );
    let report = assert_on(&mut fake, full_request()).unwrap();
    assert_eq!(
        lines(&report),
        [format!("peer {CORE} in VRF {TENANT_VRF}: expected the default 0.0.0.0/0 received, found no 0.0.0.0/0 among the 3 ipv4 prefixes accepted from it; have {CORE} send a default (`default-originate` toward this node), and check this node's inbound route-map or prefix-list for {CORE} under `address-family ipv4 unicast`")]
    );
    let core = report.peers.iter().find(|p| p.peer == CORE).unwrap();
    assert_eq!(
        core.default_received,
        DefaultReceived {
            ipv4: Some(false),
            ipv6: Some(true)
        }
    );

    let mut fake = node();
    core_routes(&mut fake, &["0.0.0.0/0"], &["2001:db8:ffff::/48"]);
    let report = assert_on(&mut fake, full_request()).unwrap();
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].expected, "the default ::/0 received");
}

#[test]
fn host_routes_and_the_default_advertised_to_the_core_are_named() {
    let mut fake = node();
    core_advertised(
        &mut fake,
        &["10.20.128.0/20", "10.20.129.5/32", "0.0.0.0/0"],
        &["2001:db8:128::/48", "2001:db8:128::5/128", "::/0"],
    );
    let report = assert_on(&mut fake, full_request()).unwrap();
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        finding.expected,
        "only aggregates advertised (no /32, no /128, no default)"
    );
    assert_eq!(
        finding.found,
        "advertised: 10.20.129.5/32, 2001:db8:128::5/128, 0.0.0.0/0, ::/0"
    );
    assert!(finding.fix.contains(&format!("`neighbor {CORE} route-map <NAME> out` under both `address-family ipv4 unicast` and `address-family ipv6 unicast`")), "{}", finding.fix);
    let core = report.peers.iter().find(|p| p.peer == CORE).unwrap();
    assert_eq!(
        core.advertised_host_routes,
        Some(vec![
            "10.20.129.5/32".to_string(),
            "2001:db8:128::5/128".to_string()
        ])
    );
    assert_eq!(core.advertised_default, Some(true));
}

#[test]
fn a_missing_vni_and_a_wrong_vtep_set_are_findings() {
    let mut fake = node();
    let args = json!({"vnis": [
        {"vni": 10200},
        {"vni": 10100, "remote_vteps": ["fd00:51::22", "fd00:51::24"]},
        {"vni": 4001, "remote_vteps": ["fd00:51::22", "fd00:51::23"]}
    ]});
    let report = assert_on(&mut fake, args).unwrap();
    let lines = lines(&report);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with("VNI 10200: expected present in FRR's EVPN, found absent (FRR's VNIs: 4001, 10100); the node lacks the VXLAN device of VNI 10200"), "{}", lines[0]);
    // The reload it asks for is the collection's one advice, whole and last.
    let reload = deevnet_runtime::advice::reload_interfaces(deevnet_runtime::advice::THIS_NODE);
    assert!(
        lines[0].ends_with(&format!("then reload the node's network: {reload}")),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "VNI 10100: expected remote VTEPs fd00:51::22, fd00:51::24, found remote VTEPs fd00:51::22, fd00:51::23; fd00:51::24 missing: check that those nodes have VNI 10100 and their EVPN session with this node; fd00:51::23 not expected: a node that should not have VNI 10100, or a VTEP whose VXLAN device still has an old source address (compare `ip -d link show` on it)"
    );
    assert_eq!(report.vnis[0].kind, None);
    assert_eq!(report.vnis[2].kind.as_deref(), Some("L3"));
}

#[test]
fn an_l3_vnis_vteps_are_its_next_hops_ipv4_mapped_read_as_ipv4() {
    let mut fake = node();
    fake.answer(
        NEXT_HOPS,
        json!({"4001": {"numNextHops": 2,
            "10.20.51.22": {"nexthopIp": "10.20.51.22"},
            "::ffff:10.20.51.23": {"nexthopIp": "::ffff:10.20.51.23"}}}),
    );
    let args = json!({"vnis": [{"vni": 4001, "remote_vteps": ["10.20.51.23", "10.20.51.22"]}]});
    let report = assert_on(&mut fake, args).unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!(report.vnis[0].remote_vteps, ["10.20.51.22", "10.20.51.23"]);
}

#[test]
fn an_unknown_vrf_or_peer_fails_naming_what_frr_has() {
    let mut fake = node();
    let err = assert_on(
        &mut fake,
        json!({"peers": [{"peer": "bgpv6", "vrf": "vrf_nope"}]}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "peers[0].vrf: 'vrf_nope' has no BGP instance in FRR (its BGP VRFs: default, vrf_tdemo); give one of them, or configure `router bgp <AS> vrf vrf_nope` first"
    );
    let err = assert_on(
        &mut fake,
        json!({"peers": [{"peer": "bgpv6"}, {"peer": "ens21"}]}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "peers[1].peer: 'ens21' is neither a neighbor nor a peer group with members in VRF default (its neighbors: ens19, ens20); give a neighbor as FRR names it (the interface for BGP unnumbered, the address otherwise) or a peer group that has at least one member"
    );
    // Nothing but the first run was made.
    assert!(fake.runs.iter().all(|r| r[0] == NEIGHBORS && r.len() == 2));
}

#[test]
fn settle_retries_until_the_session_is_up() {
    /// Down on the first read, up from the second.
    struct ComingUp(FakeVtysh, u32);
    impl Vtysh for ComingUp {
        fn run(&mut self, commands: &[String]) -> Result<Vec<Value>, Failure> {
            if commands[0] == NEIGHBORS {
                self.1 += 1;
                let mut all = self.0.answers[NEIGHBORS].clone();
                let state = if self.1 == 1 {
                    "Connect"
                } else {
                    "Established"
                };
                all["default"]["ens19"]["bgpState"] = json!(state);
                self.0.answer(NEIGHBORS, all);
            }
            self.0.run(commands)
        }
    }
    let mut vtysh = ComingUp(node(), 0);
    let request = request(json!({"settle_timeout": 5, "peers": [{"peer": "ens19"}]})).unwrap();
    let settled = crate::settle(&mut vtysh, &request).unwrap();
    assert_eq!(settled.attempts, 2);
    assert!(settled.report.findings.is_empty());
    // Without settle_timeout, the first read stands.
    let mut vtysh = ComingUp(node(), 0);
    let request = super::request(json!({"peers": [{"peer": "ens19"}]})).unwrap();
    let settled = crate::settle(&mut vtysh, &request).unwrap();
    assert_eq!((settled.attempts, settled.report.findings.len()), (1, 1));
}

#[test]
fn a_vtysh_answering_fewer_values_than_commands_fails_instead_of_panicking() {
    struct Short;
    impl Vtysh for Short {
        fn run(&mut self, _: &[String]) -> Result<Vec<Value>, Failure> {
            Ok(vec![json!({})])
        }
    }
    let request = request(json!({"peers": [{"peer": "ens19"}]})).unwrap();
    let err = observe::observe(&mut Short, &request).unwrap_err();
    assert_eq!(
        err.msg,
        "vtysh answered 1 JSON value(s) for 2 command(s) (`show bgp vrf all neighbors json`, `show bgp vrf all summary json`); is it FRR's vtysh?"
    );
}
