//! Invariants of the runtime's argument validation (`deevnet_runtime::spec`), shared by the
//! libFuzzer target `spec_args` and the stable smoke tests (the runtime's own, with a spec that
//! uses every kind of option, and each module's, with the spec its binary declares).
//!
//! A module's real spec is the `static SPEC` its library declares next to its `Params` (the
//! one its binary runs with and prints for `--argument-spec`), taken as it is: see `specs.rs`.

use crate::input::Input;
use deevnet_runtime::spec::{mask_no_log, validate, DefaultValue, Kind, OptionSpec};
use serde_json::{json, Map, Value};

/// Text that no option name, message template or default holds: a `no_log` value carrying it
/// must never come back in an error or in the masked arguments.
pub const SECRET_MARKERS: &[&str] = &["S3cr3t", "9999111"];

static ELEMENT_STR: OptionSpec = OptionSpec::new("element", Kind::Str);
static LEVEL: OptionSpec = OptionSpec::new("level", Kind::Int).choices(&["0", "1", "2"]);
static PEER_OPTIONS: [OptionSpec; 3] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("password", Kind::Str).no_log(),
    OptionSpec::new("port", Kind::Int).default(DefaultValue::Int(179)),
];
static PEER: OptionSpec = OptionSpec::new("element", Kind::Dict(&PEER_OPTIONS));

/// A spec with every kind of option the runtime knows, `no_log` ones among them.
pub static REPRESENTATIVE: [OptionSpec; 13] = [
    OptionSpec::new("path", Kind::Path).default(DefaultValue::Str("/etc/x.conf")),
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("ipv6", Kind::Bool).default(DefaultValue::Bool(false)),
    OptionSpec::new("mtu", Kind::Int),
    OptionSpec::new("interfaces", Kind::List(&ELEMENT_STR))
        .default(DefaultValue::EmptyList)
        .aliases(&["interface"]),
    OptionSpec::new("state", Kind::Str)
        .choices(&["present", "absent"])
        .default(DefaultValue::Str("present")),
    OptionSpec::new("rp_filter", Kind::Map(&LEVEL)).default(DefaultValue::EmptyMap),
    OptionSpec::new("peers", Kind::List(&PEER)).default(DefaultValue::EmptyList),
    OptionSpec::new("extra", Kind::Raw),
    OptionSpec::new("token", Kind::Str)
        .no_log()
        .aliases(&["api_token"]),
    OptionSpec::new("pin", Kind::Int).no_log(),
    OptionSpec::new("key_kind", Kind::Str)
        .no_log()
        .choices(&["rsa", "ed25519"]),
    OptionSpec::new("lists", Kind::List(&ELEMENT_STR)).no_log(),
];

const VALUES: &[&str] = &[
    "yes",
    "no",
    "off",
    "9000",
    "1500.0",
    "a,b",
    " vmbr0.50 , bond0.40 ",
    "[\"x\"]",
    "[1, 2]",
    "{\"k\": 1}",
    "k=v, x=y",
    "k=1",
    "broken=",
    "=",
    "",
    "present",
    "absent",
    "2",
    "3",
];

const SECRETS: &[&str] = &[
    "S3cr3t-a",
    "9999111",
    "S3cr3t=b",
    "[\"S3cr3t\"]",
    "{\"S3cr3t\": 1}",
];

fn value(input: &mut Input, depth: usize, secret: bool) -> Value {
    let pool = if secret { SECRETS } else { VALUES };
    match input.byte() % 10 {
        0 => Value::Null,
        1 => Value::Bool(input.flag()),
        2 => json!(input.byte() as i64 - 100),
        3 => json!(f64::from(input.byte()) / 4.0),
        4 if depth < 3 => Value::Array(
            (0..input.below(3))
                .map(|_| value(input, depth + 1, secret))
                .collect(),
        ),
        5 if depth < 3 => {
            let mut map = Map::new();
            for _ in 0..input.below(3) {
                let key = input
                    .pick(&["name", "password", "port", "vmbr0.50", "x"])
                    .to_string();
                map.insert(key, value(input, depth + 1, secret));
            }
            Value::Object(map)
        }
        6 => Value::String(input.text(12)),
        7 if secret => json!(9999111),
        _ => Value::String(input.pick(pool).to_string()),
    }
}

