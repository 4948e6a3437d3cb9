//! What is read from FRR, in as few vtysh runs as the request allows: one run for the BGP
//! instances, their neighbors and the EVPN VNIs; a second, only when a peer's routes are
//! asked for, with every route command of every peer in it. The peers the request names are
//! resolved between the two (a peer group becomes its members; an unknown VRF or peer fails).

use crate::frr::{self, BgpVrf, Vni};
use crate::params::{AddressFamily, Advertises, DefaultFamily, PeerExpectation, Request};
use deevnet_runtime::Failure;
use ipnet::IpNet;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::IpAddr;

pub const NEIGHBORS: &str = "show bgp vrf all neighbors json";
pub const SUMMARY: &str = "show bgp vrf all summary json";
pub const VNIS: &str = "show evpn vni detail json";
pub const NEXT_HOPS: &str = "show evpn next-hops vni all json";

/// One vtysh run: the commands in order, one JSON value each, in order.
pub trait Vtysh {
    fn run(&mut self, commands: &[String]) -> Result<Vec<Value>, Failure>;
}

/// A neighbor of a VRF: (VRF, FRR's name for it).
pub type PeerKey = (String, String);
/// A neighbor's routes of one family.
pub type RoutesKey = (String, String, &'static str);

/// What FRR reported, as the checks read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    pub bgp: BTreeMap<String, BgpVrf>,
    pub vnis: Vec<Vni>,
    /// Each L3 VNI's remote VTEPs (its EVPN next hops).
    pub next_hops: BTreeMap<u32, Vec<IpAddr>>,
    /// The routes accepted from a neighbor, for the families whose default is checked.
    pub received: BTreeMap<RoutesKey, Vec<IpNet>>,
    /// The routes advertised to a neighbor, for `advertises: aggregates_only`.
    pub advertised: BTreeMap<RoutesKey, Vec<IpNet>>,
    /// Per `peers` entry, the neighbors it names.
    pub members: Vec<Vec<String>>,
}

/// The family's words in a `show bgp` command.
fn show_family(af: &str) -> &'static str {
    AddressFamily::ALL
        .into_iter()
        .find(|f| f.as_str() == af)
        .map_or("ipv4 unicast", AddressFamily::frr_config)
}

/// `show bgp vrf V ipv4 unicast neighbors P routes json` and its advertised-routes twin.
pub fn routes_command(vrf: &str, peer: &str, af: &str, advertised: bool) -> String {
    format!(
        "show bgp vrf {vrf} {} neighbors {peer} {} json",
        show_family(af),
        if advertised {
            "advertised-routes"
        } else {
            "routes"
        }
    )
}

pub fn observe(vtysh: &mut impl Vtysh, request: &Request) -> Result<Observation, Failure> {
    let mut first = Vec::new();
    if !request.peers.is_empty() {
        first.push(NEIGHBORS.to_string());
        first.push(SUMMARY.to_string());
    }
    if !request.vnis.is_empty() {
        first.push(VNIS.to_string());
        first.push(NEXT_HOPS.to_string());
    }
    let answers = answers_for(vtysh, &first)?;
    let mut answers = answers.iter();
    let mut observation = Observation::default();
    if !request.peers.is_empty() {
        let (Some(neighbors), Some(summary)) = (answers.next(), answers.next()) else {
            unreachable!("answers_for returns one answer per command");
        };
        observation.bgp = frr::parse_neighbors(neighbors)?;
        for (vrf, asn) in frr::parse_base_as(summary)? {
            observation.bgp.entry(vrf).or_default().base_as = Some(asn);
        }
        observation.members = request
            .peers
            .iter()
            .map(|p| members(p, &observation.bgp))
            .collect::<Result<_, String>>()?;
    }
    if !request.vnis.is_empty() {
        let (Some(vnis), Some(next_hops)) = (answers.next(), answers.next()) else {
            unreachable!("answers_for returns one answer per command");
        };
        observation.vnis = frr::parse_vnis(vnis)?;
        observation.next_hops = frr::parse_next_hops(next_hops)?;
    }
    read_routes(vtysh, request, &mut observation)?;
    Ok(observation)
}

