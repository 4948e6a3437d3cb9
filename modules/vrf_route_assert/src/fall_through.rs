//! Fall-through: a VRF table with neither a default route nor a catch-all (an unreachable,
//! blackhole or prohibit default) lets its lookups go on to the main table, so tenant traffic
//! leaves by the main table's default (the management side). Checked for declared VRFs with
//! `no_fall_through`, and for every VRF nobody declared with `undeclared_vrfs`.

use crate::defaults::{default_routes, describe_default};
use crate::{CheckResult, Kernel, VrfView};
use deevnet_runtime::netlink::{table_name, Family, Links, Route, RouteKind};
use deevnet_runtime::Failure;
use ipnet::IpNet;
use serde::Serialize;
use serde_json::json;
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;

const MAIN_TABLE: u32 = 254;
const LOCAL_TABLE: u32 = 255;

/// The main table (and the node's own addresses, from the local table), read once per family
/// and only when a check needs it (a node with a full BGP table has many routes there).
#[derive(Default)]
pub struct NodeTables {
    routes: HashMap<Family, Vec<Route>>,
    own_addresses: HashMap<Family, BTreeSet<IpAddr>>,
}

impl NodeTables {
    /// The node's addresses of a family in the default VRF (the local table's `local` routes).
    pub fn own_addresses(
        &mut self,
        kernel: &mut impl Kernel,
        family: Family,
    ) -> Result<&BTreeSet<IpAddr>, Failure> {
        if let Entry::Vacant(entry) = self.own_addresses.entry(family) {
            let addresses = kernel
                .routes(family, LOCAL_TABLE)?
                .into_iter()
                .filter(|r| r.kind == RouteKind::Local)
                .map(|r| r.destination.addr())
                .collect();
            entry.insert(addresses);
        }
        Ok(&self.own_addresses[&family])
    }

    pub fn routes(
        &mut self,
        kernel: &mut impl Kernel,
        family: Family,
    ) -> Result<&[Route], Failure> {
        if let Entry::Vacant(entry) = self.routes.entry(family) {
            entry.insert(kernel.routes(family, MAIN_TABLE)?);
        }
        Ok(&self.routes[&family])
    }

    /// Where lookups that fall through leave: the first path of the main table's usable
    /// default with the lowest metric.
    fn leaves_by(
        &mut self,
        kernel: &mut impl Kernel,
        links: &Links,
        family: Family,
    ) -> Result<LeavesBy, Failure> {
        let default = self
            .routes(kernel, family)?
            .iter()
            .filter(|r| r.is_default() && r.kind == RouteKind::Unicast)
            .min_by_key(|r| r.metric.unwrap_or(0));
        let (via, oif) = default
            .and_then(|route| route.paths().into_iter().next())
            .unwrap_or((None, None));
        Ok(LeavesBy {
            dev: oif.map(|index| links.name_of(index)),
            via,
        })
    }

    /// Whether the main table reaches anything of this family beyond the link itself: an
    /// IPv6 VRF without a catch-all leaks only where the node has IPv6 routes to leak to.
    fn reaches_beyond_the_link(
        &mut self,
        kernel: &mut impl Kernel,
        family: Family,
    ) -> Result<bool, Failure> {
        Ok(self
            .routes(kernel, family)?
            .iter()
            .any(|r| !is_link_scoped(&r.destination)))
    }
}

/// IPv6 link-local and multicast prefixes, which every interface has and no lookup leaks to.
pub fn is_link_scoped(prefix: &IpNet) -> bool {
    match prefix {
        IpNet::V4(_) => false,
        IpNet::V6(net) => {
            let first = net.network().segments()[0];
            (first & 0xffc0) == 0xfe80 || (first & 0xff00) == 0xff00
        }
    }
}

/// Where a fall-through lookup leaves: the main table's default.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LeavesBy {
    pub dev: Option<String>,
    pub via: Option<IpAddr>,
}

impl LeavesBy {
    fn describe(&self, family: Family) -> String {
        match (&self.via, &self.dev) {
            (None, None) => format!(
                "reach what the main table routes (it has no {} default, so the node's \
                 connected prefixes)",
                family.name()
            ),
            (via, dev) => {
                let mut text = "leave by the main table's default".to_string();
                if let Some(via) = via {
                    text.push_str(&format!(" via {via}"));
                }
                if let Some(dev) = dev {
                    text.push_str(&format!(" dev {dev}"));
                }
                text
            }
        }
    }
}

