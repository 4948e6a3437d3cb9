//! The module on a real kernel, in namespaces each test makes (needs root):
//!
//! ```text
//!   vm (10.20.129.10) ── vnet0 (10.20.129.1/24) ┐
//!                                                node ── uplink 10.20.50.22 ── router ── internet 203.0.113.8
//!   mgmt (10.20.99.5) ──── mgmt (10.20.99.22) ──┘          (10.20.50.1, 203.0.113.1)
//! ```
//!
//! This host's kernel has no VRF, so the VNet is in the main table (`vrf: default`, which the
//! module supports for VNets without a VRF); what a VRF changes (which bridges and subnets are
//! the tenant's) is `tenant.rs`, unit-tested, and the lab runs the real VRF
//! (tests/lab/tests/egress_probe.sh). The router has no SNAT (no nft or iptables here): it
//! routes the tenant subnet back, so the uplink's packets are untranslated.

use deevnet_probe_port::mark::Mark;
use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::io::Write;
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Silently dropped by the router: a probe to it waits its whole timeout.
pub(crate) const BLACKHOLE: &str = "198.51.100.9";

pub(crate) struct Lab {
    pub(crate) node: TestNamespace,
    pub(crate) router: TestNamespace,
    pub(crate) internet: TestNamespace,
    /// Held so the namespace lives as long as the lab; never read.
    pub(crate) mgmt: TestNamespace,
    pub(crate) _vm: TestNamespace,
}

pub(crate) fn pair(a: &TestNamespace, a_end: &str, b: &TestNamespace, b_end: &str) {
    a.ip(&format!(
        "link add {a_end} type veth peer name {b_end} netns {}",
        b.name()
    ));
    a.ip(&format!("link set {a_end} up"));
    b.ip(&format!("link set {b_end} up"));
}

pub(crate) fn sysctl(ns: &TestNamespace, path: &str, value: &str) {
    let status = ns
        .command("sh")
        .arg("-c")
        .arg(format!("echo {value} > /proc/sys/net/ipv4/{path}"))
        .status()
        .unwrap();
    assert!(status.success(), "setting {path} in {}", ns.name());
}

impl Lab {
    pub(crate) fn new() -> Lab {
        let node = TestNamespace::new("dvn-egp-node");
        let router = TestNamespace::new("dvn-egp-rtr");
        let internet = TestNamespace::new("dvn-egp-inet");
        let mgmt = TestNamespace::new("dvn-egp-mgmt");
        let vm = TestNamespace::new("dvn-egp-vm");
        node.ip("link add vnet0 type bridge stp_state 0 forward_delay 0");
        node.ip("addr add 10.20.129.1/24 dev vnet0");
        node.ip("link set vnet0 up");
        pair(&vm, "eth0", &node, "tap101i0");
        node.ip("link set tap101i0 master vnet0");
        vm.ip("addr add 10.20.129.10/24 dev eth0");
        pair(&node, "uplink", &router, "eth0");
        node.ip("addr add 10.20.50.22/24 dev uplink");
        router.ip("addr add 10.20.50.1/24 dev eth0");
        pair(&router, "inet0", &internet, "eth0");
        router.ip("addr add 203.0.113.1/24 dev inet0");
        internet.ip("addr add 203.0.113.8/24 dev eth0");
        internet.ip("route add default via 203.0.113.1");
        router.ip("route add 10.20.129.0/24 via 10.20.50.22");
        router.ip(&format!("route add blackhole {BLACKHOLE}/32"));
        pair(&node, "mgmt", &mgmt, "eth0");
        node.ip("addr add 10.20.99.22/24 dev mgmt");
        mgmt.ip("addr add 10.20.99.5/24 dev eth0");
        mgmt.ip("route add default via 10.20.99.22");
        node.ip("route add default via 10.20.50.1");
        sysctl(&node, "ip_forward", "1");
        sysctl(&router, "ip_forward", "1");
        serve(&internet);
        Lab {
            node,
            router,
            internet,
            mgmt,
            _vm: vm,
        }
    }

    /// The module as Ansible would run it on the node.
    pub(crate) fn spawn(&self, args: &Value) -> (Child, tempfile::TempDir) {
        spawn_on(&self.node, &[], args)
    }

    pub(crate) fn run(&self, args: Value) -> Value {
        run_on(&self.node, args)
    }

