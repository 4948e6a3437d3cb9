//! Unit tests on built and recorded frames, the verdicts and the options.

use crate::frame::{
    self, build, nonce, recognize, sender_mac, ForgeryReason, Payload, Recognized, RunKey, Seen,
    Tag, TPID_8021AD, TPID_8021Q,
};
use crate::params::{Mode, Params, Request, Secret};
use crate::report::{evaluate, FdbVerdict, PairReport, Report, Verdict, MAX_MESSAGES_IN_MSG};
use crate::tally::{Tally, MAX_FORGED_EXAMPLES, MAX_UNLISTED_SENDERS};

/// The run's secret, as Params::default() has it.
const SECRET: &str = "0123456789abcdef0123456789abcdef";

fn key(run: &str) -> RunKey {
    RunKey::new(run, &Secret::from(SECRET)).unwrap()
}

fn payload_of(run: &str, sender: &str, vlan: u16, seq: u16, total: u16) -> Payload {
    Payload {
        nonce: nonce(run),
        vlan,
        seq,
        total,
        sender: sender.into(),
        slave: "eno1".into(),
        driver: "mlx4_en".into(),
    }
}

fn payload(run: &str, sender: &str, vlan: u16, seq: u16) -> Payload {
    payload_of(run, sender, vlan, seq, 3)
}

fn authentic(recognized: Option<Recognized>) -> Seen {
    match recognized {
        Some(Recognized::Authentic(seen)) => seen,
        other => panic!("not authentic: {other:?}"),
    }
}

fn forged_reason(recognized: Option<Recognized>) -> ForgeryReason {
    match recognized {
        Some(Recognized::Forged(forgery)) => forgery.reason,
        other => panic!("not forged: {other:?}"),
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
    let bytes = build(mac, &payload("run1", "pve1", 201, 0), &key("run1"));
    assert_eq!(&bytes[..6], &[0xff; 6]);
    assert_eq!(&bytes[6..12], &mac);
    assert_eq!(&bytes[12..16], &[0x81, 0x00, 0x00, 201]);
    assert_eq!(&bytes[16..18], &frame::ETHERTYPE.to_be_bytes());
    assert!(bytes.len() >= 60);
}

#[test]
fn double_tagged_single_tagged_and_untagged_frames_are_read_outer_first() {
    let mac = sender_mac("run1", "pve1");
    let key = key("run1");
    let built = build(mac, &payload("run1", "pve1", 201, 1), &key);
    let inner = Tag {
        tpid: TPID_8021Q,
        vid: 201,
    };
    // Both tags in the frame.
    let seen = authentic(recognize(&on_wire(&built, Some(OUTER), false), None, &key));
    assert_eq!(seen.tags, [OUTER, inner]);
    assert_eq!(seen.payload, payload("run1", "pve1", 201, 1));
    // The outer tag in the metadata (an rx VLAN offload), the inner in the frame.
    let seen = authentic(recognize(&built, Some(OUTER), &key));
    assert_eq!(seen.tags, [OUTER, inner]);
    // The inner tag lost: only the outer one.
    let seen = authentic(recognize(&on_wire(&built, Some(OUTER), true), None, &key));
    assert_eq!(seen.tags, [OUTER]);
    assert_eq!(
        seen.payload.vlan, 201,
        "the payload still says which VLAN it was sent on"
    );
    // Untagged.
    let seen = authentic(recognize(&on_wire(&built, None, true), None, &key));
    assert!(seen.tags.is_empty());
}

#[test]
fn another_runs_frames_and_other_traffic_are_ignored() {
    let built = build(
        sender_mac("run2", "pve1"),
        &payload("run2", "pve1", 201, 0),
        &key("run2"),
    );
    assert_eq!(recognize(&built, Some(OUTER), &key("run1")), None);
    let mut other = built.clone();
    other[16..18].copy_from_slice(&0x0800u16.to_be_bytes());
    assert_eq!(recognize(&other, None, &key("run2")), None);
    assert_eq!(
        recognize(&built[..20], None, &key("run2")),
        None,
        "cut short"
    );
}

/// A frame as it arrived on `slave`, recognized with run `run`'s key.
type Arrival = (String, Recognized);

fn arrival_of(
    slave: &str,
    run: &str,
    sender: &str,
    (vlan, seq, total): (u16, u16, u16),
    lose: bool,
) -> Arrival {
    let key = key(run);
    let built = build(
        sender_mac(run, sender),
        &payload_of(run, sender, vlan, seq, total),
        &key,
    );
    let recognized = recognize(&on_wire(&built, Some(OUTER), lose), None, &key).unwrap();
    (slave.into(), recognized)
}

fn arrival(slave: &str, run: &str, sender: &str, vlan: u16, seq: u16, lose: bool) -> Arrival {
    arrival_of(slave, run, sender, (vlan, seq, 3), lose)
}

fn tally(request: &Request, outer: (u16, Option<u16>), arrivals: &[Arrival]) -> Tally {
    let mut tally = Tally::new(request, outer);
    for (slave, recognized) in arrivals {
        tally.add(slave, recognized.clone());
    }
    tally
}

/// The verdicts of `request`'s receiver pve2 on `arrivals`, outer tag 802.1ad 40.
fn judge(
    request: &Request,
    arrivals: &[Arrival],
    fdb: &[(String, Option<u16>)],
) -> Vec<PairReport> {
    let counted = tally(request, (40, Some(TPID_8021AD)), arrivals);
    evaluate(request, "pve2", &counted, fdb, true)
}

#[test]
fn both_tags_and_the_mac_in_the_inner_vlan_pass() {
    let request = request();
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let arrivals: Vec<Arrival> = (0..3)
        .map(|s| arrival("eno1", "run1", "pve1", 201, s, false))
        .collect();
    let pairs = judge(&request, &arrivals, &[(mac, Some(201))]);
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
    let pairs = judge(&request, &arrivals, &[(mac, Some(1))]);
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
        (0..3)
            .flat_map(|seq| {
                ["eno1", "eno2"].map(|slave| arrival(slave, "run1", "pve1", 201, seq, lose))
            })
            .collect()
    };
    let kept = judge(
        &request,
        &on_both_slaves(false),
        &[(mac.clone(), Some(201))],
    );
    assert_eq!(kept[0].verdict, Verdict::BothTags, "{}", kept[0].message);
    assert_eq!((kept[0].received, kept[0].both_tags), (3, 3));
    let pairs = judge(&request, &on_both_slaves(true), &[(mac, Some(1))]);
    let pair = &pairs[0];
    assert_eq!((pair.received, pair.outer_only, pair.both_tags), (3, 3, 0));
    assert_eq!(pair.receiving_slaves, ["eno1", "eno2"]);
    assert!(
        pair.message
            .contains("3 of 3 frames arrived with only the outer tag (802.1ad 40) on eno1, eno2"),
        "{}",
        pair.message
    );
}

