//! The verdicts, from what a receiver captured and read, without a kernel: per sender and
//! inner VLAN, both tags seen, only the outer one (the inner tag lost, the mlx4 case), other
//! tags, or nothing; and whether the zone bridge learned the sender's MAC under the inner
//! VLAN. Also the result's keys ([`Report`]), the same in both modes and on failure.

use crate::frame::{format_mac, sender_mac, Seen, Tag, TPID_8021Q};
use crate::params::Request;
use serde::Serialize;
use std::collections::BTreeSet;

/// One NIC the uplink leaves by (`slaves` in the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlaveReport {
    pub name: String,
    pub driver: Option<String>,
    /// `active` or `backup` in a bond that says; `null` for a single NIC.
    pub role: Option<&'static str>,
}

/// What a sender sent on one VLAN (`sent` in the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sent {
    pub vlan: u16,
    pub frames: u16,
}

/// One captured frame of the run, where it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// The receiving slave.
    pub slave: String,
    pub seen: Seen,
}

deevnet_runtime::choices! {
    /// What arrived from one sender on one inner VLAN (`pairs[].verdict`).
    pub enum Verdict {
        BothTags = "both_tags",
        InnerTagLost = "inner_tag_lost",
        OtherTags = "other_tags",
        NothingArrived = "nothing_arrived",
    }
}

/// The fdb check's outcome for one sender and VLAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FdbVerdict {
    /// Learned under the inner VLAN.
    InnerVlan,
    /// Learned under VLAN 1 (the bridge's default): the inner tag was lost before the bridge.
    Vlan1,
    /// Learned under other VLANs only.
    OtherVlan,
    /// Not learned at all.
    Absent,
    /// The zone bridge does not filter VLANs: its fdb has no VLAN to tell.
    NotChecked,
}

/// The fdb part of a pair (`pairs[].fdb`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FdbReport {
    pub mac: String,
    /// The VLANs the zone bridge learned the MAC under (0 for an entry without one).
    pub vlans: Vec<u16>,
    pub verdict: FdbVerdict,
}

/// One sender and inner VLAN, as this receiver saw it (`pairs` in the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairReport {
    pub sender: String,
    pub vlan: u16,
    pub verdict: Verdict,
    pub ok: bool,
    /// Frames of the run from this sender on this VLAN, on every slave.
    pub frames: usize,
    pub both_tags: usize,
    pub outer_only: usize,
    /// This host's slaves the frames arrived on.
    pub receiving_slaves: Vec<String>,
    /// The sender's NIC(s) and driver, as the sender wrote them into its frames; `null` when
    /// nothing arrived.
    pub sender_slave: Option<String>,
    pub sender_driver: Option<String>,
    /// Each distinct tag stack seen, outer first (`802.1ad 40 / 802.1Q 201`).
    pub tags_seen: Vec<String>,
    pub fdb: FdbReport,
    /// What is wrong and the fix; empty when ok.
    pub message: String,
}

/// Everything the module reports besides `changed` and `msg`, in both modes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub mode: &'static str,
    pub run_id: String,
    /// This host's NICs under the uplink.
    pub slaves: Vec<SlaveReport>,
    /// send: this run's source MAC; receive: `null`.
    pub source_mac: Option<String>,
    /// send: the frames sent per VLAN; receive: empty.
    pub sent: Vec<Sent>,
    /// receive: one entry per sender and VLAN; send: empty.
    pub pairs: Vec<PairReport>,
    /// receive: frames the kernel dropped from the capture (a full queue); a capture that
    /// dropped frames proves nothing about the missing ones.
    pub dropped: u64,
}

impl Report {
    pub fn failures(&self) -> Vec<&PairReport> {
        self.pairs.iter().filter(|p| !p.ok).collect()
    }
}

/// The zone bridge's fdb as the receiver read it: (MAC, VLAN or `None`).
pub type Fdb = [(String, Option<u16>)];

