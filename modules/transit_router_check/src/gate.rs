//! The policy-routing rules as `ip -j rule show` prints them, and the routing gate among them:
//! at `gate_priority`, what arrives on the transit interface unmarked (IPv4) or at all (IPv6)
//! goes to `prohibit`.
//!
//! Every key ip prints is kept: a rule is the gate only with exactly the gate's selectors, since
//! any other (`ipproto`, `dst`, `sport`, `tos`, `uid_start`, `l3mdev`, `tun_id`, `iif_detached`,
//! a key this module does not know) narrows it to some packets and lets the rest through.

use deevnet_runtime::nft::ranges::Range;
use serde::Deserialize;
use serde_json::{Map, Value};

/// One rule of `ip -j -4 rule show` / `ip -j -6 rule show`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct IpRule {
    #[serde(default)]
    pub priority: i64,
    /// Absent: any incoming interface.
    pub iif: Option<String>,
    pub fwmark: Option<String>,
    pub fwmask: Option<String>,
    /// Absent: `lookup <table>`, `goto` or `nop` (each its own key); else `prohibit`,
    /// `blackhole`, `unreachable`.
    pub action: Option<String>,
    pub table: Option<String>,
    /// The rule is negated (`not`): ip prints the key, with the value null.
    #[serde(default, deserialize_with = "present")]
    pub not: bool,
    /// Every other key, as printed.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// True for a key that is there, whatever its value.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// Parses `ip -j rule show`.
pub fn parse(json: &str) -> Result<Vec<IpRule>, String> {
    serde_json::from_str(json).map_err(|e| format!("JSON that does not parse: {e}"))
}

