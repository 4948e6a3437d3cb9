//! The verdicts, from what a receiver captured and read, without a kernel: per sender and
//! inner VLAN, both tags seen, only the outer one (the inner tag lost, the mlx4 case), other
//! tags, too many frames lost, or nothing; and whether the zone bridge learned the sender's
//! MAC under the inner VLAN. Also the result's keys ([`Report`]), the same in both modes and
//! on failure.
//!
//! What arrived is counted frame by frame into a [`Tally`] (constant work
//! per frame, bounded state); the verdicts are read from it once the capture ends.

use crate::frame::{format_mac, sender_mac};
use crate::params::Request;
use crate::tally::{ForgedReport, PairTally, Tally};
use serde::Serialize;
use std::collections::HashMap;

/// The most pair messages a receiver's `msg` holds; the rest are in `pairs` (a `msg` the size
/// of every broken pair of a large run would swamp the play's output).
pub const MAX_MESSAGES_IN_MSG: usize = 16;

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

deevnet_runtime::choices! {
    /// What arrived from one sender on one inner VLAN (`pairs[].verdict`).
    pub enum Verdict {
        BothTags = "both_tags",
        InnerTagLost = "inner_tag_lost",
        OtherTags = "other_tags",
        /// Both tags on every frame that arrived, but more than `max_loss_percent` were lost.
        FramesLost = "frames_lost",
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
    /// Frames the sender sent on this VLAN, as its authenticated frames say; `null` when
    /// nothing arrived.
    pub sent: Option<u16>,
    /// Distinct frames of the run from this sender on this VLAN that arrived, on any slave.
    pub received: usize,
    /// The share of `sent` that did not arrive, rounded (100 when nothing arrived).
    pub loss_percent: u8,
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
    /// receive: frames with the run's nonce that do not prove their sender, counted, with a
    /// few examples; never counted as arrivals.
    pub forged: ForgedReport,
    /// receive: authentic frames not counted: on a VLAN this receiver does not test, or from
    /// an unlisted sender past the cap on unlisted senders.
    pub untracked: u64,
}

impl Report {
    pub fn failures(&self) -> Vec<&PairReport> {
        self.pairs.iter().filter(|p| !p.ok).collect()
    }

    /// The receiver's warning about forged frames, naming a few: someone on the segment sends
    /// frames with this run's nonce that its secret did not authenticate.
    pub fn forged_warning(&self) -> Option<String> {
        if self.forged.frames == 0 {
            return None;
        }
        let examples: Vec<String> = self
            .forged
            .examples
            .iter()
            .map(|f| {
                let vlan = f.vlan.map_or("?".to_string(), |v| v.to_string());
                format!(
                    "'{}' from {} on VLAN {vlan} ({})",
                    f.sender, f.source_mac, f.reason
                )
            })
            .collect();
        Some(format!(
            "forged: {} frames carried this run's nonce without proving their sender with the run's secret, and were not counted (e.g. {}): something on the segment - a guest in an inner VLAN sees every probe frame - sends frames in the probe's name; find the source MACs in the zone bridge's fdb, and check that every host of the run got the same secret",
            self.forged.frames,
            examples.join(", ")
        ))
    }

    /// The receiver's failure message: the first [`MAX_MESSAGES_IN_MSG`] broken pairs' messages,
    /// how many more there are, and the capture's drops. `None` when every pair passed.
    pub fn failure_message(&self) -> Option<String> {
        let failures = self.failures();
        if failures.is_empty() {
            return None;
        }
        let mut lines: Vec<String> = failures
            .iter()
            .take(MAX_MESSAGES_IN_MSG)
            .map(|p| p.message.clone())
            .collect();
        if failures.len() > MAX_MESSAGES_IN_MSG {
            lines.push(format!(
                "and {} more broken sender/VLAN pairs: see pairs",
                failures.len() - MAX_MESSAGES_IN_MSG
            ));
        }
        if self.dropped > 0 {
            lines.push(format!(
                "the capture dropped {} frames (a full queue): the missing ones may be among them",
                self.dropped
            ));
        }
        Some(lines.join("\n"))
    }
}

/// The zone bridge's fdb as the receiver read it: (MAC, VLAN or `None`).
pub type Fdb = [(String, Option<u16>)];

/// The pairs a receiver reports: every expected sender and every sender seen (up to the cap),
/// each on every requested VLAN, in that order. `vlan_aware`: the zone bridge filters VLANs.
pub fn evaluate(
    request: &Request,
    receiver: &str,
    tally: &Tally,
    fdb: &Fdb,
    vlan_aware: bool,
) -> Vec<PairReport> {
    // Each MAC's VLANs, read once: the fdb may hold thousands of entries.
    let mut learned: HashMap<String, Vec<u16>> = HashMap::new();
    for (mac, vlan) in fdb {
        learned
            .entry(mac.to_ascii_lowercase())
            .or_default()
            .push(vlan.unwrap_or(0));
    }
    tally
        .pairs()
        .map(|(sender, vlan, counted)| {
            let mac = format_mac(&sender_mac(&request.run_id, sender));
            let mut vlans = learned.get(&mac).cloned().unwrap_or_default();
            vlans.sort_unstable();
            vlans.dedup();
            pair(
                request,
                receiver,
                tally.outer(),
                sender,
                vlan,
                counted,
                (mac, vlans),
                vlan_aware,
            )
        })
        .collect()
}

/// The rounded share of `sent` that did not arrive.
fn loss_percent(sent: u16, received: usize) -> u8 {
    let sent = usize::from(sent);
    let lost = sent.saturating_sub(received);
    ((lost * 100 + sent / 2) / sent.max(1)).min(100) as u8
}

#[allow(clippy::too_many_arguments)]
fn pair(
    request: &Request,
    receiver: &str,
    outer: (u16, Option<u16>),
    sender: &str,
    vlan: u16,
    counted: &PairTally,
    (mac_text, vlans): (String, Vec<u16>),
    vlan_aware: bool,
) -> PairReport {
    let counts = Counts {
        received: counted.received(),
        lost_frames: counted.outer_only.count_ones() as usize,
        sent: counted.total,
    };
    let (received, lost_frames, sent) = (counts.received, counts.lost_frames, counts.sent);
    let both_tags = counted.both_tags.count_ones() as usize;
    let loss = sent.map_or(100, |sent| loss_percent(sent, received));
    let direction = format!("{sender} -> {receiver}, VLAN {vlan}");
    let (verdict, mut message) = frames_verdict(
        request,
        (sender, receiver, vlan),
        &direction,
        outer,
        counted,
        &counts,
        loss,
    );
    let fdb_verdict = fdb_verdict(vlan_aware, &vlans, vlan);
    // The fdb fails the pair where frames arrived (nothing arrived says enough) and the bridge
    // should have learned the MAC in the inner VLAN.
    let fdb_fails = received > 0
        && matches!(
            fdb_verdict,
            FdbVerdict::Vlan1 | FdbVerdict::OtherVlan | FdbVerdict::Absent
        );
    if fdb_fails {
        let learned = fdb_problem(request, fdb_verdict, &vlans, vlan);
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
        sent,
        received,
        loss_percent: loss,
        both_tags,
        outer_only: lost_frames,
        receiving_slaves: counted.receiving_slaves.iter().cloned().collect(),
        sender_slave: counted.sender_slave.clone(),
        sender_driver: counted.sender_driver.clone(),
        tags_seen: counted.tags_seen.iter().cloned().collect(),
        fdb: FdbReport {
            mac: mac_text,
            vlans,
            verdict: fdb_verdict,
        },
        message,
    }
}

/// Where the zone bridge learned the sender's MAC (`vlans`), against the pair's inner `vlan`.
fn fdb_verdict(vlan_aware: bool, vlans: &[u16], vlan: u16) -> FdbVerdict {
    if !vlan_aware {
        FdbVerdict::NotChecked
    } else if vlans.contains(&vlan) {
        FdbVerdict::InnerVlan
    } else if vlans.contains(&1) {
        FdbVerdict::Vlan1
    } else if vlans.is_empty() {
        FdbVerdict::Absent
    } else {
        FdbVerdict::OtherVlan
    }
}

/// What the bridge learned, in a failing pair's message.
fn fdb_problem(request: &Request, fdb_verdict: FdbVerdict, vlans: &[u16], vlan: u16) -> String {
    match fdb_verdict {
        FdbVerdict::Vlan1 => format!(
            "learned it in VLAN 1, not in VLAN {vlan}: the inner tag was lost before the bridge"
        ),
        FdbVerdict::OtherVlan => format!("learned it in VLAN(s) {vlans:?} only, not in {vlan}"),
        _ => format!(
            "has not learned it in VLAN {vlan}: check that VLAN {vlan} is on the uplink port of {}",
            request.bridge
        ),
    }
}

/// A pair's frames counted: how many were sent (as the sender's frames said), arrived, and
/// arrived with the outer tag only.
struct Counts {
    sent: Option<u16>,
    received: usize,
    lost_frames: usize,
}

/// What the frames say about one pair: its verdict and, unless both tags arrived, what went
/// wrong and what to do, the message opening with `direction`.
fn frames_verdict(
    request: &Request,
    (sender, receiver, vlan): (&str, &str, u16),
    direction: &str,
    outer: (u16, Option<u16>),
    counted: &PairTally,
    counts: &Counts,
    loss: u8,
) -> (Verdict, String) {
    let Counts {
        sent,
        received,
        lost_frames,
    } = *counts;
    // Exact, not the rounded percentage: lost * 100 > max * sent.
    let too_many_lost = sent.is_some_and(|sent| {
        usize::from(sent).saturating_sub(received) * 100
            > usize::from(request.max_loss_percent) * usize::from(sent)
    });
    let outer_text = match outer.1 {
        Some(tpid) => crate::frame::Tag { tpid, vid: outer.0 }.to_string(),
        None => format!("outer VLAN {}", outer.0),
    };
    if lost_frames > 0 {
        let at_fault = match (&counted.sender_slave, &counted.sender_driver) {
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
                received,
                counted.lost_on.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    } else if received == 0 {
        (
            Verdict::NothingArrived,
            format!(
                "{direction}: nothing arrived within {} s: check that {sender} ran mode=send with run_id {} and the same secret after this receiver started, that the switch carries {outer_text} between the two hosts, and that VLAN {vlan} is on both zone bridges",
                request.duration.as_secs(),
                request.run_id
            ),
        )
    } else if counted.other_tags != 0 {
        (
            Verdict::OtherTags,
            format!(
                "{direction}: frames arrived with {} where {outer_text} then 802.1Q {vlan} were expected: check the outer VLAN ({}) on {sender}'s uplink and the switch",
                counted.tags_seen.iter().cloned().collect::<Vec<_>>().join(", "),
                request.uplink_vlan
            ),
        )
    } else if too_many_lost {
        (
            Verdict::FramesLost,
            format!(
                "{direction}: only {received} of {} frames arrived ({loss}% lost, more than max_loss_percent={}): those that arrived kept both tags, but the path drops frames: check the error and drop counters of the slaves and switch ports between {sender} and {receiver} (ip -s link, ethtool -S) and this capture's dropped count, then test again",
                sent.unwrap_or_default(),
                request.max_loss_percent
            ),
        )
    } else {
        (Verdict::BothTags, String::new())
    }
}
