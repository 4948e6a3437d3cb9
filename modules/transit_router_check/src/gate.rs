//! The policy-routing rules as `ip -j rule show` prints them, and the routing gate among them:
//! at `gate_priority`, what arrives on the transit interface unmarked (IPv4) or at all (IPv6)
//! goes to `prohibit`.

use serde::Deserialize;

/// One rule of `ip -j -4 rule show` / `ip -j -6 rule show`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct IpRule {
    #[serde(default)]
    pub priority: i64,
    /// Absent: any incoming interface.
    pub iif: Option<String>,
    pub fwmark: Option<String>,
    pub fwmask: Option<String>,
    /// Absent: `lookup <table>`; else `prohibit`, `goto`, `blackhole`, `unreachable`, `nop`.
    pub action: Option<String>,
    pub table: Option<String>,
    /// The rule is negated (`not`): ip prints the key, with the value null.
    #[serde(default, deserialize_with = "present")]
    pub not: bool,
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

impl IpRule {
    fn is_prohibit(&self) -> bool {
        self.action.as_deref() == Some("prohibit") && !self.not
    }

    /// `priority P iif T fwmark 0/MARK prohibit`.
    pub fn is_ipv4_gate(&self, priority: i64, transit: &str, mark: u32) -> bool {
        self.priority == priority
            && self.iif.as_deref() == Some(transit)
            && self.fwmark.as_deref().and_then(hex) == Some(0)
            && self.fwmask.as_deref().and_then(hex) == Some(u64::from(mark))
            && self.is_prohibit()
    }

    /// `priority P iif T prohibit`, no mark.
    pub fn is_ipv6_gate(&self, priority: i64, transit: &str) -> bool {
        self.priority == priority
            && self.iif.as_deref() == Some(transit)
            && self.fwmark.is_none()
            && self.is_prohibit()
    }

    /// A rule between 1 and `priority - 1` that applies to packets from the transit
    /// interface (or any interface) and routes them (`lookup`, `goto`) before the gate.
    pub fn routes_ahead_of_gate(&self, priority: i64, transit: &str) -> bool {
        let routes = matches!(self.action.as_deref(), None | Some("goto" | "to_tbl"));
        let applies = self.iif.as_deref().is_none_or(|iif| iif == transit);
        (1..priority).contains(&self.priority) && routes && applies
    }

    /// As `ip rule` prints it, roughly.
    pub fn describe(&self) -> String {
        let mut words = vec![format!("priority {}", self.priority)];
        if let Some(iif) = &self.iif {
            words.push(format!("iif {iif}"));
        }
        if let Some(mark) = &self.fwmark {
            words.push(format!(
                "fwmark {mark}/{}",
                self.fwmask.as_deref().unwrap_or("0xffffffff")
            ));
        }
        match (&self.action, &self.table) {
            (Some(action), _) => words.push(action.clone()),
            (None, Some(table)) => words.push(format!("lookup {table}")),
            (None, None) => {}
        }
        words.join(" ")
    }
}
