use crate::protocol::*;
use crate::spec::OptionSpec;
use crate::spec::{DefaultValue, Kind};
use serde::Deserialize;
use serde_json::{json, Map, Value};

static SPEC: [OptionSpec; 2] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("token", Kind::Str)
        .no_log()
        .default(DefaultValue::Str("")),
];
static MODULE: Module = Module {
    name: "probe",
    spec: &SPEC,
    supports_check_mode: true,
};

#[derive(Deserialize)]
struct Params {
    name: String,
}

fn run(raw: Value) -> RunResult {
    MODULE.execute(raw.as_object().unwrap(), |ctx, p: Params| {
        ctx.warn("careful");
        let mut outcome = Outcome {
            changed: !ctx.check_mode,
            diff: vec![FileDiff::of_file("/x".as_ref(), "a\n", "b\n")],
            ..Outcome::default()
        };
        outcome.set("name", p.name);
        Ok(outcome)
    })
}

#[test]
fn modes_come_from_internal_keys() {
    let r = run(json!({"name": "n", "_ansible_check_mode": true, "_ansible_diff": true}));
    assert!(!r.failed);
    assert_eq!(r.json["changed"], json!(false));
    assert_eq!(r.json["diff"][0]["before"], json!("a\n"));
    assert_eq!(r.json["warnings"], json!(["careful"]));
    let r = run(json!({"name": "n"}));
    assert_eq!(r.json["changed"], json!(true));
    assert!(r.json.get("diff").is_none(), "diff only in diff mode");
}

#[test]
fn invocation_masks_no_log_and_follows_inject_flag() {
    let r = run(json!({"name": "n", "token": "s3cret"}));
    assert_eq!(
        r.json["invocation"]["module_args"]["token"],
        json!("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")
    );
    let r = run(json!({"name": "n", "_ansible_inject_invocation": false}));
    assert!(r.json.get("invocation").is_none());
}

#[test]
fn secrets_a_module_found_are_masked_in_invocation_on_success_and_failure() {
    for fails in [false, true] {
        let raw = json!({"name": "neighbor x password pw-long pw"});
        let r = MODULE.execute(raw.as_object().unwrap(), |ctx, _: Params| {
            ctx.hide_in_invocation("pw");
            ctx.hide_in_invocation("pw-long");
            if fails {
                Err(Failure::new("refused"))
            } else {
                Ok(Outcome::default())
            }
        });
        assert_eq!(
            r.json["invocation"]["module_args"]["name"],
            json!("neighbor x password ******** ********"),
            "{:?}",
            r.json
        );
    }
}

#[test]
fn no_log_task_hides_the_diff() {
    let r = run(json!({"name": "n", "_ansible_diff": true, "_ansible_no_log": true}));
    assert!(r.json["diff"]["prepared"]
        .as_str()
        .unwrap()
        .contains("no_log"));
}

#[test]
fn a_failure_after_a_change_still_shows_its_diff() {
    let raw = json!({"name": "n", "_ansible_diff": true});
    let r = MODULE.execute(raw.as_object().unwrap(), |_, _: Params| {
        let mut failure = Failure::new("fixed, but a check still fails");
        failure.diff = vec![FileDiff::of_file("/x".as_ref(), "on\n", "off\n")];
        Err(failure)
    });
    assert!(r.failed);
    assert_eq!(r.json["diff"][0]["after"], json!("off\n"));
}

#[derive(serde::Serialize)]
struct Report {
    checks: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    backup_file: Option<String>,
}

#[test]
fn a_report_spreads_into_success_and_failure_alike() {
    let report = Report {
        checks: vec!["a"],
        backup_file: None,
    };
    let mut outcome = Outcome::default();
    outcome.set_report(&report);
    let failure = Failure::new("no").with_report(&report);
    assert_eq!(outcome.data, failure.data);
    assert_eq!(Value::Object(outcome.data), json!({"checks": ["a"]}));
    // Not a struct (a bug): kept whole, never lost.
    assert_eq!(
        report_keys(&3),
        Map::from_iter([("report".into(), json!(3))])
    );
}