/// The pairs a receiver reports: every expected sender and every sender seen, each on every
/// requested VLAN. `outer`: the uplink's outer tag; its protocol is `None` when the uplink is
/// not a VLAN device (then either protocol counts). `vlan_aware`: the zone bridge filters VLANs.
pub fn evaluate(
    request: &Request,
    receiver: &str,
    outer: (u16, Option<u16>),
    arrivals: &[Arrival],
    fdb: &Fdb,
    vlan_aware: bool,
) -> Vec<PairReport> {
    let mut senders: Vec<String> = request.senders.clone();
    for arrival in arrivals {
        if !senders.contains(&arrival.seen.payload.sender) {
            senders.push(arrival.seen.payload.sender.clone());
        }
    }
    let mut pairs = Vec::new();
    for sender in &senders {
        let mac = sender_mac(&request.run_id, sender);
        for &vlan in &request.vlans {
            // A frame counts for the sender only from the sender's run MAC.
            let mine: Vec<&Arrival> = arrivals
                .iter()
                .filter(|a| {
                    a.seen.payload.sender == *sender
                        && a.seen.payload.vlan == vlan
                        && a.seen.source == mac
                })
                .collect();
            pairs.push(pair(
                request, receiver, outer, sender, vlan, &mine, fdb, vlan_aware,
            ));
        }
    }
    pairs
}

fn is_outer(tag: &Tag, outer: (u16, Option<u16>)) -> bool {
    tag.vid == outer.0 && outer.1.is_none_or(|tpid| tpid == tag.tpid)
}

