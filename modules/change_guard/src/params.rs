//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the validated [`Request`] they make once each is checked on its own
//! ([`Request::from_params`], before any file is read).

use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{choices, Kind, OptionSpec};
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// The guard's own folder when the task names none.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/deevnet/fabric-change";

/// `timeout`: at least the time a controller needs to reconnect and confirm, at most a day.
pub const TIMEOUT_RANGE: IntRange = IntRange::new(10, 86400, "a number of seconds").because(
    "the switch fires this long after arming; give the controller time to reconnect and confirm",
);

static PATH: OptionSpec = OptionSpec::new("path", Kind::Path);
static ARG: OptionSpec = OptionSpec::new("arg", Kind::Str);
static RELOAD_OPTIONS: [OptionSpec; 2] = [
    OptionSpec::new("paths", Kind::List(&PATH)).required(),
    OptionSpec::new("argv", Kind::List(&ARG)).required(),
];
static RELOAD: OptionSpec = OptionSpec::new("reload", Kind::Dict(&RELOAD_OPTIONS));

/// Every option of the module, in the order `--argument-spec` prints them; serde builds
/// [`Params`] from the validated arguments.
pub static SPEC: [OptionSpec; 7] = [
    OptionSpec::new("state", Kind::Str)
        .choices(State::CHOICES)
        .required(),
    OptionSpec::new("run_id", Kind::Str).required(),
    OptionSpec::new("holder", Kind::Str).default(DefaultValue::Str("")),
    OptionSpec::new("state_dir", Kind::Path).default(DefaultValue::Str(DEFAULT_STATE_DIR)),
    OptionSpec::new("paths", Kind::List(&PATH)).default(DefaultValue::EmptyList),
    OptionSpec::new("reload", Kind::List(&RELOAD)).default(DefaultValue::EmptyList),
    OptionSpec::new("timeout", Kind::Int).default(DefaultValue::Int(300)),
];

choices! {
    /// `state`: what the run asks of the guard.
    pub enum State {
        Locked = "locked",
        Unlocked = "unlocked",
        Armed = "armed",
        Confirmed = "confirmed",
        Restored = "restored",
        Status = "status",
    }
}

/// One reload: the program to run after a restore changed a file under one of `paths`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Reload {
    pub paths: Vec<PathBuf>,
    pub argv: Vec<String>,
}

/// The module's parameters, as the argument spec validated them.
#[derive(Debug, Deserialize)]
pub struct Params {
    pub state: State,
    pub run_id: String,
    pub holder: String,
    pub state_dir: PathBuf,
    pub paths: Vec<PathBuf>,
    pub reload: Vec<Reload>,
    pub timeout: i64,
}

/// The validated options.
#[derive(Debug, Clone)]
pub struct Request {
    pub state: State,
    pub run_id: String,
    pub holder: String,
    pub state_dir: PathBuf,
    pub paths: Vec<PathBuf>,
    pub reload: Vec<Reload>,
    pub timeout: Duration,
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        check_run_id(&params.run_id)?;
        check_absolute("state_dir", &params.state_dir)?;
        for path in &params.paths {
            check_absolute("paths", path)?;
        }
        if params.state == State::Armed && params.paths.is_empty() {
            return Err(
                "paths=[] with state=armed: list the files and folders the change may touch, so that they can be restored".into(),
            );
        }
        for (index, reload) in params.reload.iter().enumerate() {
            check_reload(index, reload)?;
        }
        let timeout = TIMEOUT_RANGE.seconds("timeout", params.timeout)?;
        Ok(Request {
            state: params.state,
            run_id: params.run_id,
            holder: params.holder,
            state_dir: params.state_dir,
            paths: params.paths,
            reload: params.reload,
            timeout,
        })
    }
}

/// `run_id`: `[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`, so it names a folder and a unit safely.
pub fn check_run_id(run_id: &str) -> Result<(), String> {
    let mut chars = run_id.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if first_ok && rest_ok && run_id.len() <= 64 {
        return Ok(());
    }
    Err(format!(
        "run_id={run_id:?} is not a run's name; give 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit (such as fabric-change-20261207T141500Z-a1b2)"
    ))
}

/// An absolute path without `..` steps: what the snapshot records is what is restored.
pub fn check_absolute(name: &str, path: &Path) -> Result<(), String> {
    let plain = path
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if path.is_absolute() && plain && path != Path::new("/") {
        return Ok(());
    }
    Err(format!(
        "{name}={} is not an absolute path to a file or folder; give one from / without `..` steps (such as /etc/network/interfaces)",
        path.display()
    ))
}

fn check_reload(index: usize, reload: &Reload) -> Result<(), String> {
    for path in &reload.paths {
        check_absolute(&format!("reload[{index}].paths"), path)?;
    }
    match reload.argv.first() {
        None => Err(format!(
            "reload[{index}].argv=[] names no program; give the program's absolute path and its arguments (such as [/usr/bin/systemctl, reload, frr])"
        )),
        Some(program) if !Path::new(program).is_absolute() => Err(format!(
            "reload[{index}].argv[0]={program:?} is not an absolute path; give the program's absolute path (such as /usr/bin/systemctl): it runs as root, found by no PATH"
        )),
        Some(_) => Ok(()),
    }
}
