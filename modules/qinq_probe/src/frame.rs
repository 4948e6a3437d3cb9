//! The probe's frames, built and recognized without a kernel: a run's identity (its nonce and
//! each sender's source MAC, both derived from `run_id`, so a receiver started before the
//! senders knows them), the frame a sender puts on its probe port (the inner 802.1Q tag and a
//! payload naming the sender, then its authenticator), and the tags a capture saw, outer first.
//!
//! The nonce and the MACs are public: anyone who sees one frame (a guest in the inner VLAN gets
//! every one, they are broadcast) or guesses `run_id` knows them. What proves that a sender sent
//! a frame is its authenticator, an HMAC-SHA256 keyed with the run's `secret` (see [`RunKey`]),
//! which never travels in a frame: a frame whose authenticator does not verify is
//! [`Recognized::Forged`], never an arrival.

use crate::params::{Secret, MAX_COUNT};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// IEEE 802 local experimental ethertype 1: no protocol of a guest or a host reads it.
pub const ETHERTYPE: u16 = 0x88b5;
pub const TPID_8021Q: u16 = 0x8100;
pub const TPID_8021AD: u16 = 0x88a8;
/// The payload's first bytes (version 2: authenticated; version 1's frames are not read).
pub const MAGIC: &[u8; 8] = b"DVQINQP2";
/// The authenticator's length: a full HMAC-SHA256 (the frame has room for it).
pub const AUTHENTICATOR_LEN: usize = 32;
/// The longest sender name a forged frame's example keeps.
const EXAMPLE_NAME_LEN: usize = 64;
/// Ethernet's minimum frame without its FCS.
const MIN_FRAME: usize = 60;

/// One VLAN tag: its protocol identifier (0x8100 or 0x88a8) and VLAN id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Tag {
    pub tpid: u16,
    pub vid: u16,
}

impl std::fmt::Display for Tag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let protocol = match self.tpid {
            TPID_8021Q => "802.1Q".to_string(),
            TPID_8021AD => "802.1ad".to_string(),
            other => format!("0x{other:04x}"),
        };
        write!(f, "{protocol} {}", self.vid)
    }
}

/// FNV-1a, 64 bits: a stable hash both sides compute alike (no secret is involved: the nonce
/// only tells this run's frames from another run's; the authenticator proves who sent them).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in part.as_bytes().iter().chain(std::iter::once(&0u8)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The run's nonce, carried in every frame.
pub fn nonce(run_id: &str) -> u64 {
    fnv1a(&["deevnet.net qinq_probe nonce", run_id])
}

/// The source MAC of `sender`'s frames in run `run_id`: locally administered, unicast.
pub fn sender_mac(run_id: &str, sender: &str) -> [u8; 6] {
    let hash = fnv1a(&["deevnet.net qinq_probe mac", run_id, sender]).to_be_bytes();
    [0x02, hash[0], hash[1], hash[2], hash[3], hash[4]]
}

pub fn format_mac(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The run's key: the HMAC-SHA256 of the run's `secret`, ready to authenticate frames, with the
/// run it belongs to.
#[derive(Clone)]
pub struct RunKey {
    run_id: String,
    nonce: u64,
    keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for RunKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RunKey({})", self.run_id)
    }
}

impl RunKey {
    pub fn new(run_id: &str, secret: &Secret) -> Result<RunKey, String> {
        let keyed = <Hmac<Sha256> as Mac>::new_from_slice(secret.bytes()).map_err(|e| {
            format!("secret: the value given (not shown: no_log) cannot key HMAC-SHA256 ({e}); give a random text of 16 to 256 characters")
        })?;
        Ok(RunKey {
            run_id: run_id.to_string(),
            nonce: nonce(run_id),
            keyed,
        })
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    /// The HMAC over what the frame says: the run, the frame's source MAC and the payload up to
    /// the authenticator (nonce, VLAN, sequence number, count, sender, its NIC and driver).
    fn keyed_over(&self, source: &[u8; 6], signed: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.keyed.clone();
        mac.update(b"deevnet.net qinq_probe frame v2\0");
        // Length-prefixed, so no two (run, payload) pairs feed the same bytes.
        mac.update(&(self.run_id.len() as u32).to_be_bytes());
        mac.update(self.run_id.as_bytes());
        mac.update(source);
        mac.update(signed);
        mac
    }

    fn authenticator(&self, source: &[u8; 6], signed: &[u8]) -> [u8; AUTHENTICATOR_LEN] {
        self.keyed_over(source, signed)
            .finalize()
            .into_bytes()
            .into()
    }

    /// In constant time, so the comparison tells an attacker nothing of the right value.
    fn verifies(&self, source: &[u8; 6], signed: &[u8], authenticator: &[u8]) -> bool {
        self.keyed_over(source, signed)
            .verify_slice(authenticator)
            .is_ok()
    }
}

/// What a frame says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub nonce: u64,
    /// The inner VLAN the sender tagged it with: known even when the tag is lost.
    pub vlan: u16,
    pub seq: u16,
    /// Frames the sender sends on this VLAN.
    pub total: u16,
    pub sender: String,
    /// The sender's NIC(s) the frame leaves by, and their driver, as the sender read them.
    pub slave: String,
    pub driver: String,
}

