//! What this host's kernel can show (veth, plain bridges, ethtool netlink; no bonding, 802.1Q or
//! VLAN filtering), in network namespaces each test makes for itself: the runtime's ethtool and
//! bridge layers on real links, and the module refusing bad input while changing nothing. The
//! full QinQ stack is tested in the lab VM (tests/lab/tests/qinq_check.sh).

use deevnet_runtime::netlink::ethtool::{Ethtool, TX_VLAN_HW_INSERT};
use deevnet_runtime::netlink::{FdbState, Links, Netlink, Vlan, VlanProtocol};
use deevnet_runtime::test_support::module_run::spawn_with_input;
use deevnet_runtime::test_support::TestNamespace;
use qinq_check::guest_ports::{guest_ports_of, GuestBridge};
use qinq_check::{ParentKind, Stack};
use serde_json::{json, Value};
use std::process::Command;

/// A namespace with two veth pairs, one end of each in the plain bridge br0:
/// `bond0` (a veth, to stand for a single NIC without an uplink VLAN device) <-> `far0`, and `port1` <-> `far1`.
struct Namespace(TestNamespace);

impl std::ops::Deref for Namespace {
    type Target = TestNamespace;
    fn deref(&self) -> &TestNamespace {
        &self.0
    }
}

impl Namespace {
    fn new() -> Namespace {
        let ns = Namespace(TestNamespace::new("dvn-qq"));
        for args in [
            "link add bond0 type veth peer name far0",
            "link add port1 type veth peer name far1",
            "link add br0 type bridge",
            "link set bond0 master br0",
            "link set port1 master br0",
            "link set br0 up",
            "link set bond0 up",
            "link set far0 up",
            "link set port1 up",
            "link set far1 up",
        ] {
            ns.ip(args);
        }
        ns
    }

    /// The namespace with a VM's port in br0: `tap100i0`, whose peer `vm100` is the guest.
    fn with_vm_port() -> Namespace {
        let ns = Namespace::new();
        for args in [
            "link add tap100i0 type veth peer name vm100",
            "link set tap100i0 master br0",
            "link set tap100i0 up",
            "link set vm100 up",
        ] {
            ns.ip(args);
        }
        ns
    }

    fn txvlan(&self, device: &'static str) -> bool {
        self.enter(move || {
            Ethtool::connect()
                .unwrap()
                .features(device)
                .unwrap()
                .get(TX_VLAN_HW_INSERT)
                .active
        })
    }

    /// The module run in the namespace, as Ansible would with `args`.
    fn module(&self, args: Value) -> (bool, Value) {
        self.run_module(env!("CARGO_BIN_EXE_qinq_check"), &args)
    }
}

/// The stack as [`Stack::resolve`] would find it, from the namespace's links: the veth `bond0`
/// stands for a single NIC and for its uplink VLAN device (a VLAN device cannot be made on this
/// kernel, so VLAN 40, 802.1Q, is written in), `bridge` is the zone bridge; the bridge over the
/// parent and the zone bridge's guest ports are found as `resolve` finds them.
fn stand_in_stack(links: &Links, bridge: &str) -> Stack {
    let parent = links.by_name("bond0").unwrap().clone();
    let mut uplink = parent.clone();
    uplink.vlan = Some(Vlan {
        id: 40,
        protocol: Some(VlanProtocol::Dot1Q),
    });
    let bridge = links.by_name(bridge).unwrap().clone();
    Stack {
        guest_bridge: GuestBridge::find(40, &parent, links),
        zone_guest_ports: guest_ports_of(&bridge, links),
        parent: parent.clone(),
        parent_kind: ParentKind::Nic,
        uplink,
        bridge,
        slaves: vec![(parent, None)],
        trunks: Vec::new(),
        bond_mode: None,
    }
}

