//! From the task's validated arguments to the checks to run: addresses parsed, interface names
//! checked, the short form (`vrf`, `dst`, … at the top level) turned into one VRF entry. Every
//! error names the parameter's location, the value and the fix.

use deevnet_runtime::ifname;
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{Kind, OptionSpec};
use serde::Deserialize;
use std::collections::HashSet;
use std::net::IpAddr;

static LOOKUP_OPTIONS: [OptionSpec; 6] = [
    OptionSpec::new("dst", Kind::Str).required(),
    OptionSpec::new("via", Kind::Str),
    OptionSpec::new("dev", Kind::Str),
    OptionSpec::new("not_dev", Kind::Str),
    OptionSpec::new("table", Kind::Str),
    OptionSpec::new("reachable", Kind::Bool),
];
static LOOKUP: OptionSpec = OptionSpec::new("lookup", Kind::Dict(&LOOKUP_OPTIONS));

static VRF_OPTIONS: [OptionSpec; 5] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("default_via", Kind::Str),
    OptionSpec::new("default_dev", Kind::Str),
    OptionSpec::new("lookups", Kind::List(&LOOKUP)).default(DefaultValue::EmptyList),
    OptionSpec::new("forwarding", Kind::Bool).default(DefaultValue::Bool(true)),
];
static VRF: OptionSpec = OptionSpec::new("vrf", Kind::Dict(&VRF_OPTIONS));

/// Every option of the module, in the order `--argument-spec` prints them: `vrfs`, or the
/// short form: `vrf` with the same keys at the top level. The top-level `forwarding` has no
/// default here so that giving it next to `vrfs` can be refused.
pub static SPEC: [OptionSpec; 11] = [
    OptionSpec::new("vrfs", Kind::List(&VRF)),
    OptionSpec::new("vrf", Kind::Str),
    OptionSpec::new("dst", Kind::Str),
    OptionSpec::new("via", Kind::Str),
    OptionSpec::new("dev", Kind::Str),
    OptionSpec::new("not_dev", Kind::Str),
    OptionSpec::new("table", Kind::Str),
    OptionSpec::new("reachable", Kind::Bool),
    OptionSpec::new("default_via", Kind::Str),
    OptionSpec::new("default_dev", Kind::Str),
    OptionSpec::new("forwarding", Kind::Bool),
];

/// The module's arguments, as the runtime validated and coerced them.
#[derive(Debug, Deserialize)]
pub struct Params {
    pub vrfs: Option<Vec<VrfParams>>,
    pub vrf: Option<String>,
    pub dst: Option<String>,
    pub via: Option<String>,
    pub dev: Option<String>,
    pub not_dev: Option<String>,
    pub table: Option<String>,
    pub reachable: Option<bool>,
    pub default_via: Option<String>,
    pub default_dev: Option<String>,
    pub forwarding: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub struct VrfParams {
    pub name: String,
    pub default_via: Option<String>,
    pub default_dev: Option<String>,
    pub lookups: Vec<LookupParams>,
    pub forwarding: bool,
}

#[derive(Debug, Deserialize)]
pub struct LookupParams {
    pub dst: String,
    pub via: Option<String>,
    pub dev: Option<String>,
    pub not_dev: Option<String>,
    pub table: Option<String>,
    pub reachable: Option<bool>,
}

/// What must hold in one VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VrfCheck {
    pub name: String,
    pub default_route: Option<DefaultExpectation>,
    pub lookups: Vec<LookupCheck>,
    /// Check that the interfaces the checked routes leave by forward.
    pub forwarding: bool,
}

/// The VRF's own table has a usable default route through these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultExpectation {
    pub via: Option<IpAddr>,
    pub dev: Option<String>,
}

/// One destination resolved as the kernel does for traffic in the VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupCheck {
    pub dst: IpAddr,
    pub via: Option<IpAddr>,
    pub dev: Option<String>,
    pub not_dev: Option<String>,
    /// The table the answer must come from; without it, the VRF's own table (anything else is
    /// fall-through).
    pub table: Option<u32>,
    pub reachable: Option<bool>,
}