impl Payload {
    /// The signed part: everything but the authenticator.
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.nonce.to_be_bytes());
        for value in [self.vlan, self.seq, self.total] {
            out.extend_from_slice(&value.to_be_bytes());
        }
        for text in [&self.sender, &self.slave, &self.driver] {
            let bytes = &text.as_bytes()[..text.len().min(255)];
            out.push(bytes.len() as u8);
            out.extend_from_slice(bytes);
        }
    }

    /// The payload after the magic and the nonce (`rest`), and the length of the signed part
    /// from the magic on.
    fn decode(nonce: u64, rest: &[u8]) -> Option<(Payload, usize)> {
        let word = |at: usize| Some(u16::from_be_bytes(rest.get(at..at + 2)?.try_into().ok()?));
        let (vlan, seq, total) = (word(0)?, word(2)?, word(4)?);
        let mut at = 6;
        let mut text = || {
            let len = usize::from(*rest.get(at)?);
            let value = String::from_utf8(rest.get(at + 1..at + 1 + len)?.to_vec()).ok()?;
            at += 1 + len;
            Some(value)
        };
        let (sender, slave, driver) = (text()?, text()?, text()?);
        let payload = Payload {
            nonce,
            vlan,
            seq,
            total,
            sender,
            slave,
            driver,
        };
        Some((payload, MAGIC.len() + 8 + at))
    }
}

/// The frame a sender puts on its probe port: broadcast (it floods the inner VLAN, so every
/// receiver in it sees it), from the sender's run MAC, tagged 802.1Q with the inner VLAN, its
/// payload followed by the authenticator `key` makes.
pub fn build(source: [u8; 6], payload: &Payload, key: &RunKey) -> Vec<u8> {
    let mut frame = Vec::with_capacity(MIN_FRAME + 64 + AUTHENTICATOR_LEN);
    frame.extend_from_slice(&[0xff; 6]);
    frame.extend_from_slice(&source);
    frame.extend_from_slice(&TPID_8021Q.to_be_bytes());
    frame.extend_from_slice(&payload.vlan.to_be_bytes());
    frame.extend_from_slice(&ETHERTYPE.to_be_bytes());
    let signed_from = frame.len();
    payload.encode(&mut frame);
    let authenticator = key.authenticator(&source, &frame[signed_from..]);
    frame.extend_from_slice(&authenticator);
    if frame.len() < MIN_FRAME {
        frame.resize(MIN_FRAME, 0);
    }
    frame
}

/// One of this run's frames as a capture saw it, its authenticator verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub source: [u8; 6],
    /// Outer first: the tag the kernel kept aside (a NIC's or the stack's VLAN offload), then
    /// the tags still in the frame.
    pub tags: Vec<Tag>,
    pub payload: Payload,
}

deevnet_runtime::choices! {
    /// Why a frame with the run's nonce is not counted (`forged.examples[].reason`).
    pub enum ForgeryReason {
        /// Its authenticator does not verify with the run's secret.
        BadAuthenticator = "bad_authenticator",
        /// Its source MAC is not the run MAC of the sender it names.
        ForeignSource = "foreign_source",
        /// Its payload cannot be read, or its sequence number or count is out of range.
        Malformed = "malformed",
    }
}

/// A frame with the run's nonce that does not prove its sender: what it claims, bounded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Forgery {
    /// The sender it names (at most 64 characters; empty when unreadable).
    pub sender: String,
    pub source_mac: String,
    /// The VLAN it claims (`null` when unreadable).
    pub vlan: Option<u16>,
    pub reason: ForgeryReason,
}

/// A probe frame of this run: authentic, or forged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recognized {
    Authentic(Seen),
    Forged(Forgery),
}

/// The frame `bytes` (as captured: a tag the kernel took out of it is `stripped`), when it is
/// one of the probe's frames with the nonce of `key`'s run: [`Recognized::Authentic`] when its
/// authenticator verifies, its source is the named sender's run MAC and its numbers are in
/// range, else [`Recognized::Forged`]. `None` for anything else, another run's frames included.
pub fn recognize(bytes: &[u8], stripped: Option<Tag>, key: &RunKey) -> Option<Recognized> {
    let source: [u8; 6] = bytes.get(6..12)?.try_into().ok()?;
    let mut tags: Vec<Tag> = stripped.into_iter().collect();
    let mut at = 12;
    loop {
        let ethertype = u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
        match ethertype {
            TPID_8021Q | TPID_8021AD if tags.len() < 4 => {
                let tci = u16::from_be_bytes(bytes.get(at + 2..at + 4)?.try_into().ok()?);
                tags.push(Tag {
                    tpid: ethertype,
                    vid: tci & 0x0fff,
                });
                at += 4;
            }
            ETHERTYPE => break,
            _ => return None,
        }
    }
    let payload_bytes = bytes.get(at + 2..)?;
    let rest = payload_bytes.strip_prefix(MAGIC.as_slice())?;
    let nonce = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
    if nonce != key.nonce() {
        return None;
    }
    let forged = |payload: Option<&Payload>, reason| {
        let sender: String = payload
            .map(|p| p.sender.chars().take(EXAMPLE_NAME_LEN).collect())
            .unwrap_or_default();
        Some(Recognized::Forged(Forgery {
            sender,
            source_mac: format_mac(&source),
            vlan: payload.map(|p| p.vlan),
            reason,
        }))
    };
    let Some((payload, signed_len)) = Payload::decode(nonce, rest.get(8..)?) else {
        return forged(None, ForgeryReason::Malformed);
    };
    let authenticator = payload_bytes.get(signed_len..signed_len + AUTHENTICATOR_LEN);
    let signed = payload_bytes.get(..signed_len)?;
    if !authenticator.is_some_and(|a| key.verifies(&source, signed, a)) {
        return forged(Some(&payload), ForgeryReason::BadAuthenticator);
    }
    if source != sender_mac(key.run_id(), &payload.sender) {
        return forged(Some(&payload), ForgeryReason::ForeignSource);
    }
    if !(1..=MAX_COUNT).contains(&payload.total) || payload.seq >= payload.total {
        return forged(Some(&payload), ForgeryReason::Malformed);
    }
    Some(Recognized::Authentic(Seen {
        source,
        tags,
        payload,
    }))
}