fn run(args: &[&str]) {
    let output = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        output.status.success(),
        "{}: {} (these tests need root and iproute2)",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn ethtool_reads_and_switches_txvlan_on_a_real_veth() {
    let ns = Namespace::new();
    let (driver, features, fixed_error, unknown_error, no_device) = ns.enter(|| {
        let mut ethtool = Ethtool::connect().unwrap();
        let driver = ethtool.driver("port1").unwrap();
        let features = ethtool.features("port1").unwrap();
        let fixed = ethtool
            .set_feature("port1", "vlan-challenged", true)
            .unwrap_err();
        let unknown = ethtool
            .set_feature("port1", "no-such-feature", false)
            .unwrap_err();
        let no_device = ethtool.features("nosuchdev0").unwrap_err();
        (driver, features, fixed, unknown, no_device)
    });
    assert_eq!(driver.as_deref(), Some("veth"));
    // A new veth inserts VLAN tags in "hardware", and may be told not to.
    let txvlan = features.get(TX_VLAN_HW_INSERT);
    assert!(txvlan.active && txvlan.changeable, "{features:?}");
    assert!(!features.get("vlan-challenged").changeable);
    assert!(
        fixed_error.to_string().contains("vlan-challenged is fixed"),
        "{fixed_error}"
    );
    assert!(
        unknown_error
            .to_string()
            .contains("no feature named no-such-feature"),
        "{unknown_error}"
    );
    assert_eq!(no_device.errno(), Some(19), "{no_device}");

    ns.enter(|| {
        let mut ethtool = Ethtool::connect().unwrap();
        ethtool
            .set_feature("port1", TX_VLAN_HW_INSERT, false)
            .unwrap();
    });
    assert!(!ns.txvlan("port1"));
    assert!(ns.txvlan("far1"), "the other end is untouched");
    ns.enter(|| {
        let mut ethtool = Ethtool::connect().unwrap();
        ethtool
            .set_feature("port1", TX_VLAN_HW_INSERT, true)
            .unwrap();
    });
    assert!(ns.txvlan("port1"));
}

#[test]
fn a_plain_bridge_reports_no_vlan_filtering_and_fdb_entries_without_vlan() {
    let ns = Namespace::new();
    ns.ip("link set dev port1 address 02:00:00:00:00:01");
    let mac = "02:00:00:00:00:01";
    // A static entry, so the test needs no traffic.
    run(&[
        "ip",
        "netns",
        "exec",
        ns.name(),
        "bridge",
        "fdb",
        "add",
        "02:00:00:00:0e:01",
        "dev",
        "port1",
        "master",
        "static",
    ]);
    let (links, vlans, fdb) = ns.enter(|| {
        let netlink = Netlink::connect().unwrap();
        let links = netlink.links().unwrap();
        let bridge = links.by_name("br0").unwrap().index;
        (
            links,
            netlink.bridge_vlans().unwrap(),
            netlink.fdb(bridge).unwrap(),
        )
    });
    let bridge = links.by_name("br0").unwrap();
    let port = links.by_name("port1").unwrap();
    assert_ne!(
        bridge.bridge.and_then(|b| b.vlan_filtering),
        Some(true),
        "a bridge made without vlan_filtering"
    );
    let port_vlans = vlans.iter().find(|p| p.index == port.index).unwrap();
    assert_eq!(port_vlans.controller, Some(bridge.index));
    assert!(port_vlans.vlans.is_empty(), "{port_vlans:?}");
    assert!(port.max_mtu.is_some_and(|m| m >= 9000), "{port:?}");
    assert_eq!(port.bond, None);
    let own = fdb
        .iter()
        .find(|e| e.mac == mac && e.port == port.index)
        .expect("the port's own address");
    assert_eq!((own.state, own.vlan), (FdbState::Local, None));
    let added = fdb.iter().find(|e| e.mac == "02:00:00:00:0e:01").unwrap();
    assert_eq!((added.state, added.vlan), (FdbState::Static, None));
    assert!(fdb.iter().all(|e| e.bridge == Some(bridge.index)));
}

#[test]
fn bad_input_fails_with_a_clear_message_and_changes_nothing() {
    let ns = Namespace::new();
    let base = json!({
        "bond": "bond0", "uplink_vlan": 40, "bridge": "br0", "vlans": "199-299",
        "zone_mtu": 1496, "fix_txvlan": true,
    });
    let with = |key: &str, value: Value| {
        let mut args = base.clone();
        args[key] = value;
        args
    };
    let cases = [
        (
            // A veth stands for a single NIC: accepted as the parent, but it has no VLAN device.
            base.clone(),
            "uplink_vlan: there is no VLAN device with id 40 on bond0",
        ),
        (
            with("bond", json!("br0")),
            "bond: br0 is a bridge device, neither a bond nor a NIC",
        ),
        (
            with("bond", json!("bond7")),
            "bond: there is no interface bond7 on this node",
        ),
        (
            with("vlans", json!("299-199")),
            "vlans: the range '299-199' is written backwards; write it lowest first, as 199-299",
        ),
        (
            with("vlans", json!([199, 4095])),
            "vlans: VLAN 4095 in '4095' is outside 1-4094",
        ),
        (
            with("uplink_vlan", json!("4096")),
            "uplink_vlan: VLAN 4096 is outside 1-4094",
        ),
        (
            with("bridge", json!("br0/../x")),
            "bridge: 'br0/../x' is not a valid interface name",
        ),
        (
            with("zone_mtu", json!(70000)),
            "zone_mtu: 70000 is outside 68-65531",
        ),
    ];
    for (args, expected) in cases {
        let (ok, result) = ns.module(args.clone());
        assert!(!ok, "{args}: {result}");
        assert_eq!(result["failed"], true);
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(expected),
            "{args}\n  expected: {expected}\n  got: {msg}"
        );
        assert_ne!(result["changed"], true);
    }
    assert!(
        ns.txvlan("bond0"),
        "txvlan is still on: nothing was changed"
    );
    assert!(ns.txvlan("port1"));
}

