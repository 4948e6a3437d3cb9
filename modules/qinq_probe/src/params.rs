//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the validated [`Request`] ([`Request::from_params`]), each option checked on its own, with
//! no kernel needed. Checks against the node (does the bridge exist) are in `node.rs`.

use deevnet_runtime::ifname;
use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{Kind, OptionSpec};
use serde::Deserialize;
use std::time::Duration;

deevnet_runtime::choices! {
    /// Which side of the pair test this run is.
    pub enum Mode {
        Send = "send",
        Receive = "receive",
    }
}

/// The most frames per inner VLAN a sender sends (a receiver keeps a pair's sequence numbers
/// in a `u32` bit set, so this stays below 32).
pub const MAX_COUNT: u16 = 20;
/// Frames per inner VLAN a sender sends: a few prove the path; the cap keeps the test from
/// becoming traffic.
pub const COUNT_RANGE: IntRange = IntRange::new(1, MAX_COUNT as i64, "a number of frames per VLAN")
    .because("the test stays bounded");
/// The share of a pair's frames that may be lost and the pair still pass. 20 by default: a
/// pair passes when at least 4 in 5 of its frames arrive (with the default `count` of 3, all of
/// them; one lost frame in 5 or more is tolerated, e.g. one dropped while the path settles).
/// More than half lost proves the path works only now and then: refused.
pub const MAX_LOSS_RANGE: IntRange = IntRange::new(0, 50, "a percentage of lost frames")
    .because("a pair that passes with more than half of its frames lost proves little");
/// The run's shared secret, in bytes: at least 128 bits of a random text of letters and digits
/// (the playbook makes 32), at most what a person would paste.
pub const SECRET_LEN: std::ops::RangeInclusive<usize> = 16..=256;
/// Seconds a receiver captures at most.
pub const DURATION_RANGE: IntRange = IntRange::new(1, 120, "a number of seconds")
    .because("the capture stays bounded; start the receiver right before the senders");
/// Inner VLANs per run.
pub const MAX_VLANS: usize = 16;
/// Senders one receiver expects.
pub const MAX_SENDERS: usize = 64;
/// The longest `run_id` and sender name (they travel in every frame).
pub const MAX_NAME_LEN: usize = 64;

static VLAN_ID: OptionSpec = OptionSpec::new("vlan", Kind::Int);
static SENDER_NAME: OptionSpec = OptionSpec::new("sender", Kind::Str);

/// Every option of the module, in the order `--argument-spec` prints them.
pub static SPEC: [OptionSpec; 12] = [
    OptionSpec::new("mode", Kind::Str)
        .required()
        .choices(Mode::CHOICES),
    OptionSpec::new("run_id", Kind::Str).required(),
    // Keys the frames' authenticators: never in a frame, a message or the result.
    OptionSpec::new("secret", Kind::Str).required().no_log(),
    OptionSpec::new("bridge", Kind::Str).required(),
    OptionSpec::new("uplink", Kind::Str).required(),
    OptionSpec::new("uplink_vlan", Kind::Int).required(),
    OptionSpec::new("vlans", Kind::List(&VLAN_ID)).required(),
    OptionSpec::new("name", Kind::Str),
    OptionSpec::new("count", Kind::Int).default(DefaultValue::Int(3)),
    OptionSpec::new("senders", Kind::List(&SENDER_NAME)).default(DefaultValue::EmptyList),
    OptionSpec::new("duration", Kind::Int).default(DefaultValue::Int(10)),
    OptionSpec::new("max_loss_percent", Kind::Int).default(DefaultValue::Int(20)),
];

/// The options as the argument spec validated them (types and defaults).
#[derive(Debug, Clone, Deserialize)]
pub struct Params {
    pub mode: Mode,
    pub run_id: String,
    pub secret: Secret,
    pub bridge: String,
    pub uplink: String,
    pub uplink_vlan: i64,
    pub vlans: Vec<i64>,
    pub name: Option<String>,
    pub count: i64,
    pub senders: Vec<String>,
    pub duration: i64,
    pub max_loss_percent: i64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            mode: Mode::Receive,
            run_id: "run1".into(),
            secret: Secret::from("0123456789abcdef0123456789abcdef"),
            bridge: "vmbr1".into(),
            uplink: "bond0.40".into(),
            uplink_vlan: 40,
            vlans: vec![201],
            name: None,
            count: 3,
            senders: Vec::new(),
            duration: 10,
            max_loss_percent: 20,
        }
    }
}

