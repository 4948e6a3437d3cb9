//! Ansible's binary-module protocol: arguments in, one JSON result out.
//!
//! ansible-core runs a binary module as `BINARY ARGS_FILE` (the file holds JSON); this runtime
//! also takes `-` to read the JSON from standard input, for hand runs and for the collection's
//! one-round-trip action plugin. Keys starting with `_ansible_` carry the task's modes; their set
//! changes with every core release, so unknown ones are ignored, but the ones the runtime reads
//! must have the type ansible-core sends (a check mode that cannot be read fails the run). Whatever happens, standard
//! output receives exactly one JSON object; the exit status is 0 on success and 1 on failure
//! (ansible reads only the JSON, the status is for people).
//!
//! `BINARY --argument-spec` prints the declared spec in Ansible's `argument_spec` form, so that
//! the documentation and the controller side can be checked against what the binary accepts.

use crate::spec::{self, OptionSpec};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};

/// The task's modes, taken from the `_ansible_*` keys.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// `--check`: compute and report, change nothing.
    pub check_mode: bool,
    /// `--diff`: return before/after of what changes.
    pub diff: bool,
    /// `no_log: true`: return nothing the task's arguments or files might hold.
    pub no_log: bool,
    /// The `-v` count.
    pub verbosity: u64,
    warnings: Vec<String>,
    /// Secret values the module found in its arguments (an FRR `password` line is not a
    /// `no_log` option): replaced by [`SECRET_MASK`] in `invocation`, which the runtime echoes.
    secrets: Vec<String>,
}

/// What a secret value becomes in `invocation` (and in a module's own masking).
pub const SECRET_MASK: &str = "********";

impl Context {
    pub fn warn(&mut self, warning: impl Into<String>) {
        self.warnings.push(warning.into());
    }
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// Masks `value` wherever it occurs in the echoed arguments (`invocation`).
    pub fn hide_in_invocation(&mut self, value: impl Into<String>) {
        let value = value.into();
        if !value.is_empty() && !self.secrets.contains(&value) {
            self.secrets.push(value);
        }
    }
}

/// Every string of `value` (object keys too) with each of `secrets` replaced, the longest first
/// so that a secret holding another is replaced whole.
fn mask_strings(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(s) => *s = mask_text(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|v| mask_strings(v, secrets)),
        Value::Object(map) => {
            for (key, mut v) in std::mem::take(map) {
                mask_strings(&mut v, secrets);
                map.insert(mask_text(&key, secrets), v);
            }
        }
        _ => {}
    }
}

fn mask_text(text: &str, secrets: &[String]) -> String {
    let mut longest_first: Vec<&String> = secrets.iter().collect();
    longest_first.sort_by_key(|s| std::cmp::Reverse(s.len()));
    longest_first
        .into_iter()
        .fold(text.to_string(), |out, secret| {
            out.replace(secret.as_str(), SECRET_MASK)
        })
}

/// One file's before/after, rendered by Ansible's callback as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub before_header: String,
    pub after_header: String,
    pub before: String,
    pub after: String,
}

impl FileDiff {
    /// A diff of one file, both headers naming it.
    pub fn of_file(path: &std::path::Path, before: &str, after: &str) -> Self {
        let name = path.display().to_string();
        FileDiff {
            before_header: name.clone(),
            after_header: name,
            before: before.to_string(),
            after: after.to_string(),
        }
    }
    fn to_json(&self) -> Value {
        json!({
            "before_header": self.before_header,
            "after_header": self.after_header,
            "before": self.before,
            "after": self.after,
        })
    }
}

/// A successful run.
#[derive(Debug, Default)]
pub struct Outcome {
    pub changed: bool,
    pub msg: String,
    pub diff: Vec<FileDiff>,
    /// The module's own return values (its `RETURN` documentation).
    pub data: Map<String, Value>,
}