    /// Runs the module while watching the node: the result, and the most probe workloads that
    /// existed at one time (how concurrency is seen without timing anything).
    pub(crate) fn run_counting_workloads(&self, args: Value) -> (Value, usize) {
        let (mut child, _dir) = self.spawn(&args);
        // Read while watching: a hundred probes' result is more than a pipe holds.
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut out).unwrap();
            out
        });
        let mut most = 0;
        while child.try_wait().unwrap().is_none() {
            most = most.max(self.probe_links().len());
            std::thread::sleep(Duration::from_millis(20));
        }
        let stdout = reader.join().unwrap();
        let result = serde_json::from_slice(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&stdout)));
        (result, most)
    }

    /// Links, IPv4 addresses and routes of the node, and the named namespaces of probes: what
    /// a run must leave as it found it.
    pub(crate) fn state(&self) -> String {
        state_of(&self.node)
    }

    pub(crate) fn probe_links(&self) -> Vec<String> {
        probe_links_of(&self.node)
    }
}

/// The module as Ansible would run it on `node`, through `wrapper` if any (e.g. `prlimit
/// --nofile=64`).
pub(crate) fn spawn_on(
    node: &TestNamespace,
    wrapper: &[&str],
    args: &Value,
) -> (Child, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("args.json");
    std::fs::write(&path, args.to_string()).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("egress_probe");
    let mut command = match wrapper.split_first() {
        Some((program, rest)) => {
            let mut command = node.command(program);
            command.args(rest).arg(&binary);
            command
        }
        None => node.command(&binary),
    };
    let child = command
        .arg(&path)
        .env("DEEVNET_TEST_LOCK_ROOT", lock_root())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    (child, dir)
}

/// The module run on `node`: its one JSON result.
pub(crate) fn run_on(node: &TestNamespace, args: Value) -> Value {
    let (child, _dir) = spawn_on(node, &[], &args);
    result_of(child)
}

/// Links, IPv4 addresses and routes of `node`, and the named namespaces of probes: what a run
/// must leave as it found it.
pub(crate) fn state_of(node: &TestNamespace) -> String {
    let node = node.name();
    let mut state = String::new();
    for args in [
        &["-n", node, "-o", "link"][..],
        &["-n", node, "-o", "-4", "addr"],
        &["-n", node, "route"],
        &["netns", "list"],
    ] {
        let output = Command::new("ip").args(args).output().unwrap();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            // Other tests' namespaces come and go meanwhile.
            if args[0] == "netns" && !line.starts_with("dvp") {
                continue;
            }
            // Queue and counters change with any traffic.
            state.push_str(line.split(" qdisc").next().unwrap_or(line));
            state.push('\n');
        }
    }
    state
}

/// The probes' veths on `node`: dvprobe<pid> for one probe, dvp<pid>p<i> for each of many.
pub(crate) fn probe_links_of(node: &TestNamespace) -> Vec<String> {
    let output = Command::new("ip")
        .args(["-n", node.name(), "-o", "link"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split(": ").nth(1))
        .map(|name| name.split('@').next().unwrap().to_string())
        .filter(|name| name.starts_with("dvp"))
        .collect()
}

/// The internet host's services: TCP 443 accepts, UDP 53 answers a query with its ID.
fn serve(internet: &TestNamespace) {
    let path = format!("/run/netns/{}", internet.name());
    let enter = move || {
        let file = std::fs::File::open(&path).unwrap();
        nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
    };
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let tcp_enter = enter.clone();
    let tcp_ready = ready_tx.clone();
    std::thread::spawn(move || {
        tcp_enter();
        let listener = TcpListener::bind("203.0.113.8:443").unwrap();
        tcp_ready.send(()).unwrap();
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"hello\n");
        }
    });
    std::thread::spawn(move || {
        enter();
        let socket = UdpSocket::bind("203.0.113.8:53").unwrap();
        ready_tx.send(()).unwrap();
        let mut buffer = [0u8; 512];
        while let Ok((len, peer)) = socket.recv_from(&mut buffer) {
            if len >= 2 {
                let answer = [buffer[0], buffer[1], 0x81, 0x80, 0, 0, 0, 0, 0, 0, 0, 0];
                let _ = socket.send_to(&answer, peer);
            }
        }
    });
    for _ in 0..2 {
        ready_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    }
}

pub(crate) fn probe_args(targets: Value) -> Value {
    json!({"vrf": "default", "address": "10.20.129.250/24", "targets": targets,
           "expect_egress_interface": "uplink", "count": 2, "timeout": 1})
}

fn internet_targets() -> Value {
    json!([{"address": "203.0.113.8"},
           {"address": "203.0.113.8", "proto": "tcp", "port": 443},
           {"address": "203.0.113.8", "proto": "udp"}])
}