/// The checks the arguments ask for, or the message that says what to fix.
pub fn plan(params: Params) -> Result<Vec<VrfCheck>, String> {
    match (params.vrfs.is_some(), params.vrf.is_some()) {
        (true, true) => Err(
            "vrf and vrfs are mutually exclusive: give one VRF with vrf (the short form, with \
             dst, via, dev, …), or a list of VRFs with vrfs"
                .into(),
        ),
        (false, false) => Err(
            "nothing to check: give vrfs (a list of VRFs, each with name and its checks) or vrf \
             (one VRF, the short form: vrf=vrf_tdemo dst=10.20.99.5 dev=vmbr0.50)"
                .into(),
        ),
        (true, false) => {
            let short_form_keys = short_form_keys_given(&params);
            if let Some(key) = short_form_keys.first() {
                return Err(format!(
                    "{key} belongs to the short form (with vrf); with vrfs, put it inside the \
                     entry ({})",
                    match *key {
                        "default_via" | "default_dev" | "forwarding" => format!("vrfs[].{key}"),
                        _ => format!("vrfs[].lookups[].{key}"),
                    }
                ));
            }
            let entries = params.vrfs.unwrap_or_default();
            let mut seen = HashSet::new();
            let mut checks = Vec::with_capacity(entries.len());
            for (i, entry) in entries.into_iter().enumerate() {
                let location = format!("vrfs[{i}]");
                if !seen.insert(entry.name.clone()) {
                    return Err(format!(
                        "{location}.name: {} is declared twice; merge its checks into one entry",
                        entry.name
                    ));
                }
                checks.push(vrf_check(&location, entry)?);
            }
            Ok(checks)
        }
        (false, true) => short_form(params).map(|check| vec![check]),
    }
}

fn short_form_keys_given(params: &Params) -> Vec<&'static str> {
    let given = [
        ("dst", params.dst.is_some()),
        ("via", params.via.is_some()),
        ("dev", params.dev.is_some()),
        ("not_dev", params.not_dev.is_some()),
        ("table", params.table.is_some()),
        ("reachable", params.reachable.is_some()),
        ("default_via", params.default_via.is_some()),
        ("default_dev", params.default_dev.is_some()),
        ("forwarding", params.forwarding.is_some()),
    ];
    given
        .iter()
        .filter(|(_, is_given)| *is_given)
        .map(|(key, _)| *key)
        .collect()
}

fn short_form(params: Params) -> Result<VrfCheck, String> {
    let lookups = match params.dst {
        Some(dst) => vec![LookupParams {
            dst,
            via: params.via,
            dev: params.dev,
            not_dev: params.not_dev,
            table: params.table,
            reachable: params.reachable,
        }],
        None => {
            let orphan = [
                ("via", params.via.is_some()),
                ("dev", params.dev.is_some()),
                ("not_dev", params.not_dev.is_some()),
                ("table", params.table.is_some()),
                ("reachable", params.reachable.is_some()),
            ]
            .into_iter()
            .find(|(_, given)| *given);
            if let Some((key, _)) = orphan {
                return Err(format!(
                    "{key} needs dst: it is an expectation about the lookup of dst in vrf; add \
                     dst=ADDRESS, or use default_via/default_dev for the VRF's default route"
                ));
            }
            Vec::new()
        }
    };
    let entry = VrfParams {
        name: params.vrf.unwrap_or_default(),
        default_via: params.default_via,
        default_dev: params.default_dev,
        lookups,
        forwarding: params.forwarding.unwrap_or(true),
    };
    // Short-form keys sit at the top level: name them so.
    vrf_check_at(entry, |field| match field {
        "name" => "vrf".to_string(),
        "lookups[0].dst" => "dst".to_string(),
        other => other.trim_start_matches("lookups[0].").to_string(),
    })
}

fn vrf_check(location: &str, entry: VrfParams) -> Result<VrfCheck, String> {
    vrf_check_at(entry, |field| format!("{location}.{field}"))
}