impl Outcome {
    pub fn set(&mut self, key: &str, value: impl serde::Serialize) {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.data.insert(key.to_string(), value);
    }

    /// Every field of `report` as a result key of its own: see [`report_keys`].
    pub fn set_report(&mut self, report: &impl serde::Serialize) {
        self.data.extend(report_keys(report));
    }
}

/// The result keys of a module's report: each field of a `Serialize` struct under its own
/// name. A module declares its RETURN keys once, as that struct, and spreads it into success
/// ([`Outcome::set_report`]) and failure ([`Failure::with_report`]) alike, so no branch can
/// forget one. A value that is not a struct or map (a bug) is kept whole under `report`.
pub fn report_keys(report: &impl serde::Serialize) -> Map<String, Value> {
    match serde_json::to_value(report) {
        Ok(Value::Object(fields)) => fields,
        Ok(other) => Map::from_iter([("report".to_string(), other)]),
        Err(error) => Map::from_iter([(
            "report".to_string(),
            Value::String(format!("cannot serialise the report: {error}")),
        )]),
    }
}

/// A failed run: a message that names the parameter, the value and the fix. A run that changed
/// something before it failed (a fix applied, then a check that still fails) carries the diff
/// of that change, shown in diff mode as on success.
#[derive(Debug, Default)]
pub struct Failure {
    pub msg: String,
    pub diff: Vec<FileDiff>,
    pub data: Map<String, Value>,
}

impl Failure {
    pub fn new(msg: impl Into<String>) -> Self {
        Failure {
            msg: msg.into(),
            diff: Vec::new(),
            data: Map::new(),
        }
    }
    pub fn with(mut self, key: &str, value: impl serde::Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.data.insert(key.to_string(), value);
        self
    }

    /// Every field of `report` as a result key of its own: see [`report_keys`].
    pub fn with_report(mut self, report: &impl serde::Serialize) -> Self {
        self.data.extend(report_keys(report));
        self
    }
}

// The error rule (ARCHITECTURE.md, "Errors"): pure validation returns `String`, the message
// being the product; the kernel and file side returns `Failure`. Each error type a module meets
// converts here once, so call sites write `?` and never convert by hand.

/// A validation message (a `String` error) fails the run with that message.
impl From<String> for Failure {
    fn from(msg: String) -> Self {
        Failure::new(msg)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        // `{:#}` keeps the whole context chain on one line: "writing X: No space left on device".
        Failure::new(format!("{error:#}"))
    }
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Failure::new(error.to_string())
    }
}

/// The message, as the run reports it.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Failure {}

/// A module: its short name, whether it supports check mode, and its argument spec.
pub struct Module {
    pub name: &'static str,
    pub spec: &'static [OptionSpec],
    pub supports_check_mode: bool,
}

/// What a run produced, before it is printed.
#[derive(Debug)]
pub struct RunResult {
    pub json: Map<String, Value>,
    pub failed: bool,
}

impl Module {
    /// Runs the module as Ansible calls it (reading `std::env::args`) and exits.
    pub fn run<P, F>(&self, body: F) -> !
    where
        P: DeserializeOwned,
        F: FnOnce(&mut Context, P) -> Result<Outcome, Failure>,
    {
        let fqcn = format!("deevnet.net.{}", self.name);
        install_panic_hook(fqcn);
        let args: Vec<String> = std::env::args().collect();
        if args.get(1).map(String::as_str) == Some("--argument-spec") {
            print_result(&Map::from_iter([
                ("module".to_string(), Value::String(self.name.to_string())),
                (
                    "argument_spec".to_string(),
                    spec::to_argument_spec(self.spec),
                ),
                (
                    "supports_check_mode".to_string(),
                    Value::Bool(self.supports_check_mode),
                ),
            ]));
            std::process::exit(0);
        }
        let raw = read_args(&args);
        let result = match raw {
            Ok(raw) => match panic::catch_unwind(AssertUnwindSafe(|| self.execute(&raw, body))) {
                Ok(result) => result,
                // The hook has already printed the failure; unwinding only happens in test
                // builds (release builds abort).
                Err(_) => std::process::exit(1),
            },
            Err(msg) => RunResult {
                json: failure_json(&msg),
                failed: true,
            },
        };
        print_result(&result.json);
        std::process::exit(if result.failed { 1 } else { 0 })
    }