#[test]
fn errors_convert_to_failures_with_their_message() {
    fn fails(kind: &str) -> Result<(), Failure> {
        match kind {
            "string" => Err(String::from("vlans: '0' is outside 1-4094"))?,
            "io" => Err(std::io::Error::from_raw_os_error(libc::ENOSPC))?,
            _ => Err(anyhow::anyhow!("disk full").context("writing /x"))?,
        }
    }
    assert_eq!(
        fails("string").unwrap_err().msg,
        "vlans: '0' is outside 1-4094"
    );
    assert_eq!(
        fails("io").unwrap_err().to_string(),
        "No space left on device (os error 28)"
    );
    assert_eq!(fails("anyhow").unwrap_err().msg, "writing /x: disk full");
}

#[test]
fn bad_arguments_fail_before_the_body_runs() {
    let r = MODULE.execute(
        json!({}).as_object().unwrap(),
        |_, _: Params| -> Result<Outcome, Failure> { panic!("the body must not run") },
    );
    assert!(r.failed);
    assert_eq!(r.json["msg"], json!("missing required arguments: name"));
}

#[test]
fn module_name_from_ansible_is_used_in_messages() {
    let r = run(json!({"name": "n", "x": 1, "_ansible_module_name": "deevnet.net.probe"}));
    assert!(r.json["msg"]
        .as_str()
        .unwrap()
        .starts_with("Unsupported parameters for (deevnet.net.probe) module: x."));
}

#[test]
fn internal_keys_of_the_wrong_type_fail_before_anything_happens() {
    let cases = [
        ("_ansible_check_mode", json!("maybe"), "'maybe' (str)"),
        ("_ansible_check_mode", json!(2), "2 (int)"),
        ("_ansible_check_mode", json!([]), "[] (list)"),
        ("_ansible_check_mode", json!(null), "null (null)"),
        ("_ansible_check_mode", json!("true"), "'true' (str)"),
        ("_ansible_diff", json!("yes"), "'yes' (str)"),
        ("_ansible_no_log", json!(1), "1 (int)"),
        ("_ansible_inject_invocation", json!("no"), "'no' (str)"),
        ("_ansible_ignore_unknown_opts", json!({}), "{} (dict)"),
        ("_ansible_verbosity", json!("3"), "'3' (str)"),
        ("_ansible_verbosity", json!(-1), "-1 (int)"),
        ("_ansible_verbosity", json!(1.5), "1.5 (float)"),
        ("_ansible_module_name", json!(5), "5 (int)"),
        ("_ansible_module_name", json!(null), "null (null)"),
    ];
    for (key, value, shown) in cases {
        let mut raw = json!({"name": "n"});
        raw[key] = value.clone();
        let r = MODULE.execute(
            raw.as_object().unwrap(),
            |_, _: Params| -> Result<Outcome, Failure> {
                panic!("the body must not run with {key}={value}")
            },
        );
        assert!(r.failed, "{key}={value} was accepted");
        let msg = r.json["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("{key}={shown} cannot be read: expected ")),
            "{msg}"
        );
        assert!(msg.contains("Nothing was done"), "{msg}");
        assert!(r.json.get("invocation").is_none());
    }
}

#[test]
fn what_ansible_core_sends_is_accepted() {
    // `ActionBase._update_module_args` of ansible-core 2.15 to 2.21, as JSON.
    let r = run(json!({
        "name": "n",
        "_ansible_check_mode": true,
        "_ansible_no_log": false,
        "_ansible_debug": false,
        "_ansible_diff": true,
        "_ansible_verbosity": 3,
        "_ansible_version": "2.19.4",
        "_ansible_module_name": "deevnet.net.probe",
        "_ansible_syslog_facility": "LOG_USER",
        "_ansible_selinux_special_fs": ["fuse", "nfs", "vboxsf", "ramfs", "9p", "vfat"],
        "_ansible_string_conversion_action": "warn",
        "_ansible_socket": null,
        "_ansible_shell_executable": "/bin/sh",
        "_ansible_keep_remote_files": false,
        "_ansible_tmpdir": null,
        "_ansible_remote_tmp": "~/.ansible/tmp",
        "_ansible_ignore_unknown_opts": false,
        "_ansible_target_log_info": null,
        "_ansible_tracebacks_for": [],
        "_ansible_inject_invocation": true,
        "_ansible_some_future_key": {"any": "thing"},
    }));
    assert!(!r.failed, "{:?}", r.json);
    assert_eq!(r.json["changed"], json!(false), "check mode was read");
    assert!(r.json.get("diff").is_some(), "diff mode was read");
    assert!(r.json.get("invocation").is_some());
}
