//! Declared argument specs, validated and coerced the way Ansible's `AnsibleModule` does.
//!
//! The controller validates nothing for a binary module (an ad-hoc `-a 'mtu=9000'` arrives as
//! the string `"9000"`), so the module must: types are coerced from strings, defaults filled
//! in, choices and required options enforced, unknown options refused. The result is a
//! normalised JSON object that serde turns into the module's typed parameter struct.

use serde_json::{Map, Number, Value};

mod path;
pub use path::{expand_path, PathEnv, ProcessEnv};

/// The type of an option, as in Ansible's `type:` (and `elements:` / `options:`).
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Path,
    Bool,
    Int,
    /// A number, whole or not (Ansible's `float`): seconds since the epoch, say.
    Float,
    /// Any JSON value, passed through untouched.
    Raw,
    /// A list whose elements follow the given spec (its `name` is not used).
    List(&'static OptionSpec),
    /// A dict with declared sub-options.
    Dict(&'static [OptionSpec]),
    /// A dict with free keys (e.g. interface names) whose values follow the given spec.
    Map(&'static OptionSpec),
}

impl Kind {
    fn type_name(&self) -> &'static str {
        match self {
            Kind::Str => "str",
            Kind::Path => "path",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Raw => "raw",
            Kind::List(_) => "list",
            Kind::Dict(_) | Kind::Map(_) => "dict",
        }
    }
}

/// A default value that can live in a `static` spec.
#[derive(Debug, Clone, Copy)]
pub enum DefaultValue {
    Str(&'static str),
    Bool(bool),
    Int(i64),
    StrList(&'static [&'static str]),
    EmptyList,
    EmptyMap,
}

impl DefaultValue {
    fn to_value(self) -> Value {
        match self {
            DefaultValue::Str(s) => Value::String(s.to_string()),
            DefaultValue::Bool(b) => Value::Bool(b),
            DefaultValue::Int(i) => Value::Number(i.into()),
            DefaultValue::StrList(items) => {
                Value::Array(items.iter().map(|s| Value::String(s.to_string())).collect())
            }
            DefaultValue::EmptyList => Value::Array(Vec::new()),
            DefaultValue::EmptyMap => Value::Object(Map::new()),
        }
    }
}

/// The range of an int option: the one rule for a bounded number, and its one message, which
/// names the option, the value and what to give instead (the spec checks types; the module
/// checks the range where it reads the option, so that its request refuses a value out of range
/// however it was made).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntRange {
    pub min: i64,
    pub max: i64,
    /// What the number counts, for the message: "a number of seconds".
    pub what: &'static str,
    /// Why the range, or what its ends mean, for the message (may be empty).
    pub why: &'static str,
}

impl IntRange {
    pub const fn new(min: i64, max: i64, what: &'static str) -> Self {
        IntRange {
            min,
            max,
            what,
            why: "",
        }
    }

    pub const fn because(mut self, why: &'static str) -> Self {
        self.why = why;
        self
    }

    pub fn contains(&self, value: i64) -> bool {
        (self.min..=self.max).contains(&value)
    }

    /// `value` of the option `name`, or the message: `name=value is out of range; give what
    /// from min to max (why)`.
    pub fn check(&self, name: &str, value: i64) -> Result<i64, String> {
        if self.contains(value) {
            return Ok(value);
        }
        let why = if self.why.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.why)
        };
        Err(format!(
            "{name}={value} is out of range; give {} from {} to {}{why}",
            self.what, self.min, self.max
        ))
    }

    /// [`IntRange::check`] for a range of seconds, as a duration.
    pub fn seconds(&self, name: &str, value: i64) -> Result<std::time::Duration, String> {
        self.check(name, value)
            .map(|secs| std::time::Duration::from_secs(secs.unsigned_abs()))
    }
}

/// One option of a module (or a sub-option, or the element spec of a list or map).
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub default: Option<DefaultValue>,
    /// Allowed values, compared with the coerced value's text (`"2"` for the int 2).
    pub choices: &'static [&'static str],
    pub aliases: &'static [&'static str],
    /// Masked in `invocation.module_args`.
    pub no_log: bool,
}

impl OptionSpec {
    pub const fn new(name: &'static str, kind: Kind) -> Self {
        OptionSpec {
            name,
            kind,
            required: false,
            default: None,
            choices: &[],
            aliases: &[],
            no_log: false,
        }
    }
    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }
    pub const fn default(mut self, value: DefaultValue) -> Self {
        self.default = Some(value);
        self
    }
    pub const fn choices(mut self, choices: &'static [&'static str]) -> Self {
        self.choices = choices;
        self
    }
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
    pub const fn no_log(mut self) -> Self {
        self.no_log = true;
        self
    }
}