/// An undeclared VRF whose lookups of one family fall through (the module's `leaking_vrfs`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LeakingVrf {
    pub name: String,
    pub table: u32,
    pub family: &'static str,
    pub leaves_by: LeavesBy,
    #[serde(skip)]
    pub msg: String,
}

/// The route that stops the family's lookups in this table: any default but `throw`.
fn stopper(routes: &[Route], family: Family) -> Option<&Route> {
    routes
        .iter()
        .find(|r| r.family == family && r.is_default() && r.kind != RouteKind::Throw)
}

fn catch_all_command(vrf: &str, family: Family) -> String {
    let ip = match family {
        Family::V4 => "ip",
        Family::V6 => "ip -6",
    };
    format!("{ip} route add vrf {vrf} unreachable default metric 4278198272")
}

fn falls_through(table: u32, family: Family, leaves: &LeavesBy) -> String {
    format!(
        "table {} has no {} default route and no catch-all (unreachable, blackhole or \
         prohibit default), so its lookups fall through to the main table and {}",
        table_name(table),
        family.name(),
        leaves.describe(family)
    )
}

/// The `no_fall_through` check of one family.
pub fn check_no_fall_through(
    kernel: &mut impl Kernel,
    main: &mut NodeTables,
    links: &Links,
    view: &VrfView,
    routes: &[Route],
    family: Family,
) -> Result<CheckResult, Failure> {
    let vrf = view.name;
    let expected = json!({"family": family.name()});
    if let Some(route) = stopper(routes, family) {
        let stop = default_routes(links, route)
            .first()
            .map(describe_default)
            .unwrap_or_default();
        return Ok(CheckResult {
            vrf: vrf.to_string(),
            check: "no_fall_through".into(),
            ok: true,
            expected,
            actual: json!({"stopped_by": stop}),
            msg: format!(
                "{vrf}: table {} stops {} lookups ({stop})",
                table_name(view.table),
                family.name()
            ),
        });
    }
    let leaves = main.leaves_by(kernel, links, family)?;
    let msg = format!(
        "{vrf}: {}; give the VRF a default route (such as the leaked transit default) or the \
         catch-all ({})",
        falls_through(view.table, family, &leaves),
        catch_all_command(vrf, family)
    );
    Ok(CheckResult {
        vrf: vrf.to_string(),
        check: "no_fall_through".into(),
        ok: false,
        expected,
        actual: json!({"leaves_by": leaves}),
        msg,
    })
}

/// Every VRF of the node that `declared` does not name and whose lookups fall through: IPv4
/// always, IPv6 where the main table reaches IPv6 beyond the link.
pub fn undeclared_leaks(
    kernel: &mut impl Kernel,
    links: &Links,
    main: &mut NodeTables,
    declared: &BTreeSet<&str>,
) -> Result<Vec<LeakingVrf>, Failure> {
    let mut leaks = Vec::new();
    let undeclared = links
        .iter()
        .filter(|link| link.is_vrf() && !declared.contains(link.name.as_str()))
        .filter_map(|link| link.vrf_table.map(|table| (link.name.clone(), table)));
    for (name, table) in undeclared.collect::<Vec<_>>() {
        for family in [Family::V4, Family::V6] {
            if family == Family::V6 && !main.reaches_beyond_the_link(kernel, family)? {
                continue;
            }
            let routes = kernel.routes(family, table)?;
            if stopper(&routes, family).is_some() {
                continue;
            }
            let leaves_by = main.leaves_by(kernel, links, family)?;
            let msg = format!(
                "{name}: undeclared VRF (not in vrfs): {}; declare it in vrfs with its checks, \
                 give it a default route or the catch-all ({}), or set undeclared_vrfs=ignore",
                falls_through(table, family, &leaves_by),
                catch_all_command(&name, family)
            );
            leaks.push(LeakingVrf {
                name: name.clone(),
                table,
                family: family.name(),
                leaves_by,
                msg,
            });
        }
    }
    Ok(leaks)
}