    /// One run on already-read arguments; the whole protocol except the I/O, so it can be
    /// tested in-process.
    pub fn execute<P, F>(&self, raw: &Map<String, Value>, body: F) -> RunResult
    where
        P: DeserializeOwned,
        F: FnOnce(&mut Context, P) -> Result<Outcome, Failure>,
    {
        let internal = match Internal::read(raw) {
            Ok(internal) => internal,
            Err(msg) => {
                return RunResult {
                    json: failure_json(&msg),
                    failed: true,
                }
            }
        };
        let mut ctx = Context {
            check_mode: internal.check_mode,
            diff: internal.diff,
            no_log: internal.no_log,
            verbosity: internal.verbosity,
            warnings: Vec::new(),
            secrets: Vec::new(),
        };
        let fqcn = internal
            .module_name
            .filter(|n| n.ends_with(self.name))
            .unwrap_or_else(|| format!("deevnet.net.{}", self.name));
        let inject_invocation = internal.inject_invocation;

        let params = match spec::validate(&fqcn, self.spec, raw, internal.ignore_unknown_opts) {
            Ok(params) => params,
            Err(err) => {
                return RunResult {
                    json: failure_json(&err.0),
                    failed: true,
                }
            }
        };
        let mut invocation = json!({ "module_args": spec::mask_no_log(self.spec, &params) });

        if ctx.check_mode && !self.supports_check_mode {
            let mut json = Map::new();
            json.insert("skipped".into(), Value::Bool(true));
            json.insert(
                "msg".into(),
                Value::String(format!(
                    "remote module ({fqcn}) does not support check mode"
                )),
            );
            return RunResult {
                json,
                failed: false,
            };
        }

        let typed: P = match serde_json::from_value(Value::Object(params)) {
            Ok(typed) => typed,
            Err(err) => {
                return RunResult {
                    json: failure_json(&format!("invalid arguments: {err}")),
                    failed: true,
                }
            }
        };

        let outcome = body(&mut ctx, typed);
        let (mut json, failed) = match outcome {
            Ok(outcome) => {
                let mut json = outcome.data;
                json.insert("changed".into(), Value::Bool(outcome.changed));
                if !outcome.msg.is_empty() {
                    json.insert("msg".into(), Value::String(outcome.msg));
                }
                insert_diff(&mut json, &ctx, &outcome.diff);
                (json, false)
            }
            Err(failure) => {
                let mut json = failure.data;
                json.insert("failed".into(), Value::Bool(true));
                json.insert("msg".into(), Value::String(failure.msg));
                insert_diff(&mut json, &ctx, &failure.diff);
                (json, true)
            }
        };
        if !ctx.warnings.is_empty() {
            json.insert("warnings".into(), json!(ctx.warnings));
        }
        if inject_invocation {
            mask_strings(&mut invocation, &ctx.secrets);
            json.insert("invocation".into(), invocation);
        }
        RunResult { json, failed }
    }
}

/// The `_ansible_*` keys the runtime reads, with the JSON type ansible-core sends for each
/// (`ActionBase._update_module_args`: booleans as JSON `true`/`false`, the `-v` count as an
/// integer, the module's name as a string). A key that is absent takes its default; one of
/// any other type fails the run before anything happens: a task whose check mode cannot be
/// read must not write. Keys not listed here are ignored (each core release adds some).
#[derive(Debug)]
struct Internal {
    check_mode: bool,
    diff: bool,
    no_log: bool,
    verbosity: u64,
    module_name: Option<String>,
    /// Older cores always returned `invocation`; 2.21 asks for it with this key.
    inject_invocation: bool,
    ignore_unknown_opts: bool,
}

