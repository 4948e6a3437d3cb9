//! A bug in a module body still ends as exactly one failed JSON result on stdout, never as a
//! bare abort that Ansible reports as "MODULE FAILURE".
use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    // target/<profile>/deps/<this test> -> target/<profile>/examples/<name>
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

#[test]
fn a_panic_ends_as_one_failed_json_result() {
    let args = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(args.path(), "{}").unwrap();
    let binary = example("panicking_module");
    let out = Command::new(&binary)
        .arg(args.path())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (plain `cargo test` builds the examples)",
                binary.display()
            )
        });
    assert!(!out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["failed"], serde_json::json!(true));
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.starts_with("deevnet.net.panicking_module crashed at"),
        "{msg}"
    );
    assert!(
        msg.contains("index out of bounds") && msg.contains("This is a bug in the module"),
        "{msg}"
    );
}
