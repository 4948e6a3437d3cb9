//! Declared argument specs, validated and coerced the way Ansible's `AnsibleModule` does.
//!
//! The controller validates nothing for a binary module (an ad-hoc `-a 'mtu=9000'` arrives as
//! the string `"9000"`), so the module must: types are coerced from strings, defaults filled
//! in, choices and required options enforced, unknown options refused. The result is a
//! normalised JSON object that serde turns into the module's typed parameter struct.

use serde_json::{Map, Number, Value};

/// The type of an option, as in Ansible's `type:` (and `elements:` / `options:`).
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Path,
    Bool,
    Int,
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
            let expanded = expand_path(&text, env);
            if expanded.is_empty() {
                let what = if text.is_empty() {
                    String::new()
                } else {
                    ", which expands to an empty string on this host".to_string()
                };
                return Err(SpecError(format!(
                    "argument '{path}' is {}{what}: an empty path names no file or folder; give a path such as /etc/NAME, or leave {path} out for its default",
                    short(&Value::String(text.clone()))
                )));
            }
            Value::String(expanded)
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
    if !option.choices.is_empty() {
        let text = match &coerced {
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
    }
    Ok(coerced)
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

/// Where `~` and `$VAR` in a `path` option come from.
pub trait PathEnv {
    /// The value of the environment variable `name`.
    fn var(&self, name: &str) -> Option<String>;
    /// The home folder of `user` from the user database; of the running user for `None`
    /// (what `~` means when `HOME` is not set).
    fn home_of(&self, user: Option<&str>) -> Option<String>;
}

/// This process's environment and the host's user database: on the target, the same ones
/// Ansible's `path` type expands with when a Python module runs there.
pub struct ProcessEnv;

impl PathEnv for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
    fn home_of(&self, user: Option<&str>) -> Option<String> {
        use nix::unistd::{getuid, User};
        let user = match user {
            Some(name) => User::from_name(name),
            None => User::from_uid(getuid()),
        };
        user.ok()
            .flatten()
            .map(|u| u.dir.to_string_lossy().into_owned())
    }
}

/// Ansible's `path` type: `os.path.expanduser(os.path.expandvars(value))`, with Python's
/// rules. `$NAME` and `${NAME}` (NAME of ASCII letters, digits and `_`) are replaced by the
/// variable's value, and an undefined one is left as it is; the replaced text is not expanded
/// again. Then a leading `~` (up to the first `/`) becomes `HOME` (or the running user's home
/// folder when `HOME` is not set), and `~user` that user's home folder; an unknown user is
/// left as it is.
pub fn expand_path(value: &str, env: &dyn PathEnv) -> String {
    expand_user(&expand_vars(value, env), env)
}

