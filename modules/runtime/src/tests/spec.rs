use crate::spec::*;
use serde_json::json;
use serde_json::{Map, Value};

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
fn floats_take_numbers_and_text_that_reads_as_one() {
    static FLOATS: [OptionSpec; 1] = [OptionSpec::new("start_at", Kind::Float)];
    let run = |params: Value| validate("ns.col.m", &FLOATS, params.as_object().unwrap(), false);
    for (given, coerced) in [
        (json!(1760000000.25), json!(1760000000.25)),
        (json!(1760000000), json!(1760000000.0)),
        (json!(" 1760000000.5 "), json!(1760000000.5)),
        (json!(null), json!(null)),
    ] {
        assert_eq!(
            run(json!({ "start_at": given })).unwrap()["start_at"],
            coerced
        );
    }
    for bad in [
        json!("soon"),
        json!("NaN"),
        json!("inf"),
        json!(true),
        json!([1.0]),
    ] {
        let err = run(json!({ "start_at": bad })).unwrap_err();
        assert!(
            err.0.starts_with("argument 'start_at' is of type")
                && err.0.contains("unable to convert to float"),
            "{err}"
        );
    }
    assert_eq!(
        to_argument_spec(&FLOATS),
        json!({"start_at": {"type": "float"}})
    );
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
        err.0
            .contains("argument 'interfaces' is of type int and we were unable to convert to list"),
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