/// Guests kept off the uplink, on real links and a real ruleset: `br0` over the veth `bond0`
/// (the uplink's parent; a VLAN device cannot be made on this kernel, so the uplink is that
/// link with VLAN 40 written in), guest ports named as Proxmox names them (`tap100i0`,
/// `veth101i0`, veths here) and a plain port. Without a rule both guests are findings naming
/// the VM; with the bridge-family rule the fix gives, none; with a rule for 802.1Q only, both
/// again. The ruleset is read from the namespace by `nft -j list ruleset`.
#[test]
fn guest_ports_are_read_from_the_links_and_the_namespaces_nftables_ruleset() {
    use qinq_check::guest_ports::audit;
    use qinq_check::node::{read_ruleset, NFT};
    if !std::path::Path::new(NFT).exists() {
        panic!("{NFT} is missing: make host-deps installs nftables");
    }
    let ns = Namespace::new();
    for args in [
        "link add tap100i0 type veth peer name vm100",
        "link add veth101i0 type veth peer name ct101",
        "link set tap100i0 master br0",
        "link set veth101i0 master br0",
        "link set tap100i0 up",
        "link set veth101i0 up",
    ] {
        ns.ip(args);
    }
    let audit_now = |ns: &Namespace| {
        ns.enter(|| {
            let links = Netlink::connect().unwrap().links().unwrap();
            let stack = stand_in_stack(&links, "br0");
            let port_vlans = Netlink::connect().unwrap().bridge_vlans().unwrap();
            let ruleset = read_ruleset(std::path::Path::new(NFT));
            audit(
                stack.guest_bridge.as_ref(),
                stack.uplink_protocol(),
                &port_vlans,
                &ruleset,
            )
            .into_iter()
            .map(|f| (f.bridge, f.port, f.vmid, f.nftables))
            .collect::<Vec<_>>()
        })
    };
    let none = "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it";
    assert_eq!(
        audit_now(&ns),
        [
            ("br0".into(), "tap100i0".into(), 100, none.into()),
            ("br0".into(), "veth101i0".into(), 101, none.into())
        ]
    );

    let nft = |rules: &str| {
        let mut child = spawn_with_input(ns.command(NFT).args(["-f", "-"]), rules.as_bytes());
        assert!(child.wait().unwrap().success(), "nft -f: {rules}");
    };
    nft(&format!("{}\n", qinq_check::fix::GUEST_VLAN_RULE));
    assert_eq!(audit_now(&ns), []);

    nft("flush ruleset\ntable bridge t { chain c { type filter hook forward priority 0; iifname \"tap*\" ether type 8021q drop; iifname \"veth*\" ether type 8021q drop; }; }\n");
    let only_q = "the bridge-family nftables rules drop only 802.1Q frames from it";
    assert_eq!(
        audit_now(&ns),
        [
            ("br0".into(), "tap100i0".into(), 100, only_q.into()),
            ("br0".into(), "veth101i0".into(), 101, only_q.into())
        ]
    );
}