fn expand_vars(value: &str, env: &dyn PathEnv) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // `${NAME}` or `$NAME`: the name and the length of the whole reference.
        let reference = if let Some(braced) = after.strip_prefix('{') {
            braced.find('}').map(|end| (&braced[..end], end + 3))
        } else {
            let end = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
            (end > 0).then(|| (&after[..end], end + 1))
        };
        match reference {
            Some((name, len)) => {
                match env.var(name) {
                    Some(replacement) => out.push_str(&replacement),
                    // Undefined: left as it is, and not searched again (`${A$B}` stays).
                    None => out.push_str(&rest[at..at + len]),
                }
                rest = &rest[at + len..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn expand_user(value: &str, env: &dyn PathEnv) -> String {
    let Some(after) = value.strip_prefix('~') else {
        return value.to_string();
    };
    let end = after.find('/').unwrap_or(after.len());
    let (user, rest) = after.split_at(end);
    let home = if user.is_empty() {
        env.var("HOME").or_else(|| env.home_of(None))
    } else {
        env.home_of(Some(user))
    };
    let Some(home) = home else {
        return value.to_string();
    };
    let joined = format!("{}{rest}", home.trim_end_matches('/'));
    if joined.is_empty() {
        "/".to_string()
    } else {
        joined
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static ELEMENT_STR: OptionSpec = OptionSpec::new("element", Kind::Str);
    static LEVEL: OptionSpec = OptionSpec::new("level", Kind::Int).choices(&["0", "1", "2"]);
    static VRF_OPTIONS: [OptionSpec; 2] = [
        OptionSpec::new("name", Kind::Str).required(),
        OptionSpec::new("default_via", Kind::Str),
    ];
    static VRF_ELEMENT: OptionSpec = OptionSpec::new("element", Kind::Dict(&VRF_OPTIONS));
    static SPEC: [OptionSpec; 8] = [
        OptionSpec::new("path", Kind::Path).default(DefaultValue::Str("/etc/x.conf")),
        OptionSpec::new("ipv6", Kind::Bool).default(DefaultValue::Bool(false)),
        OptionSpec::new("mtu", Kind::Int),
        OptionSpec::new("interfaces", Kind::List(&ELEMENT_STR))
            .default(DefaultValue::EmptyList)
            .aliases(&["interface"]),
        OptionSpec::new("state", Kind::Str)
            .choices(&["present", "absent"])
            .default(DefaultValue::Str("present")),
        OptionSpec::new("rp_filter", Kind::Map(&LEVEL)).default(DefaultValue::EmptyMap),
        OptionSpec::new("vrfs", Kind::List(&VRF_ELEMENT)).default(DefaultValue::EmptyList),
        OptionSpec::new("secret", Kind::Str).no_log(),
    ];

    fn run(params: Value) -> Result<Map<String, Value>, SpecError> {
        validate("ns.col.m", &SPEC, params.as_object().unwrap(), false)
    }

    #[test]
    fn defaults_fill_in_and_internal_keys_are_ignored() {
        let out = run(json!({"_ansible_check_mode": true, "_ansible_future_key": 1})).unwrap();
        assert_eq!(out["path"], json!("/etc/x.conf"));
        assert_eq!(out["ipv6"], json!(false));
        assert_eq!(out["mtu"], Value::Null);
        assert_eq!(out["interfaces"], json!([]));
        assert_eq!(out["state"], json!("present"));
    }

    #[test]
    fn strings_from_ad_hoc_are_coerced_like_ansible() {
        let out = run(
            json!({"ipv6": "yes", "mtu": "9000", "interfaces": "vmbr0.50, bond0.40",
                             "rp_filter": "vmbr0.50=2"}),
        )
        .unwrap();
        assert_eq!(out["ipv6"], json!(true));
        assert_eq!(out["mtu"], json!(9000));
        assert_eq!(out["interfaces"], json!(["vmbr0.50", "bond0.40"]));
        assert_eq!(out["rp_filter"], json!({"vmbr0.50": 2}));
        let out = run(json!({"ipv6": "off", "interfaces": "[\"a\"]", "mtu": 1500.0})).unwrap();
        assert_eq!(out["ipv6"], json!(false));
        assert_eq!(out["interfaces"], json!(["a"]));
        assert_eq!(out["mtu"], json!(1500));
    }

    #[test]
    fn aliases_resolve_to_the_option_name() {
        let out = run(json!({"interface": ["x"]})).unwrap();
        assert_eq!(out["interfaces"], json!(["x"]));
        let err = run(json!({"interface": ["x"], "interfaces": ["y"]})).unwrap_err();
        assert!(
            err.0.contains("mutually exclusive: interfaces|interface"),
            "{err}"
        );
    }

    #[test]
    fn unknown_parameters_use_ansibles_wording() {
        let err = run(json!({"bogus": 1, "also": 2})).unwrap_err();
        assert_eq!(
            err.0,
            "Unsupported parameters for (ns.col.m) module: also, bogus. Supported parameters include: \
             interfaces (interface), ipv6, mtu, path, rp_filter, secret, state, vrfs."
        );
        assert!(validate(
            "ns.col.m",
            &SPEC,
            json!({"bogus": 1}).as_object().unwrap(),
            true
        )
        .is_ok());
    }

    #[test]
    fn wrong_types_name_parameter_and_value() {
        let err = run(json!({"ipv6": "maybe"})).unwrap_err();
        assert!(err.0.contains("argument 'ipv6' is of type str"), "{err}");
        assert!(
            err.0.contains("'maybe'") && err.0.contains("yes, no"),
            "{err}"
        );
        let err = run(json!({"interfaces": 5})).unwrap_err();
        assert!(
            err.0.contains(
                "argument 'interfaces' is of type int and we were unable to convert to list"
            ),
            "{err}"
        );
        let err = run(json!({"mtu": "big"})).unwrap_err();
        assert!(err.0.contains("'big' is not a whole number"), "{err}");
    }

    #[test]
    fn choices_apply_to_map_values_and_strings() {
        let err = run(json!({"rp_filter": {"vmbr0.50": 3}})).unwrap_err();
        assert_eq!(
            err.0,
            "value of rp_filter.vmbr0.50 must be one of: 0, 1, 2, got: 3"
        );
        let err = run(json!({"state": "gone"})).unwrap_err();
        assert_eq!(
            err.0,
            "value of state must be one of: present, absent, got: gone"
        );
    }

    #[test]
    fn nested_options_are_validated_with_their_location() {
        let err = run(json!({"vrfs": [{"name": "a"}, {"default_via": "1.2.3.4"}]})).unwrap_err();
        assert_eq!(err.0, "missing required arguments: name found in vrfs[1]");
        let err = run(json!({"vrfs": [{"name": "a", "via": "x"}]})).unwrap_err();
        assert!(
            err.0
                .starts_with("Unsupported parameters for (ns.col.m) module: via found in vrfs[0]."),
            "{err}"
        );
        let out = run(json!({"vrfs": [{"name": "a"}]})).unwrap();
        assert_eq!(out["vrfs"], json!([{"name": "a", "default_via": null}]));
    }

    static TREE_NODE_OPTIONS: [OptionSpec; 2] = [
        OptionSpec::new("header", Kind::Str),
        OptionSpec::new("children", Kind::List(&TREE_NODE)),
    ];
    static TREE_NODE: OptionSpec = OptionSpec::new("element", Kind::Dict(&TREE_NODE_OPTIONS));

    #[test]
    fn a_self_referring_spec_prints_to_a_bounded_depth() {
        let printed = to_argument_spec(&TREE_NODE_OPTIONS).to_string();
        assert_eq!(
            printed.matches("\"children\"").count(),
            MAX_PRINTED_DEPTH + 1
        );
    }

    #[test]
    fn no_log_values_are_masked() {
        let out = run(json!({"secret": "hunter2"})).unwrap();
        let masked = mask_no_log(&SPEC, &out);
        assert_eq!(
            masked["secret"],
            json!("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")
        );
        assert_eq!(masked["path"], json!("/etc/x.conf"));
    }

    /// A target's environment, fixed: HOME=/home/ops unless `home` is None; users root and
    /// nobody as Debian has them; the running user's home folder /root.
    struct FakeEnv {
        home: Option<&'static str>,
    }

    impl PathEnv for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            let value = match name {
                "HOME" => self.home?,
                "CONF" => "/etc/frr",
                "EMPTY" => "",
                "A_1" => "x",
                "SLASHY" => "/a/",
                "DOLLAR" => "$CONF",
                _ => return None,
            };
            Some(value.to_string())
        }
        fn home_of(&self, user: Option<&str>) -> Option<String> {
            match user {
                None | Some("root") => Some("/root".into()),
                Some("nobody") => Some("/nonexistent".into()),
                Some(_) => None,
            }
        }
    }

    #[test]
    fn paths_expand_as_pythons_expanduser_of_expandvars() {
        // Each expectation is what `os.path.expanduser(os.path.expandvars(v))` of Python 3.11
        // returned under `env -i HOME=/home/ops CONF=/etc/frr EMPTY= A_1=x SLASHY=/a/
        // DOLLAR='$CONF'` on Debian 12.
        let env = FakeEnv {
            home: Some("/home/ops"),
        };
        let cases = [
            ("~", "/home/ops"),
            ("~/frr.conf.local", "/home/ops/frr.conf.local"),
            ("~/", "/home/ops/"),
            ("~root/x", "/root/x"),
            ("~nobody", "/nonexistent"),
            ("~no_such_user_x/y", "~no_such_user_x/y"),
            ("$CONF/frr.conf.local", "/etc/frr/frr.conf.local"),
            ("${CONF}/x", "/etc/frr/x"),
            ("$UNDEFINED/x", "$UNDEFINED/x"),
            ("${UNDEFINED}", "${UNDEFINED}"),
            ("$", "$"),
            ("$/x", "$/x"),
            ("a$", "a$"),
            ("${}", "${}"),
            ("${A_1}_$A_1", "x_x"),
            ("$A_1b", "$A_1b"),
            ("${UNDEF$CONF}", "${UNDEF$CONF}"),
            ("$DOLLAR/x", "$CONF/x"),
            ("$EMPTY", ""),
            ("~$EMPTY", "/home/ops"),
            ("$HOME/x", "/home/ops/x"),
            ("x/~/y", "x/~/y"),
            ("/etc/$CONF", "/etc//etc/frr"),
            ("~${A_1}", "~x"),
            ("$SLASHY~", "/a/~"),
            ("${CONF", "${CONF"),
            ("$1", "$1"),
            ("/etc/frr/frr.conf.local", "/etc/frr/frr.conf.local"),
        ];
        for (value, expected) in cases {
            assert_eq!(expand_path(value, &env), expected, "{value}");
        }
        // No HOME: the running user's home folder, as Python's pwd fallback.
        assert_eq!(expand_path("~/x", &FakeEnv { home: None }), "/root/x");
        // HOME empty: Python gives `/` for `~` and `/x` for `~/x`.
        assert_eq!(expand_path("~", &FakeEnv { home: Some("") }), "/");
        assert_eq!(expand_path("~/x", &FakeEnv { home: Some("") }), "/x");
    }

    #[test]
    fn path_options_are_expanded_and_never_empty() {
        let env = FakeEnv {
            home: Some("/home/ops"),
        };
        let run = |params: Value| {
            validate_with_env("ns.col.m", &SPEC, params.as_object().unwrap(), false, &env)
        };
        let out = run(json!({"path": "~/x.conf"})).unwrap();
        assert_eq!(out["path"], json!("/home/ops/x.conf"));
        let out = run(json!({"path": "$CONF/frr.conf.local"})).unwrap();
        assert_eq!(out["path"], json!("/etc/frr/frr.conf.local"));
        let err = run(json!({"path": ""})).unwrap_err();
        assert_eq!(
            err.0,
            "argument 'path' is '': an empty path names no file or folder; give a path such as /etc/NAME, or leave path out for its default"
        );
        let err = run(json!({"path": "$EMPTY"})).unwrap_err();
        assert!(
            err.0.starts_with(
                "argument 'path' is '$EMPTY', which expands to an empty string on this host: "
            ),
            "{err}"
        );
        // A string option is text, never expanded.
        let out = run(json!({"state": "present", "secret": "~/$CONF"})).unwrap();
        assert_eq!(out["secret"], json!("~/$CONF"));
    }
}
