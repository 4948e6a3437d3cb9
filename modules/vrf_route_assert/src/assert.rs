//! The assertion flow: for each declared VRF, the `vrf` check, its defaults, its fall-through,
//! its lookups (declared, and generated for its forbidden interfaces), its exits' forwarding and
//! rp_filter; then the undeclared VRFs when they are inspected.

use crate::connected::{self, ConnectedPrefix};
use crate::defaults;
use crate::exits;
use crate::fall_through::{self, NodeTables};
use crate::input::{self, Arrival};
use crate::kernel::Kernel;
use crate::lookup::{self, Answer};
use crate::params::{LookupCheck, Request, UndeclaredVrfs, VrfCheck};
use crate::report::{CheckResult, Report};
use crate::snat::Predictions;
use crate::view::{vrf_view, VrfView};
use crate::vrf_support::VrfSupport;
use deevnet_runtime::netlink::{Family, Link, Links, RouteQuery};
use deevnet_runtime::Failure;
use std::collections::BTreeSet;

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
    let mut nat = Predictions::default();
    for check in &request.vrfs {
        assert_vrf(
            kernel,
            &links,
            &support,
            &mut main,
            &mut nat,
            check,
            &mut report,
        )?;
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

fn assert_vrf(
    kernel: &mut impl Kernel,
    links: &Links,
    support: &VrfSupport,
    main: &mut NodeTables,
    nat: &mut Predictions,
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
    exits.extend(run_lookups(kernel, links, main, nat, check, &view, report)?);
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

/// The entry's lookups and those generated for its forbidden interfaces: their checks go to
/// the report, each with its source NAT when it asks (`snat_src`) and its answer leaves by a
/// device; the interfaces their answers leave by are returned.
fn run_lookups(
    kernel: &mut impl Kernel,
    links: &Links,
    main: &mut NodeTables,
    nat: &mut Predictions,
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
        let (mut result, exit) = run_lookup(kernel, links, view, &lookup, prefix.as_ref())?;
        if let (Some(src), Some((_, dev)), Some(actual)) =
            (lookup.snat_src, &exit, result.actual.as_object_mut())
        {
            let snat = nat.answer(kernel, dev, src);
            actual.insert("snat".into(), serde_json::json!(snat));
        }
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
