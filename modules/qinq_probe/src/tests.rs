//! Unit tests on built and recorded frames, the verdicts and the options.

use crate::frame::{
    self, build, nonce, recognize, sender_mac, Payload, Tag, TPID_8021AD, TPID_8021Q,
};
use crate::params::{Mode, Params, Request};
use crate::report::{evaluate, Arrival, FdbVerdict, Verdict};

fn payload(run: &str, sender: &str, vlan: u16, seq: u16) -> Payload {
    Payload {
        nonce: nonce(run),
        vlan,
        seq,
        total: 3,
        sender: sender.into(),
        slave: "eno1".into(),
        driver: "mlx4_en".into(),
    }
}

/// A frame as a sender built it, then as the wire would carry it: the outer tag `outer`
/// pushed in front of the inner one, or (a NIC that loses the inner tag) in its place.
fn on_wire(frame: &[u8], outer: Option<Tag>, lose_inner: bool) -> Vec<u8> {
    let mut bytes = frame[..12].to_vec();
    if let Some(tag) = outer {
        bytes.extend_from_slice(&tag.tpid.to_be_bytes());
        bytes.extend_from_slice(&tag.vid.to_be_bytes());
    }
    bytes.extend_from_slice(if lose_inner {
        &frame[16..]
    } else {
        &frame[12..]
    });
    bytes
}

const OUTER: Tag = Tag {
    tpid: TPID_8021AD,
    vid: 40,
};

fn request() -> Request {
    Request::from_params(Params {
        senders: vec!["pve1".into()],
        ..Params::default()
    })
    .unwrap()
}

#[test]
fn a_built_frame_is_broadcast_from_the_run_mac_with_the_inner_tag() {
    let mac = sender_mac("run1", "pve1");
    assert_eq!(mac[0], 0x02, "locally administered unicast");
    assert_ne!(mac, sender_mac("run1", "pve2"));
    assert_ne!(mac, sender_mac("run2", "pve1"));
    let bytes = build(mac, &payload("run1", "pve1", 201, 0));
    assert_eq!(&bytes[..6], &[0xff; 6]);
    assert_eq!(&bytes[6..12], &mac);
    assert_eq!(&bytes[12..16], &[0x81, 0x00, 0x00, 201]);
    assert_eq!(&bytes[16..18], &frame::ETHERTYPE.to_be_bytes());
    assert!(bytes.len() >= 60);
}

#[test]
fn double_tagged_single_tagged_and_untagged_frames_are_read_outer_first() {
    let mac = sender_mac("run1", "pve1");
    let built = build(mac, &payload("run1", "pve1", 201, 1));
    let inner = Tag {
        tpid: TPID_8021Q,
        vid: 201,
    };
    // Both tags in the frame.
    let seen = recognize(&on_wire(&built, Some(OUTER), false), None, nonce("run1")).unwrap();
    assert_eq!(seen.tags, [OUTER, inner]);
    assert_eq!(seen.payload, payload("run1", "pve1", 201, 1));
    // The outer tag in the metadata (an rx VLAN offload), the inner in the frame.
    let seen = recognize(&built, Some(OUTER), nonce("run1")).unwrap();
    assert_eq!(seen.tags, [OUTER, inner]);
    // The inner tag lost: only the outer one.
    let seen = recognize(&on_wire(&built, Some(OUTER), true), None, nonce("run1")).unwrap();
    assert_eq!(seen.tags, [OUTER]);
    assert_eq!(
        seen.payload.vlan, 201,
        "the payload still says which VLAN it was sent on"
    );
    // Untagged.
    let seen = recognize(&on_wire(&built, None, true), None, nonce("run1")).unwrap();
    assert!(seen.tags.is_empty());
}

#[test]
fn another_runs_frames_and_other_traffic_are_ignored() {
    let built = build(sender_mac("run2", "pve1"), &payload("run2", "pve1", 201, 0));
    assert_eq!(recognize(&built, Some(OUTER), nonce("run1")), None);
    let mut other = built.clone();
    other[16..18].copy_from_slice(&0x0800u16.to_be_bytes());
    assert_eq!(recognize(&other, None, nonce("run2")), None);
    assert_eq!(
        recognize(&built[..20], None, nonce("run2")),
        None,
        "cut short"
    );
}

fn arrival(slave: &str, run: &str, sender: &str, vlan: u16, seq: u16, lose: bool) -> Arrival {
    let built = build(sender_mac(run, sender), &payload(run, sender, vlan, seq));
    Arrival {
        slave: slave.into(),
        seen: recognize(&on_wire(&built, Some(OUTER), lose), None, nonce(run)).unwrap(),
    }
}

#[test]
fn both_tags_and_the_mac_in_the_inner_vlan_pass() {
    let request = request();
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let arrivals: Vec<Arrival> = (0..3)
        .map(|s| arrival("eno1", "run1", "pve1", 201, s, false))
        .collect();
    let pairs = evaluate(
        &request,
        "pve2",
        (40, Some(TPID_8021AD)),
        &arrivals,
        &[(mac, Some(201))],
        true,
    );
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].verdict, Verdict::BothTags);
    assert!(pairs[0].ok, "{:?}", pairs[0]);
    assert_eq!(pairs[0].fdb.verdict, FdbVerdict::InnerVlan);
}

