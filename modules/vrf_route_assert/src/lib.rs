//! `deevnet.net.vrf_route_assert`: where tenant traffic really goes, asked of the kernel.
//!
//! The evaluation here runs against a [`Kernel`]: the node's (netlink and `/proc/sys`, in
//! [`node`]) or recorded answers in tests. For each declared VRF it checks that the VRF
//! exists, that its own table has the expected default routes (Proxmox's `unreachable default
//! metric 4278198272` catch-all is reported, never taken for a usable default), that its lookups
//! cannot fall through to the main table, how each destination resolves for traffic in the VRF
//! (`ip route get DST vrf NAME`; generated for every prefix connected on a forbidden interface;
//! with `iif`, for a packet arriving by an interface, in [`input`]) — an answer from any table
//! but the VRF's own is fall-through, a finding even when nothing else was expected — and that
//! the interfaces those routes leave by forward and accept asymmetric returns. The VRF named `default` is the main table. VRFs nobody declared are
//! inspected for fall-through on request; [`settle`] re-checks until all pass or time is up.
//!
//! The options and the validated [`Request`] they make are in [`params`]; the
//! kernel side answers with [`Failure`], the one error of the
//! kernel side, so the binary's `main.rs` only chains the steps.

pub mod connected;
pub mod defaults;
pub mod exits;
pub mod fall_through;
pub mod input;
pub mod lookup;
pub mod node;
pub mod params;
pub mod settle;
pub mod vrf_support;

use connected::ConnectedPrefix;
use deevnet_runtime::netlink::{Family, Link, Links, Lookup, Route, RouteQuery};
use deevnet_runtime::Failure;
use fall_through::{LeakingVrf, NodeTables};
use input::Arrival;
use lookup::Answer;
use params::{LookupCheck, Request, UndeclaredVrfs, VrfCheck};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use vrf_support::VrfSupport;

pub use defaults::{DefaultRoute, VrfState};

/// What the checks ask of the node.
pub trait Kernel {
    fn links(&mut self) -> Result<Links, Failure>;
    /// Every route of one table and family.
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure>;
    /// `ip route get`: the output lookup of the destination pinned to `oif` (the VRF device's
    /// ifindex; `None` for the default VRF), or with `iif` the input lookup of a packet
    /// arriving there.
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure>;
    /// The interface's `net.ipv4|ipv6.conf.<dev>.forwarding` (`dev` may be `all`); `None` when
    /// it has none.
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure>;
    /// `net.ipv6.conf.<dev>.force_forwarding` (kernels 6.17 and later); `None` when it has
    /// none.
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure>;
    /// `net.ipv4.conf.<dev>.rp_filter` (`dev` may be `all`); `None` when it has none.
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure>;
    /// Whether the kernel can have VRFs (asked only when no VRF exists).
    fn vrf_support(&mut self) -> VrfSupport;
}

/// One check and its outcome (the module's `checks` return value).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckResult {
    pub vrf: String,
    /// `vrf`, `default_route`, `no_fall_through`, `lookup <dst>`, `forwarding <dev>` or
    /// `rp_filter <dev>`.
    pub check: String,
    pub ok: bool,
    pub expected: Value,
    pub actual: Value,
    /// The check on one line, as the failure message lists it.
    pub msg: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub vrfs: Vec<VrfState>,
    pub checks: Vec<CheckResult>,
    /// The VRFs `vrfs` does not list whose lookups fall through (when they are inspected).
    pub leaking_vrfs: Vec<LeakingVrf>,
    #[serde(skip)]
    undeclared_vrfs: UndeclaredVrfs,
    /// Findings that fail nothing.
    #[serde(skip)]
    notes: Vec<String>,
    /// Why the undeclared VRFs could not be judged (a kernel without VRF support): a finding
    /// under `undeclared_vrfs`, never "none falls through".
    #[serde(skip)]
    undeclared_unknown: Option<String>,
}

impl Report {
    fn new(undeclared_vrfs: UndeclaredVrfs) -> Self {
        Report {
            vrfs: Vec::new(),
            checks: Vec::new(),
            leaking_vrfs: Vec::new(),
            undeclared_vrfs,
            notes: Vec::new(),
            undeclared_unknown: None,
        }
    }