#[test]
fn an_expected_sender_without_frames_is_nothing_arrived_and_a_foreign_mac_does_not_count() {
    let request = request();
    // pve1's name in the payload, but not pve1's run MAC: not counted for pve1.
    let key = key("run1");
    let mut built = build(
        sender_mac("run1", "pve1"),
        &payload("run1", "pve1", 201, 0),
        &key,
    );
    built[6..12].copy_from_slice(&sender_mac("run1", "intruder"));
    let forged = recognize(&built, Some(OUTER), &key).unwrap();
    let counted = tally(&request, (40, None), &[("eno1".into(), forged)]);
    assert_eq!(counted.forged().frames, 1);
    let pairs = evaluate(&request, "pve2", &counted, &[], false);
    assert_eq!(pairs.len(), 1, "the forged frame's sender is not reported");
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

// QP1: the nonce, the run MAC and the sender's name are public; only the secret vouches.

/// What an attacker on the segment sends: pve1's frames as pve1 would build them (the run id,
/// hence the nonce and pve1's run MAC, are public), keyed with a guess of the secret.
fn forged_by_guess(seq: u16) -> Arrival {
    let guessed = RunKey::new("run1", &Secret::from("guessed-but-wrong-secret")).unwrap();
    let built = build(
        sender_mac("run1", "pve1"),
        &payload("run1", "pve1", 201, seq),
        &guessed,
    );
    let recognized = recognize(&on_wire(&built, Some(OUTER), false), None, &key("run1"))
        .expect("a frame with the run's nonce is recognized, as forged");
    ("eno1".into(), recognized)
}

#[test]
fn frames_with_the_public_nonce_but_not_the_secret_are_forged_and_never_arrivals() {
    let request = request();
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let forged: Vec<Arrival> = (0..3).map(forged_by_guess).collect();
    for (_, recognized) in &forged {
        assert_eq!(
            forged_reason(Some(recognized.clone())),
            ForgeryReason::BadAuthenticator
        );
    }
    let counted = tally(&request, (40, Some(TPID_8021AD)), &forged);
    assert_eq!(counted.forged().frames, 3);
    let pairs = evaluate(&request, "pve2", &counted, &[(mac, Some(201))], true);
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0].verdict, Verdict::NothingArrived, "{:?}", pairs[0]);
    assert!(!pairs[0].ok);
    assert_eq!((pairs[0].received, pairs[0].sent), (0, None));
    let examples = &counted.forged().examples;
    assert_eq!(examples[0].sender, "pve1");
    assert_eq!(examples[0].vlan, Some(201));
}