/// What went wrong with the arguments: one message, in Ansible's wording where it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Validates `params` against `spec` and returns the normalised object: every declared option
/// present (value, default or null), aliases resolved to the option's name, values coerced.
///
/// `module_fqcn` is used in the unknown-parameter message; `ignore_unknown` mirrors
/// `_ansible_ignore_unknown_opts`. `path` options are expanded with this process's
/// environment (see [`expand_path`]).
pub fn validate(
    module_fqcn: &str,
    spec: &[OptionSpec],
    params: &Map<String, Value>,
    ignore_unknown: bool,
) -> Result<Map<String, Value>, SpecError> {
    validate_with_env(module_fqcn, spec, params, ignore_unknown, &ProcessEnv)
}

/// [`validate`], expanding `path` options with `env` instead of this process's environment.
pub fn validate_with_env(
    module_fqcn: &str,
    spec: &[OptionSpec],
    params: &Map<String, Value>,
    ignore_unknown: bool,
    env: &dyn PathEnv,
) -> Result<Map<String, Value>, SpecError> {
    validate_options(module_fqcn, spec, params, ignore_unknown, "", false, env)
}

fn validate_options(
    fqcn: &str,
    spec: &[OptionSpec],
    params: &Map<String, Value>,
    ignore_unknown: bool,
    location: &str,
    hide: bool,
    env: &dyn PathEnv,
) -> Result<Map<String, Value>, SpecError> {
    let found_in = if location.is_empty() {
        String::new()
    } else {
        format!(" found in {location}")
    };

    let mut unknown: Vec<&str> = params
        .keys()
        .filter(|k| !k.starts_with("_ansible_"))
        .filter(|k| {
            !spec
                .iter()
                .any(|o| o.name == *k || o.aliases.contains(&k.as_str()))
        })
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() && !ignore_unknown {
        unknown.sort_unstable();
        let mut supported: Vec<String> = spec
            .iter()
            .map(|o| {
                if o.aliases.is_empty() {
                    o.name.to_string()
                } else {
                    format!("{} ({})", o.name, o.aliases.join(", "))
                }
            })
            .collect();
        supported.sort();
        return Err(SpecError(format!(
            "Unsupported parameters for ({fqcn}) module: {}{found_in}. Supported parameters include: {}.",
            unknown.join(", "),
            supported.join(", ")
        )));
    }

    let mut missing = Vec::new();
    let mut out = Map::new();
    for option in spec {
        let mut given: Vec<(&str, &Value)> = std::iter::once(option.name)
            .chain(option.aliases.iter().copied())
            .filter_map(|key| params.get(key).map(|v| (key, v)))
            .filter(|(_, v)| !v.is_null())
            .collect();
        if given.len() > 1 {
            let names: Vec<&str> = given.iter().map(|(k, _)| *k).collect();
            return Err(SpecError(format!(
                "parameters are mutually exclusive: {}{found_in}: give only one of them",
                names.join("|")
            )));
        }
        let path = if location.is_empty() {
            option.name.to_string()
        } else {
            format!("{location}.{}", option.name)
        };
        let value = match given.pop() {
            Some((_, value)) => coerce(fqcn, option, value, &path, ignore_unknown, hide, env)?,
            None => match option.default {
                _ if option.required => {
                    missing.push(option.name);
                    continue;
                }
                Some(default) => default.to_value(),
                None => Value::Null,
            },
        };
        out.insert(option.name.to_string(), value);
    }
    if !missing.is_empty() {
        return Err(SpecError(format!(
            "missing required arguments: {}{found_in}",
            missing.join(", ")
        )));
    }
    Ok(out)
}

