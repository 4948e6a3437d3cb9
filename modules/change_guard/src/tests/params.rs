use crate::params::{check_absolute, check_run_id, Params, Reload, Request, State};
use std::path::PathBuf;

fn params(state: State) -> Params {
    Params {
        state,
        run_id: "fabric-change-20261207T141500Z-a1b2".into(),
        holder: String::new(),
        state_dir: "/var/lib/deevnet/fabric-change".into(),
        paths: vec!["/etc/network/interfaces".into()],
        reload: Vec::new(),
        timeout: 300,
    }
}

#[test]
fn run_ids_name_a_folder_and_a_unit_safely() {
    for good in [
        "a",
        "fabric-change-20261207T141500Z-a1b2",
        "A.b_c-9",
        &"x".repeat(64),
    ] {
        assert!(check_run_id(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "-a",
        ".a",
        "../x",
        "a/b",
        "a b",
        "a;b",
        &"x".repeat(65),
        "é",
    ] {
        let msg = check_run_id(bad).unwrap_err();
        assert!(
            msg.starts_with("run_id=") && msg.contains("give 1 to 64"),
            "{msg}"
        );
    }
}

#[test]
fn paths_are_absolute_without_parent_steps() {
    assert!(check_absolute("paths", "/etc/frr/frr.conf".as_ref()).is_ok());
    for bad in ["etc/x", "/etc/../x", "/", ""] {
        let msg = check_absolute("paths", bad.as_ref()).unwrap_err();
        assert!(msg.starts_with(&format!("paths={bad} ")), "{msg}");
    }
}

#[test]
fn the_request_refuses_each_bad_option_naming_it() {
    assert!(Request::from_params(params(State::Armed)).is_ok());
    let mut no_paths = params(State::Armed);
    no_paths.paths.clear();
    assert!(Request::from_params(no_paths)
        .unwrap_err()
        .starts_with("paths=[]"));
    let mut no_paths_status = params(State::Status);
    no_paths_status.paths.clear();
    assert!(Request::from_params(no_paths_status).is_ok());
    for (timeout, ok) in [(9, false), (10, true), (86400, true), (86401, false)] {
        let mut p = params(State::Armed);
        p.timeout = timeout;
        let result = Request::from_params(p);
        assert_eq!(result.is_ok(), ok, "{timeout}: {result:?}");
        if let Err(msg) = result {
            assert!(
                msg.starts_with(&format!("timeout={timeout} is out of range")),
                "{msg}"
            );
        }
    }
    let mut relative = params(State::Armed);
    relative.reload = vec![Reload {
        paths: vec![PathBuf::from("/etc/network")],
        argv: vec!["systemctl".into(), "reload".into()],
    }];
    let msg = Request::from_params(relative).unwrap_err();
    assert!(msg.starts_with("reload[0].argv[0]=\"systemctl\""), "{msg}");
    let mut empty = params(State::Armed);
    empty.reload = vec![Reload {
        paths: vec![PathBuf::from("/etc/network")],
        argv: Vec::new(),
    }];
    assert!(Request::from_params(empty)
        .unwrap_err()
        .starts_with("reload[0].argv=[]"));
}