/// Arguments from fuzz bytes: a JSON object as is, or built from decisions over the spec's
/// names, aliases, unknown and internal keys.
pub fn arguments(spec: &[OptionSpec], data: &[u8]) -> Map<String, Value> {
    if let Ok(Value::Object(map)) = serde_json::from_slice(data) {
        return map;
    }
    let mut input = Input::new(data);
    let mut names: Vec<(&str, bool)> = Vec::new();
    for option in spec {
        names.push((option.name, option.no_log));
        names.extend(option.aliases.iter().map(|a| (*a, option.no_log)));
    }
    names.extend([
        ("bogus", false),
        ("_ansible_check_mode", false),
        ("", false),
    ]);
    let mut map = Map::new();
    for _ in 0..input.below(names.len() + 2) {
        let (key, secret) = *input.pick(&names);
        let v = value(&mut input, 0, secret);
        map.insert(key.to_string(), v);
    }
    map
}

/// Validates fuzz-made arguments against `spec`; panics when an invariant breaks. Returns the
/// normalised arguments when they were accepted, for a module's own typed checks.
pub fn check_args(fqcn: &str, spec: &[OptionSpec], data: &[u8]) -> Option<Map<String, Value>> {
    let params = arguments(spec, data);
    let ignore_unknown = data.first().is_some_and(|b| b & 0x80 != 0);
    let result = validate(fqcn, spec, &params, ignore_unknown);
    let leak_checked = secrets_only_in_no_log(spec, &params);
    match result {
        Err(err) => {
            assert!(!err.0.is_empty(), "an empty error for {params:?}");
            for marker in &leak_checked {
                assert!(
                    !err.0.contains(marker),
                    "a no_log value is in the error: {err}\nARGS {params:?}"
                );
            }
            None
        }
        Ok(out) => {
            let mut names: Vec<&str> = out.keys().map(String::as_str).collect();
            let mut declared: Vec<&str> = spec.iter().map(|o| o.name).collect();
            names.sort_unstable();
            declared.sort_unstable();
            assert_eq!(
                names, declared,
                "the normalised arguments are not the declared options"
            );
            let again = validate(fqcn, spec, &out, false);
            assert_eq!(
                again.as_ref(),
                Ok(&out),
                "validating normalised arguments again changed them\nARGS {params:?}"
            );
            let masked = Value::Object(mask_no_log(spec, &out)).to_string();
            for marker in &leak_checked {
                assert!(
                    !masked.contains(marker),
                    "a no_log value is in the masked arguments: {masked}"
                );
            }
            Some(out)
        }
    }
}

/// The markers that appear in the arguments only inside `no_log` options (at the top level):
/// those must never come back.
fn secrets_only_in_no_log(spec: &[OptionSpec], params: &Map<String, Value>) -> Vec<&'static str> {
    let mut rest = params.clone();
    let mut hidden = String::new();
    for option in spec.iter().filter(|o| o.no_log) {
        for key in std::iter::once(option.name).chain(option.aliases.iter().copied()) {
            if let Some(v) = rest.remove(key) {
                hidden.push_str(&v.to_string());
            }
        }
    }
    let visible = Value::Object(rest).to_string();
    SECRET_MARKERS
        .iter()
        .copied()
        .filter(|m| hidden.contains(m) && !visible.contains(m))
        .collect()
}

/// Arguments the runtime accepted against a module's spec, as the module's typed `Params` (with
/// the JSON they came from, for messages). They always deserialise: a panic names the arguments.
pub fn typed<P: serde::de::DeserializeOwned>(
    validated: Option<Map<String, Value>>,
) -> Option<(P, Value)> {
    let value = Value::Object(validated?);
    match serde_json::from_value::<P>(value.clone()) {
        Ok(params) => Some((params, value)),
        Err(e) => panic!("validated arguments do not deserialise ({e}): {value}"),
    }
}