/// One run's answers, one per command (or a failure saying otherwise).
fn answers_for(vtysh: &mut impl Vtysh, commands: &[String]) -> Result<Vec<Value>, Failure> {
    let answers = vtysh.run(commands)?;
    if answers.len() != commands.len() {
        return Err(Failure::new(format!(
            "vtysh answered {} JSON value(s) for {} command(s) (`{}`); is it FRR's vtysh?",
            answers.len(),
            commands.len(),
            commands.join("`, `")
        )));
    }
    Ok(answers)
}

/// The neighbors a `peers` entry names: itself, or its peer group's members (at least one).
pub fn members(
    expected: &PeerExpectation,
    bgp: &BTreeMap<String, BgpVrf>,
) -> Result<Vec<String>, String> {
    let Some(vrf) = bgp.get(&expected.vrf) else {
        let known: Vec<&str> = bgp.keys().map(String::as_str).collect();
        return Err(format!(
            "{}.vrf: '{}' has no BGP instance in FRR (its BGP VRFs: {}); give one of them, or configure `router bgp <AS> vrf {}` first",
            expected.location,
            expected.vrf,
            if known.is_empty() { "none".to_string() } else { known.join(", ") },
            expected.vrf
        ));
    };
    if vrf.neighbor(&expected.peer).is_some() {
        return Ok(vec![expected.peer.clone()]);
    }
    let group: Vec<String> = vrf
        .neighbors
        .iter()
        .filter(|n| n.peer_group.as_deref() == Some(expected.peer.as_str()))
        .map(|n| n.name.clone())
        .collect();
    if group.is_empty() {
        let known: Vec<&str> = vrf.neighbors.iter().map(|n| n.name.as_str()).collect();
        return Err(format!(
            "{}.peer: '{}' is neither a neighbor nor a peer group with members in VRF {} (its neighbors: {}); give a neighbor as FRR names it (the interface for BGP unnumbered, the address otherwise) or a peer group that has at least one member",
            expected.location,
            expected.peer,
            expected.vrf,
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ));
    }
    Ok(group)
}

/// The second run: the route commands of every Established member whose routes are checked,
/// for the families negotiated with it.
fn read_routes(
    vtysh: &mut impl Vtysh,
    request: &Request,
    observation: &mut Observation,
) -> Result<(), Failure> {
    let mut wanted: Vec<(RoutesKey, bool)> = Vec::new();
    for (expected, members) in request.peers.iter().zip(&observation.members) {
        let Some(vrf) = observation.bgp.get(&expected.vrf) else {
            continue;
        };
        for name in members {
            let Some(neighbor) = vrf.neighbor(name).filter(|n| n.established()) else {
                continue;
            };
            let key = |family: DefaultFamily| {
                (
                    expected.vrf.clone(),
                    name.clone(),
                    family.unicast().as_str(),
                )
            };
            for family in &expected.receives_default {
                if neighbor.negotiated.contains(&family.unicast()) {
                    wanted.push((key(*family), false));
                }
            }
            if expected.advertises == Advertises::AggregatesOnly {
                for family in DefaultFamily::BOTH {
                    if neighbor.negotiated.contains(&family.unicast()) {
                        wanted.push((key(family), true));
                    }
                }
            }
        }
    }
    wanted.sort();
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(());
    }
    let commands: Vec<String> = wanted
        .iter()
        .map(|((vrf, peer, af), advertised)| routes_command(vrf, peer, af, *advertised))
        .collect();
    let answers = answers_for(vtysh, &commands)?;
    for ((key, advertised), (command, answer)) in
        wanted.into_iter().zip(commands.iter().zip(&answers))
    {
        if advertised {
            let prefixes = frr::route_prefixes(answer, "advertisedRoutes", command)?;
            observation.advertised.insert(key, prefixes);
        } else {
            let prefixes = frr::route_prefixes(answer, "routes", command)?;
            observation.received.insert(key, prefixes);
        }
    }
    Ok(())
}
