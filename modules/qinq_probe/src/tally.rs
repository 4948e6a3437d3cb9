//! The receiver's count of what arrived, frame by frame, without a kernel: constant work per
//! frame and bounded state, whatever the frames claim. A capture sees what anyone on the
//! segment sends, so a flood of frames each naming another sender must cost neither time per
//! frame that grows with the frames before it, nor memory per name:
//!
//! - an authentic frame is found by its sender in a hash map and its VLAN among at most
//!   [`MAX_VLANS`](crate::params::MAX_VLANS); its sequence number is a bit in a `u32`;
//! - the listed senders are tracked from the start, at most [`MAX_UNLISTED_SENDERS`] others as
//!   they are first seen, and frames past that only counted (`untracked`);
//! - a forged frame is counted, and only the first [`MAX_FORGED_EXAMPLES`] are kept.

use crate::frame::{Forgery, Recognized, Seen, Tag, TPID_8021Q};
use crate::params::Request;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// Senders of the run reported although not listed in `senders` (they prove themselves with
/// the run's secret, so only a host of the run can add one: a few are a misconfigured
/// inventory, more are counted only).
pub const MAX_UNLISTED_SENDERS: usize = 16;
/// Forged frames whose claims the result shows.
pub const MAX_FORGED_EXAMPLES: usize = 5;
/// Distinct tag stacks a pair reports (a path shows one or two; more are counted as frames).
pub const MAX_TAG_STACKS: usize = 8;

/// What arrived from one sender on one VLAN: each frame once, however many slaves it arrived on
/// (a switch floods to the backup slave too).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairTally {
    /// The frames the sender sends on this VLAN, as its first authentic frame says.
    pub total: Option<u16>,
    /// Bit n: frame n arrived, with any tags.
    pub seqs: u32,
    /// Bit n: frame n arrived with the outer tag, then 802.1Q with the VLAN.
    pub both_tags: u32,
    /// Bit n: frame n arrived with only the outer tag (the inner one lost).
    pub outer_only: u32,
    /// Bit n: frame n arrived with another tag stack.
    pub other_tags: u32,
    /// This host's slaves the frames arrived on.
    pub receiving_slaves: BTreeSet<String>,
    /// This host's slaves frames arrived on with only the outer tag.
    pub lost_on: BTreeSet<String>,
    /// Each distinct tag stack seen, outer first, at most [`MAX_TAG_STACKS`].
    pub tags_seen: BTreeSet<String>,
    /// The sender's NIC(s) and driver, as its first frame says.
    pub sender_slave: Option<String>,
    pub sender_driver: Option<String>,
}

impl PairTally {
    /// Distinct frames that arrived, of those the sender said it sends.
    pub fn received(&self) -> usize {
        let sent_mask = match self.total {
            Some(total) if total < 32 => (1u32 << total) - 1,
            _ => u32::MAX,
        };
        (self.seqs & sent_mask).count_ones() as usize
    }

    fn complete(&self) -> bool {
        self.total
            .is_some_and(|total| self.received() >= usize::from(total))
    }
}

/// Frames with the run's nonce that do not prove their sender (`forged` in the result).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForgedReport {
    pub frames: u64,
    /// The first few, as they claim to be.
    pub examples: Vec<Forgery>,
}

#[derive(Debug, Clone)]
struct SenderTally {
    listed: bool,
    /// One per VLAN of the request, in its order.
    pairs: Vec<PairTally>,
}

/// The receiver's count, fed each recognized frame as it arrives ([`Tally::add`]).
#[derive(Debug, Clone)]
pub struct Tally {
    outer: (u16, Option<u16>),
    vlans: Vec<u16>,
    /// Senders in the order of the report: the listed ones, then the others as first seen.
    order: Vec<String>,
    by_sender: HashMap<String, SenderTally>,
    listed_senders: usize,
    listed_pairs: usize,
    complete_listed_pairs: usize,
    untracked: u64,
    forged: ForgedReport,
}

impl Tally {
    /// `outer`: the uplink's outer tag; its protocol is `None` when the uplink is not a VLAN
    /// device (then either protocol counts).
    pub fn new(request: &Request, outer: (u16, Option<u16>)) -> Tally {
        let mut tally = Tally {
            outer,
            vlans: request.vlans.clone(),
            order: Vec::new(),
            by_sender: HashMap::new(),
            listed_senders: request.senders.len(),
            listed_pairs: request.senders.len() * request.vlans.len(),
            complete_listed_pairs: 0,
            untracked: 0,
            forged: ForgedReport::default(),
        };
        for sender in &request.senders {
            tally.track(sender.clone(), true);
        }
        tally
    }

