use crate::records::Timer;
use crate::switch::{boot_unit, expire_argv, systemd_run_argv, timer_on, unit_name, ProcessId};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

#[test]
fn the_timer_is_systemd_only_when_systemd_is_pid_1() {
    let root = tempfile::tempdir().unwrap();
    assert_eq!(timer_on(root.path()), Timer::Process);
    std::fs::create_dir_all(root.path().join("run/systemd")).unwrap();
    assert_eq!(
        timer_on(root.path()),
        Timer::Process,
        "run/systemd alone is no PID 1"
    );
    std::fs::create_dir(root.path().join("run/systemd/system")).unwrap();
    assert_eq!(timer_on(root.path()), Timer::Systemd);
}

#[test]
fn systemd_run_is_asked_for_a_transient_timer_running_the_switch() {
    let argv = systemd_run_argv(
        Path::new("/var/lib/g/bin/change_guard"),
        Path::new("/var/lib/g"),
        "run-1",
        Duration::from_secs(300),
    );
    let expected: Vec<OsString> = [
        "--unit=deevnet-change-guard-run-1",
        "--on-active=300s",
        "--timer-property=AccuracySec=1s",
        "/var/lib/g/bin/change_guard",
        "--expire",
        "/var/lib/g",
        "run-1",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    assert_eq!(argv, expected);
    assert_eq!(unit_name("run-1"), "deevnet-change-guard-run-1");
    assert_eq!(
        expire_argv(Path::new("/b"), Path::new("/s"), "r"),
        ["/b", "--expire", "/s", "r"].map(OsString::from)
    );
}

#[test]
fn the_boot_unit_restores_before_the_network_starts() {
    let unit = boot_unit(
        Path::new("/var/lib/g/bin/change_guard"),
        Path::new("/var/lib/g"),
    );
    for line in [
        "Type=oneshot",
        "Before=network-pre.target",
        "DefaultDependencies=no",
        "ExecStart=/var/lib/g/bin/change_guard --boot /var/lib/g",
        "WantedBy=sysinit.target",
    ] {
        assert!(unit.lines().any(|l| l == line), "{line} not in\n{unit}");
    }
}

#[test]
fn a_process_is_known_by_its_start_time_and_command_line() {
    let me = ProcessId::read(std::process::id() as i32).unwrap();
    assert!(me.start_time > 0);
    assert_eq!(me.argv[0], std::env::args_os().next().unwrap());
    assert_eq!(ProcessId::read(std::process::id() as i32), Some(me));
    assert_eq!(ProcessId::read(i32::MAX), None);
}
