//! Guests at the zone's MTU: the lab node's zone bridge `vmbr1` with guest ports at the zone's
//! MTU and at others, held to `zone_mtu` or, without it, to the bridge's own MTU.

use super::*;

const TAP100: u32 = 30;
const TAP101: u32 = 31;
const VETH102: u32 = 32;
const FWPR103: u32 = 33;
const VMBR0: u32 = 34;
const TAP104: u32 = 35;

/// The lab node (vmbr1 at 1500, zone_mtu 1496) with guest ports on vmbr1: VM 100's tap at 1500,
/// VM 101's tap and container 102's veth (its net1) at the zone's 1496, firewalled guest 103's
/// fwpr at 9000; and VM 104's tap at 1500 on another bridge, vmbr0, which is not the zone's.
fn node_with_zone_guests() -> Node {
    let mut node = Node::healthy();
    node.links.push(link(VMBR0, "vmbr0", Some("bridge"), 1500));
    for (index, name, kind, mtu, bridge) in [
        (TAP100, "tap100i0", "tun", 1500, VMBR1),
        (TAP101, "tap101i0", "tun", 1496, VMBR1),
        (VETH102, "veth102i1", "veth", 1496, VMBR1),
        (FWPR103, "fwpr103p0", "veth", 9000, VMBR1),
        (TAP104, "tap104i0", "tun", 1500, VMBR0),
    ] {
        let mut port = link(index, name, Some(kind), mtu);
        port.controller = Some(bridge);
        node.links.push(port);
    }
    node
}

fn found(report: &Report) -> Vec<(&str, &str, u32, u32, Option<u32>)> {
    report
        .guest_mtu
        .ports
        .iter()
        .map(|f| (f.port.as_str(), f.kind, f.vmid, f.nic, f.mtu))
        .collect()
}

/// The failed checks are exactly VM 100's tap and guest 103's fwpr; the tap's check.
fn tap100_failed_with_fwpr103(report: &Report) -> &Check {
    assert_eq!(
        report.failed_names(),
        ["guest_mtu:tap100i0", "guest_mtu:fwpr103p0"]
    );
    check(report, "guest_mtu:tap100i0")
}

#[test]
fn guest_ports_of_the_zone_bridge_off_zone_mtu_are_failed_checks_naming_port_vm_and_both_mtus() {
    let report = node_with_zone_guests().report(&request());
    assert_eq!(
        found(&report),
        [
            ("tap100i0", "tap", 100, 0, Some(1500)),
            ("fwpr103p0", "fwpr", 103, 0, Some(9000)),
        ]
    );
    assert_eq!(
        (
            report.guest_mtu.bridge.as_str(),
            report.guest_mtu.zone_mtu,
            report.guest_mtu.zone_mtu_from,
            report.guest_mtu.checked,
            report.guest_mtu.count
        ),
        ("vmbr1", Some(1496), "zone_mtu", 4, 2)
    );
    let tap = tap100_failed_with_fwpr103(&report);
    assert_eq!(
        tap.expected,
        "MTU of tap100i0 (VM 100, net0) the zone's 1496 (zone_mtu)"
    );
    assert_eq!(tap.actual, "1500");
    assert_eq!(
        tap.fix,
        "set VM 100's NIC to the zone's MTU and start it again: qm set 100 --net0 <model>=<mac>,bridge=vmbr1,...,mtu=1496 (net0's other settings as qm config 100 shows them), then qm reboot 100; a running guest keeps the MTU Proxmox gave its ports when it started"
    );
    assert_eq!(tap.fix, report.guest_mtu.ports[0].fix);
    let fwpr = check(&report, "guest_mtu:fwpr103p0");
    assert_eq!(
        fwpr.expected,
        "MTU of fwpr103p0 (VM or container 103, net0) the zone's 1496 (zone_mtu)"
    );
    assert_eq!(fwpr.actual, "9000");
}

#[test]
fn the_count_of_guest_ports_off_zone_mtu_is_in_the_failure_message() {
    let report = node_with_zone_guests().report(&request());
    let message = report.failure_message();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 3, "{message}");
    assert!(lines[0].starts_with("guest_mtu:tap100i0: expected MTU of tap100i0 (VM 100, net0) the zone's 1496 (zone_mtu), found 1500; set VM 100's NIC"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("guest_mtu:fwpr103p0: "),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        "2 of 4 guest interfaces on vmbr1 not at the zone MTU 1496: tap100i0 (VM 100, MTU 1500), fwpr103p0 (VM or container 103, MTU 9000)"
    );
}

