use crate::validate::*;

fn run(command: &str) -> Result<(), String> {
    let staged = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(staged.path(), "vrf a\n x\nexit\n").unwrap();
    Validator::parse(command).unwrap().run(staged.path())
}

#[test]
fn commands_need_a_placeholder_and_balanced_quotes() {
    assert!(Validator::parse("vtysh -C -f")
        .unwrap_err()
        .starts_with("validate must contain %s"));
    assert!(Validator::parse("sh -c 'x")
        .unwrap_err()
        .contains("unbalanced quote"));
    assert!(Validator::parse("").is_err());
}

#[test]
fn exit_status_and_output_both_count() {
    assert_eq!(run("grep -q 'vrf a' %s"), Ok(()));
    assert!(run("grep -q 'vrf b' %s")
        .unwrap_err()
        .contains("refused the new file"));
    let err = run("sh -c 'echo \"line 2: % Unknown command: x\"; exit 0' %s").unwrap_err();
    assert!(
        err.contains("exited 0 but printed `Unknown command`"),
        "{err}"
    );
}

#[test]
fn no_shell_is_involved() {
    // A shell would expand the glob and run the second command; split words do not.
    assert!(run("test -f %s ; false").is_err());
    assert_eq!(run("test -f %s"), Ok(()));
}

#[test]
fn a_missing_program_is_named() {
    let err = run("deevnet-no-such-vtysh -C -f %s").unwrap_err();
    assert!(
        err.contains("`deevnet-no-such-vtysh` is not installed on this host"),
        "{err}"
    );
}