#[test]
fn the_lost_inner_tag_names_the_receiving_slave_and_the_senders_nic() {
    let request = request();
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let arrivals = vec![arrival("eno2", "run1", "pve1", 201, 0, true)];
    let pairs = evaluate(
        &request,
        "pve2",
        (40, Some(TPID_8021AD)),
        &arrivals,
        &[(mac, Some(1))],
        true,
    );
    let pair = &pairs[0];
    assert_eq!(pair.verdict, Verdict::InnerTagLost);
    assert!(!pair.ok);
    assert_eq!(pair.receiving_slaves, ["eno2"]);
    assert_eq!(pair.fdb.verdict, FdbVerdict::Vlan1);
    assert!(pair.message.starts_with("pve1 -> pve2, VLAN 201: 1 of 1 frames arrived with only the outer tag (802.1ad 40) on eno2"), "{}", pair.message);
    assert!(
        pair.message
            .contains("it left pve1's eno1 (driver mlx4_en)"),
        "{}",
        pair.message
    );
    assert!(
        pair.message
            .contains("learned it in VLAN 1, not in VLAN 201"),
        "{}",
        pair.message
    );
}

/// A switch floods the frames to the backup slave too: each frame counts once, and the message
/// names both slaves it was seen on.
#[test]
fn a_frame_seen_on_the_active_and_the_backup_slave_counts_once() {
    let request = request();
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let on_both_slaves = |lose: bool| -> Vec<Arrival> {
        (0..2)
            .flat_map(|seq| {
                ["eno1", "eno2"].map(|slave| arrival(slave, "run1", "pve1", 201, seq, lose))
            })
            .collect()
    };
    let kept = evaluate(
        &request,
        "pve2",
        (40, Some(TPID_8021AD)),
        &on_both_slaves(false),
        &[(mac.clone(), Some(201))],
        true,
    );
    assert_eq!(kept[0].verdict, Verdict::BothTags, "{}", kept[0].message);
    assert_eq!((kept[0].frames, kept[0].both_tags), (2, 2));
    let pairs = evaluate(
        &request,
        "pve2",
        (40, Some(TPID_8021AD)),
        &on_both_slaves(true),
        &[(mac, Some(1))],
        true,
    );
    let pair = &pairs[0];
    assert_eq!((pair.frames, pair.outer_only, pair.both_tags), (2, 2, 0));
    assert_eq!(pair.receiving_slaves, ["eno1", "eno2"]);
    assert!(
        pair.message
            .contains("2 of 2 frames arrived with only the outer tag (802.1ad 40) on eno1, eno2"),
        "{}",
        pair.message
    );
}

#[test]
fn an_expected_sender_without_frames_is_nothing_arrived_and_a_foreign_mac_does_not_count() {
    let request = request();
    // pve1's name in the payload, but not pve1's run MAC: not counted for pve1.
    let mut forged = arrival("eno1", "run1", "pve1", 201, 0, false);
    forged.seen.source = sender_mac("run1", "intruder");
    let pairs = evaluate(&request, "pve2", (40, None), &[forged], &[], false);
    assert_eq!(pairs[0].verdict, Verdict::NothingArrived);
    assert!(
        pairs[0].message.contains("nothing arrived within 10 s"),
        "{}",
        pairs[0].message
    );
    assert_eq!(pairs[0].fdb.verdict, FdbVerdict::NotChecked);
}

#[test]
fn bad_input_names_the_parameter_the_value_and_the_fix() {
    let refused = |params: Params| Request::from_params(params).unwrap_err();
    let cases = [
        (
            Params {
                vlans: vec![4095],
                ..Params::default()
            },
            "vlans[0]: VLAN 4095 is outside 1-4094",
        ),
        (
            Params {
                uplink_vlan: 0,
                ..Params::default()
            },
            "uplink_vlan: VLAN 0 is outside 1-4094",
        ),
        (
            Params {
                vlans: (1..=17).collect(),
                ..Params::default()
            },
            "vlans: 17 VLANs given, at most 16",
        ),
        (
            Params {
                count: 21,
                ..Params::default()
            },
            "count=21 is out of range; give a number of frames per VLAN from 1 to 20",
        ),
        (
            Params {
                duration: 121,
                ..Params::default()
            },
            "duration=121 is out of range; give a number of seconds from 1 to 120",
        ),
        (
            Params {
                mode: Mode::Send,
                ..Params::default()
            },
            "name: mode=send needs this host's name",
        ),
        (
            Params {
                run_id: "a b".into(),
                ..Params::default()
            },
            "run_id: 'a b' is not 1 to 64 printable ASCII",
        ),
    ];
    for (params, start) in cases {
        let msg = refused(params);
        assert!(msg.starts_with(start), "{msg}");
    }
}
