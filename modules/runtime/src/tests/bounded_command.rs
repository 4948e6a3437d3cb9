use crate::bounded_command::*;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn output_is_capped_and_a_hung_command_is_killed() {
    let done = run(
        Command::new("sh").args(["-c", "head -c 100000 /dev/zero; echo err >&2"]),
        Duration::from_secs(10),
        1000,
    )
    .unwrap();
    assert!(done.status.success());
    assert_eq!(done.stdout.len(), 1001);
    assert!(done.over_cap());
    assert_eq!(done.stderr, b"err\n");

    let started = Instant::now();
    let hung = run(
        Command::new("sleep").arg("30"),
        Duration::from_millis(200),
        1000,
    );
    assert!(matches!(hung, Err(NotFinished::TimedOut)), "{hung:?}");
    assert!(started.elapsed() < Duration::from_secs(5));

    let missing = run(
        &mut Command::new("/nonexistent/tool"),
        Duration::from_secs(1),
        10,
    );
    assert!(matches!(missing, Err(NotFinished::Spawn(_))));
}

#[test]
fn endless_output_is_stopped_at_the_cap_when_asked() {
    let started = Instant::now();
    let endless = run_stopped_over_cap(&mut Command::new("yes"), Duration::from_secs(30), 1000);
    assert!(matches!(endless, Err(NotFinished::OverCap)), "{endless:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let within =
        run_stopped_over_cap(Command::new("echo").arg("ok"), Duration::from_secs(5), 1000).unwrap();
    assert_eq!(within.stdout, b"ok\n");
}

/// BG1: a command that exits but leaves a child holding its stdout does not hold the run
/// past the limit: it ends as timed out and the child, in the command's group, is killed.
#[test]
fn a_child_left_holding_stdout_is_bound_by_the_limit_and_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child_pid");
    let script = dir.path().join("leaves_a_child.sh");
    std::fs::write(
        &script,
        format!("sleep 30 &\necho $! > '{}'\necho hi\n", pid_file.display()),
    )
    .unwrap();
    let started = Instant::now();
    let run = run(
        Command::new("sh").arg(&script),
        Duration::from_secs(2),
        1000,
    );
    assert!(matches!(run, Err(NotFinished::TimedOut)), "{run:?}");
    // Generous: the old code waited for the child's 30 s.
    assert!(started.elapsed() < Duration::from_secs(20));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .ok()
            .and_then(|stat| stat.split(") ").nth(1).map(|rest| !rest.starts_with('Z')))
            .unwrap_or(false)
    };
    let gone = (0..100).any(|_| {
        let gone = !alive();
        if !gone {
            std::thread::sleep(Duration::from_millis(100));
        }
        gone
    });
    assert!(gone, "the child {} outlived the run", pid.trim());
}

/// A child that lets go of the pipes does not hold the run: it ends with the command.
#[test]
fn a_child_detached_from_the_pipes_does_not_hold_the_run() {
    let done = run(
        Command::new("sh").args(["-c", "sleep 30 >/dev/null 2>&1 & echo hi"]),
        Duration::from_secs(10),
        1000,
    )
    .unwrap();
    assert!(done.status.success());
    assert_eq!(done.stdout, b"hi\n");
}

#[test]
fn trusted_output_runs_roots_program_and_names_each_refusal() {
    let limit = Duration::from_secs(10);
    let echoed = trusted_output(std::path::Path::new("/bin/echo"), &["a b"], limit, 100);
    assert_eq!(echoed.as_deref(), Ok("a b\n"));
    let failed = trusted_output(std::path::Path::new("/bin/false"), &["x"], limit, 100);
    assert!(
        failed
            .as_ref()
            .is_err_and(|e| e.starts_with("/bin/false x failed (")),
        "{failed:?}"
    );
    let missing = trusted_output(std::path::Path::new("/nonexistent/nft"), &[], limit, 100);
    assert_eq!(missing, Err("/nonexistent/nft is not installed".into()));
    let chatty = trusted_output(std::path::Path::new("/usr/bin/yes"), &[], limit, 100);
    assert!(
        chatty
            .as_ref()
            .is_err_and(|e| e.contains("printed more than 100 bytes")),
        "{chatty:?}"
    );

    // A program in a folder every user can write to is never run.
    let folder = tempfile::tempdir().unwrap();
    let planted = folder.path().join("nft");
    std::fs::copy("/bin/echo", &planted).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let refused = trusted_output(&planted, &["x"], limit, 100);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("another user than root could have planted it")),
        "{refused:?}"
    );
}

/// Input goes to the program's stdin; a program that never reads a large input neither blocks
/// the run nor fails it.
#[test]
fn trusted_output_with_input_hands_the_program_its_stdin() {
    let limit = Duration::from_secs(10);
    let cat = std::path::Path::new("/bin/cat");
    let read = trusted_output_with_input(cat, &["-"], Some(b"flush ruleset\n"), limit, 100);
    assert_eq!(read.as_deref(), Ok("flush ruleset\n"));
    let unread = vec![b'x'; 4 << 20];
    let started = Instant::now();
    let done = trusted_output_with_input(
        std::path::Path::new("/bin/true"),
        &[],
        Some(&unread),
        limit,
        100,
    );
    assert_eq!(done.as_deref(), Ok(""));
    assert!(started.elapsed() < Duration::from_secs(5));
    // Without input, stdin is /dev/null: cat ends at once.
    assert_eq!(
        trusted_output_with_input(cat, &[], None, limit, 100).as_deref(),
        Ok("")
    );
}
