//! Issue 29, egress_probe's lifecycle on a real kernel (needs root), in the lab of
//! `in_namespace.rs`: what the start-up sweep may delete, two runs on one address, an owner
//! that answers ARP late, a full or crowded VNet, a workload whose veth vanished, and the
//! bounds on targets and time.

use crate::in_namespace::{
    plant_leftover_of_a_dead_run, probe_args, result_of, set_alias, Lab, BLACKHOLE,
};
use deevnet_probe_port::mark::Mark;
use deevnet_runtime::test_support::module_run::{in_private_mounts, run_for};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A process of the test's own, killed (by its id) when dropped.
struct Helper(Child);

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sleeper() -> Helper {
    Helper(Command::new("sleep").arg("120").spawn().unwrap())
}

/// `sleep` as process 1 of a PID namespace of its own; its mark as that namespace numbers it.
fn sleeper_in_another_pid_namespace() -> (Helper, Mark) {
    let unshare = Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child", "sleep", "120"])
        .spawn()
        .unwrap();
    let parent = unshare.id();
    let helper = Helper(unshare);
    let started = Instant::now();
    loop {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        if let Some(child) = children.split_whitespace().next() {
            let child: u32 = child.parse().unwrap();
            let mut mark = Mark::of_process(child).unwrap();
            let status = std::fs::read_to_string(format!("/proc/{child}/status")).unwrap();
            let inner_pid = status
                .lines()
                .find_map(|line| line.strip_prefix("NSpid:"))
                .and_then(|ids| ids.split_whitespace().last())
                .unwrap();
            mark.pid = inner_pid.parse().unwrap();
            assert_eq!(mark.pid, 1);
            return (helper, mark);
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "unshare never forked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn veth(lab: &Lab, name: &str, peer: &str) {
    lab.node
        .ip(&format!("link add {name} type veth peer name {peer}"));
}

/// A run that probes for up to 6 s (3 probes × 2 s): long enough to act on meanwhile.
fn six_seconds_of_probes(targets: Value) -> Value {
    let mut args = probe_args(targets);
    args["count"] = json!(3);
    args["timeout"] = json!(2);
    args
}

#[test]
fn the_sweep_deletes_only_what_a_dead_run_marked() {
    let lab = Lab::new();
    let this = Mark::of_this_process().unwrap();
    // An operator's interface with a probe's name, and no mark.
    veth(&lab, "dvprobe4000000", "op4000000");
    // The live probe of a run in another PID namespace (its pid means nothing here).
    let (_other_namespace, other_mark) = sleeper_in_another_pid_namespace();
    veth(&lab, "dvprobe4000001", "dvprobe4000001w");
    set_alias(&lab, "dvprobe4000001", &other_mark.alias());
    // The live probe of a run in this one.
    let live = sleeper();
    veth(&lab, "dvprobe4000002", "dvprobe4000002w");
    set_alias(
        &lab,
        "dvprobe4000002",
        &Mark::of_process(live.0.id()).unwrap().alias(),
    );
    // A live process whose pid a dead run had: another start time.
    let reused = Mark {
        start_ticks: Mark::of_process(live.0.id()).unwrap().start_ticks + 1,
        ..Mark::of_process(live.0.id()).unwrap()
    };
    veth(&lab, "dvprobe4000003", "dvprobe4000003w");
    set_alias(&lab, "dvprobe4000003", &reused.alias());
    // A dead run's pair.
    let dead_pid = plant_leftover_of_a_dead_run(&lab);
    assert_eq!(this.pid_namespace, reused.pid_namespace);

    let result = lab.run(probe_args(json!([{"address": "203.0.113.8"}])));
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(
        result["warnings"],
        json!([format!(
            "removed what killed earlier runs left: dvprobe4000003, dvprobe{dead_pid}"
        )]),
        "{result:#}"
    );
    let mut left = lab.probe_links();
    left.sort();
    assert_eq!(
        left,
        [
            "dvprobe4000000",
            "dvprobe4000001",
            "dvprobe4000001w",
            "dvprobe4000002",
            "dvprobe4000002w"
        ]
    );
}

#[test]
fn a_run_in_another_pid_namespace_leaves_a_live_probe_alone() {
    let lab = Lab::new();
    let args = six_seconds_of_probes(json!([{"address": BLACKHOLE, "expect": "none"}]));
    let (mut first, _first_dir) = lab.spawn(&args);
    let first_link = lab.wait_for_probe(&mut first);
    // The same module from another PID namespace (as from a container), another address.
    let mut other = probe_args(json!([{"address": "203.0.113.8"}]));
    other["address"] = json!("10.20.129.251/24");
    let (second, _second_dir) =
        lab.spawn_wrapped(&["unshare", "--pid", "--fork", "--mount-proc"], &other);
    let second = result_of(second);
    assert_eq!(second["verdict"], json!("passed"), "{second:#}");
    assert_eq!(second["warnings"], Value::Null, "{second:#}");
    assert!(
        lab.probe_links().contains(&first_link),
        "the live probe's veth was deleted"
    );
    let first = result_of(first);
    assert_eq!(first["verdict"], json!("passed"), "{first:#}");
    assert_eq!(first["targets"][0]["sent"], json!(3), "{first:#}");
}

#[test]
fn a_name_taken_by_a_run_of_another_pid_namespace_is_refused_and_left_alone() {
    let lab = Lab::new();
    // The module as process 1 of its own PID namespace names its veth dvprobe1: as would
    // another container's run, whose live probe holds that name now.
    let (_other_namespace, other_mark) = sleeper_in_another_pid_namespace();
    veth(&lab, "dvprobe1", "dvprobe1w");
    set_alias(&lab, "dvprobe1", &other_mark.alias());
    let before = lab.state();
    let (child, _dir) = lab.spawn_wrapped(
        &["unshare", "--pid", "--fork", "--mount-proc"],
        &probe_args(json!([{"address": "203.0.113.8"}])),
    );
    let result = result_of(child);
    assert_eq!(
        result["msg"],
        json!(
            "dvprobe1 exists already on the node, and this run did not make it (a run with \
             process id 1 in another PID namespace, or an operator's interface); run the probe \
             again once it is gone, or from the node's own PID namespace"
        ),
        "{result:#}"
    );
    assert_eq!(lab.state(), before, "the other run's veth is still there");
}

#[test]
fn a_second_run_on_the_same_address_is_refused() {
    let lab = Lab::new();
    let args = six_seconds_of_probes(json!([{"address": BLACKHOLE, "expect": "none"}]));
    let (mut first, _dir) = lab.spawn(&args);
    lab.wait_for_probe(&mut first);
    let second = lab.run(probe_args(json!([{"address": "203.0.113.8"}])));
    assert_eq!(
        second["msg"],
        json!(
            "address: another egress_probe run is probing 10.20.129.250 on vnet0 now; run the \
             probes one after another, or give each its own address"
        ),
        "{second:#}"
    );
    let first = result_of(first);
    assert_eq!(first["verdict"], json!("passed"), "{first:#}");
    // Once the first is done, the address is free again.
    let third = lab.run(probe_args(json!([{"address": "203.0.113.8"}])));
    assert_eq!(third["verdict"], json!("passed"), "{third:#}");
}

#[test]
fn the_address_lock_lives_in_the_modules_lock_folder() {
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args.json");
    std::fs::write(
        &args,
        probe_args(json!([{"address": "203.0.113.8"}])).to_string(),
    )
    .unwrap();
    // /run/lock a tmpfs of a private mount namespace; an empty DEEVNET_TEST_LOCK_ROOT keeps the
    // module's real choice.
    let output = in_private_mounts(&format!(
        "set -e; mount -t tmpfs -o mode=1777 tmpfs /run/lock; export DEEVNET_TEST_LOCK_ROOT=; \
         ip netns exec {} {} {} >/dev/null; stat -c '%a %U %n' /run/lock/deevnet.net \
         /run/lock/deevnet.net/*",
        lab.node.name(),
        assert_cmd::cargo::cargo_bin("egress_probe").display(),
        args.display()
    ));
    let listing = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "{listing}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(lines[0], "700 root /run/lock/deevnet.net");
    assert!(
        lines[1].starts_with("600 root /run/lock/deevnet.net/")
            && lines[1].ends_with(".named.lock"),
        "{listing}"
    );
}

/// Answers, in the VM's namespace, every ARP question for `address` after `delay`, as a
/// loaded VM would; until `until`.
fn late_arp_owner(lab: &Lab, address: [u8; 4], delay: Duration, until: Instant) {
    let path = format!("/run/netns/{}", lab._vm.name());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).unwrap();
        nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
        let arp = (libc::ETH_P_ARP as u16).to_be();
        // SAFETY: plain syscalls on a socket this thread owns; every buffer outlives its call.
        unsafe {
            let fd = libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM, i32::from(arp));
            assert!(fd >= 0);
            let index = libc::if_nametoindex(c"eth0".as_ptr());
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = arp;
            sll.sll_ifindex = index as i32;
            let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            let sll_ptr = &sll as *const libc::sockaddr_ll as *const libc::sockaddr;
            assert_eq!(libc::bind(fd, sll_ptr, len), 0);
            let timeout = libc::timeval {
                tv_sec: 0,
                tv_usec: 100_000,
            };
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &timeout as *const libc::timeval as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
            ready_tx.send(()).unwrap();
            let mut buffer = [0u8; 64];
            while Instant::now() < until {
                let got = libc::recv(fd, buffer.as_mut_ptr() as *mut libc::c_void, 64, 0);
                // A request (operation 1) for the address.
                if got < 28 || buffer[7] != 1 || buffer[24..28] != address {
                    continue;
                }
                std::thread::sleep(delay);
                let mut reply = buffer[..28].to_vec();
                reply[7] = 2;
                reply[18..24].copy_from_slice(&buffer[8..14]);
                reply[24..28].copy_from_slice(&buffer[14..18]);
                reply[8..14].copy_from_slice(&[2, 0, 0, 0, 0, 0x77]);
                reply[14..18].copy_from_slice(&address);
                let mut to: libc::sockaddr_ll = sll;
                to.sll_halen = 6;
                to.sll_addr[..6].copy_from_slice(&buffer[8..14]);
                libc::sendto(
                    fd,
                    reply.as_ptr() as *const libc::c_void,
                    reply.len(),
                    0,
                    &to as *const libc::sockaddr_ll as *const libc::sockaddr,
                    len,
                );
            }
            libc::close(fd);
        }
    });
    ready_rx.recv_timeout(Duration::from_secs(5)).unwrap();
}

