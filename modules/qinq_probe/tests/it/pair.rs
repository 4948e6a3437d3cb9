//! Two "hosts" and a switch, each a network namespace of the test: the sender `pve1` and the
//! receiver `pve2`, each with a zone bridge `vmbr1` and one NIC into the switch's plain bridge.
//! This host has no 802.1Q devices: the sender's NIC `up40` stands for the uplink VLAN device
//! and its NIC at once, its outer tag put on by an eBPF program at its egress (tcx.rs), which
//! also emulates the fault, a NIC that puts the outer tag in place of the inner one.

use crate::tcx::{self, Program};
use deevnet_probe_port::sock;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::test_support::module_run::module_result;
use deevnet_runtime::test_support::TestNamespace;
use qinq_probe::frame::{self, format_mac, nonce, sender_mac, Payload, RunKey};
use qinq_probe::params::Secret;
use serde_json::{json, Value};
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::process::Child;
use std::time::Duration;

const TPID_8021AD: u16 = 0x88a8;

struct Lab {
    sender: TestNamespace,
    receiver: TestNamespace,
    _switch: TestNamespace,
}

impl Lab {
    fn new() -> Lab {
        let switch = TestNamespace::new("dvn-qp-sw");
        let sender = TestNamespace::new("dvn-qp-s");
        let receiver = TestNamespace::new("dvn-qp-r");
        switch.ip("link add sw type bridge");
        switch.ip("link set sw up");
        for (host, nic, port) in [(&sender, "up40", "p1"), (&receiver, "eno1", "p2")] {
            host.ip(&format!(
                "link add {nic} type veth peer name {port} netns {}",
                switch.name()
            ));
            host.ip("link add vmbr1 type bridge");
            host.ip(&format!("link set {nic} master vmbr1"));
            host.ip(&format!("link set {nic} up"));
            host.ip("link set vmbr1 up");
            switch.ip(&format!("link set {port} master sw"));
            switch.ip(&format!("link set {port} up"));
        }
        Lab {
            sender,
            receiver,
            _switch: switch,
        }
    }

    /// The sender's NIC tags as `program` says, while the descriptor lives.
    fn sender_nic(&self, program: Program) -> OwnedFd {
        self.sender.enter(move || {
            let index = Netlink::connect()
                .unwrap()
                .links()
                .unwrap()
                .by_name("up40")
                .unwrap()
                .index;
            tcx::attach_egress(index, program)
        })
    }

    fn links(ns: &TestNamespace) -> Vec<String> {
        ns.enter(|| {
            Netlink::connect()
                .unwrap()
                .links()
                .unwrap()
                .iter()
                .map(|l| l.name.clone())
                .collect()
        })
    }
}

fn start(ns: &TestNamespace, args: Value) -> Child {
    ns.start_module(env!("CARGO_BIN_EXE_qinq_probe"), &args)
}

/// The module's result, whether it succeeded or failed.
fn result(child: Child) -> Value {
    module_result(child).1
}

/// The run's secret both sides get (the playbook makes a random one per run).
const SECRET: &str = "test-secret-0123456789abcdef";

fn receive(run_id: &str, duration: u32) -> Value {
    json!({"mode": "receive", "run_id": run_id, "secret": SECRET, "bridge": "vmbr1",
           "uplink": "eno1", "uplink_vlan": 40, "vlans": [201, 202], "senders": ["pve1"],
           "name": "pve2", "duration": duration})
}

fn send(run_id: &str) -> Value {
    json!({"mode": "send", "run_id": run_id, "secret": SECRET, "bridge": "vmbr1",
           "uplink": "up40", "uplink_vlan": 40, "vlans": [201, 202], "name": "pve1",
           "count": 3})
}

/// The receiver started first, then the sender; both results.
fn pair_run(lab: &Lab, run_id: &str) -> (Value, Value) {
    let receiver = start(&lab.receiver, receive(run_id, 10));
    // The capture opens within milliseconds; the sender's port takes longer to come up.
    std::thread::sleep(Duration::from_millis(500));
    let sent = result(start(&lab.sender, send(run_id)));
    (sent, result(receiver))
}

