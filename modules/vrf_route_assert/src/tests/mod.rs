//! The evaluation on recorded kernel answers: the mission's exit node hv02 with tenant VRF
//! vrf_tdemo (table 1001), transit vmbr0.50 to gateway 10.20.50.1 and the management bridge
//! vmbr0 on 10.20.99.0/24, before and after each fault is fixed.

mod assert;
mod connected;
mod defaults;
mod exits;
mod fall_through;
mod input;
mod params;
mod settle;
mod snat;
mod vrf_support;

use crate::params::{DefaultExpectation, ExpectedTable, LookupCheck, Request, VrfCheck};
use crate::vrf_support::VrfSupport;
use crate::{assert_vrfs, Kernel, Report};
use deevnet_runtime::netlink::{
    Family, Link, Links, Lookup, Refusal, Route, RouteKind, RouteQuery,
};
use deevnet_runtime::nft::Ruleset;
use deevnet_runtime::Failure;
use serde_json::json;
use std::collections::HashMap;
use std::net::IpAddr;

const VRF_INDEX: u32 = 10;
const VRF_TABLE: u32 = 1001;
const LO: u32 = 1;
const VMBR0: u32 = 2;
const TRANSIT: u32 = 3;
const TENANT_BRIDGE: u32 = 11;
const OTHER_VLAN: u32 = 4;
const CATCH_ALL_METRIC: u32 = 4278198272;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn link(index: u32, name: &str, kind: Option<&str>) -> Link {
    Link {
        index,
        name: name.into(),
        kind: kind.map(str::to_string),
        ..Link::default()
    }
}

fn hv02_links() -> Vec<Link> {
    let mut vrf = link(VRF_INDEX, "vrf_tdemo", Some("vrf"));
    vrf.vrf_table = Some(VRF_TABLE);
    let mut tenant_bridge = link(TENANT_BRIDGE, "tdemo", Some("bridge"));
    tenant_bridge.controller = Some(VRF_INDEX);
    let mut transit = link(TRANSIT, "vmbr0.50", Some("vlan"));
    transit.parent = Some(VMBR0);
    vec![
        link(LO, "lo", None),
        link(VMBR0, "vmbr0", Some("bridge")),
        transit,
        link(OTHER_VLAN, "vmbr0.60", Some("vlan")),
        vrf,
        tenant_bridge,
    ]
}

fn route(family: Family, kind: RouteKind) -> Route {
    Route::new(family, VRF_TABLE, kind)
}

/// What every tenant VRF table holds: the tenant subnet on its bridge, and its local address.
fn connected_routes() -> Vec<Route> {
    let mut subnet = route(Family::V4, RouteKind::Unicast);
    subnet.destination = "10.77.0.0/24".parse().unwrap();
    subnet.oif = Some(TENANT_BRIDGE);
    subnet.protocol = 2;
    let mut local = route(Family::V4, RouteKind::Local);
    local.destination = "10.77.0.1/32".parse().unwrap();
    local.oif = Some(TENANT_BRIDGE);
    local.protocol = 2;
    vec![subnet, local]
}

/// hv02's main table: the management subnet on vmbr0 and its default via 10.20.99.1, the
/// transit subnet on vmbr0.50, as `ip route show table main` lists them.
fn main_table() -> Vec<Route> {
    let connected = |prefix: &str, oif: u32, own: &str| {
        let mut route = Route::new(Family::V4, 254, RouteKind::Unicast);
        route.destination = prefix.parse().unwrap();
        route.oif = Some(oif);
        route.protocol = 2;
        route.pref_source = Some(ip(own));
        route
    };
    let mut default = Route::new(Family::V4, 254, RouteKind::Unicast);
    default.gateway = Some(ip("10.20.99.1"));
    default.oif = Some(VMBR0);
    default.protocol = 3;
    vec![
        default,
        connected("10.20.99.0/24", VMBR0, "10.20.99.2"),
        connected("10.20.50.0/24", TRANSIT, "10.20.50.2"),
    ]
}

/// The node's own addresses (table local).
fn local_table() -> Vec<Route> {
    ["10.20.99.2", "10.20.50.2"]
        .into_iter()
        .map(|own| {
            let mut route = Route::new(Family::V4, 255, RouteKind::Local);
            route.destination = format!("{own}/32").parse().unwrap();
            route.protocol = 2;
            route
        })
        .collect()
}

/// The leaked default `0.0.0.0/0 via 10.20.50.1 dev vmbr0.50` (nexthop-vrf default).
fn transit_default() -> Route {
    let mut default = route(Family::V4, RouteKind::Unicast);
    default.gateway = Some(ip("10.20.50.1"));
    default.oif = Some(TRANSIT);
    default.protocol = 3;
    default
}

fn catch_all(family: Family) -> Route {
    let mut unreachable = route(family, RouteKind::Unreachable);
    unreachable.metric = Some(CATCH_ALL_METRIC);
    unreachable.protocol = 3;
    unreachable
}

fn answer(table: u32, gateway: Option<&str>, oif: u32) -> Lookup {
    let mut route = Route::new(Family::V4, table, RouteKind::Unicast);
    route.gateway = gateway.map(ip);
    route.oif = Some(oif);
    Lookup::Route(route)
}