/// The validated options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub mode: Mode,
    pub run_id: String,
    pub secret: Secret,
    pub bridge: String,
    pub uplink: String,
    pub uplink_vlan: u16,
    pub vlans: Vec<u16>,
    /// This host's name in the frames (send).
    pub name: String,
    pub count: u16,
    pub senders: Vec<String>,
    pub duration: Duration,
    /// A pair fails when more than this share of its frames is lost.
    pub max_loss_percent: u8,
}

/// The run's shared secret: its `Debug` shows its length only, so no log or panic message
/// prints it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_string())
    }
}

impl Secret {
    pub fn bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        ifname::validate("bridge", &params.bridge)?;
        ifname::validate("uplink", &params.uplink)?;
        name("run_id", &params.run_id, "the same value on the receivers and the senders of one test, e.g. the playbook's start time")?;
        let secret = secret(params.secret)?;
        let uplink_vlan = vlan_id("uplink_vlan", params.uplink_vlan)?;
        if params.vlans.is_empty() {
            return Err("vlans: no VLAN given; give the inner VLANs to test, e.g. [201]".into());
        }
        if params.vlans.len() > MAX_VLANS {
            return Err(format!(
                "vlans: {} VLANs given, at most {MAX_VLANS} per run (the test stays bounded); sample a few of the zone's VLANs",
                params.vlans.len()
            ));
        }
        let mut vlans = Vec::new();
        for (i, &vlan) in params.vlans.iter().enumerate() {
            let vlan = vlan_id(&format!("vlans[{i}]"), vlan)?;
            if !vlans.contains(&vlan) {
                vlans.push(vlan);
            }
        }
        let count = COUNT_RANGE.check("count", params.count)? as u16;
        let duration = DURATION_RANGE.seconds("duration", params.duration)?;
        let max_loss_percent =
            MAX_LOSS_RANGE.check("max_loss_percent", params.max_loss_percent)? as u8;
        let name_given = match (&params.mode, params.name) {
            (Mode::Send, None) => {
                return Err("name: mode=send needs this host's name, which the receivers report; give name: \"{{ inventory_hostname }}\"".into())
            }
            (_, Some(given)) => {
                name("name", &given, "this host's name, e.g. \"{{ inventory_hostname }}\"")?;
                given
            }
            (Mode::Receive, None) => String::new(),
        };
        if params.senders.len() > MAX_SENDERS {
            return Err(format!(
                "senders: {} given, at most {MAX_SENDERS}; test the group in parts",
                params.senders.len()
            ));
        }
        let mut senders: Vec<String> = Vec::new();
        for (i, sender) in params.senders.iter().enumerate() {
            name(
                &format!("senders[{i}]"),
                sender,
                "the name each sender runs with (its name option)",
            )?;
            if !senders.contains(sender) {
                senders.push(sender.clone());
            }
        }
        Ok(Request {
            mode: params.mode,
            run_id: params.run_id,
            secret,
            bridge: params.bridge,
            uplink: params.uplink,
            uplink_vlan,
            vlans,
            name: name_given,
            count,
            senders,
            duration,
            max_loss_percent,
        })
    }
}

/// The secret's value is never shown (it is `no_log`): the message gives its length instead.
fn secret(value: Secret) -> Result<Secret, String> {
    if SECRET_LEN.contains(&value.0.len()) {
        Ok(value)
    } else {
        Err(format!(
            "secret: the value given (not shown: no_log) is {} bytes long, not {} to {}; give the same random text to the receivers and the senders of one run, made anew for each run, e.g. \"{{{{ lookup('ansible.builtin.password', '/dev/null', length=32, chars=['ascii_letters', 'digits']) }}}}\" set once per play (the playbook deevnet.net.qinq_acceptance does this)",
            value.0.len(),
            SECRET_LEN.start(),
            SECRET_LEN.end()
        ))
    }
}

fn vlan_id(parameter: &str, value: i64) -> Result<u16, String> {
    if (1..=4094).contains(&value) {
        Ok(value as u16)
    } else {
        Err(format!(
            "{parameter}: VLAN {value} is outside 1-4094 (0 and 4095 are reserved); give a VLAN id from 1 to 4094"
        ))
    }
}

/// A name that travels in the frames: printable ASCII without spaces, bounded.
fn name(parameter: &str, value: &str, fix: &str) -> Result<(), String> {
    let plain = !value.is_empty()
        && value.len() <= MAX_NAME_LEN
        && value.bytes().all(|b| b.is_ascii_graphic());
    if plain {
        Ok(())
    } else {
        Err(format!(
            "{parameter}: '{value}' is not 1 to {MAX_NAME_LEN} printable ASCII characters without spaces; give {fix}"
        ))
    }
}