#[test]
fn both_tags_arrive_from_the_sender_on_every_vlan_and_nothing_is_left_behind() {
    let lab = Lab::new();
    let _vlan_device = lab.sender_nic(Program::PushOuter {
        tpid: TPID_8021AD,
        vid: 40,
    });
    let (sent, received) = pair_run(&lab, "both");
    assert_eq!(sent["failed"], json!(null), "{sent}");
    assert_eq!(sent["changed"], json!(false));
    assert_eq!(
        sent["sent"],
        json!([{"vlan": 201, "frames": 3}, {"vlan": 202, "frames": 3}])
    );
    assert_eq!(received["failed"], json!(null), "{received}");
    let pairs = received["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2, "{received}");
    for (pair, vlan) in pairs.iter().zip([201, 202]) {
        assert_eq!(pair["verdict"], "both_tags", "{pair}");
        assert_eq!(pair["vlan"], vlan);
        assert_eq!(pair["both_tags"], 3, "{pair}");
        assert_eq!(
            (&pair["sent"], &pair["received"], &pair["loss_percent"]),
            (&json!(3), &json!(3), &json!(0)),
            "{pair}"
        );
        assert_eq!(pair["receiving_slaves"], json!(["eno1"]));
        assert_eq!(pair["sender_slave"], "up40");
        assert_eq!(pair["sender_driver"], "veth");
        assert_eq!(
            pair["tags_seen"],
            json!([format!("802.1ad 40 / 802.1Q {vlan}")])
        );
        // A plain bridge learns without VLANs: said, not judged.
        assert_eq!(pair["fdb"]["verdict"], "not_checked");
        assert_eq!(pair["fdb"]["mac"], sent["source_mac"]);
        assert_eq!(
            pair["fdb"]["vlans"],
            json!([0]),
            "the receiver's bridge learned the MAC"
        );
    }
    assert!(
        !Lab::links(&lab.sender)
            .iter()
            .any(|l| l.starts_with("dvprobe")),
        "the probe port is gone: {:?}",
        Lab::links(&lab.sender)
    );
}

/// What an attacker on the segment can send: pve1's frames as pve1 builds them (the run id, so
/// the nonce and pve1's run MAC, are public), keyed with a guess of the secret, put straight
/// on the sender's NIC (where its outer tag is pushed) from a raw socket.
fn forge_as_pve1(lab: &Lab, run_id: &str, frames: u16) {
    let run_id = run_id.to_string();
    lab.sender.enter(move || {
        let guessed = RunKey::new(&run_id, &Secret::from("a-guess-of-the-secret")).unwrap();
        let index = Netlink::connect()
            .unwrap()
            .links()
            .unwrap()
            .by_name("up40")
            .unwrap()
            .index;
        let fd = sock::socket(libc::AF_PACKET, libc::SOCK_RAW, 0).unwrap();
        sock::bind_packet(&fd, index, 0).unwrap();
        for vlan in [201, 202] {
            for seq in 0..frames {
                let payload = Payload {
                    nonce: nonce(&run_id),
                    vlan,
                    seq,
                    total: frames,
                    sender: "pve1".into(),
                    slave: "up40".into(),
                    driver: "veth".into(),
                };
                let bytes = frame::build(sender_mac(&run_id, "pve1"), &payload, &guessed);
                // SAFETY: bytes is valid for its length.
                let written = unsafe {
                    libc::send(
                        fd.as_raw_fd(),
                        bytes.as_ptr() as *const libc::c_void,
                        bytes.len(),
                        0,
                    )
                };
                assert_eq!(
                    written,
                    bytes.len() as isize,
                    "{}",
                    std::io::Error::last_os_error()
                );
            }
        }
    })
}

/// QP1: frames with the run's public nonce, the sender's name and its run MAC, but without the
/// secret, make no pair pass: they are reported as forged, with a warning.
#[test]
fn frames_forged_without_the_secret_are_reported_and_prove_nothing() {
    let lab = Lab::new();
    let _vlan_device = lab.sender_nic(Program::PushOuter {
        tpid: TPID_8021AD,
        vid: 40,
    });
    let receiver = start(&lab.receiver, receive("forged", 2));
    std::thread::sleep(Duration::from_millis(500));
    forge_as_pve1(&lab, "forged", 3);
    let received = result(receiver);
    assert_eq!(received["failed"], true, "{received}");
    for pair in received["pairs"].as_array().unwrap() {
        assert_eq!(pair["verdict"], "nothing_arrived", "{pair}");
        assert_eq!(pair["received"], 0, "{pair}");
    }
    assert_eq!(received["forged"]["frames"], 6, "{received}");
    assert_eq!(
        received["forged"]["examples"][0],
        json!({"sender": "pve1", "source_mac": format_mac(&sender_mac("forged", "pve1")),
               "vlan": 201, "reason": "bad_authenticator"})
    );
    let warnings = received["warnings"].to_string();
    assert!(
        warnings.contains("forged: 6 frames carried this run's nonce"),
        "{received}"
    );
    assert!(
        !received.to_string().contains(SECRET),
        "the secret is in no result: {received}"
    );
}

#[test]
fn a_nic_that_loses_the_inner_tag_is_named_with_the_receiving_slave() {
    let lab = Lab::new();
    let _faulty_nic = lab.sender_nic(Program::LoseInner {
        tpid: TPID_8021AD,
        vid: 40,
    });
    let (sent, received) = pair_run(&lab, "lost");
    assert_eq!(sent["failed"], json!(null), "{sent}");
    assert_eq!(received["failed"], true, "{received}");
    let pair = &received["pairs"][0];
    assert_eq!(pair["verdict"], "inner_tag_lost", "{pair}");
    assert_eq!(pair["outer_only"], 3);
    assert_eq!(pair["tags_seen"], json!(["802.1ad 40"]));
    let msg = received["msg"].as_str().unwrap();
    assert!(
        msg.starts_with("pve1 -> pve2, VLAN 201: 3 of 3 frames arrived with only the outer tag (outer VLAN 40) on eno1: the inner tag was lost on the way; it left pve1's up40 (driver veth)"),
        "{msg}"
    );
    assert!(msg.contains("pve1 -> pve2, VLAN 202:"), "{msg}");
}

#[test]
fn nothing_sent_is_nothing_arrived() {
    let lab = Lab::new();
    let received = result(start(&lab.receiver, receive("silent", 1)));
    assert_eq!(received["failed"], true, "{received}");
    let verdicts: Vec<&Value> = received["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["verdict"])
        .collect();
    assert_eq!(
        verdicts,
        [&json!("nothing_arrived"), &json!("nothing_arrived")]
    );
    assert!(
        received["msg"]
            .as_str()
            .unwrap()
            .starts_with("pve1 -> pve2, VLAN 201: nothing arrived within 1 s: check that pve1 ran mode=send with run_id silent"),
        "{received}"
    );
}

#[test]
fn a_bridge_or_uplink_that_is_not_there_is_refused_and_nothing_is_made() {
    let lab = Lab::new();
    let before = Lab::links(&lab.sender);
    for (key, value, start_of_msg) in [
        (
            "bridge",
            "vmbr9",
            "bridge: there is no interface vmbr9 on this node",
        ),
        (
            "uplink",
            "bond0.40",
            "uplink: there is no interface bond0.40 on this node",
        ),
        ("uplink", "vmbr1", "uplink: vmbr1 is not a port of vmbr1"),
    ] {
        let mut args = send("bad");
        args[key] = json!(value);
        let out = result(start(&lab.sender, args));
        assert_eq!(out["failed"], true, "{out}");
        assert!(
            out["msg"].as_str().unwrap().starts_with(start_of_msg),
            "{out}"
        );
    }
    assert_eq!(Lab::links(&lab.sender), before);
}

/// The top-level keys of the RETURN block of `collection/plugins/modules/qinq_probe.py`.
fn documented_return_keys() -> std::collections::BTreeSet<String> {
    let docs = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../collection/plugins/modules/qinq_probe.py");
    let text = std::fs::read_to_string(&docs).expect("the module's documentation");
    let block = text
        .split_once("RETURN = r'''")
        .and_then(|(_, rest)| rest.split_once("'''"))
        .map(|(block, _)| block)
        .expect("a RETURN = r''' … ''' block");
    block
        .lines()
        .filter_map(|line| line.strip_suffix(':'))
        .filter(|key| !key.starts_with(' ') && !key.is_empty())
        .map(str::to_string)
        .collect()
}

/// Every key a sender (in check mode), a passing receiver and a failing receiver return is documented in
/// RETURN, and every documented key comes back from each of them (the same report in both
/// modes, on success and failure).
#[test]
fn the_result_keys_are_the_documented_return_keys() {
    let standard = ["changed", "failed", "msg", "invocation", "warnings", "diff"];
    let documented = documented_return_keys();
    let lab = Lab::new();
    let _vlan_device = lab.sender_nic(Program::PushOuter {
        tpid: TPID_8021AD,
        vid: 40,
    });
    // The sender in check mode: the test runs fully (it changes no configuration).
    let receiver = start(&lab.receiver, receive("keys", 10));
    std::thread::sleep(Duration::from_millis(500));
    let mut args = send("keys");
    args["_ansible_check_mode"] = json!(true);
    let sent = result(start(&lab.sender, args));
    let received = result(receiver);
    assert_eq!(
        received["failed"],
        json!(null),
        "check mode sent nothing: {received}"
    );
    let failed = result(start(&lab.receiver, receive("keys-none", 1)));
    for (run, out) in [
        ("send", sent),
        ("receive", received),
        ("failed receive", failed),
    ] {
        let keys: std::collections::BTreeSet<String> = out
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !standard.contains(&k.as_str()))
            .cloned()
            .collect();
        assert_eq!(keys, documented, "{run}: {out}");
    }
}

/// A sender killed with SIGKILL mid-send leaves no probe port: the kernel removes the pair
/// with the namespace only the process held.
#[test]
fn a_sender_killed_mid_send_leaves_no_probe_port() {
    let lab = Lab::new();
    let mut args = send("killed");
    args["count"] = json!(20);
    args["vlans"] = json!((201..=216).collect::<Vec<u16>>());
    let mut sender = start(&lab.sender, args);
    let probe_port = || {
        Lab::links(&lab.sender)
            .iter()
            .any(|l| l.starts_with("dvprobe"))
    };
    let started = std::time::Instant::now();
    while !probe_port() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the probe port never appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // `ip netns exec` runs the module in its own process: this is the module's PID.
    sender.kill().unwrap();
    sender.wait().unwrap();
    let killed = std::time::Instant::now();
    while probe_port() {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "left behind: {:?}",
            Lab::links(&lab.sender)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