fn coerce(
    fqcn: &str,
    option: &OptionSpec,
    value: &Value,
    path: &str,
    ignore_unknown: bool,
    hide: bool,
    env: &dyn PathEnv,
) -> Result<Value, SpecError> {
    // A no_log value (or anything inside one) never appears in a message.
    let hide = hide || option.no_log;
    let short = |value: &Value| {
        if hide {
            NO_LOG_MASK.to_string()
        } else {
            short(value)
        }
    };
    let type_error = |detail: &str| {
        SpecError(format!(
            "argument '{path}' is of type {} and we were unable to convert to {}: {detail}",
            json_type(value),
            option.kind.type_name()
        ))
    };
    let coerced = match option.kind {
        Kind::Raw => value.clone(),
        Kind::Str => match value {
            Value::String(s) => Value::String(s.clone()),
            Value::Number(n) => Value::String(n.to_string()),
            Value::Bool(b) => Value::String(b.to_string()),
            _ => return Err(type_error(&format!("{} is not a string; give text", short(value)))),
        },
        Kind::Path => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(type_error(&format!("{} is not a string; give a path", short(value)))),
            };
            expanded_path(&text, path, &short, env)?
        }
        Kind::Bool => Value::Bool(to_bool(value).ok_or_else(|| {
            type_error(&format!(
                "the value {} is not a valid boolean; valid booleans are yes, no, true, false, on, off, 1, 0",
                short(value)
            ))
        })?),
        Kind::Int => Value::Number(to_int(value).ok_or_else(|| {
            type_error(&format!("the value {} is not a whole number", short(value)))
        })?),
        Kind::Float => Value::Number(to_float(value).ok_or_else(|| {
            type_error(&format!("the value {} is not a number", short(value)))
        })?),
        Kind::List(element) => {
            let items = to_list(value).ok_or_else(|| {
                type_error(&format!(
                    "the value {} is not a list; give a YAML list or a comma-separated string",
                    short(value)
                ))
            })?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{path}[{i}]");
                out.push(coerce(
                    fqcn,
                    element,
                    item,
                    &item_path,
                    ignore_unknown,
                    hide,
                    env,
                )?);
            }
            Value::Array(out)
        }
        Kind::Dict(sub) => {
            let map = to_map(value).ok_or_else(|| {
                type_error(&format!("the value {} is not a dict", short(value)))
            })?;
            Value::Object(validate_options(
                fqcn,
                sub,
                &map,
                ignore_unknown,
                path,
                hide,
                env,
            )?)
        }
        Kind::Map(element) => {
            let map = to_map(value).ok_or_else(|| {
                type_error(&format!("the value {} is not a dict", short(value)))
            })?;
            let mut out = Map::new();
            for (key, item) in &map {
                let item_path = format!("{path}.{key}");
                let item = coerce(fqcn, element, item, &item_path, ignore_unknown, hide, env)?;
                out.insert(key.clone(), item);
            }
            Value::Object(out)
        }
    };
    check_choice(option, &coerced, path, hide)?;
    Ok(coerced)
}

/// A path option's text expanded (`~`, variables); one that expands to nothing names no file.
/// `shown` is how a value appears in a message (masked when no_log).
fn expanded_path(
    text: &str,
    path: &str,
    shown: &dyn Fn(&Value) -> String,
    env: &dyn PathEnv,
) -> Result<Value, SpecError> {
    let expanded = expand_path(text, env);
    if expanded.is_empty() {
        let what = if text.is_empty() {
            String::new()
        } else {
            ", which expands to an empty string on this host".to_string()
        };
        return Err(SpecError(format!(
            "argument '{path}' is {}{what}: an empty path names no file or folder; give a path such as /etc/NAME, or leave {path} out for its default",
            shown(&Value::String(text.to_string()))
        )));
    }
    Ok(Value::String(expanded))
}

/// A coerced value of an option with `choices` must be one of them (compared as text).
fn check_choice(
    option: &OptionSpec,
    coerced: &Value,
    path: &str,
    hide: bool,
) -> Result<(), SpecError> {
    if option.choices.is_empty() {
        return Ok(());
    }
    let text = match coerced {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if !option.choices.contains(&text.as_str()) {
        return Err(SpecError(format!(
            "value of {path} must be one of: {}, got: {}",
            option.choices.join(", "),
            if hide { NO_LOG_MASK } else { &text }
        )));
    }
    Ok(())
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// A value for an error message, cut so that a huge argument does not flood the output.
pub(crate) fn short(value: &Value) -> String {
    let text = match value {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    };
    if text.chars().count() > 80 {
        let mut cut: String = text.chars().take(77).collect();
        cut.push_str("...");
        cut
    } else {
        text
    }
}

/// Ansible's boolean conversion (`module_utils.parsing.convert_bool`).
pub fn to_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "on" | "1" | "true" | "t" => Some(true),
            "n" | "no" | "off" | "0" | "false" | "f" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn to_int(value: &Value) -> Option<Number> {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.clone()),
        Value::Number(n) => {
            let x = n.as_f64()?;
            (x.fract() == 0.0 && x.abs() < 9.0e15).then(|| Number::from(x as i64))
        }
        Value::String(s) => s.trim().parse::<i64>().ok().map(Number::from),
        _ => None,
    }
}