#[test]
fn without_zone_mtu_the_guest_ports_are_held_to_the_zone_bridges_own_mtu() {
    let mut node = node_with_zone_guests();
    node.link_mut("vmbr1").mtu = Some(1496);
    let request = Request::from_params(Params {
        zone_mtu: None,
        ..raw()
    })
    .unwrap();
    let report = node.report(&request);
    assert_eq!(
        (report.guest_mtu.zone_mtu, report.guest_mtu.zone_mtu_from),
        (Some(1496), "bridge")
    );
    let tap = tap100_failed_with_fwpr103(&report);
    assert_eq!(
        tap.expected,
        "MTU of tap100i0 (VM 100, net0) the zone's 1496 (vmbr1's MTU)"
    );
    // The bridge's MTU is the zone's: following the bridge fits too.
    assert!(
        tap.fix.contains(
            "(net0's other settings as qm config 100 shows them, or mtu=1 to follow the bridge)"
        ),
        "{}",
        tap.fix
    );

    // The bridge at 1500: the guests at 1496 are now the ones off.
    node.link_mut("vmbr1").mtu = Some(1500);
    let report = node.report(&request);
    assert_eq!(
        found(&report),
        [
            ("tap101i0", "tap", 101, 0, Some(1496)),
            ("veth102i1", "veth", 102, 1, Some(1496)),
            ("fwpr103p0", "fwpr", 103, 0, Some(9000)),
        ]
    );
}

#[test]
fn guest_ports_at_the_zone_mtu_pass_and_the_summary_counts_them() {
    let mut node = node_with_zone_guests();
    for name in ["tap100i0", "fwpr103p0"] {
        node.link_mut(name).mtu = Some(1496);
    }
    let report = node.report(&request());
    assert_eq!(report.failed_names(), Vec::<&str>::new(), "{report:#?}");
    assert!(report.guest_mtu.ports.is_empty());
    assert_eq!(report.guest_mtu.count, 0);
    assert_eq!(
        report.guest_mtu.summary(),
        "4 guest interfaces on vmbr1 at the zone MTU 1496"
    );
    assert!(!report
        .checks
        .iter()
        .any(|c| c.name.starts_with("guest_mtu")));
    assert_eq!(
        report.success_message("; txvlan switched off on qinq_b"),
        "all 19 QinQ checks passed; txvlan switched off on qinq_b; 4 guest interfaces on vmbr1 at the zone MTU 1496"
    );

    let healthy = Node::healthy().report(&request());
    assert_eq!(healthy.guest_mtu.checked, 0, "qvm0 is no guest's name");
    assert_eq!(
        healthy.success_message(""),
        "all 19 QinQ checks passed; no guest interface on vmbr1"
    );
}

#[test]
fn a_container_gets_pct_a_firewall_port_either_and_a_zone_mtu_unlike_the_bridge_no_mtu_1() {
    let mut node = node_with_zone_guests();
    node.link_mut("veth102i1").mtu = Some(1500);
    let report = node.report(&request());
    let veth = check(&report, "guest_mtu:veth102i1");
    assert_eq!(
        veth.fix,
        "set container 102's NIC to the zone's MTU and start it again: pct set 102 --net1 name=<name>,bridge=vmbr1,...,mtu=1496 (net1's other settings as pct config 102 shows them), then pct reboot 102; a running guest keeps the MTU Proxmox gave its ports when it started"
    );
    let fwpr = check(&report, "guest_mtu:fwpr103p0");
    for part in [
        "set VM or container 103's NIC (behind its firewall bridge fwbr103i0)",
        "a VM with qm set 103 --net0 <model>=<mac>,bridge=vmbr1,...,mtu=1496",
        "a container with pct set 103 --net0 name=<name>,bridge=vmbr1,...,mtu=1496",
    ] {
        assert!(fwpr.fix.contains(part), "{part}: {}", fwpr.fix);
    }
    // vmbr1 is at 1500, the zone at 1496: mtu=1 would give the guest 1500.
    assert!(
        report
            .guest_mtu
            .ports
            .iter()
            .all(|f| !f.fix.contains("mtu=1 ")),
        "{:#?}",
        report.guest_mtu.ports
    );
}

#[test]
fn an_mtu_not_reported_is_a_finding_and_no_zone_mtu_at_all_fails_the_run() {
    let mut node = node_with_zone_guests();
    node.link_mut("tap101i0").mtu = None;
    let report = node.report(&request());
    assert!(found(&report).contains(&("tap101i0", "tap", 101, 0, None)));
    assert_eq!(
        check(&report, "guest_mtu:tap101i0").actual,
        "no MTU reported"
    );

    node.link_mut("vmbr1").mtu = None;
    let request = Request::from_params(Params {
        zone_mtu: None,
        ..raw()
    })
    .unwrap();
    let report = node.report(&request);
    assert_eq!(report.guest_mtu.zone_mtu, None);
    assert!(report.guest_mtu.ports.is_empty());
    let unknown = check(&report, "guest_mtu");
    assert!(!unknown.ok);
    assert_eq!(
        unknown.actual,
        "no zone_mtu given and no MTU reported for vmbr1"
    );
    assert_eq!(unknown.fix, "give zone_mtu, the MTU the zone's guests use");
    assert_eq!(
        report.guest_mtu.summary(),
        "4 guest interfaces on vmbr1 not compared: the zone's MTU is unknown"
    );
}