fn vrf_check_at(entry: VrfParams, at: impl Fn(&str) -> String) -> Result<VrfCheck, String> {
    ifname::validate(&at("name"), &entry.name)?;
    let default_via = entry
        .default_via
        .as_deref()
        .map(|text| address(&at("default_via"), text))
        .transpose()?;
    let default_dev = entry
        .default_dev
        .map(|name| ifname::validate(&at("default_dev"), &name).map(|()| name))
        .transpose()?;
    let default_route =
        (default_via.is_some() || default_dev.is_some()).then_some(DefaultExpectation {
            via: default_via,
            dev: default_dev,
        });
    let mut lookups = Vec::with_capacity(entry.lookups.len());
    for (i, lookup) in entry.lookups.into_iter().enumerate() {
        let field = |name: &str| at(&format!("lookups[{i}].{name}"));
        let interface = |name: &str, value: Option<String>| {
            value
                .map(|v| ifname::validate(&field(name), &v).map(|()| v))
                .transpose()
        };
        lookups.push(LookupCheck {
            dst: address(&field("dst"), &lookup.dst)?,
            via: lookup
                .via
                .as_deref()
                .map(|text| address(&field("via"), text))
                .transpose()?,
            dev: interface("dev", lookup.dev)?,
            not_dev: interface("not_dev", lookup.not_dev)?,
            table: lookup
                .table
                .as_deref()
                .map(|text| table(&field("table"), text))
                .transpose()?,
            reachable: lookup.reachable,
        });
    }
    Ok(VrfCheck {
        name: entry.name,
        default_route,
        lookups,
        forwarding: entry.forwarding,
    })
}

/// One IPv4 or IPv6 address; a prefix or a name is refused with what to give instead.
fn address(location: &str, text: &str) -> Result<IpAddr, String> {
    let trimmed = text.trim();
    if let Ok(address) = trimmed.parse::<IpAddr>() {
        return Ok(address);
    }
    if let Some((base, length)) = trimmed.split_once('/') {
        if base.parse::<IpAddr>().is_ok() && length.parse::<u8>().is_ok() {
            return Err(format!(
                "{location}: '{text}' is a prefix; give one address (for a lookup, an address \
                 inside it, such as {base})"
            ));
        }
    }
    Err(format!(
        "{location}: '{text}' is not an IP address; give one IPv4 or IPv6 address, such as \
         10.20.99.5 or 2001:db8::5"
    ))
}