#[test]
fn an_owner_that_answers_arp_late_still_holds_the_address() {
    let lab = Lab::new();
    let before = lab.state();
    late_arp_owner(
        &lab,
        [10, 20, 129, 77],
        Duration::from_millis(1200),
        Instant::now() + Duration::from_secs(20),
    );
    let mut args = probe_args(json!([{"address": "203.0.113.8"}]));
    args["address"] = json!("10.20.129.77/24");
    let result = lab.run(args);
    assert_eq!(
        result["msg"],
        json!(
            "address: 10.20.129.77 is in use on vnet0 (answered ARP from 02:00:00:00:00:77); \
             give an unused address in the tenant's subnet"
        ),
        "{result:#}"
    );
    assert_eq!(lab.state(), before);
}

/// Adds `count` macvlan links on a veth of their own to the node, through one `ip -batch`;
/// `each` gives the extra commands for link `i` (named `crowd<i>`).
fn crowd(lab: &Lab, count: usize, each: impl Fn(usize) -> String) {
    veth(lab, "crowdlow", "crowdpeer");
    let mut batch = String::new();
    for i in 0..count {
        batch.push_str(&format!(
            "link add crowd{i} link crowdlow type macvlan mode bridge\n{}\n",
            each(i)
        ));
    }
    let mut ip = Command::new("ip")
        .args(["-n", lab.node.name(), "-batch", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    ip.stdin
        .take()
        .unwrap()
        .write_all(batch.as_bytes())
        .unwrap();
    assert!(ip.wait().unwrap().success());
}

#[test]
fn a_full_bridge_is_named_in_the_operators_words() {
    let lab = Lab::new();
    // tap101i0 and 1022 more: the bridge's 1023 ports are taken.
    crowd(&lab, 1022, |i| format!("link set crowd{i} master vnet0"));
    let before = lab.state();
    let result = lab.run(probe_args(json!([{"address": "203.0.113.8"}])));
    assert_eq!(
        result["msg"],
        json!(
            "vnet: vnet0 is full: a Linux bridge takes at most 1023 ports and it has 1023, so \
             the workload cannot plug in as a VM would not either; free a port on it, or probe \
             from another VNet of the tenant"
        ),
        "{result:#}"
    );
    assert_eq!(lab.state(), before);
}

#[test]
fn a_node_with_many_addressed_interfaces_needs_few_descriptors() {
    let lab = Lab::new();
    // 1,100 interfaces of the main table with an address: all forbidden by default.
    crowd(&lab, 1100, |i| {
        format!(
            "addr add 10.100.{}.{}/32 dev crowd{i}",
            i / 250,
            i % 250 + 1
        )
    });
    let started = Instant::now();
    let (child, _dir) = lab.spawn_wrapped(
        &["prlimit", "--nofile=128:128"],
        &probe_args(json!([{"address": "203.0.113.8"}])),
    );
    let result = result_of(child);
    assert_eq!(result["verdict"], json!("passed"), "{}", result["msg"]);
    let crowd_forbidden = result["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == json!("forbidden"))
        .filter(|i| i["name"].as_str().unwrap().starts_with("crowd"))
        .count();
    assert_eq!(crowd_forbidden, 1100, "every addressed interface captured");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_workload_that_lost_its_veth_mid_run_counts_no_unsent_attempt_and_its_name_is_let_go() {
    let lab = Lab::new();
    // Every target is probed at once: the leak target answers at once by the management
    // side, the silent one waits 2 s per attempt, and loses its port during the first.
    let args = six_seconds_of_probes(json!([{"address": BLACKHOLE, "expect": "none"},
                                     {"address": "10.20.99.5", "expect": "none"}]));
    let (mut child, _dir) = lab.spawn(&args);
    let name = lab.wait_for_probe(&mut child);
    // Carrier on the node end: the workload set its end up, so its probes are about to start.
    let started = Instant::now();
    while !link_flags(&lab, &name).contains("LOWER_UP") {
        assert!(started.elapsed() < Duration::from_secs(10), "never up");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    lab.node.ip(&format!("link del {name}"));
    // Someone else's interface under the vanished veth's name: not the run's to delete.
    veth(&lab, &name, "operator0");
    let result = result_of(child);
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    // The attempts after the loss could not be sent: they are not counted, and say why.
    let silent = &result["targets"][0];
    assert_eq!(silent["sent"], json!(1), "{result:#}");
    assert_eq!(silent["error"], json!("unreachable"), "{result:#}");
    // What the leak target showed before the loss still fails the run.
    assert_eq!(result["targets"][1]["passed"], json!(false), "{result:#}");
    assert_eq!(
        lab.probe_links(),
        [name],
        "the other interface of that name stays"
    );
}

/// The flags `ip link` shows for `name` on the node (`<BROADCAST,MULTICAST,UP,LOWER_UP>`).
fn link_flags(lab: &Lab, name: &str) -> String {
    let output = Command::new("ip")
        .args(["-n", lab.node.name(), "-o", "link", "show", "dev", name])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .split(['<', '>'])
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

#[test]
fn targets_are_bounded_before_anything_happens() {
    let binary = assert_cmd::cargo::cargo_bin("egress_probe");
    // 33, not the incident's 2000: the run echoes its arguments, and the helper reads the
    // output only once the run ended (a full pipe would stall it).
    let targets: Vec<Value> = (1..=33)
        .map(|i| json!({"address": format!("203.0.{}.{}", i / 250, i % 250 + 1)}))
        .collect();
    let run = |args: Value| {
        run_for(&binary, &args, Duration::from_secs(10)).expect("refused within 10 s")
    };
    let result = run(json!({"vrf": "vrf_tdemo", "address": "10.20.129.250/24",
                            "targets": &targets, "count": 20, "timeout": 30}));
    assert_eq!(result["failed"], json!(true));
    assert_eq!(
        result["msg"],
        json!(
            "targets: 33 entries are more than the 32 one run probes; give at most 32, and \
             split the others over more egress_probe tasks (a run stays short and bounded)"
        )
    );
}