    /// Why whether an undeclared VRF falls through could not be told, when it could not.
    pub fn undeclared_unknown(&self) -> Option<&str> {
        self.undeclared_unknown.as_deref()
    }

    /// Whether waiting could change the outcome: not when a VRF is missing (a VRF is made by
    /// the node's network configuration, never by a route arriving) or the kernel cannot have
    /// VRFs; the findings then stand at once.
    pub fn may_settle(&self) -> bool {
        self.undeclared_unknown.is_none() && !self.checks.iter().any(|r| !r.ok && r.check == "vrf")
    }

    /// One line per failed check (and per leaking undeclared VRF with `undeclared_vrfs=fail`);
    /// empty when all passed.
    pub fn failures(&self) -> Vec<&str> {
        let checks = self.checks.iter().filter(|r| !r.ok).map(|r| r.msg.as_str());
        let leaks = self.leaks_when(UndeclaredVrfs::Fail);
        checks
            .chain(leaks)
            .chain(self.unknown_when(UndeclaredVrfs::Fail))
            .collect()
    }

    /// What the task warns about: leaking undeclared VRFs with `undeclared_vrfs=warn`, and
    /// checks that could not be made.
    pub fn warnings(&self) -> Vec<&str> {
        let leaks = self.leaks_when(UndeclaredVrfs::Warn);
        leaks
            .chain(self.unknown_when(UndeclaredVrfs::Warn))
            .chain(self.notes.iter().map(String::as_str))
            .collect()
    }

    fn unknown_when(&self, policy: UndeclaredVrfs) -> Option<&str> {
        self.undeclared_unknown
            .as_deref()
            .filter(|_| self.undeclared_vrfs == policy)
    }

    fn leaks_when(&self, policy: UndeclaredVrfs) -> impl Iterator<Item = &str> {
        let reported = self.undeclared_vrfs == policy;
        self.leaking_vrfs
            .iter()
            .filter(move |_| reported)
            .map(|leak| leak.msg.as_str())
    }
}

/// Runs every check of every declared VRF, then inspects the undeclared ones when asked. An
/// error is a failure to ask the kernel (no answer, no permission) or a forbidden interface
/// the node does not have, not a failed check.
pub fn assert_vrfs(kernel: &mut impl Kernel, request: &Request) -> Result<Report, Failure> {
    let links = kernel.links()?;
    let support = if links.iter().any(Link::is_vrf) {
        VrfSupport::Present
    } else {
        kernel.vrf_support()
    };
    let mut main = NodeTables::default();
    let mut report = Report::new(request.undeclared_vrfs);
    for check in &request.vrfs {
        assert_vrf(kernel, &links, &support, &mut main, check, &mut report)?;
    }
    if request.undeclared_vrfs == UndeclaredVrfs::Ignore {
        return Ok(report);
    }
    if let Some(why) = support.absent() {
        report.undeclared_unknown = Some(format!(
            "undeclared VRFs: cannot tell whether one falls through: this kernel has no VRF \
             support ({why}), so there is no VRF to inspect and nothing about tenant traffic was \
             proven; run the assertion on the node's own kernel, or set undeclared_vrfs=ignore"
        ));
        return Ok(report);
    }
    let declared: BTreeSet<&str> = request.vrfs.iter().map(|c| c.name.as_str()).collect();
    report.leaking_vrfs = fall_through::undeclared_leaks(kernel, &links, &mut main, &declared)?;
    Ok(report)
}

/// Where a VRF's lookups are made: its device and table, or the default VRF's main table.
pub struct VrfView<'a> {
    pub name: &'a str,
    pub table: u32,
    /// The device lookups are pinned to; `None` for the default VRF.
    pub device: Option<&'a Link>,
}

impl VrfView<'_> {
    /// The table whose answers are the VRF's own (anything else is fall-through); `None` for
    /// the default VRF, whose lookups go wherever the node's rules send them.
    pub fn own_table(&self) -> Option<u32> {
        self.device.map(|_| self.table)
    }
}

