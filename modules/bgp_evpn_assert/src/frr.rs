//! FRR's JSON, read into what the checks need (docs/frr-json.md says which FRR source prints
//! each key). Pure: each function takes one command's JSON value. Keys FRR has spelled two
//! ways across releases are read both ways; anything else unexpected is an error naming it.

use crate::params::AddressFamily;
use ipnet::IpNet;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// FRR's session state when it is up.
pub const ESTABLISHED: &str = "Established";

/// One BGP neighbor, from `show bgp vrf all neighbors json`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Neighbor {
    /// FRR's key: the interface for BGP unnumbered, the address otherwise.
    pub name: String,
    pub state: String,
    /// `remoteAs`; `None` when FRR has none yet (0: `remote-as external` before an OPEN).
    pub remote_as: Option<u32>,
    pub local_as: Option<u32>,
    pub peer_group: Option<String>,
    pub last_reset: Option<String>,
    pub last_notification: Option<String>,
    /// `lastErrorCodeSubcode`: code and subcode as four hex digits ("0202": Bad Peer AS).
    pub last_error_code: Option<String>,
    /// The families activated for it on this node (`addressFamilyInfo`).
    pub activated: Vec<AddressFamily>,
    /// The families both sides sent in their OPEN (`multiprotocolExtensions`,
    /// `advertisedAndReceived`).
    pub negotiated: Vec<AddressFamily>,
    /// The families only the peer sent (received, not advertised).
    pub received_only: Vec<AddressFamily>,
    /// `acceptedPrefixCounter` per activated family.
    pub prefixes_received: BTreeMap<&'static str, u64>,
    /// `messageStats`: OPENs received from the peer and notifications sent to it.
    pub opens_received: Option<u64>,
    pub notifications_sent: Option<u64>,
}

impl Neighbor {
    pub fn established(&self) -> bool {
        self.state == ESTABLISHED
    }
}

/// One VRF's BGP instance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BgpVrf {
    /// `router bgp <AS>`: the AS in `show bgp vrf all summary json`.
    pub base_as: Option<u32>,
    pub neighbors: Vec<Neighbor>,
}

impl BgpVrf {
    pub fn neighbor(&self, name: &str) -> Option<&Neighbor> {
        self.neighbors.iter().find(|n| n.name == name)
    }
}

/// One VNI from `show evpn vni detail json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vni {
    pub vni: u32,
    /// "L2" or "L3".
    pub kind: String,
    pub vrf: Option<String>,
    /// An L2 VNI's flood list; empty for an L3 VNI (see [`parse_next_hops`]).
    pub remote_vteps: Vec<IpAddr>,
}

/// The family words FRR has used as keys: `ipv4Unicast` (JSON names) and, in older releases,
/// `IPv4 Unicast` (display names).
fn family_of_key(key: &str) -> Option<AddressFamily> {
    let folded: String = key
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    AddressFamily::ALL
        .into_iter()
        .find(|af| af.frr_json_key().to_lowercase() == folded)
}

