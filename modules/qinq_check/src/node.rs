//! The node's side: what the checks read beyond the links (bridge VLANs, fdb, each slave's
//! driver and txvlan feature, the bridge's IPv6 switch, the bond's configured slaves from the
//! interfaces file) and the one change the module makes, txvlan switched off on bond slaves.

use crate::interfaces::{configured_slaves, ConfiguredSlaves};
use crate::{Observed, Request, SlaveState, Stack};
use deevnet_runtime::file_policy;
use deevnet_runtime::netlink::ethtool::Ethtool;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::{Context, Failure};
use std::collections::BTreeMap;

/// The slaves the interfaces file lists for the bond, read by the file policy: a file another
/// user than root could have written is refused (its names reach a root udev rule); a missing
/// file lists none.
pub fn read_configured_slaves(request: &Request) -> Result<ConfiguredSlaves, Failure> {
    let text = file_policy::read_trusted("interfaces_file", &request.interfaces_file)?;
    Ok(configured_slaves(
        text.as_deref().unwrap_or_default(),
        &request.bond,
        &request.interfaces_file.display().to_string(),
    ))
}

/// Reads what the checks need beyond the links.
pub fn observe(
    netlink: &Netlink,
    ethtool: &mut Ethtool,
    stack: &Stack,
    configured_slaves: Vec<String>,
) -> Result<Observed, Failure> {
    let feature = stack.txvlan_feature();
    let mut slaves = BTreeMap::new();
    for (slave, _) in &stack.slaves {
        slaves.insert(
            slave.name.clone(),
            SlaveState {
                driver: ethtool.driver(&slave.name)?,
                feature: ethtool.features(&slave.name)?.get(feature),
                changed: false,
            },
        );
    }
    let disable_ipv6 = SysctlKey::ipv6_conf(&stack.bridge.name, "disable_ipv6");
    Ok(Observed {
        port_vlans: netlink.bridge_vlans()?,
        fdb: netlink.fdb(stack.bridge.index)?,
        slaves,
        bridge_disable_ipv6: disable_ipv6.read()?,
        configured_slaves,
    })
}

/// Switches the feature off on each named slave (in check mode, only records that it would)
/// and reads it back: a driver may accept the request and keep the feature on.
pub fn switch_txvlan_off(
    ctx: &Context,
    ethtool: &mut Ethtool,
    stack: &Stack,
    observed: &mut Observed,
    names: &[String],
) -> Result<(), Failure> {
    let feature = stack.txvlan_feature();
    for name in names {
        if !ctx.check_mode {
            ethtool.set_feature(name, feature, false)?;
        }
        let after = if ctx.check_mode {
            let mut predicted = observed.slaves.get(name).map(|s| s.feature);
            if let Some(feature) = predicted.as_mut() {
                feature.active = false;
            }
            predicted
        } else {
            Some(ethtool.features(name)?.get(feature))
        };
        if let (Some(state), Some(after)) = (observed.slaves.get_mut(name), after) {
            state.changed = !after.active;
            state.feature = after;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Params;
    use std::os::unix::fs::PermissionsExt;

    fn request(interfaces_file: std::path::PathBuf) -> Request {
        Request::from_params(Params {
            bond: "bond0".into(),
            uplink_vlan: 40,
            bridge: "vmbr1".into(),
            vlans: vec!["199-299".into()],
            interfaces_file,
            ..Params::default()
        })
        .unwrap()
    }

    /// The configured slaves come from root's file only; a file another user could have
    /// written fails the run, naming the option and why; a missing file lists none.
    #[test]
    fn configured_slaves_are_read_from_roots_file_only() {
        if !nix::unistd::geteuid().is_root() {
            return; // ownership can only be given away as root
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("interfaces");
        let missing = read_configured_slaves(&request(file.clone())).unwrap();
        assert_eq!(missing, ConfiguredSlaves::default());
        std::fs::write(
            &file,
            "iface bond0 inet manual\n\tbond-slaves eno1 eno[2]\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let found = read_configured_slaves(&request(file.clone())).unwrap();
        assert_eq!(found.names, ["eno1"]);
        assert_eq!(found.left_out.len(), 1);
        nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        let refused = read_configured_slaves(&request(file.clone())).unwrap_err();
        assert!(
            refused.msg.starts_with(&format!(
                "interfaces_file={} could have been written by another user than root (the file {} is owned by ",
                file.display(),
                file.display()
            )),
            "{refused}"
        );
    }
}
