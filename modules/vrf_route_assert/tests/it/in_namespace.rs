//! A real kernel, in network namespaces each test makes for itself (needs root).
//!
//! This host's kernel has no VRF support, so the VRF is emulated the way the kernel implements
//! one: a rule at the l3mdev rule's priority sends every lookup to table 1001, and a lookup that
//! finds nothing there goes on to the main table (fall-through). [`EmulatedVrf`] adds the VRF
//! device the kernel cannot create; the routes, the lookups and the forwarding values are
//! the kernel's own, read through the module's netlink adapter. The real VRFs are tested in the
//! lab VM (tests/lab/tests/vrf_route_assert*).

use deevnet_runtime::netlink::{Family, Link, Links, Lookup, Route, RouteQuery};
use deevnet_runtime::nft::Ruleset;
use deevnet_runtime::test_support::TestNamespace;
use deevnet_runtime::Failure;
use serde_json::{json, Value};
use std::net::IpAddr;
use vrf_route_assert::node::NodeKernel;
use vrf_route_assert::params::{DefaultExpectation, LookupCheck, Request, VrfCheck};
use vrf_route_assert::vrf_support::VrfSupport;
use vrf_route_assert::{assert_vrfs, Kernel, Report};

const VRF_TABLE: u32 = 1001;
/// An ifindex no real link of a fresh namespace has.
const EMULATED_VRF_INDEX: u32 = 9999;

/// A namespace of the test's own (deleted on drop), with what these tests do in it.
pub struct Namespace {
    namespace: TestNamespace,
    /// VRF devices emulated beside vrf_tdemo: (name, table).
    pub extra_vrfs: Vec<(String, u32)>,
}

impl std::ops::Deref for Namespace {
    type Target = TestNamespace;
    fn deref(&self) -> &TestNamespace {
        &self.namespace
    }
}

impl Namespace {
    pub fn new() -> Self {
        Namespace {
            namespace: TestNamespace::new("dvn-vra"),
            extra_vrfs: Vec::new(),
        }
    }

    pub fn set_forwarding(&self, dev: &str, value: &str) {
        self.set_ipv4_conf(dev, "forwarding", value);
    }

    /// `net.ipv4.conf.DEV.LEAF` in the namespace's own /proc/sys/net.
    pub fn set_ipv4_conf(&self, dev: &str, leaf: &str, value: &str) {
        let path = format!("/proc/sys/net/ipv4/conf/{dev}/{leaf}");
        let status = self
            .command("sh")
            .arg("-c")
            .arg(format!("echo {value} > {path}"))
            .status()
            .unwrap();
        assert!(status.success(), "setting {path}");
    }

    /// The module binary, as Ansible would run it on a node whose namespace this is.
    pub fn run_module(&self, args: Value) -> Value {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("args.json");
        std::fs::write(&path, args.to_string()).unwrap();
        let binary = assert_cmd::cargo::cargo_bin("vrf_route_assert");
        let output = self.command(binary).arg(&path).output().unwrap();
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&output.stdout));
        })
    }

    /// Runs the checks in-process, on a thread that entered the namespace (setns is per thread
    /// and netlink sockets bind to the namespace they are created in).
    pub fn assert(&self, checks: Vec<VrfCheck>) -> Report {
        self.assert_plan(Request::of(checks)).unwrap()
    }

    /// The plan, once, with the VRF devices `vrf_tdemo` (table 1001) and `extra_vrfs`
    /// emulated; an error is the run's error (a bad forbidden interface, no answer).
    pub fn assert_plan(&self, plan: Request) -> Result<Report, Failure> {
        let extra_vrfs = self.extra_vrfs.clone();
        self.enter(move || {
            let mut kernel = EmulatedVrf {
                node: NodeKernel::connect().unwrap(),
                extra_vrfs,
            };
            assert_vrfs(&mut kernel, &plan)
        })
    }
}

/// The node's kernel plus the VRF device `vrf_tdemo` (table 1001) it cannot create, and any
/// other VRF devices (name, table) whose tables are only read, never looked up in.
pub struct EmulatedVrf {
    pub node: NodeKernel,
    pub extra_vrfs: Vec<(String, u32)>,
}