fn assert_vrf(
    kernel: &mut impl Kernel,
    links: &Links,
    support: &VrfSupport,
    main: &mut NodeTables,
    check: &VrfCheck,
    report: &mut Report,
) -> Result<(), Failure> {
    // No other check means anything without the VRF.
    let Some(view) = vrf_view(links, support, check, report) else {
        return Ok(());
    };
    let mut routes = Vec::new();
    for family in [Family::V4, Family::V6] {
        routes.extend(match view.device {
            Some(_) => kernel.routes(family, view.table)?,
            None => main.routes(kernel, family)?.to_vec(),
        });
    }
    let state = defaults::vrf_state(links, &view, &routes);

    // The interfaces the checked routes leave by, for the forwarding and rp_filter checks.
    let mut exits: BTreeSet<(Family, String)> = BTreeSet::new();
    for expectation in &check.defaults {
        let mut result = defaults::check_default(&view, &state, expectation);
        if view.device.is_none() && !result.ok {
            defaults::explain_single_stack(&state, expectation, &mut result);
        }
        report.checks.push(result);
        exits.extend(state.unicast_exits(expectation.family));
    }
    if check.no_fall_through {
        for family in check.families() {
            let result =
                fall_through::check_no_fall_through(kernel, main, links, &view, &routes, family)?;
            report.checks.push(result);
        }
    }
    exits.extend(run_lookups(kernel, links, main, check, &view, report)?);
    if check.forwarding {
        for (family, dev) in &exits {
            let value = kernel.forwarding(*family, dev)?;
            report
                .checks
                .push(exits::check_forwarding(&check.name, *family, dev, value));
        }
    }
    check_asymmetric_returns(kernel, links, check, &view, &exits, report)?;
    report.vrfs.push(state);
    Ok(())
}

/// The `vrf` check, and where the VRF's lookups are made when it exists.
fn vrf_view<'a>(
    links: &'a Links,
    support: &VrfSupport,
    check: &'a VrfCheck,
    report: &mut Report,
) -> Option<VrfView<'a>> {
    if check.is_default_vrf() {
        report.checks.push(CheckResult {
            vrf: check.name.clone(),
            check: "vrf".into(),
            ok: true,
            expected: json!({"kind": "vrf"}),
            actual: json!({"kind": "default", "table": 254}),
            msg: format!(
                "{}: the default VRF (table main, lookups without a VRF)",
                check.name
            ),
        });
        return Some(VrfView {
            name: &check.name,
            table: 254,
            device: None,
        });
    }
    let (found, actual, mut msg) = find_vrf(links, &check.name);
    if let (None, Some(why)) = (found, support.absent()) {
        msg.push_str(&format!("; this kernel cannot have VRFs: {why}"));
    }
    report.checks.push(CheckResult {
        vrf: check.name.clone(),
        check: "vrf".into(),
        ok: found.is_some(),
        expected: json!({"kind": "vrf"}),
        actual,
        msg,
    });
    let (device, table) = found?;
    Some(VrfView {
        name: &check.name,
        table,
        device: Some(device),
    })
}

/// The entry's lookups and those generated for its forbidden interfaces: their checks go to
/// the report; the interfaces their answers leave by are returned.
fn run_lookups(
    kernel: &mut impl Kernel,
    links: &Links,
    main: &mut NodeTables,
    check: &VrfCheck,
    view: &VrfView,
    report: &mut Report,
) -> Result<Vec<(Family, String)>, Failure> {
    let generated = connected::forbidden_lookups(kernel, links, main, check)?;
    report.notes.extend(generated.notes);
    let lookups = check
        .lookups
        .iter()
        .map(|lookup| (lookup.clone(), None))
        .chain(
            generated
                .lookups
                .into_iter()
                .map(|g| (g.lookup, Some(g.prefix))),
        );
    let mut exits = Vec::new();
    for (lookup, prefix) in lookups {
        let (result, exit) = run_lookup(kernel, links, view, &lookup, prefix.as_ref())?;
        report.checks.push(result);
        exits.extend(exit);
    }
    Ok(exits)
}

