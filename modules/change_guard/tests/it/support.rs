//! What the tests share: a lab folder ([`Lab`]), module runs, the switch's record and process.

use deevnet_runtime::test_support::module_run;
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_change_guard"))
}

/// A temp folder of the test's own: `state/` (the guard's), `etc/` (the node's files),
/// `bin/` (reload scripts), `reload.log`.
pub struct Lab {
    pub dir: tempfile::TempDir,
}

impl Lab {
    pub fn new() -> Lab {
        assert!(
            module_run::is_root(),
            "these tests chown and signal processes: run them as root"
        );
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        fs::create_dir(dir.path().join("etc")).unwrap();
        fs::create_dir(dir.path().join("bin")).unwrap();
        Lab { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn state(&self) -> PathBuf {
        self.path("state")
    }

    /// The changed file of most tests, `etc/a.conf`, holding "old".
    pub fn conf(&self) -> PathBuf {
        let conf = self.path("etc/a.conf");
        fs::write(&conf, "old\n").unwrap();
        conf
    }

    /// Run r1 locked and armed on `conf` for `timeout` seconds, its reload the script "reload";
    /// the switch's pid.
    pub fn arm_with_reload(&self, conf: &Path, timeout: u64) -> i32 {
        let script = self.reload_script("reload");
        self.lock("r1");
        let armed = self.run(
            serde_json::json!({"state": "armed", "run_id": "r1", "timeout": timeout,
            "paths": [conf], "reload": [{"paths": [conf], "argv": [script]}]}),
        );
        pid_of(&armed["switch"])
    }

    /// A reload script that appends `word` to `reload.log` (root's, 0755: a trusted program).
    pub fn reload_script(&self, word: &str) -> PathBuf {
        let script = self.path(&format!("bin/reload-{word}"));
        let log = self.path("reload.log");
        fs::write(
            &script,
            format!(
                "#!/bin/sh\necho {word} >> {}\necho reloaded {word}\n",
                log.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    pub fn reload_log(&self) -> Vec<String> {
        fs::read_to_string(self.path("reload.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Runs the module with `args` plus this lab's state_dir.
    pub fn run(&self, mut args: Value) -> Value {
        args["state_dir"] = json!(self.state());
        module_run::run_for(binary(), &args, Duration::from_secs(60)).expect("the run ended")
    }

    /// `state=locked` for `run_id`, which must succeed.
    pub fn lock(&self, run_id: &str) {
        let result = self.run(json!({"state": "locked", "run_id": run_id, "holder": "ctl"}));
        assert_eq!(result["failed"], json!(null), "{result}");
    }

    pub fn switch_record(&self, run_id: &str) -> Value {
        let text = fs::read_to_string(self.state().join("runs").join(run_id).join("switch.json"))
            .expect("switch.json");
        serde_json::from_str(&text).unwrap()
    }

    /// Waits up to `limit` for the run's switch.json to say `state`.
    pub fn wait_for_state(&self, run_id: &str, state: &str, limit: Duration) -> Value {
        let started = Instant::now();
        loop {
            let record = self.switch_record(run_id);
            if record["state"] == state {
                return record;
            }
            assert!(
                started.elapsed() < limit,
                "{run_id} not {state} after {limit:?}: {record}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Whether a process with `pid` lives (a zombie counts as gone).
pub fn alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim().to_string())
        })
        .is_some_and(|rest| !rest.starts_with('Z'))
}

/// Waits up to `limit` for `pid` to be gone.
pub fn gone_within(pid: i32, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

pub fn pid_of(record: &Value) -> i32 {
    record["pid"].as_i64().expect("a recorded pid") as i32
}

pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill takes no pointers.
    unsafe { libc::kill(pid, signal) };
}
