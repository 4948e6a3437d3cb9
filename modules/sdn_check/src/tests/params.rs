//! Each option checked on its own: the error names the option, the value and the fix.

use crate::params::{DriftPolicy, Files, Params, Request};
use std::path::PathBuf;

fn params() -> Params {
    Params {
        node: None,
        files: Files {
            running_config: "/etc/pve/sdn/.running-config".into(),
            config_dir: "/etc/pve/sdn".into(),
            interfaces_sdn: "/etc/network/interfaces.d/sdn".into(),
            interfaces: "/etc/network/interfaces".into(),
        },
        kernel: true,
        drift: DriftPolicy::Fail,
    }
}

#[test]
fn defaults_and_a_node_name_are_accepted() {
    let request = Request::from_params(Params {
        node: Some("hv-02".into()),
        ..params()
    })
    .unwrap();
    assert_eq!(request.node.as_deref(), Some("hv-02"));
    assert!(request.kernel);
}

#[test]
fn a_node_name_with_a_domain_or_odd_characters_is_refused() {
    for bad in ["hv02.example.org", "", "-hv", "hv 02", "hv/02"] {
        let error = Request::from_params(Params {
            node: Some(bad.into()),
            ..params()
        })
        .unwrap_err();
        assert_eq!(
            error,
            format!("node: '{bad}' is not a Proxmox node name (letters, digits and '-', no domain); give the name `pvecm nodes` shows, e.g. hv02, or leave node out for this host")
        );
    }
}

#[test]
fn relative_paths_are_refused_naming_the_option() {
    let mut relative = params();
    relative.files.config_dir = PathBuf::from("pve/sdn");
    let error = Request::from_params(relative).unwrap_err();
    assert_eq!(
        error,
        "config_dir: 'pve/sdn' is not an absolute path; give the full path, e.g. /etc/pve/sdn"
    );
}