#[test]
fn a_genuine_frame_altered_on_the_way_or_cut_short_is_forged() {
    let key = key("run1");
    let built = build(
        sender_mac("run1", "pve1"),
        &payload("run1", "pve1", 201, 0),
        &key,
    );
    // The payload starts after the 12 address bytes, the tag (4) and the ethertype (2); its
    // sequence number after the magic (8), the nonce (8) and the VLAN (2).
    let seq_at = 18 + 8 + 8 + 2;
    let mut renumbered = built.clone();
    renumbered[seq_at + 1] = 1;
    assert_eq!(
        forged_reason(recognize(&renumbered, Some(OUTER), &key)),
        ForgeryReason::BadAuthenticator
    );
    // Another source MAC: the authenticator covers the source.
    let mut readdressed = built.clone();
    readdressed[11] ^= 1;
    assert_eq!(
        forged_reason(recognize(&readdressed, Some(OUTER), &key)),
        ForgeryReason::BadAuthenticator
    );
    // Without its authenticator (a version-1 frame with version 2's magic).
    let unsigned_len = 18 + 8 + 8 + 6 + 3 + "pve1eno1mlx4_en".len();
    assert_eq!(
        forged_reason(recognize(&built[..unsigned_len], Some(OUTER), &key)),
        ForgeryReason::BadAuthenticator
    );
    // Cut inside the payload.
    assert_eq!(
        forged_reason(recognize(&built[..18 + 8 + 8 + 3], Some(OUTER), &key)),
        ForgeryReason::Malformed
    );
    // Signed with the run's secret but numbered past its count: refused too.
    let past = build(
        sender_mac("run1", "pve1"),
        &payload_of("run1", "pve1", 201, 3, 3),
        &key,
    );
    assert_eq!(
        forged_reason(recognize(&past, Some(OUTER), &key)),
        ForgeryReason::Malformed
    );
}

#[test]
fn the_secret_is_checked_and_never_shown() {
    let secret = "short-secret";
    let msg = Request::from_params(Params {
        secret: Secret::from(secret),
        ..Params::default()
    })
    .unwrap_err();
    assert!(
        msg.starts_with("secret: the value given (not shown: no_log) is 12 bytes long, not 16 to 256; give the same random text"),
        "{msg}"
    );
    assert!(!msg.contains(secret), "{msg}");
    let request = Request::from_params(Params::default()).unwrap();
    let debug = format!("{request:?} {:?}", key("run1"));
    assert!(!debug.contains(SECRET), "{debug}");
}

// QP2: a flood of frames, each naming another sender, costs bounded state.

#[test]
fn thirty_thousand_forged_senders_leave_the_state_bounded() {
    let request = request();
    let mut counted = Tally::new(&request, (40, Some(TPID_8021AD)));
    let guessed = RunKey::new("run1", &Secret::from("guessed-but-wrong-secret")).unwrap();
    let key = key("run1");
    for n in 0..30_000u32 {
        let sender = format!("forged{n}");
        let built = build(
            sender_mac("run1", &sender),
            &payload("run1", &sender, 201, 0),
            &guessed,
        );
        tally_frame(&mut counted, &built, &key);
    }
    assert_eq!(counted.forged().frames, 30_000);
    assert_eq!(counted.forged().examples.len(), MAX_FORGED_EXAMPLES);
    assert_eq!(counted.senders_tracked(), 1, "only the listed pve1");
    assert_eq!(evaluate(&request, "pve2", &counted, &[], false).len(), 1);
}

fn tally_frame(counted: &mut Tally, built: &[u8], key: &RunKey) {
    let recognized = recognize(built, Some(OUTER), key).expect("a frame of the run");
    counted.add("eno1", recognized);
}

/// Even senders that hold the secret (a host of the run gone wrong) cannot grow the state.
#[test]
fn thirty_thousand_authentic_unlisted_senders_are_capped_and_counted() {
    let request = request();
    let mut counted = Tally::new(&request, (40, Some(TPID_8021AD)));
    let key = key("run1");
    for n in 0..30_000u32 {
        let sender = format!("host{n}");
        let built = build(
            sender_mac("run1", &sender),
            &payload("run1", &sender, 201, 0),
            &key,
        );
        tally_frame(&mut counted, &built, &key);
    }
    assert_eq!(counted.senders_tracked(), 1 + MAX_UNLISTED_SENDERS);
    assert_eq!(counted.untracked(), 30_000 - MAX_UNLISTED_SENDERS as u64);
    assert_eq!(counted.forged().frames, 0);
    let pairs = evaluate(&request, "pve2", &counted, &[], false);
    assert_eq!(pairs.len(), 1 + MAX_UNLISTED_SENDERS);
    assert_eq!(pairs[0].sender, "pve1", "the listed sender first");
}