/// A routing table: `main`, `local`, `default` or its number, as in `ip route show table`.
fn table(location: &str, text: &str) -> Result<u32, String> {
    match text.trim() {
        "main" => Ok(254),
        "local" => Ok(255),
        "default" => Ok(253),
        number => match number.parse::<u32>() {
            Ok(id) if id > 0 => Ok(id),
            _ => Err(format!(
                "{location}: '{text}' is not a routing table; give main, local, default or a \
                 table number from 1 to 4294967295, such as 1001"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            vrfs: None,
            vrf: None,
            dst: None,
            via: None,
            dev: None,
            not_dev: None,
            table: None,
            reachable: None,
            default_via: None,
            default_dev: None,
            forwarding: None,
        }
    }

    fn lookup(dst: &str) -> LookupParams {
        LookupParams {
            dst: dst.into(),
            via: None,
            dev: None,
            not_dev: None,
            table: None,
            reachable: None,
        }
    }

    fn entry(name: &str, lookups: Vec<LookupParams>) -> VrfParams {
        VrfParams {
            name: name.into(),
            default_via: None,
            default_dev: None,
            lookups,
            forwarding: true,
        }
    }

    #[test]
    fn the_short_form_is_one_vrf_with_one_lookup() {
        let checks = plan(Params {
            vrf: Some("vrf_tdemo".into()),
            dst: Some("10.20.99.5".into()),
            dev: Some("vmbr0.50".into()),
            not_dev: Some("vmbr0".into()),
            table: Some("1001".into()),
            ..params()
        })
        .unwrap();
        assert_eq!(
            checks,
            vec![VrfCheck {
                name: "vrf_tdemo".into(),
                default_route: None,
                lookups: vec![LookupCheck {
                    dst: "10.20.99.5".parse().unwrap(),
                    via: None,
                    dev: Some("vmbr0.50".into()),
                    not_dev: Some("vmbr0".into()),
                    table: Some(1001),
                    reachable: None,
                }],
                forwarding: true,
            }]
        );
    }

    #[test]
    fn short_form_errors_name_the_top_level_key() {
        let error = plan(Params {
            vrf: Some("vrf_tdemo".into()),
            dst: Some("10.20.99.300".into()),
            ..params()
        })
        .unwrap_err();
        assert!(
            error.starts_with("dst: '10.20.99.300' is not an IP address;"),
            "{error}"
        );
        let error = plan(Params {
            vrf: Some("vrf_tdemo_is_too_long".into()),
            ..params()
        })
        .unwrap_err();
        assert!(
            error.starts_with("vrf: 'vrf_tdemo_is_too_long' is not a valid interface name"),
            "{error}"
        );
        let error = plan(Params {
            vrf: Some("vrf_tdemo".into()),
            dev: Some("vmbr0.50".into()),
            ..params()
        })
        .unwrap_err();
        assert!(error.starts_with("dev needs dst"), "{error}");
    }

    #[test]
    fn vrf_and_vrfs_together_or_neither_are_refused() {
        let error = plan(Params {
            vrf: Some("a".into()),
            vrfs: Some(vec![]),
            ..params()
        })
        .unwrap_err();
        assert!(error.starts_with("vrf and vrfs are mutually exclusive"));
        assert!(plan(params()).unwrap_err().starts_with("nothing to check"));
        let error = plan(Params {
            vrfs: Some(vec![entry("a", vec![])]),
            dst: Some("10.0.0.1".into()),
            ..params()
        })
        .unwrap_err();
        assert!(error.contains("vrfs[].lookups[].dst"), "{error}");
    }

    #[test]
    fn list_errors_name_the_entry() {
        let mut bad_table = lookup("10.0.0.1");
        bad_table.table = Some("mian".into());
        let error = plan(Params {
            vrfs: Some(vec![
                entry("a", vec![]),
                entry("b", vec![lookup("10.0.0.1"), bad_table]),
            ]),
            ..params()
        })
        .unwrap_err();
        assert_eq!(
            error,
            "vrfs[1].lookups[1].table: 'mian' is not a routing table; give main, local, default \
             or a table number from 1 to 4294967295, such as 1001"
        );
        let error = plan(Params {
            vrfs: Some(vec![entry("a", vec![lookup("10.20.99.0/24")])]),
            ..params()
        })
        .unwrap_err();
        assert!(
            error.starts_with("vrfs[0].lookups[0].dst: '10.20.99.0/24' is a prefix;"),
            "{error}"
        );
        let error = plan(Params {
            vrfs: Some(vec![entry("a", vec![]), entry("a", vec![])]),
            ..params()
        })
        .unwrap_err();
        assert!(
            error.starts_with("vrfs[1].name: a is declared twice"),
            "{error}"
        );
        let mut bad_dev = entry("a", vec![]);
        bad_dev.default_dev = Some("vmbr0:1".into());
        let error = plan(Params {
            vrfs: Some(vec![bad_dev]),
            ..params()
        })
        .unwrap_err();
        assert!(
            error.starts_with("vrfs[0].default_dev: 'vmbr0:1'"),
            "{error}"
        );
    }

    #[test]
    fn tables_by_name_or_number() {
        assert_eq!(table("t", "main"), Ok(254));
        assert_eq!(table("t", " 1001 "), Ok(1001));
        assert!(table("t", "0").is_err());
        assert_eq!(
            address("x", " fd00::1 "),
            Ok("fd00::1".parse::<IpAddr>().unwrap())
        );
    }
}