/// Sends three frames from `vm100` (the guest's end of `tap100i0`) with outer tag `outer_type`
/// 40 and inner 802.1Q tag 201, and counts how many reach `far0` (the wire behind the parent
/// `bond0`), by a marker in their payload; raw packet sockets, in Python (the standard
/// library has them; nothing here needs a VLAN device).
fn double_tagged_frames_through(ns: &Namespace, outer_type: u16) -> u32 {
    const SCRIPT: &str = r#"
import select, socket, struct, sys, time
outer = int(sys.argv[1])
marker = b"deevnet-qinq-guard-probe"
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
rx.bind(("far0", 0))
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind(("vm100", 0))
frame = (b"\xff" * 6 + b"\x02\x00\x00\x00\x01\x00" + struct.pack("!HH", outer, 40)
         + struct.pack("!HH", 0x8100, 201) + struct.pack("!H", 0x88b5) + marker + bytes(20))
for _ in range(3):
    tx.send(frame)
seen, end = 0, time.time() + 1.0
while time.time() < end:
    ready, _, _ = select.select([rx], [], [], 0.1)
    if ready and marker in rx.recv(65535):
        seen += 1
print(seen)
"#;
    let output = ns
        .command("python3")
        .args(["-c", SCRIPT, &outer_type.to_string()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap()
}

/// The guard, actively: a guest port on the bridge over the parent sends frames with outer tag
/// 40 (802.1Q, then 802.1ad) and inner tag 201; before the guard they reach the wire, after
/// it they do not. Putting the guard in place twice leaves one table, recognised as the guard.
#[test]
fn the_guard_drops_a_guests_double_tagged_frames_that_passed_before() {
    use qinq_check::guest_ports::GUARD_TABLE;
    use qinq_check::node::{install_guard, read_ruleset, NFT};
    let ns = Namespace::with_vm_port();
    for outer in [0x8100, 0x88a8] {
        assert_eq!(
            double_tagged_frames_through(&ns, outer),
            3,
            "{outer:#x} before"
        );
    }
    let installed = ns.enter(|| {
        let before = read_ruleset(std::path::Path::new(NFT)).guard_installed();
        install_guard(std::path::Path::new(NFT)).unwrap();
        install_guard(std::path::Path::new(NFT)).unwrap();
        (
            before,
            read_ruleset(std::path::Path::new(NFT)).guard_installed(),
        )
    });
    assert_eq!(installed, (false, true));
    let listed = ns.command(NFT).args(["list", "tables"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).trim(),
        format!("table bridge {GUARD_TABLE}")
    );
    for outer in [0x8100, 0x88a8] {
        assert_eq!(
            double_tagged_frames_through(&ns, outer),
            0,
            "{outer:#x} after"
        );
    }
}

/// QC1: the guard's table set dormant (`flags dormant`) lets a guest's double-tagged frames
/// through again, and the module sees it: the ruleset read from the namespace shows the guard
/// not installed, the guest port not kept off (naming the dormant table), and putting the guard
/// in place again makes it drop the frames.
#[test]
fn a_dormant_guard_passes_frames_and_is_reported_not_installed() {
    use qinq_check::guest_ports::GUARD_TABLE;
    use qinq_check::node::{install_guard, read_ruleset, NFT};
    let ns = Namespace::with_vm_port();
    let nft = std::path::Path::new(NFT);
    ns.enter(|| install_guard(nft).unwrap());
    assert_eq!(
        double_tagged_frames_through(&ns, 0x8100),
        0,
        "guard in force"
    );
    let dormant = ns
        .command(NFT)
        .args(["add", "table", "bridge", GUARD_TABLE, "{ flags dormant; }"])
        .status()
        .unwrap();
    assert!(dormant.success());
    assert_eq!(
        double_tagged_frames_through(&ns, 0x8100),
        3,
        "guard dormant"
    );
    let (state, findings) = guard_and_guest_ports(&ns);
    let why = state.unwrap_err();
    assert!(
        why.starts_with(&format!("table bridge {GUARD_TABLE} is dormant (flags dormant), so its chains see no packet; set guest_vlan_guard=true")),
        "{why}"
    );
    let ports: Vec<(&str, u32)> = findings.iter().map(|f| (f.port.as_str(), f.vmid)).collect();
    assert_eq!(ports, [("tap100i0", 100)]);
    assert!(
        findings[0]
            .nftables
            .contains(&format!("table bridge {GUARD_TABLE} is dormant")),
        "{}",
        findings[0].nftables
    );
    let again = ns.enter(|| {
        install_guard(nft).unwrap();
        read_ruleset(nft).guard_installed()
    });
    assert!(again);
    assert_eq!(
        double_tagged_frames_through(&ns, 0x8100),
        0,
        "guard put back"
    );
}

/// The guard's state and the guest ports not kept off, as the module reads them in `ns`: the
/// links by netlink, `br0` over the parent `bond0` (a NIC with uplink VLAN 40, 802.1Q), the
/// ruleset by `nft`.
fn guard_and_guest_ports(
    ns: &Namespace,
) -> (
    Result<(), String>,
    Vec<qinq_check::guest_ports::GuestPortFinding>,
) {
    use qinq_check::guest_ports::audit;
    use qinq_check::node::{read_ruleset, NFT};
    ns.enter(|| {
        let links = Netlink::connect().unwrap().links().unwrap();
        let stack = stand_in_stack(&links, "br0");
        let ruleset = read_ruleset(std::path::Path::new(NFT));
        (
            ruleset.guard_state(),
            audit(
                stack.guest_bridge.as_ref(),
                stack.uplink_protocol(),
                &[],
                &ruleset,
            ),
        )
    })
}

/// QG1: the guard's table with its guest patterns written as literal names in a set
/// (`iifname { "tap\*", ... }`, which nft 1.0.6 lists exactly as the wildcards) lets a guest's
/// double-tagged frames through, and the module does not take it for the guard nor the guest
/// port for kept off. Must not pass: the guard as the module puts it in place drops them, and
/// is the guard.
#[test]
fn qg1_a_set_of_literal_star_names_passes_frames_and_is_not_taken_for_the_guard() {
    use qinq_check::guest_ports::GUARD_TABLE;
    use qinq_check::node::{install_guard, NFT};
    let ns = Namespace::with_vm_port();
    let fake = format!(
        "table bridge {GUARD_TABLE} {{ chain prerouting {{ type filter hook prerouting priority -300; iifname {{ \"tap\\*\", \"veth\\*\", \"fwpr\\*\", \"fwln\\*\" }} ether type {{ 8021q, 8021ad }} drop; }}; }}\n"
    );
    let mut child = spawn_with_input(ns.command(NFT).args(["-f", "-"]), fake.as_bytes());
    assert!(child.wait().unwrap().success(), "nft -f: {fake}");
    let listed = ns.command(NFT).args(["list", "ruleset"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(
            r#"iifname { "tap*", "veth*", "fwln*", "fwpr*" } ether type { 8021q, 8021ad } drop"#
        ),
        "nft 1.0.6 lists the literal names as wildcards: {}",
        String::from_utf8_lossy(&listed.stdout)
    );
    for outer in [0x8100, 0x88a8] {
        assert_eq!(
            double_tagged_frames_through(&ns, outer),
            3,
            "{outer:#x} through the literal names"
        );
    }
    let (state, findings) = guard_and_guest_ports(&ns);
    let why = state.unwrap_err();
    assert!(why.contains("is not the guard's rule alone"), "{why}");
    let found: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f.port.as_str(), f.nftables.as_str()))
        .collect();
    assert_eq!(
        found,
        [(
            "tap100i0",
            "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it"
        )]
    );

    ns.enter(|| install_guard(std::path::Path::new(NFT)).unwrap());
    for outer in [0x8100, 0x88a8] {
        assert_eq!(
            double_tagged_frames_through(&ns, outer),
            0,
            "{outer:#x} through the guard"
        );
    }
    let (state, findings) = guard_and_guest_ports(&ns);
    assert_eq!(state, Ok(()));
    assert!(findings.is_empty(), "{findings:?}");
}

/// Guests at the zone's MTU, on real links: the plain bridge `vmbr1` set to 8950 by
/// `ip link set mtu` (the zone's MTU, no `zone_mtu` given), VM 100's tap (a veth named
/// `tap100i0`) left at 1500 and VM 101's `tap101i0` at 8950, both its ports. Exactly `tap100i0`
/// is found, VM 100, at 1500 against 8950, a failed check with the count in the message; once
/// it is at 8950 too, nothing is.
#[test]
fn a_guest_port_left_at_1500_under_a_zone_bridge_of_8950_is_found_until_fixed() {
    use qinq_check::{evaluate, Observed, Params, Request};
    let ns = Namespace::new();
    for args in [
        "link add vmbr1 type bridge",
        "link set vmbr1 mtu 8950",
        "link add tap100i0 type veth peer name vm100",
        "link add tap101i0 mtu 8950 type veth peer name vm101 mtu 8950",
        "link set tap100i0 master vmbr1",
        "link set tap101i0 master vmbr1",
        "link set vmbr1 up",
        "link set tap100i0 up",
        "link set tap101i0 up",
    ] {
        ns.ip(args);
    }
    let request = Request::from_params(Params {
        bond: "bond0".into(),
        uplink_vlan: 40,
        bridge: "vmbr1".into(),
        vlans: vec!["199-299".into()],
        ..Params::default()
    })
    .unwrap();
    let report_now = |ns: &Namespace| {
        let request = request.clone();
        ns.enter(move || {
            let links = Netlink::connect().unwrap().links().unwrap();
            let stack = stand_in_stack(&links, "vmbr1");
            (
                links.by_name("vmbr1").unwrap().mtu,
                evaluate(&request, &stack, &Observed::default()),
            )
        })
    };

    let (bridge_mtu, report) = report_now(&ns);
    assert_eq!(
        bridge_mtu,
        Some(8950),
        "the bridge keeps the MTU it was set to"
    );
    let found: Vec<(&str, &str, u32, Option<u32>)> = report
        .guest_mtu
        .ports
        .iter()
        .map(|f| (f.port.as_str(), f.kind, f.vmid, f.mtu))
        .collect();
    assert_eq!(found, [("tap100i0", "tap", 100, Some(1500))]);
    assert_eq!(
        (
            report.guest_mtu.zone_mtu,
            report.guest_mtu.zone_mtu_from,
            report.guest_mtu.checked,
            report.guest_mtu.count
        ),
        (Some(8950), "bridge", 2, 1)
    );
    let failed: Vec<&str> = report
        .failed_names()
        .into_iter()
        .filter(|n| n.starts_with("guest_mtu"))
        .collect();
    assert_eq!(failed, ["guest_mtu:tap100i0"]);
    let message = report.failure_message();
    assert!(
        message.contains("guest_mtu:tap100i0: expected MTU of tap100i0 (VM 100, net0) the zone's 8950 (vmbr1's MTU), found 1500; set VM 100's NIC to the zone's MTU and start it again: qm set 100 --net0 <model>=<mac>,bridge=vmbr1,...,mtu=8950"),
        "{message}"
    );
    assert!(
        message.ends_with("\n1 of 2 guest interfaces on vmbr1 not at the zone MTU 8950: tap100i0 (VM 100, MTU 1500)"),
        "{message}"
    );

    ns.ip("link set tap100i0 mtu 8950");
    let (_, report) = report_now(&ns);
    assert!(report.guest_mtu.ports.is_empty(), "{:?}", report.guest_mtu);
    assert!(!report
        .checks
        .iter()
        .any(|c| c.name.starts_with("guest_mtu")));
    assert_eq!(
        report.guest_mtu.summary(),
        "2 guest interfaces on vmbr1 at the zone MTU 8950"
    );
}
