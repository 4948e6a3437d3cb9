//! The NAT prediction (`snat_src`) against real nft 1.0.6 in namespaces each test makes for
//! itself (needs root): hv02 in miniature (see in_namespace.rs) with Proxmox's SNAT for the
//! tenant subnet on the transit interface, read in-process and through the binary.

use crate::in_namespace::{fix_routes, hv02, Namespace};
use serde_json::{json, Value};
use std::io::Write;
use std::process::Stdio;
use vrf_route_assert::params::{ExpectedTable, LookupCheck, VrfCheck};

/// Loads `ruleset` (nft's text) into the namespace.
fn nft(ns: &Namespace, ruleset: &str) {
    let mut child = ns
        .command("nft")
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ruleset.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "nft -f of {ruleset}");
}

/// Proxmox's SNAT of the tenant subnet leaving by the transit interface, as nft text.
const TENANT_SNAT: &str = "table ip nat {
    chain POSTROUTING {
        type nat hook postrouting priority srcnat; policy accept;
        ip saddr 10.77.0.0/24 oifname \"vmbr0.50\" counter masquerade
    }
}";

fn snat_lookup(dst: &str, src: &str) -> LookupCheck {
    LookupCheck {
        table: Some(ExpectedTable::Any),
        snat_src: Some(src.parse().unwrap()),
        ..LookupCheck::of(dst.parse().unwrap())
    }
}

#[test]
fn the_tenant_s_workload_leaving_by_the_transit_interface_is_predicted_translated() {
    let ns = hv02();
    fix_routes(&ns);
    nft(&ns, TENANT_SNAT);
    let checks = vec![VrfCheck {
        lookups: vec![
            snat_lookup("203.0.113.8", "10.77.0.250"),
            snat_lookup("198.51.100.5", "10.78.0.250"),
        ],
        forwarding: false,
        ..VrfCheck::new("vrf_tdemo")
    }];
    let report = ns.assert(checks.clone());
    let snat = |dst: &str| {
        let check = report
            .checks
            .iter()
            .find(|c| c.check == format!("lookup {dst}"));
        check.unwrap().actual["snat"].clone()
    };
    assert_eq!(
        snat("203.0.113.8"),
        json!({"src": "10.77.0.250", "translated": true,
               "why": "a source NAT rule of ip nat POSTROUTING matches"})
    );
    assert_eq!(snat("198.51.100.5")["translated"], json!(false));

    // The table dormant: its masquerade translates nothing, so no NAT can be counted on.
    nft(&ns, "table ip nat { flags dormant; }");
    let dormant = ns.assert(checks.clone());
    let internet = dormant
        .checks
        .iter()
        .find(|c| c.check == "lookup 203.0.113.8");
    assert_eq!(
        internet.unwrap().actual["snat"]["why"],
        json!(
            "not evaluated: table ip nat is dormant (flags dormant), so its chains see no packet"
        )
    );
    nft(&ns, &format!("delete table ip nat\n{TENANT_SNAT}"));

    // A rule the walk cannot read ahead of the SNAT: unknown, never "no NAT".
    ns.command("nft")
        .args(["insert rule ip nat POSTROUTING ct mark 0x1 accept"])
        .status()
        .unwrap();
    let report = ns.assert(checks);
    for check in report
        .checks
        .iter()
        .filter(|c| c.check.starts_with("lookup"))
    {
        assert_eq!(check.actual["snat"]["translated"], Value::Null, "{check:?}");
        assert!(
            check.actual["snat"]["why"]
                .as_str()
                .unwrap()
                .starts_with("not evaluated: chain ip nat POSTROUTING: rule handle"),
            "{check:?}"
        );
    }
}

#[test]
fn the_binary_answers_source_nat_per_lookup_and_documents_it_in_its_result() {
    let ns = hv02();
    nft(&ns, TENANT_SNAT);
    let args = json!({"vrfs": [{"name": "default", "lookups": [
        {"dst": "203.0.113.8", "table": "any", "snat_src": "10.77.0.250"},
        {"dst": "10.20.50.1", "table": "any", "snat_src": "10.77.0.250"},
        {"dst": "10.20.50.1", "table": "any"},
    ]}]});
    let result = ns.run_module(args.clone());
    assert!(result.get("failed").is_none(), "{result}");
    let lookups: Vec<&Value> = result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"].as_str().unwrap().starts_with("lookup"))
        .collect();
    // The node's default leaves by vmbr0, where nothing translates; the transit by vmbr0.50.
    assert_eq!(lookups[0]["actual"]["dev"], json!("vmbr0"));
    assert_eq!(lookups[0]["actual"]["snat"]["translated"], json!(false));
    assert_eq!(lookups[1]["actual"]["dev"], json!("vmbr0.50"));
    assert_eq!(lookups[1]["actual"]["snat"]["translated"], json!(true));
    assert!(lookups[2]["actual"].get("snat").is_none());

    ns.command("nft").args(["flush ruleset"]).status().unwrap();
    let result = ns.run_module(args);
    let translated: Vec<&Value> = result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["actual"].get("snat"))
        .map(|snat| &snat["translated"])
        .collect();
    assert_eq!(translated, [&json!(false), &json!(false)]);
}