/// Ansible's float conversion: a number, or text that reads as one; finite only (JSON has no
/// NaN or infinity to hand to the module).
fn to_float(value: &Value) -> Option<Number> {
    let x = match value {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    Number::from_f64(x)
}

fn to_list(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(items) => Some(items.clone()),
        Value::String(s) => {
            let s = s.trim();
            if s.starts_with('[') {
                // `-a 'interfaces=["vmbr0.50"]'` arrives as text: take it as JSON.
                match serde_json::from_str::<Value>(s).ok()? {
                    Value::Array(items) => Some(items),
                    _ => None,
                }
            } else if s.is_empty() {
                Some(Vec::new())
            } else {
                Some(
                    s.split(',')
                        .map(|item| Value::String(item.trim().to_string()))
                        .collect(),
                )
            }
        }
        _ => None,
    }
}

fn to_map(value: &Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map.clone()),
        Value::String(s) => {
            let s = s.trim();
            if s.starts_with('{') {
                match serde_json::from_str::<Value>(s).ok()? {
                    Value::Object(map) => Some(map),
                    _ => None,
                }
            } else if s.is_empty() {
                Some(Map::new())
            } else {
                // Ansible's `k1=v1, k2=v2` form of a dict.
                let mut map = Map::new();
                for pair in s.split([',', ' ']).filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=')?;
                    map.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
                }
                Some(map)
            }
        }
        _ => None,
    }
}

/// Ansible's stand-in for a `no_log` value.
const NO_LOG_MASK: &str = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER";

/// `module_args` with every `no_log` option (at any depth) replaced by Ansible's mask.
pub fn mask_no_log(spec: &[OptionSpec], params: &Map<String, Value>) -> Map<String, Value> {
    const MASK: &str = NO_LOG_MASK;
    let mut out = params.clone();
    for option in spec {
        let Some(value) = out.get_mut(option.name) else {
            continue;
        };
        if option.no_log && !value.is_null() {
            *value = Value::String(MASK.to_string());
            continue;
        }
        match (option.kind, value) {
            (Kind::Dict(sub), Value::Object(map)) => *map = mask_no_log(sub, map),
            (Kind::List(element), Value::Array(items)) => {
                if let Kind::Dict(sub) = element.kind {
                    for item in items.iter_mut() {
                        if let Value::Object(map) = item {
                            *map = mask_no_log(sub, map);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The spec in the form of Ansible's `argument_spec` (`type`, `elements`, `options`, `default`,
/// `choices`, `aliases`, `required`), printed by `MODULE --argument-spec` so that tests and the
/// controller can hold the documentation to what the binary really accepts.
///
/// A spec may refer to itself (a stanza's `children` are stanzas); the printed form stops
/// after [`MAX_PRINTED_DEPTH`] levels, where validation itself follows the data's depth.
pub fn to_argument_spec(spec: &[OptionSpec]) -> Value {
    options_to_json(spec, 0)
}

/// How deep `--argument-spec` prints nested options.
pub const MAX_PRINTED_DEPTH: usize = 8;

fn options_to_json(spec: &[OptionSpec], depth: usize) -> Value {
    let mut out = Map::new();
    for option in spec {
        out.insert(option.name.to_string(), option_to_json(option, depth));
    }
    Value::Object(out)
}

fn option_to_json(option: &OptionSpec, depth: usize) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), Value::String(option.kind.type_name().into()));
    match option.kind {
        Kind::List(element) => {
            out.insert(
                "elements".into(),
                Value::String(element.kind.type_name().into()),
            );
            if let Kind::Dict(sub) = element.kind {
                if depth < MAX_PRINTED_DEPTH {
                    out.insert("options".into(), options_to_json(sub, depth + 1));
                }
            }
        }
        Kind::Dict(sub) if depth < MAX_PRINTED_DEPTH => {
            out.insert("options".into(), options_to_json(sub, depth + 1));
        }
        _ => {}
    }
    if option.required {
        out.insert("required".into(), Value::Bool(true));
    }
    if let Some(default) = option.default {
        out.insert("default".into(), default.to_value());
    }
    if !option.choices.is_empty() {
        let choices = option.choices.iter().map(|c| {
            // Int choices are documented as numbers.
            match (option.kind, c.parse::<i64>()) {
                (Kind::Int, Ok(n)) => Value::Number(n.into()),
                _ => Value::String(c.to_string()),
            }
        });
        out.insert("choices".into(), Value::Array(choices.collect()));
    }
    if !option.aliases.is_empty() {
        out.insert("aliases".into(), serde_json::json!(option.aliases));
    }
    if option.no_log {
        out.insert("no_log".into(), Value::Bool(true));
    }
    Value::Object(out)
}
