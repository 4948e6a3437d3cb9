//! Security properties of the shared runtime: temporary files beside the target, created
//! exclusively (a planted link at the temporary name is never followed), and no_log values
//! kept out of every message and of `invocation`.

use deevnet_runtime::atomic_file::{self, PUBLIC_FILE};
use deevnet_runtime::file_policy::resolve;
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{Failure, Kind, Module, OptionSpec, Outcome};
use serde_json::json;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

fn replace(path: &Path, contents: &[u8]) -> anyhow::Result<Option<PathBuf>> {
    atomic_file::replace(&resolve("path", path, false)?, contents, false, PUBLIC_FILE)
}

/// Another user plants links at every name the temp file could take in this process: the
/// first at the real first name, pointing at a file it wants overwritten.
#[test]
fn a_link_planted_at_the_temp_name_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("x.conf");
    let victim = dir.path().join("victim");
    fs::write(&target, "old\n").unwrap();
    fs::write(&victim, "precious\n").unwrap();
    let pid = std::process::id();
    let planted = dir.path().join(format!(".x.conf.{pid}.0.tmp"));
    symlink(&victim, &planted).unwrap();
    replace(&target, b"new\n").unwrap();
    assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(fs::symlink_metadata(&planted)
        .unwrap()
        .file_type()
        .is_symlink());

    // Every candidate name taken: a clear failure, nothing written anywhere.
    for attempt in 1..100 {
        symlink(
            &victim,
            dir.path().join(format!(".x.conf.{pid}.{attempt}.tmp")),
        )
        .unwrap();
    }
    let err = replace(&target, b"newer\n").unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot create a temporary file in"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// The temporary file is created in the target's own folder (never a shared /tmp), and a
/// failed write removes it.
#[test]
fn the_temp_file_lives_beside_the_target_and_goes_away_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("etc");
    fs::create_dir(&folder).unwrap();
    let target = folder.join("y.conf");
    fs::write(&target, "old\n").unwrap();
    // A name taken where the backup goes makes the write fail after the temp file was
    // written (the backup's name holds the second: try again if the clock ticked over).
    let mut failed = false;
    for _ in 0..3 {
        let taken = atomic_file::backup_name(&target);
        fs::write(&taken, "").unwrap();
        let resolved = resolve("path", &target, false).unwrap();
        match atomic_file::replace(&resolved, b"new\n", true, PUBLIC_FILE) {
            Err(err) => {
                assert!(format!("{err:#}").contains("keeping a backup"), "{err:#}");
                fs::remove_file(&taken).unwrap();
                failed = true;
                break;
            }
            Ok(backup) => {
                fs::remove_file(&taken).unwrap();
                fs::remove_file(backup.unwrap()).unwrap();
            }
        }
    }
    assert!(failed, "the backup name was never taken in time");
    let left: Vec<_> = fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [std::ffi::OsString::from("y.conf")],
        "a temp file was left"
    );
}

static SPEC: [OptionSpec; 4] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("token", Kind::Str).no_log(),
    OptionSpec::new("pin", Kind::Int).no_log(),
    OptionSpec::new("cipher", Kind::Str)
        .no_log()
        .choices(&["aes", "chacha"])
        .default(DefaultValue::Str("aes")),
];
static MODULE: Module = Module {
    name: "probe",
    spec: &SPEC,
    supports_check_mode: true,
};

#[derive(serde::Deserialize)]
struct Params {}

/// Found by the spec_args fuzz target: a no_log value of the wrong type or outside its
/// choices came back in the error message.
#[test]
fn no_log_values_never_appear_in_errors_or_invocation() {
    let cases = [
        json!({"name": "n", "pin": "S3cr3t-pin"}),
        json!({"name": "n", "token": {"S3cr3t": 1}}),
        json!({"name": "n", "token": ["S3cr3t"]}),
        json!({"name": "n", "cipher": "S3cr3t-cipher"}),
        json!({"name": "n", "token": "S3cr3t-ok", "_ansible_diff": true}),
    ];
    for args in cases {
        let run = MODULE.execute(args.as_object().unwrap(), |_, _: Params| {
            Ok::<Outcome, Failure>(Outcome::default())
        });
        let text = serde_json::Value::Object(run.json).to_string();
        assert!(!text.contains("S3cr3t"), "{args} → {text}");
    }
}