#[test]
fn egress_by_the_uplink_passes_and_leaves_nothing() {
    let lab = Lab::new();
    let before = lab.state();
    let result = lab.run(probe_args(internet_targets()));
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(result["changed"], json!(false));
    for target in result["targets"].as_array().unwrap() {
        assert_eq!(
            (target["sent"].clone(), target["received"].clone()),
            (json!(2), json!(2)),
            "{target}"
        );
        assert_eq!(target["left_by"], json!(["uplink"]));
    }
    let interfaces = result["interfaces"].as_array().unwrap();
    assert_eq!(interfaces[0]["name"], json!("mgmt"));
    assert_eq!(interfaces[0]["packets"], json!(0));
    assert_eq!(interfaces[1]["name"], json!("uplink"));
    assert_eq!(
        interfaces[1]["translated"],
        json!(false),
        "no SNAT in these namespaces"
    );
    assert_eq!(lab.state(), before);
}

#[test]
fn check_mode_runs_the_probe_too() {
    let lab = Lab::new();
    let mut args = probe_args(json!([{"address": "203.0.113.8"}]));
    args["_ansible_check_mode"] = json!(true);
    let result = lab.run(args);
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(result["targets"][0]["received"], json!(2));
}

#[test]
fn replies_dropped_on_the_uplink_are_named() {
    let lab = Lab::new();
    // The incident's first fault: the transit does not forward what comes back.
    sysctl(&lab.node, "conf/uplink/forwarding", "0");
    let result = lab.run(probe_args(json!([{"address": "203.0.113.8"}])));
    assert_eq!(result["failed"], json!(true));
    assert_eq!(
        result["msg"],
        json!("203.0.113.8 icmp: 0/2 replies (no reply) while traffic left by uplink and 2 replies came back to it: replies are not forwarded back")
    );
    assert_eq!(result["interfaces"][1]["replies"], json!(2));
    assert!(lab.probe_links().is_empty());
}

#[test]
fn a_leak_by_the_management_side_fails() {
    let lab = Lab::new();
    let result = lab.run(probe_args(json!([{"address": "203.0.113.8"},
                                           {"address": "10.20.99.5", "expect": "none"}])));
    assert_eq!(result["verdict"], json!("failed"));
    assert_eq!(
        result["msg"],
        json!("2 tenant packets left by mgmt untranslated")
    );
    assert_eq!(
        result["interfaces"][0]["sample"][0]["source"],
        json!("10.20.129.250")
    );
    assert!(lab.probe_links().is_empty());
}

#[test]
fn refusals_on_the_node_leave_nothing() {
    let lab = Lab::new();
    let before = lab.state();
    let cases = [
        (json!({"address": "10.20.129.10/24"}), "address: 10.20.129.10 is in use on vnet0 (answered ARP from "),
        (json!({"address": "10.20.129.1/24"}), "address: 10.20.129.1 is configured on this node (vnet0)"),
        (json!({"address": "10.20.128.250/24"}), "address: 10.20.128.250 is outside every subnet the VRF default has connected (vnet0 10.20.129.0/24)"),
        (json!({"vrf": "vrf_nope"}), "vrf: vrf_nope does not exist on this node"),
        (json!({"vnet": "uplink"}), "vnet: uplink is not a bridge (veth)"),
        (json!({"gateway": "10.20.129.254"}), "gateway: 10.20.129.254 is neither the node's address on vnet0 nor answers ARP there"),
        (json!({"targets": [{"address": "10.20.99.22"}]}), "targets[0].address: 10.20.99.22 is the node's own address (on mgmt)"),
        (json!({"expect_egress_interface": "eth9"}), "expect_egress_interface: eth9 does not exist"),
    ];
    for (change, expected) in cases {
        let mut args = probe_args(json!([{"address": "203.0.113.8"}]));
        for (key, value) in change.as_object().unwrap() {
            args[key] = value.clone();
        }
        let result = lab.run(args);
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(expected),
            "expected {expected:?}, got {msg:?}"
        );
        assert_eq!(lab.state(), before, "after {expected}");
    }
}