#[allow(clippy::too_many_arguments)]
fn pair(
    request: &Request,
    receiver: &str,
    outer: (u16, Option<u16>),
    sender: &str,
    vlan: u16,
    arrivals: &[&Arrival],
    fdb: &Fdb,
    vlan_aware: bool,
) -> PairReport {
    let both = |tags: &[Tag]| {
        tags.len() == 2
            && is_outer(&tags[0], outer)
            && tags[1]
                == Tag {
                    tpid: TPID_8021Q,
                    vid: vlan,
                }
    };
    let outer_only = |tags: &[Tag]| tags.len() == 1 && is_outer(&tags[0], outer);
    // Each frame once, however many slaves it arrived on: a switch floods to the backup too.
    let frames = |arrivals: &mut dyn Iterator<Item = &&Arrival>| {
        arrivals
            .map(|a| a.seen.payload.seq)
            .collect::<BTreeSet<_>>()
            .len()
    };
    let both_tags = frames(&mut arrivals.iter().filter(|a| both(&a.seen.tags)));
    let lost: Vec<&&Arrival> = arrivals
        .iter()
        .filter(|a| outer_only(&a.seen.tags))
        .collect();
    let (lost_frames, all_frames) = (
        frames(&mut lost.iter().copied()),
        frames(&mut arrivals.iter()),
    );
    let receiving: BTreeSet<String> = arrivals.iter().map(|a| a.slave.clone()).collect();
    let lost_on: BTreeSet<String> = lost.iter().map(|a| a.slave.clone()).collect();
    let tags_seen: BTreeSet<String> = arrivals
        .iter()
        .map(|a| {
            if a.seen.tags.is_empty() {
                "untagged".to_string()
            } else {
                a.seen
                    .tags
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" / ")
            }
        })
        .collect();
    let first = arrivals.first().map(|a| &a.seen.payload);
    let sender_slave = first.map(|p| p.slave.clone());
    let sender_driver = first.map(|p| p.driver.clone());
    let direction = format!("{sender} -> {receiver}, VLAN {vlan}");
    let outer_text = match outer.1 {
        Some(tpid) => Tag { tpid, vid: outer.0 }.to_string(),
        None => format!("outer VLAN {}", outer.0),
    };
    let (verdict, mut message) = if !lost.is_empty() {
        let at_fault = match (&sender_slave, &sender_driver) {
            (Some(slave), Some(driver)) if !slave.is_empty() => {
                format!("{sender}'s {slave} (driver {driver})")
            }
            _ => format!("{sender}'s uplink NIC"),
        };
        (
            Verdict::InnerTagLost,
            format!(
                "{direction}: {} of {} frames arrived with only the outer tag ({outer_text}) on {}: the inner tag was lost on the way; it left {at_fault}, whose VLAN offload overwrites the inner tag: switch txvlan off there (deevnet.net.qinq_check fix_txvlan=true on {sender}; the role's qinq-uplink tag persists it), then test again",
                lost_frames,
                all_frames,
                lost_on.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    } else if arrivals.is_empty() {
        (
            Verdict::NothingArrived,
            format!(
                "{direction}: nothing arrived within {} s: check that {sender} ran mode=send with run_id {} after this receiver started, that the switch carries {outer_text} between the two hosts, and that VLAN {vlan} is on both zone bridges",
                request.duration.as_secs(),
                request.run_id
            ),
        )
    } else if arrivals.iter().all(|a| both(&a.seen.tags)) {
        (Verdict::BothTags, String::new())
    } else {
        (
            Verdict::OtherTags,
            format!(
                "{direction}: frames arrived with {} where {outer_text} then 802.1Q {vlan} were expected: check the outer VLAN ({}) on {sender}'s uplink and the switch",
                tags_seen.iter().cloned().collect::<Vec<_>>().join(", "),
                request.uplink_vlan
            ),
        )
    };
    let mac = sender_mac(&request.run_id, sender);
    let mac_text = format_mac(&mac);
    let mut vlans: Vec<u16> = fdb
        .iter()
        .filter(|(m, _)| m.eq_ignore_ascii_case(&mac_text))
        .map(|(_, v)| v.unwrap_or(0))
        .collect();
    vlans.sort_unstable();
    vlans.dedup();
    let fdb_verdict = if !vlan_aware {
        FdbVerdict::NotChecked
    } else if vlans.contains(&vlan) {
        FdbVerdict::InnerVlan
    } else if vlans.contains(&1) {
        FdbVerdict::Vlan1
    } else if vlans.is_empty() {
        FdbVerdict::Absent
    } else {
        FdbVerdict::OtherVlan
    };
    // The fdb fails the pair where frames arrived (nothing arrived says enough) and the bridge
    // should have learned the MAC in the inner VLAN.
    let fdb_fails = !arrivals.is_empty()
        && matches!(
            fdb_verdict,
            FdbVerdict::Vlan1 | FdbVerdict::OtherVlan | FdbVerdict::Absent
        );
    if fdb_fails {
        let learned = match fdb_verdict {
            FdbVerdict::Vlan1 => "learned it in VLAN 1, not in VLAN {vlan}: the inner tag was lost before the bridge".replace("{vlan}", &vlan.to_string()),
            FdbVerdict::OtherVlan => format!("learned it in VLAN(s) {vlans:?} only, not in {vlan}"),
            _ => format!("has not learned it in VLAN {vlan}: check that VLAN {vlan} is on the uplink port of {}", request.bridge),
        };
        if !message.is_empty() {
            message.push_str("; ");
        } else {
            message.push_str(&format!("{direction}: "));
        }
        message.push_str(&format!(
            "the zone bridge {} {learned} (sender MAC {mac_text})",
            request.bridge
        ));
    }
    let ok = verdict == Verdict::BothTags && !fdb_fails;
    PairReport {
        sender: sender.to_string(),
        vlan,
        verdict,
        ok,
        frames: all_frames,
        both_tags,
        outer_only: lost_frames,
        receiving_slaves: receiving.into_iter().collect(),
        sender_slave,
        sender_driver,
        tags_seen: tags_seen.into_iter().collect(),
        fdb: FdbReport {
            mac: mac_text,
            vlans,
            verdict: fdb_verdict,
        },
        message,
    }
}