/// `asymmetric_returns`: the IPv4 exits' rp_filter, and the L3VNI bridge's.
fn check_asymmetric_returns(
    kernel: &mut impl Kernel,
    links: &Links,
    check: &VrfCheck,
    view: &VrfView,
    exits: &BTreeSet<(Family, String)>,
    report: &mut Report,
) -> Result<(), Failure> {
    // rp_filter is IPv4's; IPv6 has no reverse-path sysctl.
    let v4_exits: Vec<&String> = exits
        .iter()
        .filter(|(family, _)| *family == Family::V4)
        .map(|(_, dev)| dev)
        .collect();
    if check.asymmetric_returns && v4_exits.is_empty() {
        report.notes.push(format!(
            "{}: asymmetric_returns checked no interface: no checked IPv4 route leaves the node; \
             check the IPv4 default (default_via or default_dev) or an IPv4 lookup",
            check.name
        ));
    }
    if !check.asymmetric_returns || (v4_exits.is_empty() && check.l3vni_bridge.is_none()) {
        return Ok(());
    }
    let all = kernel.rp_filter("all")?;
    for dev in v4_exits {
        let own = kernel.rp_filter(dev)?;
        let result = exits::check_rp_filter(&check.name, dev, all.as_deref(), own.as_deref());
        report.checks.push(result);
    }
    // Where returns delivered to another node enter the VRF (the lab measured the drop
    // there): its L3VNI bridge, a port of the VRF.
    if let Some(bridge) = &check.l3vni_bridge {
        let result = match exits::l3vni_bridge_misplaced(links, view, bridge) {
            Some(result) => result,
            None => {
                let own = kernel.rp_filter(bridge)?;
                exits::check_l3vni_rp_filter(&check.name, bridge, all.as_deref(), own.as_deref())
            }
        };
        report.checks.push(result);
    }
    Ok(())
}

/// One lookup, on the output path (in the VRF, pinned to its device) or, with `iif`, on the
/// input path (in the VRF of the arrival device, which the kernel takes from it): its check, and
/// the interface its answer leaves by.
fn run_lookup(
    kernel: &mut impl Kernel,
    links: &Links,
    view: &VrfView,
    lookup: &LookupCheck,
    prefix: Option<&ConnectedPrefix>,
) -> Result<(CheckResult, Option<(Family, String)>), Failure> {
    let arrival = match &lookup.iif {
        None => None,
        Some(iif) => match Arrival::of(links, iif) {
            Some(arrival) => Some(arrival),
            None => return Ok((lookup::unknown_iif(view.name, lookup, iif), None)),
        },
    };
    let answer = match &arrival {
        Some(arrival) => input::answer(kernel, arrival, lookup)?,
        None => Answer::Kernel(kernel.route_get(&RouteQuery {
            source: lookup.src,
            oif: view.device.map(|device| device.index),
            ..RouteQuery::to(lookup.dst)
        })?),
    };
    let arrival = arrival.as_ref();
    Ok(lookup::check_lookup(
        view, links, lookup, prefix, arrival, &answer,
    ))
}

/// The VRF device and its table when `name` is one; what was found (the result's `actual`)
/// and the check's line either way.
fn find_vrf<'a>(links: &'a Links, name: &str) -> (Option<(&'a Link, u32)>, Value, String) {
    let no_vrf = format!("{name}: the tenant has no VRF on this node");
    let Some(link) = links.by_name(name) else {
        return (
            None,
            Value::Null,
            format!("{no_vrf} (no interface named {name})"),
        );
    };
    let actual = json!({"kind": link.kind, "table": link.vrf_table, "ifindex": link.index});
    match (link.is_vrf(), link.vrf_table) {
        (true, Some(table)) => (
            Some((link, table)),
            actual,
            format!("{name}: VRF with table {table}, ifindex {}", link.index),
        ),
        (true, None) => (
            None,
            actual,
            format!("{name}: the kernel reports no routing table for this VRF"),
        ),
        (false, _) => {
            let kind = link
                .kind
                .as_deref()
                .unwrap_or("physical or loopback interface");
            (
                None,
                actual,
                format!("{no_vrf} ({name} is a {kind}, not a VRF)"),
            )
        }
    }
}

#[cfg(test)]
mod tests;