fn string(object: &Map<String, Value>, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn asn(object: &Map<String, Value>, key: &str) -> Option<u32> {
    object
        .get(key)
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
        .and_then(|n| u32::try_from(n).ok())
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{what}: FRR printed {}, not a JSON object", kind_of(value)))
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// FRR answers a command it cannot carry out, in JSON mode, with `{"warning": "..."}`.
pub fn warning(value: &Value) -> Option<String> {
    value
        .get("warning")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `show bgp vrf all neighbors json`: `{VRF: {"vrfId":…, "vrfName":…, NEIGHBOR: {…}}}`.
pub fn parse_neighbors(value: &Value) -> Result<BTreeMap<String, BgpVrf>, String> {
    let what = "show bgp vrf all neighbors json";
    let mut vrfs = BTreeMap::new();
    for (vrf, peers) in object(value, what)? {
        let peers = object(peers, &format!("{what}, VRF {vrf}"))?;
        let neighbors = peers
            .iter()
            .filter_map(|(name, peer)| peer.as_object().map(|p| neighbor(name, p)))
            .collect();
        vrfs.insert(
            vrf.clone(),
            BgpVrf {
                base_as: None,
                neighbors,
            },
        );
    }
    Ok(vrfs)
}

fn neighbor(name: &str, peer: &Map<String, Value>) -> Neighbor {
    let mut activated = Vec::new();
    let mut prefixes_received = BTreeMap::new();
    if let Some(info) = peer.get("addressFamilyInfo").and_then(Value::as_object) {
        for (key, af_info) in info {
            if let Some(af) = family_of_key(key) {
                activated.push(af);
                let accepted = af_info
                    .get("acceptedPrefixCounter")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                prefixes_received.insert(af.as_str(), accepted);
            }
        }
    }
    let mut negotiated = Vec::new();
    let mut received_only = Vec::new();
    let mp = peer
        .get("neighborCapabilities")
        .and_then(|c| c.get("multiprotocolExtensions"))
        .and_then(Value::as_object);
    for (key, exchange) in mp.into_iter().flatten() {
        let Some(af) = family_of_key(key) else {
            continue;
        };
        let flag = |word: &str| {
            exchange.get(word).and_then(Value::as_bool) == Some(true)
                || exchange.as_str() == Some(word)
        };
        if flag("advertisedAndReceived") {
            negotiated.push(af);
        } else if flag("received") {
            received_only.push(af);
        }
    }
    let stat = |key: &str| {
        peer.get("messageStats")
            .and_then(|m| m.get(key))
            .and_then(Value::as_u64)
    };
    activated.sort_by_key(|af| af.as_str());
    negotiated.sort_by_key(|af| af.as_str());
    Neighbor {
        name: name.to_string(),
        state: string(peer, "bgpState").unwrap_or_else(|| "unknown".into()),
        remote_as: asn(peer, "remoteAs"),
        local_as: asn(peer, "localAs"),
        peer_group: string(peer, "peerGroup"),
        last_reset: string(peer, "lastResetDueTo"),
        last_notification: string(peer, "lastNotificationReason"),
        last_error_code: string(peer, "lastErrorCodeSubcode"),
        activated,
        negotiated,
        received_only,
        prefixes_received,
        opens_received: stat("opensRecv"),
        notifications_sent: stat("notificationsSent"),
    }
}

/// `show bgp vrf all summary json`: `{VRF: {"ipv4Unicast": {"as": N, …}, …}}`; the AS of
/// each VRF's `router bgp`.
pub fn parse_base_as(value: &Value) -> Result<BTreeMap<String, u32>, String> {
    let what = "show bgp vrf all summary json";
    let mut out = BTreeMap::new();
    for (vrf, families) in object(value, what)? {
        let found = families
            .as_object()
            .into_iter()
            .flat_map(|f| f.values())
            .filter_map(Value::as_object)
            .find_map(|summary| asn(summary, "as"));
        if let Some(asn) = found {
            out.insert(vrf.clone(), asn);
        }
    }
    Ok(out)
}

/// An address as FRR prints a VTEP (IPv4-mapped IPv6 for IPv4 VTEPs on IPv6 sessions).
fn vtep(text: &str) -> Option<IpAddr> {
    text.parse::<IpAddr>().ok().map(|a| a.to_canonical())
}

/// `show evpn vni detail json`: a list of VNI objects (FRR 8 and later) or an object keyed by
/// VNI (earlier). An L2 VNI's `remoteVteps` is a list of `{"ip": …, "flood": …}` (earlier:
/// addresses, or the list under `numRemoteVteps`).
pub fn parse_vnis(value: &Value) -> Result<Vec<Vni>, String> {
    let what = "show evpn vni detail json";
    let entries: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => map.values().filter(|v| v.is_object()).collect(),
        other => return Err(format!("{what}: FRR printed {}, not VNIs", kind_of(other))),
    };
    let mut vnis = Vec::new();
    for entry in entries {
        let entry = object(entry, what)?;
        let Some(vni) = entry
            .get("vni")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
        else {
            return Err(format!(
                "{what}: an entry has no VNI number: {}",
                Value::Object(entry.clone())
            ));
        };
        let list = [entry.get("remoteVteps"), entry.get("numRemoteVteps")]
            .into_iter()
            .flatten()
            .find_map(Value::as_array);
        let mut remote_vteps: Vec<IpAddr> = list
            .into_iter()
            .flatten()
            .filter_map(|v| match v {
                Value::String(s) => vtep(s),
                Value::Object(o) => o.get("ip").and_then(Value::as_str).and_then(vtep),
                _ => None,
            })
            .collect();
        remote_vteps.sort();
        remote_vteps.dedup();
        vnis.push(Vni {
            vni,
            kind: string(entry, "type").unwrap_or_else(|| "unknown".into()),
            vrf: string(entry, "tenantVrf").or_else(|| string(entry, "vrf")),
            remote_vteps,
        });
    }
    vnis.sort_by_key(|v| v.vni);
    Ok(vnis)
}

/// `show evpn next-hops vni all json`: `{L3VNI: {"numNextHops": N, ADDRESS: {"nexthopIp": …}}}`:
/// the remote VTEPs an L3 VNI routes to.
pub fn parse_next_hops(value: &Value) -> Result<BTreeMap<u32, Vec<IpAddr>>, String> {
    let what = "show evpn next-hops vni all json";
    let mut out = BTreeMap::new();
    for (vni, hops) in object(value, what)? {
        let Ok(vni) = vni.parse::<u32>() else {
            continue;
        };
        let mut vteps: Vec<IpAddr> = hops
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(key, hop)| {
                hop.get("nexthopIp")
                    .and_then(Value::as_str)
                    .and_then(vtep)
                    .or_else(|| hop.is_object().then(|| vtep(key)).flatten())
            })
            .collect();
        vteps.sort();
        vteps.dedup();
        out.insert(vni, vteps);
    }
    Ok(out)
}

/// The prefixes of `neighbors P routes json` (`key` "routes") or `neighbors P
/// advertised-routes json` (`key` "advertisedRoutes"): objects keyed by prefix. No key: none.
/// A default this node originates toward the peer (`default-originate`) is not among the
/// advertised routes but in `bgpOriginatingDefaultNetwork`: it counts as advertised.
pub fn route_prefixes(value: &Value, key: &str, command: &str) -> Result<Vec<IpNet>, String> {
    if let Some(warning) = warning(value) {
        return Err(format!("`{command}`: FRR answered: {warning}"));
    }
    let originated = value
        .get("bgpOriginatingDefaultNetwork")
        .and_then(Value::as_str)
        .and_then(|p| p.parse::<IpNet>().ok());
    let Some(routes) = value.get(key) else {
        return Ok(originated.into_iter().collect());
    };
    let routes = object(routes, &format!("`{command}`, {key}"))?;
    let mut prefixes = routes
        .iter()
        .map(|(prefix, route)| {
            prefix
                .parse::<IpNet>()
                .ok()
                .or_else(|| prefix_of(route))
                .ok_or_else(|| format!("`{command}`: '{prefix}' is not a prefix"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    prefixes.extend(originated);
    prefixes.sort();
    prefixes.dedup();
    Ok(prefixes)
}

/// A route's prefix from its `prefix` and `prefixLen` (a path list: its first path's).
fn prefix_of(route: &Value) -> Option<IpNet> {
    let route = match route {
        Value::Array(paths) => paths.first()?,
        other => other,
    };
    let address: IpAddr = route
        .get("prefix")
        .or_else(|| route.get("addrPrefix"))?
        .as_str()?
        .parse()
        .ok()?;
    let len = u8::try_from(route.get("prefixLen")?.as_u64()?).ok()?;
    IpNet::new(address, len).ok()
}