fn hex(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x") {
        Some(digits) => u64::from_str_radix(digits, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The keys of [`IpRule::other`] that select no packet: `src` `all` (every source) and
/// `protocol` (who added the rule).
fn selects_nothing(key: &str, value: &Value) -> bool {
    match key {
        "src" => value.as_str() == Some("all"),
        "protocol" => true,
        _ => false,
    }
}

impl IpRule {
    fn is_prohibit(&self) -> bool {
        self.action.as_deref() == Some("prohibit") && !self.not
    }

    fn names_iif_transit(&self, transit: &[String]) -> bool {
        self.iif.as_ref().is_some_and(|iif| transit.contains(iif))
    }

    /// The keys beyond the gate's own selectors (priority, `iif`, `fwmark`, the action): each
    /// narrows the rule to some packets. Sorted, as named in the result.
    pub fn narrowing(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .other
            .iter()
            .filter(|(k, v)| !selects_nothing(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        if self.table.is_some() {
            keys.push("table".into());
        }
        keys.sort();
        keys
    }

    /// `priority P iif T fwmark 0/MARK prohibit` and nothing else, `T` the transit interface's
    /// name or one of its altnames (the kernel resolves both).
    pub fn is_ipv4_gate(&self, priority: i64, transit: &[String], mark: u32) -> bool {
        self.priority == priority
            && self.names_iif_transit(transit)
            && self.fwmark.as_deref().and_then(hex) == Some(0)
            && self.fwmask.as_deref().and_then(hex) == Some(u64::from(mark))
            && self.is_prohibit()
            && self.narrowing().is_empty()
    }

    /// `priority P iif T prohibit` and nothing else (no mark).
    pub fn is_ipv6_gate(&self, priority: i64, transit: &[String]) -> bool {
        self.priority == priority
            && self.names_iif_transit(transit)
            && self.fwmark.is_none()
            && self.fwmask.is_none()
            && self.is_prohibit()
            && self.narrowing().is_empty()
    }

    /// Whether it may apply to a packet that arrived on the transit interface. An `iif` naming
    /// another interface, or one the kernel has not bound (`iif_detached`), matches none; an
    /// `oif` or `l3mdev` matches no forwarded packet (their input lookup has no output interface,
    /// and the transit interface in no VRF is a check of its own). Every other selector narrows,
    /// so the rule may still apply; so may a negated rule, unless it is `not iif <transit>` alone.
    pub fn may_apply_to_transit(&self, transit: &[String]) -> bool {
        let bound = !self.other.contains_key("iif_detached");
        let names_transit = self.names_iif_transit(transit) && bound;
        if self.not {
            // `not` negates every selector together: only `not iif <transit>` alone spares
            // every transit packet.
            let only_iif = self.fwmark.is_none() && self.narrowing().is_empty();
            return !(names_transit && only_iif);
        }
        let by_iif = self.iif.is_none() || names_transit;
        by_iif && !self.other.contains_key("oif") && !self.other.contains_key("l3mdev")
    }

    /// Whether a packet it matches is routed (`lookup`, `goto`, or an action this module does not
    /// know), rather than refused (`prohibit`, `blackhole`, `unreachable`) or passed on (`nop`).
    pub fn routes(&self) -> bool {
        let refuses = matches!(
            self.action.as_deref(),
            Some("prohibit" | "blackhole" | "unreachable")
        );
        let passes_on = self.action.is_none() && self.other.contains_key("nop");
        !refuses && !passes_on
    }

    /// The kernel's own `from all lookup local` (at priority 0 or anywhere else): it routes only
    /// by the local table, whose routes the routing gate checks on its own.
    pub fn is_local_lookup(&self) -> bool {
        self.table.as_deref() == Some("local")
            && self.action.is_none()
            && self.iif.is_none()
            && self.fwmark.is_none()
            && !self.not
            && self.other.iter().all(|(k, v)| selects_nothing(k, v))
    }

    /// Whether a packet with `mark` meets its `fwmark` selector (none: every mark).
    pub fn matches_mark(&self, mark: u64) -> bool {
        let Some(value) = self.fwmark.as_deref() else {
            return true;
        };
        let mask = self
            .fwmask
            .as_deref()
            .map_or(Some(u64::from(u32::MAX)), hex);
        hex(value)
            .zip(mask)
            .is_some_and(|(value, mask)| mark & mask == value)
    }

    /// The `to` prefix (`dst`, `dstlen`), when the rule has one.
    pub fn dst(&self) -> Option<Range> {
        let addr = self.other.get("dst")?.as_str()?;
        let len = self
            .other
            .get("dstlen")
            .and_then(Value::as_u64)
            .unwrap_or(32);
        Range::parse_cidr(&format!("{addr}/{len}"))
    }

    /// As `ip rule` prints it, roughly, with every key the module does not read by its JSON.
    pub fn describe(&self) -> String {
        let mut words = vec![format!("priority {}", self.priority)];
        if self.not {
            words.push("not".into());
        }
        if let Some(iif) = &self.iif {
            words.push(format!("iif {iif}"));
        }
        if let Some(mark) = &self.fwmark {
            words.push(format!(
                "fwmark {mark}/{}",
                self.fwmask.as_deref().unwrap_or("0xffffffff")
            ));
        }
        for (key, value) in &self.other {
            if !selects_nothing(key, value) {
                words.push(match value {
                    Value::Null => key.clone(),
                    Value::String(text) => format!("{key} {text}"),
                    other => format!("{key} {other}"),
                });
            }
        }
        match (&self.action, &self.table) {
            (Some(action), _) => words.push(action.clone()),
            (None, Some(table)) => words.push(format!("lookup {table}")),
            (None, None) => {}
        }
        words.join(" ")
    }
}

/// The rules that run ahead of the gate (before the first gate rule in the kernel's order, which
/// is ip's; every rule below `priority` when there is no gate) and may route a transit packet
/// there: each, described.
pub fn routing_ahead<'a>(
    rules: &'a [IpRule],
    is_gate: impl Fn(&IpRule) -> bool,
    priority: i64,
    transit: &[String],
) -> Vec<&'a IpRule> {
    let gate_at = rules.iter().position(is_gate);
    rules
        .iter()
        .enumerate()
        .filter(|(at, rule)| gate_at.map_or(rule.priority < priority, |gate| *at < gate))
        .map(|(_, rule)| rule)
        .filter(|rule| rule.may_apply_to_transit(transit) && rule.routes())
        .filter(|rule| !rule.is_local_lookup())
        .collect()
}
