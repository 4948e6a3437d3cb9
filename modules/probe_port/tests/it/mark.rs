//! What marks a probe's interfaces, and which of them a later run may sweep.

use deevnet_probe_port::mark::{leftovers, Mark};
use deevnet_probe_port::veth::{probe_veth_names, veth_names};
use deevnet_runtime::netlink::{Link, Links};

const BOOT: &str = "3f1c2a9e-5b7d-4e21-9c0a-6d8f1e2b3c4d";

fn mark(pid: u32, start_ticks: u64) -> Mark {
    Mark {
        boot_id: BOOT.into(),
        pid_namespace: 4_026_531_836,
        pid,
        start_ticks,
    }
}

#[test]
fn probe_interfaces_are_named_after_their_run() {
    let (node, inside) = veth_names(4_194_304);
    assert_eq!(
        (node.as_str(), inside.as_str()),
        ("dvprobe4194304", "dvprobe4194304w")
    );
    assert!(node.len() <= 15 && inside.len() <= 15, "IFNAMSIZ");
}

#[test]
fn a_mark_is_read_back_exactly_and_nothing_else_is_one() {
    let written = mark(4_194_304, 123_456_789);
    let alias = written.alias();
    assert_eq!(
        alias,
        format!(
            "deevnet.net egress_probe boot={BOOT} pidns=4026531836 pid=4194304 start=123456789"
        )
    );
    assert!(alias.len() < 256, "IFALIASZ");
    assert_eq!(Mark::parse(&alias), Some(written));
    for other in [
        "",
        "dvprobe4000000",
        "uplink to the core",
        "deevnet.net egress_probe",
        &alias.replace("pid=", "pid=0"),
        &alias.replace("start=", "start=+"),
        &format!("{alias} "),
        &format!("{alias} more=1"),
        &alias.replace(BOOT, "not-a-boot-id"),
        &alias.replace("boot=", "boot=x"),
        &alias.replacen(' ', "  ", 1),
    ] {
        assert_eq!(Mark::parse(other), None, "{other:?}");
    }
}

#[test]
fn only_marked_links_of_runs_that_are_over_are_leftovers() {
    let link = |index: u32, name: &str, alias: Option<String>| Link {
        index,
        name: name.into(),
        alias,
        ..Link::default()
    };
    let links = Links::new(vec![
        link(1, "lo", None),
        // An operator's interface with a probe's name, and one whose alias says nothing.
        link(2, "dvprobe4000000", None),
        link(3, "dvprobe4000001", Some("dvprobe 4000001".into())),
        // A run that is over, one still alive, and one named like neither.
        link(4, "dvprobe10", Some(mark(10, 5).alias())),
        link(5, "dvprobe20", Some(mark(20, 5).alias())),
        link(6, "renamed0", Some(mark(30, 5).alias())),
    ]);
    let over = leftovers(&links, |mark| mark.pid != 20);
    let names: Vec<&str> = over.iter().map(|link| link.name.as_str()).collect();
    assert_eq!(names, ["dvprobe10", "renamed0"]);
}

#[test]
fn only_a_verifiably_dead_run_of_this_boot_and_pid_namespace_is_over() {
    let this = Mark::of_this_process().expect("this test's own mark");
    let same = |pid: u32, start_ticks: u64| Mark {
        pid,
        start_ticks,
        ..this.clone()
    };
    assert!(!this.run_is_over(&this), "this process is alive");
    assert!(
        same(this.pid, this.start_ticks + 1).run_is_over(&this),
        "the same pid started at another time is another process"
    );
    // No pid above the kernel's limit (4194304) exists.
    assert!(same(4_194_305, 1).run_is_over(&this), "no such process");
    let elsewhere = |edit: fn(&mut Mark)| {
        let mut mark = same(4_194_305, 1);
        edit(&mut mark);
        mark.run_is_over(&this)
    };
    assert!(
        !elsewhere(|m| m.pid_namespace += 1),
        "another PID namespace: its pid cannot be checked here"
    );
    assert!(
        !elsewhere(|m| m.boot_id = BOOT.into()),
        "another boot: a forged or copied mark"
    );
}

#[test]
fn the_ports_of_a_run_of_many_fit_the_kernels_names() {
    let (node, inside) = probe_veth_names(4_194_304, 127);
    assert_eq!(
        (node.as_str(), inside.as_str()),
        ("dvp4194304p127", "dvp4194304p127w")
    );
    assert!(inside.len() <= 15, "IFNAMSIZ");
}