impl Kernel for EmulatedVrf {
    fn links(&mut self) -> Result<Links, Failure> {
        let mut links: Vec<Link> = self.node.links()?.iter().cloned().collect();
        links.push(Link {
            index: EMULATED_VRF_INDEX,
            name: "vrf_tdemo".into(),
            kind: Some("vrf".into()),
            vrf_table: Some(VRF_TABLE),
            ..Link::default()
        });
        for (i, (name, table)) in self.extra_vrfs.iter().enumerate() {
            links.push(Link {
                index: EMULATED_VRF_INDEX + 1 + i as u32,
                name: name.clone(),
                kind: Some("vrf".into()),
                vrf_table: Some(*table),
                ..Link::default()
            });
        }
        Ok(Links::new(links))
    }
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
        self.node.routes(family, table)
    }
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
        assert!(
            query.oif.is_none() || query.oif == Some(EMULATED_VRF_INDEX),
            "lookups are pinned to vrf_tdemo, or made in the default VRF"
        );
        // The rule that stands in for the l3mdev rule steers the unpinned lookup.
        self.node.route_get(&RouteQuery {
            oif: None,
            ..*query
        })
    }
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
        self.node.forwarding(family, dev)
    }
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        self.node.rp_filter(dev)
    }
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        self.node.ipv6_force_forwarding(dev)
    }
    fn vrf_support(&mut self) -> VrfSupport {
        self.node.vrf_support()
    }
    fn nft_ruleset(&mut self) -> Result<Ruleset, String> {
        self.node.nft_ruleset()
    }
}

/// Whether this host's kernel shows the vrf driver, or could load it (it loads modules).
pub fn kernel_may_have_vrfs() -> bool {
    std::path::Path::new("/sys/module/vrf").exists()
        || std::path::Path::new("/proc/modules").exists()
}

/// What a missing VRF's message adds on this host: on a kernel without VRF support (this
/// machine's), why no VRF can exist here.
pub fn without_vrf_support_note() -> String {
    if kernel_may_have_vrfs() {
        return String::new();
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    format!(
        "; this kernel cannot have VRFs: kernel {} has no vrf driver built in (no /sys/module/vrf) \
         and loads no modules (no /proc/modules): it was built without CONFIG_NET_VRF",
        release.trim()
    )
}

/// hv02 in miniature, both faults present: the management bridge vmbr0 (10.20.99.2/24, the
/// main table's default via 10.20.99.1), the transit vmbr0.50 (10.20.50.2/24, gateway
/// 10.20.50.1) with forwarding 0, and table 1001 with only the tenant's subnet.
pub fn hv02() -> Namespace {
    let ns = Namespace::new();
    for command in [
        "link add vmbr0 type veth peer name mgmt-peer",
        "link add vmbr0.50 type veth peer name transit-peer",
        "link add tdemo type bridge",
        "link set vmbr0 up",
        "link set mgmt-peer up",
        "link set vmbr0.50 up",
        "link set transit-peer up",
        "link set tdemo up",
        "addr add 10.20.99.2/24 dev vmbr0",
        "addr add 10.20.50.2/24 dev vmbr0.50",
        "addr add 10.77.0.1/24 dev tdemo",
        "route add default via 10.20.99.1 dev vmbr0",
        "route add 10.77.0.0/24 dev tdemo table 1001",
        "rule add pref 1000 lookup 1001",
    ] {
        ns.ip(command);
    }
    // The node forwards; the transit interface, created later, came up with forwarding 0.
    ns.set_forwarding("all", "1");
    ns.set_forwarding("vmbr0.50", "0");
    ns
}

pub fn fix_routes(ns: &Namespace) {
    ns.ip("route add default via 10.20.50.1 dev vmbr0.50 table 1001");
    ns.ip("route add unreachable default metric 4278198272 table 1001");
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

pub fn mission_checks() -> Vec<VrfCheck> {
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
                ..LookupCheck::of(ip("10.20.99.5"))
            },
            LookupCheck {
                via: Some(ip("10.20.50.1")),
                ..LookupCheck::of(ip("1.1.1.1"))
            },
        ],
        forwarding: true,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

#[test]
fn fall_through_is_caught_then_forwarding_then_all_pass() {
    let ns = hv02();
    let report = ns.assert(mission_checks());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: table 1001 has no IPv4 default route and no unreachable catch-all, so \
             lookups fall through to the main table; expected default via 10.20.50.1 dev vmbr0.50",
            "vrf_tdemo: 10.20.99.5 resolves via dev vmbr0 (table main: fall-through), expected \
             dev vmbr0.50, not dev vmbr0",
            "vrf_tdemo: 1.1.1.1 resolves via 10.20.99.1 dev vmbr0 (table main: fall-through), \
             expected via 10.20.50.1",
        ]
    );

    fix_routes(&ns);
    let report = ns.assert(mission_checks());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: vmbr0.50 has IPv4 forwarding off (net.ipv4.conf.vmbr0/50.forwarding = \
             0), expected 1: tenant traffic leaves by it and replies coming back by it are not \
             forwarded"
        ]
    );
    let state = &report.vrfs[0];
    assert!(state.unreachable_catch_all);
    assert_eq!(
        serde_json::to_value(&state.defaults).unwrap(),
        json!([
            {"family": "IPv4", "type": "unicast", "gateway": "10.20.50.1", "dev": "vmbr0.50",
             "metric": null, "protocol": "boot"},
            {"family": "IPv4", "type": "unreachable", "gateway": null, "dev": null,
             "metric": 4278198272u32, "protocol": "boot"},
        ])
    );

    ns.set_forwarding("vmbr0.50", "1");
    let report = ns.assert(mission_checks());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[2].msg,
        "vrf_tdemo: 10.20.99.5 resolves via 10.20.50.1 dev vmbr0.50 (table 1001)"
    );
}

