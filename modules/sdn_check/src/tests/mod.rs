//! Unit tests on configuration files in Proxmox's formats (tests/data/<scenario>/: the
//! `.running-config`, the `.cfg` files, interfaces.d `sdn` and the node's `interfaces`), read
//! here without the file policy (the integration tests run the binary on them).

mod derive;
mod files;
mod kernel_drift;
mod node;
mod params;
mod pending;

use crate::files::Sources;
use crate::interfaces;
use crate::running_config::{self, ObjectKind};
use crate::section_config;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub(crate) fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

pub(crate) fn text(path: &str) -> String {
    std::fs::read_to_string(data(path)).unwrap()
}

/// The sources of `scenario`: its running configuration, the `.cfg` files of `cfg_dir`, its
/// `sdn` and the interfaces file `interfaces` (both in `cfg_dir`, then in `scenario`).
pub(crate) fn sources_with(scenario: &str, cfg_dir: &str, interfaces: &str) -> Sources {
    let running = running_config::parse(
        &text(&format!("{scenario}/.running-config")),
        "running_config",
    )
    .unwrap();
    let mut pending = BTreeMap::new();
    for kind in ObjectKind::ALL {
        let path = data(&format!("{cfg_dir}/{}", kind.file_name()));
        if let Ok(text) = std::fs::read_to_string(&path) {
            pending.insert(
                kind,
                section_config::parse(&text, kind.file_name()).unwrap(),
            );
        }
    }
    let sdn = std::fs::read_to_string(data(&format!("{cfg_dir}/sdn")))
        .or_else(|_| std::fs::read_to_string(data(&format!("{scenario}/sdn"))))
        .ok();
    let applied = sdn
        .as_deref()
        .map(|t| interfaces::applied_version(t, "sdn").unwrap());
    let applied_devices = sdn
        .as_deref()
        .map(interfaces::generated_devices)
        .unwrap_or_default();
    let own = interfaces::own_interfaces(&text(&format!("{scenario}/{interfaces}")), "interfaces")
        .unwrap();
    Sources {
        running,
        pending,
        applied,
        applied_devices,
        own,
    }
}

pub(crate) fn sources(scenario: &str) -> Sources {
    sources_with(scenario, scenario, "interfaces")
}
