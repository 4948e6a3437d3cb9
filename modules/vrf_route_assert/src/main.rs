//! `deevnet.net.vrf_route_assert`: asserts, over rtnetlink, where tenant traffic in each VRF
//! really goes. It changes nothing, so check mode runs it fully and `changed` is always false.
//!
//! The mission's lesson: a rising SNAT counter was taken as proof of egress, and it was not.
//! The transit interface did not forward, and the VRF had neither a default nor the unreachable
//! catch-all, so its lookups fell through to the main table and left by the management bridge.

use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{Context, Failure, Kind, Module, OptionSpec, Outcome};
use vrf_route_assert::kernel::NodeKernel;
use vrf_route_assert::plan::{plan, Params};
use vrf_route_assert::{assert_vrfs, Report};

static LOOKUP_OPTIONS: [OptionSpec; 6] = [
    OptionSpec::new("dst", Kind::Str).required(),
    OptionSpec::new("via", Kind::Str),
    OptionSpec::new("dev", Kind::Str),
    OptionSpec::new("not_dev", Kind::Str),
    OptionSpec::new("table", Kind::Str),
    OptionSpec::new("reachable", Kind::Bool),
];
static LOOKUP: OptionSpec = OptionSpec::new("lookup", Kind::Dict(&LOOKUP_OPTIONS));

static VRF_OPTIONS: [OptionSpec; 5] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("default_via", Kind::Str),
    OptionSpec::new("default_dev", Kind::Str),
    OptionSpec::new("lookups", Kind::List(&LOOKUP)).default(DefaultValue::EmptyList),
    OptionSpec::new("forwarding", Kind::Bool).default(DefaultValue::Bool(true)),
];
static VRF: OptionSpec = OptionSpec::new("vrf", Kind::Dict(&VRF_OPTIONS));

/// `vrfs`, or the short form: `vrf` with the same keys at the top level. The top-level
/// `forwarding` has no default here so that giving it next to `vrfs` can be refused.
static SPEC: [OptionSpec; 11] = [
    OptionSpec::new("vrfs", Kind::List(&VRF)),
    OptionSpec::new("vrf", Kind::Str),
    OptionSpec::new("dst", Kind::Str),
    OptionSpec::new("via", Kind::Str),
    OptionSpec::new("dev", Kind::Str),
    OptionSpec::new("not_dev", Kind::Str),
    OptionSpec::new("table", Kind::Str),
    OptionSpec::new("reachable", Kind::Bool),
    OptionSpec::new("default_via", Kind::Str),
    OptionSpec::new("default_dev", Kind::Str),
    OptionSpec::new("forwarding", Kind::Bool),
];

static MODULE: Module = Module {
    name: "vrf_route_assert",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let checks = plan(params).map_err(Failure::new)?;
        if checks.is_empty() {
            ctx.warn("vrfs is empty: no VRF was checked");
        }
        let mut kernel = NodeKernel::connect()?;
        let report = assert_vrfs(&mut kernel, &checks)?;
        finish(report)
    })
}

fn finish(report: Report) -> Result<Outcome, Failure> {
    let failures = report.failures();
    if !failures.is_empty() {
        return Err(Failure::new(failures.join("\n"))
            .with("changed", false)
            .with("vrfs", &report.vrfs)
            .with("checks", &report.checks));
    }
    let mut outcome = Outcome {
        changed: false,
        msg: format!(
            "all {} checks passed in {} VRF{}",
            report.checks.len(),
            report.vrfs.len(),
            if report.vrfs.len() == 1 { "" } else { "s" }
        ),
        ..Outcome::default()
    };
    outcome.set("vrfs", &report.vrfs);
    outcome.set("checks", &report.checks);
    Ok(outcome)
}