#[test]
fn the_failure_message_holds_a_bounded_number_of_pairs() {
    let request = Request::from_params(Params {
        senders: (0..64).map(|n| format!("host{n}")).collect(),
        vlans: (201..=216).collect(),
        ..Params::default()
    })
    .unwrap();
    let counted = Tally::new(&request, (40, Some(TPID_8021AD)));
    let pairs = evaluate(&request, "pve2", &counted, &[], false);
    assert_eq!(pairs.len(), 64 * 16);
    let report = Report {
        mode: "receive",
        run_id: "run1".into(),
        slaves: Vec::new(),
        source_mac: None,
        sent: Vec::new(),
        pairs,
        dropped: 0,
        forged: Default::default(),
        untracked: 0,
    };
    let msg = report.failure_message().unwrap();
    assert_eq!(msg.lines().count(), MAX_MESSAGES_IN_MSG + 1, "{msg}");
    assert!(
        msg.ends_with(&format!(
            "and {} more broken sender/VLAN pairs: see pairs",
            64 * 16 - MAX_MESSAGES_IN_MSG
        )),
        "{msg}"
    );
}

#[test]
fn the_capture_ends_once_every_listed_frame_is_in_counting_each_frame_once() {
    let request = request();
    let mut counted = Tally::new(&request, (40, Some(TPID_8021AD)));
    for seq in [0, 1, 1, 0] {
        let (slave, recognized) = arrival("eno1", "run1", "pve1", 201, seq, false);
        counted.add(&slave, recognized);
        assert!(!counted.all_in(), "frame 2 of 3 is missing");
    }
    let (slave, recognized) = arrival("eno2", "run1", "pve1", 201, 2, false);
    counted.add(&slave, recognized);
    assert!(counted.all_in());
}

// QP3: a pair passes only when enough of its frames arrive.

fn frames_of_twenty(seqs: impl Iterator<Item = u16>) -> Vec<Arrival> {
    seqs.map(|seq| arrival_of("eno1", "run1", "pve1", (201, seq, 20), false))
        .collect()
}

#[test]
fn one_frame_of_twenty_fails_by_default_with_the_loss_reported() {
    let request = request();
    assert_eq!(request.max_loss_percent, 20);
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let pairs = judge(&request, &frames_of_twenty(0..1), &[(mac, Some(201))]);
    let pair = &pairs[0];
    assert_eq!(pair.verdict, Verdict::FramesLost, "{pair:?}");
    assert!(!pair.ok);
    assert_eq!(
        (pair.sent, pair.received, pair.loss_percent),
        (Some(20), 1, 95)
    );
    assert!(
        pair.message.starts_with(
            "pve1 -> pve2, VLAN 201: only 1 of 20 frames arrived (95% lost, more than max_loss_percent=20)"
        ),
        "{}",
        pair.message
    );
}

#[test]
fn a_pair_passes_at_most_max_loss_percent_lost() {
    let request = request();
    let mac = frame::format_mac(&sender_mac("run1", "pve1"));
    let fdb = [(mac, Some(201))];
    let sixteen = judge(&request, &frames_of_twenty(0..16), &fdb);
    assert_eq!(sixteen[0].verdict, Verdict::BothTags, "{:?}", sixteen[0]);
    assert!(sixteen[0].ok);
    assert_eq!(sixteen[0].loss_percent, 20);
    let fifteen = judge(&request, &frames_of_twenty(0..15), &fdb);
    assert_eq!(fifteen[0].verdict, Verdict::FramesLost);
    // Stricter: every frame must arrive.
    let strict = Request::from_params(Params {
        senders: vec!["pve1".into()],
        max_loss_percent: 0,
        ..Params::default()
    })
    .unwrap();
    let nineteen = judge(&strict, &frames_of_twenty(0..19), &fdb);
    assert_eq!(nineteen[0].verdict, Verdict::FramesLost);
    let twenty = judge(&strict, &frames_of_twenty(0..20), &fdb);
    assert!(twenty[0].ok, "{:?}", twenty[0]);
    assert_eq!(twenty[0].loss_percent, 0);
}

#[test]
fn max_loss_percent_past_half_is_refused() {
    let msg = Request::from_params(Params {
        max_loss_percent: 51,
        ..Params::default()
    })
    .unwrap_err();
    assert!(
        msg.starts_with(
            "max_loss_percent=51 is out of range; give a percentage of lost frames from 0 to 50"
        ),
        "{msg}"
    );
}