impl Internal {
    fn read(raw: &Map<String, Value>) -> Result<Self, String> {
        let flag = |key: &str, default: bool| -> Result<bool, String> {
            match raw.get(&format!("_ansible_{key}")) {
                None => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(other) => Err(wrong_internal(key, other, "a JSON boolean, true or false")),
            }
        };
        let verbosity = match raw.get("_ansible_verbosity") {
            None => 0,
            Some(value) => value.as_u64().ok_or_else(|| {
                wrong_internal("verbosity", value, "a whole number from 0 (the -v count)")
            })?,
        };
        let module_name = match raw.get("_ansible_module_name") {
            None => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(other) => Err(wrong_internal(
                "module_name",
                other,
                "a string such as \"deevnet.net.NAME\"",
            ))?,
        };
        Ok(Internal {
            check_mode: flag("check_mode", false)?,
            diff: flag("diff", false)?,
            no_log: flag("no_log", false)?,
            verbosity,
            module_name,
            inject_invocation: flag("inject_invocation", true)?,
            ignore_unknown_opts: flag("ignore_unknown_opts", false)?,
        })
    }
}

fn wrong_internal(key: &str, value: &Value, expected: &str) -> String {
    format!(
        "_ansible_{key}={} ({}) cannot be read: expected {expected}, as ansible-core sends it. Nothing was done; whatever built these arguments must send a value of that type (or leave the key out)",
        spec::short(value),
        spec::json_type(value)
    )
}

/// `diff` in diff mode only, and never the content when the task has no_log.
fn insert_diff(json: &mut Map<String, Value>, ctx: &Context, diff: &[FileDiff]) {
    if !ctx.diff || diff.is_empty() {
        return;
    }
    let value = if ctx.no_log {
        json!({"prepared": "the diff is hidden: the task has no_log set"})
    } else {
        Value::Array(diff.iter().map(FileDiff::to_json).collect())
    };
    json.insert("diff".into(), value);
}

fn read_args(argv: &[String]) -> Result<Map<String, Value>, String> {
    let program = argv.first().map(String::as_str).unwrap_or("module");
    let Some(source) = argv.get(1) else {
        return Err(format!(
            "no arguments file: run as `{program} ARGS.json` (Ansible does this), or `{program} -` with the JSON on standard input"
        ));
    };
    let text = if source == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the arguments from standard input: {e}"))?;
        text
    } else {
        std::fs::read_to_string(source).map_err(|e| {
            format!("cannot read the arguments file {source}: {e}; pass the path of a JSON file, or - for standard input")
        })?
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the arguments in {source} are a JSON {}, not an object; give an object such as {{\"path\": \"/etc/x\"}}",
            match other {
                Value::Array(_) => "list",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "boolean",
                _ => "null",
            }
        )),
        Err(e) => Err(format!(
            "the arguments in {source} are not JSON ({e}); binary modules take a JSON object such as {{\"path\": \"/etc/x\"}}"
        )),
    }
}

fn failure_json(msg: &str) -> Map<String, Value> {
    let mut json = Map::new();
    json.insert("failed".into(), Value::Bool(true));
    json.insert("msg".into(), Value::String(msg.to_string()));
    json
}

fn print_result(json: &Map<String, Value>) {
    let text = serde_json::to_string(json).unwrap_or_else(|e| {
        format!(r#"{{"failed": true, "msg": "cannot serialise the result: {e}"}}"#)
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Even a bug must end as a failed JSON result, not as a bare abort that Ansible reports as
/// "MODULE FAILURE".
fn install_panic_hook(fqcn: String) {
    panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let msg = format!(
            "{fqcn} crashed{location}: {payload}. This is a bug in the module; please report it with the task's arguments"
        );
        print_result(&failure_json(&msg));
    }));
}