#[test]
fn the_catch_all_stops_fall_through_and_is_no_usable_default() {
    let ns = hv02();
    ns.ip("route add unreachable default metric 4278198272 table 1001");
    let mut checks = mission_checks();
    checks[0].lookups.push(LookupCheck {
        not_dev: Some("vmbr0".into()),
        reachable: Some(false),
        ..LookupCheck::of(ip("10.20.99.7"))
    });
    let report = ns.assert(checks);
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: table 1001 has only the catch-all (unreachable default metric \
             4278198272), no usable IPv4 default; expected default via 10.20.50.1 dev vmbr0.50",
            "vrf_tdemo: 10.20.99.5 is unreachable (an unreachable route matched), expected dev \
             vmbr0.50",
            "vrf_tdemo: 1.1.1.1 is unreachable (an unreachable route matched), expected via \
             10.20.50.1",
        ]
    );
    assert!(report.checks[4].ok, "{:#?}", report.checks[4]);
}

#[test]
fn the_binary_says_the_tenant_has_no_vrf_here() {
    let ns = hv02();
    ns.ip("link add vrf_tbridge type bridge");
    let result = ns.run_module(json!({
        "vrfs": [
            {"name": "vrf_tdemo", "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50"}]},
            {"name": "vrf_tbridge"},
        ],
        "_ansible_check_mode": true,
    }));
    assert_eq!(result["failed"], json!(true), "{result}");
    assert_eq!(result["changed"], json!(false));
    let note = without_vrf_support_note();
    assert_eq!(
        result["msg"],
        json!(format!(
            "vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo){note}\n\
             vrf_tbridge: the tenant has no VRF on this node (vrf_tbridge is a bridge, not a VRF){note}"
        ))
    );
    assert_eq!(result["vrfs"], json!([]));
    assert_eq!(result["checks"][1]["actual"]["kind"], json!("bridge"));
}

#[test]
fn reading_needs_no_privilege() {
    let ns = hv02();
    // The args file and a copy of the binary where the unprivileged user can read them (the
    // checkout may sit in a folder only root can enter).
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args.json");
    std::fs::write(&args, json!({"vrf": "vrf_tdemo"}).to_string()).unwrap();
    let binary = dir.path().join("vrf_route_assert");
    std::fs::copy(assert_cmd::cargo::cargo_bin("vrf_route_assert"), &binary).unwrap();
    for path in [dir.path(), args.as_path(), binary.as_path()] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let output = ns
        .command("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&binary)
        .arg(&args)
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    // The links were dumped and searched as nobody: the answer is about the VRF, not about
    // permissions.
    assert_eq!(
        result["msg"],
        json!(format!(
            "vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo){}",
            without_vrf_support_note()
        ))
    );
}
