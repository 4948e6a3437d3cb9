//! The probe's frames, built and recognized without a kernel: a run's identity (its nonce and
//! each sender's source MAC, both derived from `run_id`, so a receiver started before the
//! senders knows them), the frame a sender puts on its probe port (the inner 802.1Q tag and a
//! payload naming the sender), and the tags a capture saw, outer first.

/// IEEE 802 local experimental ethertype 1: no protocol of a guest or a host reads it.
pub const ETHERTYPE: u16 = 0x88b5;
pub const TPID_8021Q: u16 = 0x8100;
pub const TPID_8021AD: u16 = 0x88a8;
/// The payload's first bytes.
pub const MAGIC: &[u8; 8] = b"DVQINQP1";
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
/// only tells this run's frames from another run's).
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

    fn decode(bytes: &[u8]) -> Option<Payload> {
        let rest = bytes.strip_prefix(MAGIC.as_slice())?;
        let nonce = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
        let word = |at: usize| Some(u16::from_be_bytes(rest.get(at..at + 2)?.try_into().ok()?));
        let (vlan, seq, total) = (word(8)?, word(10)?, word(12)?);
        let mut at = 14;
        let mut text = || {
            let len = usize::from(*rest.get(at)?);
            let value = String::from_utf8(rest.get(at + 1..at + 1 + len)?.to_vec()).ok()?;
            at += 1 + len;
            Some(value)
        };
        Some(Payload {
            nonce,
            vlan,
            seq,
            total,
            sender: text()?,
            slave: text()?,
            driver: text()?,
        })
    }
}

/// The frame a sender puts on its probe port: broadcast (it floods the inner VLAN, so every
/// receiver in it sees it), from the sender's run MAC, tagged 802.1Q with the inner VLAN.
pub fn build(source: [u8; 6], payload: &Payload) -> Vec<u8> {
    let mut frame = Vec::with_capacity(MIN_FRAME + 64);
    frame.extend_from_slice(&[0xff; 6]);
    frame.extend_from_slice(&source);
    frame.extend_from_slice(&TPID_8021Q.to_be_bytes());
    frame.extend_from_slice(&payload.vlan.to_be_bytes());
    frame.extend_from_slice(&ETHERTYPE.to_be_bytes());
    payload.encode(&mut frame);
    if frame.len() < MIN_FRAME {
        frame.resize(MIN_FRAME, 0);
    }
    frame
}

/// One of this run's frames as a capture saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub source: [u8; 6],
    /// Outer first: the tag the kernel kept aside (a NIC's or the stack's VLAN offload), then
    /// the tags still in the frame.
    pub tags: Vec<Tag>,
    pub payload: Payload,
}

/// The frame `bytes` (as captured: a tag the kernel took out of it is `stripped`), when it is
/// one of the probe's frames of the run with `nonce`; `None` for anything else, another
/// run's frames included.
pub fn recognize(bytes: &[u8], stripped: Option<Tag>, nonce: u64) -> Option<Seen> {
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
    let payload = Payload::decode(bytes.get(at + 2..)?)?;
    (payload.nonce == nonce).then_some(Seen {
        source,
        tags,
        payload,
    })
}
