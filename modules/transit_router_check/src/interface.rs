//! The transit interface as the kernel sees it ahead of the forward hook: its names (the kernel
//! takes an altname wherever it takes a name), its master (enslaved, its packets arrive from the
//! master), an XDP program, the tc filters on it, and the other interfaces holding an address in
//! the transit network; from `ip -j addr show` and `tc -j`.

use deevnet_runtime::nft::ranges::Range;
use serde::Deserialize;
use serde_json::Value;

/// One interface of `ip -j addr show`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Link {
    pub ifname: String,
    #[serde(default)]
    pub altnames: Vec<String>,
    pub master: Option<String>,
    /// The lower device (a VLAN's or macvlan's parent; a veth's peer).
    pub link: Option<String>,
    /// `ip -d`'s details: `info_kind` is the device's kind.
    pub linkinfo: Option<Value>,
    pub xdp: Option<Value>,
    #[serde(default)]
    pub addr_info: Vec<AddrInfo>,
}

/// One address of an interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct AddrInfo {
    pub family: String,
    pub local: Option<String>,
    pub prefixlen: Option<u32>,
}

/// Parses `ip -j -d addr show`.
pub fn parse_links(json: &str) -> Result<Vec<Link>, String> {
    serde_json::from_str(json).map_err(|e| format!("JSON that does not parse: {e}"))
}

/// Parses `tc -j qdisc show` or `tc -j filter show` (an array of objects).
pub fn parse_tc(json: &str) -> Result<Vec<Value>, String> {
    // tc prints nothing at all for a device without the qdisc asked for.
    if json.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(json).map_err(|e| format!("JSON that does not parse: {e}"))
}

/// The interface's name and its altnames: every name a rule's `iif` may give it.
pub fn names(links: &[Link], ifname: &str) -> Vec<String> {
    let mut names = vec![ifname.to_string()];
    if let Some(link) = links.iter().find(|l| l.ifname == ifname) {
        names.extend(link.altnames.iter().cloned());
    }
    names
}

/// The IPv4 addresses of every interface, as `(interface, address, prefix)`.
pub fn ipv4_addresses(links: &[Link]) -> impl Iterator<Item = (&str, u32, Range)> {
    links.iter().flat_map(|link| {
        link.addr_info
            .iter()
            .filter(|a| a.family == "inet")
            .filter_map(|a| {
                let addr = u32::from(a.local.as_deref()?.parse::<std::net::Ipv4Addr>().ok()?);
                Some((
                    addr,
                    Range::prefix(addr.into(), u8::try_from(a.prefixlen.unwrap_or(32)).ok()?)?,
                ))
            })
            .map(move |(addr, prefix)| (link.ifname.as_str(), addr, prefix))
    })
}

/// The interfaces other than `transit` whose address, or the network it is in, lies in the
/// transit network, each with its address: a transit packet arriving there meets neither the
/// table's `iifname` nor the gate's `iif`.
pub fn others_in_transit_network(links: &[Link], transit: &str, network: Range) -> Vec<String> {
    ipv4_addresses(links)
        .filter(|(name, _, prefix)| *name != transit && network.overlaps(prefix))
        .map(|(name, addr, prefix)| {
            let len = 32 - (prefix.last - prefix.first).count_ones();
            format!("{name} ({}/{len})", std::net::Ipv4Addr::from(addr))
        })
        .collect()
}

/// The devices stacked on the transit interface (VLAN, macvlan, ipvlan, macsec...), each with its
/// kind: what arrives for them on the transit wire arrives as them, which neither the table's
/// `iifname` nor the gate's `iif` names. A veth's `link` is its peer, not a parent.
pub fn stacked_on(links: &[Link], transit: &[String]) -> Vec<String> {
    links
        .iter()
        .filter(|l| l.link.as_ref().is_some_and(|lower| transit.contains(lower)))
        .filter_map(|l| {
            let kind = l
                .linkinfo
                .as_ref()
                .and_then(|i| i.get("info_kind"))
                .and_then(Value::as_str)
                .unwrap_or("device");
            (kind != "veth").then(|| format!("{} ({kind})", l.ifname))
        })
        .collect()
}

/// What tc does with packets on the transit interface, from its qdiscs and its ingress and
/// egress filters: each one the audit cannot prove harmless, described.
pub fn unproven_tc(qdiscs: &[Value], ingress: &[Value], egress: &[Value]) -> Vec<String> {
    let blocks = qdiscs.iter().filter_map(|q| {
        let block = ["ingress_block", "egress_block"]
            .into_iter()
            .find_map(|key| q.get(key).map(|b| format!("{key} {b}")))?;
        Some(format!(
            "a {} qdisc with a shared {block}, whose filters are not listed per device",
            text(q, "kind")
        ))
    });
    let filters = [("ingress", ingress), ("egress", egress)]
        .into_iter()
        .flat_map(|(direction, filters)| {
            filters
                .iter()
                .filter(|f| !harmless(f))
                .map(move |f| describe_filter(direction, f))
        });
    let mut found: Vec<String> = blocks.chain(filters).collect();
    found.dedup();
    found
}

fn text(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "?".into(),
    }
}

/// The action kinds that neither move a packet nor write its mark: pass, drop and the like
/// (`gact`), and rate limits (`police`).
const HARMLESS_ACTIONS: &[&str] = &["gact", "police"];

fn actions(filter: &Value) -> Vec<&Value> {
    filter
        .pointer("/options/actions")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// A filter the audit can prove harmless: not `bpf` (whose program decides in place, redirect
/// included), every action `gact` or `police`. A filter entry without options (the header of a
/// u32 hash table) does nothing by itself.
fn harmless(filter: &Value) -> bool {
    if filter.get("kind").and_then(Value::as_str) == Some("bpf") {
        return false;
    }
    actions(filter).iter().all(|action| {
        action
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|kind| HARMLESS_ACTIONS.contains(&kind))
    })
}

fn describe_filter(direction: &str, filter: &Value) -> String {
    let kinds: Vec<String> = actions(filter)
        .iter()
        .map(|a| {
            let kind = text(a, "kind");
            match a.get("to_dev").and_then(Value::as_str) {
                Some(dev) => format!("{kind} to {dev}"),
                None => kind,
            }
        })
        .collect();
    let what = if kinds.is_empty() {
        String::new()
    } else {
        format!(" with action {}", kinds.join(", "))
    };
    format!(
        "tc {direction} filter {} pref {} chain {}{what}",
        text(filter, "kind"),
        text(filter, "pref"),
        text(filter, "chain")
    )
}