#[test]
fn kill_9_mid_probe_then_a_second_run_leaves_nothing() {
    let lab = Lab::new();
    let before = lab.state();
    let (mut child, _dir) = lab.spawn(&json!({"vrf": "default", "address": "10.20.129.250/24",
        "targets": [{"address": BLACKHOLE}], "count": 5, "timeout": 5}));
    lab.wait_for_probe(&mut child);
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();

    // What a dead run's pair looks like while the kernel has not torn it down yet: both ends
    // on the node, the node end marked by that run.
    let dead_pid = plant_leftover_of_a_dead_run(&lab);

    let result = lab.run(probe_args(json!([{"address": "203.0.113.8"}])));
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains(&format!("dvprobe{dead_pid}")),
        "{warnings}"
    );
    // The killed run's namespace goes with its process; the kernel may take a moment.
    let settled = Instant::now();
    while !lab.probe_links().is_empty() && settled.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lab.probe_links(), Vec::<String>::new());
    assert_eq!(lab.state(), before);
}

#[test]
fn sigterm_mid_probe_leaves_nothing_even_without_a_next_run() {
    let lab = Lab::new();
    let before = lab.state();
    let (mut child, _dir) = lab.spawn(&json!({"vrf": "default", "address": "10.20.129.250/24",
        "targets": [{"address": BLACKHOLE}], "count": 5, "timeout": 5}));
    lab.wait_for_probe(&mut child);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.code().is_none(), "ended by the signal");
    // The namespace had no name and no other holder: the kernel removes it and the pair.
    let settled = Instant::now();
    while !lab.probe_links().is_empty() && settled.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lab.probe_links(), Vec::<String>::new());
    assert_eq!(lab.state(), before);
}

/// A veth pair `dvprobe<pid>` marked by a process that is gone: the dead run's leftover the
/// next run sweeps. Returns that pid.
pub(crate) fn plant_leftover_of_a_dead_run(lab: &Lab) -> u32 {
    let mut dead = Command::new("sleep").arg("0").spawn().unwrap();
    // Read while it is a zombie at worst: its /proc entry stays until it is reaped.
    let mark = Mark::of_process(dead.id()).unwrap();
    dead.wait().unwrap();
    let name = format!("dvprobe{}", mark.pid);
    lab.node
        .ip(&format!("link add {name} type veth peer name {name}w"));
    set_alias(lab, &name, &mark.alias());
    mark.pid
}

/// `ip link set NAME alias TEXT` on the node (TEXT may hold spaces).
pub(crate) fn set_alias(lab: &Lab, name: &str, alias: &str) {
    let status = Command::new("ip")
        .args(["-n", lab.node.name(), "link", "set", name, "alias", alias])
        .status()
        .unwrap();
    assert!(status.success(), "setting the alias of {name}");
}

/// The runs' lock folder (the module's /run/lock): the test process's own, shared by its labs
/// (a lock names its network namespace, so labs never contend).
fn lock_root() -> &'static std::path::Path {
    static ROOT: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// The one JSON result of a run.
pub(crate) fn result_of(child: Child) -> Value {
    let output = child.wait_with_output().unwrap();
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

impl Lab {
    /// The module run on the node through `wrapper` (e.g. `prlimit --nofile=64`).
    pub(crate) fn spawn_wrapped(
        &self,
        wrapper: &[&str],
        args: &Value,
    ) -> (Child, tempfile::TempDir) {
        spawn_on(&self.node, wrapper, args)
    }

    /// Waits until the run `child` has created its veth; its name.
    pub(crate) fn wait_for_probe(&self, child: &mut Child) -> String {
        wait_for_probe_on(&self.node, child)
    }
}

/// Waits until the run `child` on `node` has created its veth; its name.
pub(crate) fn wait_for_probe_on(node: &TestNamespace, child: &mut Child) -> String {
    let name = format!("dvprobe{}", child.id());
    let started = Instant::now();
    while !probe_links_of(node).contains(&name) {
        // The ARP check alone takes 3 s.
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the probe never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its probe"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    name
}

/// The same address run after run, each time behind a new veth (a new MAC), while the node still
/// holds the previous run's MAC for it as reachable (set here as another MAC): the workload,
/// which never asks for its pinned gateway, announces itself, so it gets its replies.
#[test]
fn a_run_after_another_on_the_same_address_gets_its_replies() {
    let lab = Lab::new();
    let args = probe_args(json!([{"address": "203.0.113.8"}]));
    for run in ["first", "second"] {
        lab.node
            .ip("neigh replace 10.20.129.250 lladdr 02:00:00:00:02:50 dev vnet0 nud reachable");
        let result = lab.run(args.clone());
        assert_eq!(result["verdict"], json!("passed"), "{run} run: {result:#}");
        assert_eq!(result["targets"][0]["received"], json!(2), "{run} run");
    }
}