    fn track(&mut self, sender: String, listed: bool) {
        let pairs = vec![PairTally::default(); self.vlans.len()];
        self.order.push(sender.clone());
        self.by_sender.insert(sender, SenderTally { listed, pairs });
    }

    pub fn outer(&self) -> (u16, Option<u16>) {
        self.outer
    }

    /// Counts one recognized frame that arrived on `slave`.
    pub fn add(&mut self, slave: &str, recognized: Recognized) {
        match recognized {
            Recognized::Forged(forgery) => {
                self.forged.frames += 1;
                if self.forged.examples.len() < MAX_FORGED_EXAMPLES {
                    self.forged.examples.push(forgery);
                }
            }
            Recognized::Authentic(seen) => self.add_authentic(slave, seen),
        }
    }

    fn add_authentic(&mut self, slave: &str, seen: Seen) {
        let payload = &seen.payload;
        let Some(vlan_index) = self.vlans.iter().position(|&v| v == payload.vlan) else {
            self.untracked += 1;
            return;
        };
        if payload.seq >= 32 {
            // recognize() refuses these; a bit set of 32 cannot hold them.
            self.untracked += 1;
            return;
        }
        if !self.by_sender.contains_key(&payload.sender) {
            if self.order.len().saturating_sub(self.listed_senders) >= MAX_UNLISTED_SENDERS {
                self.untracked += 1;
                return;
            }
            self.track(payload.sender.clone(), false);
        }
        let outer = self.outer;
        let Some(sender) = self.by_sender.get_mut(&payload.sender) else {
            self.untracked += 1;
            return;
        };
        let Some(counted) = sender.pairs.get_mut(vlan_index) else {
            self.untracked += 1;
            return;
        };
        let was_complete = counted.complete();
        let bit = 1u32 << payload.seq;
        counted.total.get_or_insert(payload.total);
        counted.seqs |= bit;
        if both_tags(&seen.tags, outer, payload.vlan) {
            counted.both_tags |= bit;
        } else if outer_only(&seen.tags, outer) {
            counted.outer_only |= bit;
            if !counted.lost_on.contains(slave) {
                counted.lost_on.insert(slave.to_string());
            }
        } else {
            counted.other_tags |= bit;
        }
        if !counted.receiving_slaves.contains(slave) {
            counted.receiving_slaves.insert(slave.to_string());
        }
        if counted.tags_seen.len() < MAX_TAG_STACKS {
            counted.tags_seen.insert(tag_stack(&seen.tags));
        }
        if counted.sender_slave.is_none() {
            counted.sender_slave = Some(payload.slave.clone());
            counted.sender_driver = Some(payload.driver.clone());
        }
        if sender.listed && !was_complete && counted.complete() {
            self.complete_listed_pairs += 1;
        }
    }

    /// Every frame of every listed sender on every VLAN is in (each sender numbers its frames).
    pub fn all_in(&self) -> bool {
        self.listed_pairs > 0 && self.complete_listed_pairs == self.listed_pairs
    }

    /// Each tracked sender and VLAN with its count, in report order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, u16, &PairTally)> {
        self.order.iter().flat_map(move |sender| {
            let counted = self.by_sender.get(sender).map(|s| s.pairs.as_slice());
            self.vlans
                .iter()
                .zip(counted.unwrap_or_default())
                .map(move |(&vlan, pair)| (sender.as_str(), vlan, pair))
        })
    }

    /// The senders this tally keeps state for.
    pub fn senders_tracked(&self) -> usize {
        self.by_sender.len()
    }

    /// Authentic frames not counted (another VLAN, or an unlisted sender past the cap).
    pub fn untracked(&self) -> u64 {
        self.untracked
    }

    pub fn forged(&self) -> &ForgedReport {
        &self.forged
    }
}

fn is_outer(tag: &Tag, outer: (u16, Option<u16>)) -> bool {
    tag.vid == outer.0 && outer.1.is_none_or(|tpid| tpid == tag.tpid)
}

fn both_tags(tags: &[Tag], outer: (u16, Option<u16>), vlan: u16) -> bool {
    tags.len() == 2
        && is_outer(&tags[0], outer)
        && tags[1]
            == Tag {
                tpid: TPID_8021Q,
                vid: vlan,
            }
}

fn outer_only(tags: &[Tag], outer: (u16, Option<u16>)) -> bool {
    tags.len() == 1 && is_outer(&tags[0], outer)
}

fn tag_stack(tags: &[Tag]) -> String {
    if tags.is_empty() {
        return "untagged".to_string();
    }
    tags.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(" / ")
}
