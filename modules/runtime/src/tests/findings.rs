use crate::findings::*;
use crate::protocol::{Context, Failure};

fn failure() -> Failure {
    Failure::new("a; b")
        .with("verdict", "failed")
        .with("changed", false)
}

fn findings() -> Vec<String> {
    vec!["a".to_string(), "b".to_string()]
}

#[test]
fn conclude_carries_the_report_on_either_side_and_never_changes() {
    #[derive(serde::Serialize)]
    struct Checked {
        verdict: &'static str,
    }
    let policy = FindingsPolicy {
        findings: Findings::Fail,
        check_mode: CheckModeFindings::Fail,
    };
    let mut ctx = Context::default();
    let passed = policy
        .conclude(
            &mut ctx,
            true,
            &[] as &[&str],
            "x".into(),
            "all well".into(),
            &Checked { verdict: "passed" },
        )
        .unwrap();
    assert_eq!((passed.changed, passed.msg.as_str()), (false, "all well"));
    assert_eq!(passed.data["verdict"], "passed");
    let failed = policy
        .conclude(
            &mut ctx,
            false,
            &["a"],
            "a failed".into(),
            "y".into(),
            &Checked { verdict: "failed" },
        )
        .unwrap_err();
    assert_eq!(failed.msg, "a failed");
    assert_eq!(
        (
            failed.data["changed"].clone(),
            failed.data["verdict"].clone()
        ),
        (false.into(), "failed".into())
    );
}

#[test]
fn findings_warn_reports_each_finding_as_a_warning_in_any_mode_and_fail_defers() {
    for check_mode in [false, true] {
        let mut ctx = Context::default();
        ctx.check_mode = check_mode;
        let outcome = Findings::Warn
            .finish(CheckModeFindings::Fail, &mut ctx, &findings(), failure())
            .expect("findings=warn does not fail");
        assert_eq!(ctx.warnings(), ["a", "b"]);
        assert!(!outcome.changed);
        assert!(outcome
            .msg
            .starts_with("not failed (findings=warn): 2 findings"));
        assert_eq!(outcome.data["verdict"], "failed");
    }
    let mut ctx = Context::default();
    let failed = Findings::Fail.finish(CheckModeFindings::Warn, &mut ctx, &findings(), failure());
    assert_eq!(failed.unwrap_err().msg, "a; b");
}

#[test]
fn warn_in_check_mode_reports_each_finding_as_a_warning_and_keeps_the_result() {
    let mut ctx = Context::default();
    ctx.check_mode = true;
    let outcome = CheckModeFindings::Warn
        .finish(&mut ctx, &findings(), failure())
        .expect("check mode with warn does not fail");
    assert_eq!(
        ctx.warnings(),
        [format!("{WARNING_PREFIX}a"), format!("{WARNING_PREFIX}b")]
    );
    assert_eq!(outcome.data["verdict"], "failed");
    assert!(!outcome.changed);
    assert!(
        outcome.msg.contains("2 findings") && outcome.msg.ends_with("a; b"),
        "{}",
        outcome.msg
    );
}

#[test]
fn fail_or_a_real_run_fails_as_before_without_warnings() {
    for (policy, check_mode) in [
        (CheckModeFindings::Fail, true),
        (CheckModeFindings::Warn, false),
        (CheckModeFindings::Fail, false),
    ] {
        let mut ctx = Context::default();
        ctx.check_mode = check_mode;
        let failure = policy
            .finish(&mut ctx, &findings(), failure())
            .expect_err("fails");
        assert_eq!(failure.msg, "a; b");
        assert!(ctx.warnings().is_empty());
    }
}

#[test]
fn the_option_defaults_to_fail() {
    let spec = crate::spec::to_argument_spec(&[CHECK_MODE_FINDINGS]);
    assert_eq!(spec["check_mode_findings"]["default"], "fail");
    assert_eq!(
        spec["check_mode_findings"]["choices"],
        serde_json::json!(["fail", "warn"])
    );
}