struct RecordedKernel {
    links: Vec<Link>,
    routes: Vec<Route>,
    lookups: HashMap<IpAddr, Lookup>,
    forwarding: HashMap<String, String>,
    rp_filter: HashMap<String, String>,
    /// The answers to input lookups (with iif), by destination.
    arriving: HashMap<IpAddr, Lookup>,
    forwarding_v6: HashMap<String, String>,
    force_forwarding: HashMap<String, String>,
    asked: Vec<(IpAddr, Option<u32>)>,
    queries: Vec<RouteQuery>,
    /// What the kernel says of its VRF support when no VRF exists.
    vrf_support: VrfSupport,
    /// `nft -j list ruleset` as recorded; `None`: nft could not be read.
    nft: Option<String>,
    /// How many times the ruleset was read.
    nft_reads: u32,
}

impl RecordedKernel {
    /// hv02 as found: neither fault fixed.
    fn faulty() -> Self {
        RecordedKernel {
            links: hv02_links(),
            routes: [connected_routes(), main_table(), local_table()].concat(),
            lookups: HashMap::from([
                // No default and no catch-all in 1001: main answers, by the management bridge.
                (ip("10.20.99.5"), answer(254, None, VMBR0)),
                (ip("8.8.8.8"), answer(254, Some("10.20.99.1"), VMBR0)),
                (ip("10.20.99.1"), answer(254, None, VMBR0)),
            ]),
            forwarding: HashMap::from([
                ("vmbr0".to_string(), "1".to_string()),
                ("vmbr0.50".to_string(), "0".to_string()),
            ]),
            // Debian's default: loose on every interface.
            rp_filter: HashMap::from([
                ("all".to_string(), "2".to_string()),
                ("vmbr0".to_string(), "2".to_string()),
                ("vmbr0.50".to_string(), "2".to_string()),
            ]),
            arriving: HashMap::new(),
            forwarding_v6: HashMap::new(),
            force_forwarding: HashMap::new(),
            asked: Vec::new(),
            queries: Vec::new(),
            vrf_support: VrfSupport::Present,
            nft: None,
            nft_reads: 0,
        }
    }

    /// Fault 2 fixed (leaked default and catch-all), fault 1 still there.
    fn routes_fixed() -> Self {
        let mut kernel = Self::faulty();
        kernel.routes.push(transit_default());
        kernel.routes.push(catch_all(Family::V4));
        kernel.routes.push(catch_all(Family::V6));
        for dst in ["10.20.99.5", "8.8.8.8", "10.20.99.1"] {
            kernel
                .lookups
                .insert(ip(dst), answer(VRF_TABLE, Some("10.20.50.1"), TRANSIT));
        }
        kernel
    }

    fn leaked_default(&mut self) -> &mut Route {
        self.routes
            .iter_mut()
            .find(|r| r.table == VRF_TABLE && r.gateway.is_some())
            .unwrap()
    }

    fn fixed() -> Self {
        let mut kernel = Self::routes_fixed();
        kernel.forwarding.insert("vmbr0.50".into(), "1".into());
        kernel
    }
}

impl Kernel for RecordedKernel {
    fn links(&mut self) -> Result<Links, Failure> {
        Ok(Links::new(self.links.clone()))
    }
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
        Ok(self
            .routes
            .iter()
            .filter(|r| r.family == family && r.table == table)
            .cloned()
            .collect())
    }
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
        let destination = query.destination;
        self.asked.push((destination, query.oif));
        self.queries.push(*query);
        let answers = match query.iif {
            Some(_) => &self.arriving,
            None => &self.lookups,
        };
        answers
            .get(&destination)
            .cloned()
            .ok_or_else(|| Failure::new(format!("no recorded answer for {destination}")))
    }
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
        Ok(match family {
            Family::V4 => self.forwarding.get(dev).cloned(),
            Family::V6 => self.forwarding_v6.get(dev).cloned(),
        })
    }
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        Ok(self.rp_filter.get(dev).cloned())
    }
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        Ok(self.force_forwarding.get(dev).cloned())
    }
    fn vrf_support(&mut self) -> VrfSupport {
        self.vrf_support.clone()
    }
    fn nft_ruleset(&mut self) -> Result<Ruleset, String> {
        self.nft_reads += 1;
        let json = self
            .nft
            .as_deref()
            .ok_or("/usr/sbin/nft is not installed")?;
        Ruleset::parse(json)
    }
}

fn lookup(dst: &str) -> LookupCheck {
    LookupCheck::of(ip(dst))
}

/// The mission's checks: the transit interface forwards; the VRF has a default via the
/// transit gateway; management-bound tenant traffic leaves by the transit interface, not the
/// management bridge; and the internet resolves from the VRF's own table.
fn mission_checks() -> Vec<VrfCheck> {
    vec![VrfCheck {
        defaults: vec![DefaultExpectation {
            family: Family::V4,
            via: Some(ip("10.20.50.1")),
            dev: Some("vmbr0.50".into()),
        }],
        lookups: vec![
            LookupCheck {
                dev: Some("vmbr0.50".into()),
                not_dev: Some("vmbr0".into()),
                ..lookup("10.20.99.5")
            },
            lookup("8.8.8.8"),
        ],
        forwarding: true,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

fn run(kernel: &mut RecordedKernel, checks: &[VrfCheck]) -> Report {
    assert_vrfs(kernel, &Request::of(checks.to_vec())).unwrap()
}
