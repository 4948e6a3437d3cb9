//! The node's side: what the checks read beyond the links (bridge VLANs, fdb, each slave's
//! driver and txvlan feature, the bridge's IPv6 switch, the bond's configured slaves from the
//! interfaces file) and the one change the module makes, txvlan switched off on bond slaves.

use crate::guest_ports::{guard_commands, Ruleset};
use crate::interfaces::{configured_slaves, ConfiguredSlaves};
use crate::{Observed, Request, SlaveState, Stack};
use deevnet_runtime::file_policy;
use deevnet_runtime::netlink::ethtool::Ethtool;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::nft;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::{Context, Failure};
use std::collections::BTreeMap;
use std::path::Path;

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
    read_nftables: bool,
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
        ruleset: if read_nftables {
            read_ruleset(Path::new(NFT))
        } else {
            Ruleset::default()
        },
        guard_changed: false,
    })
}

pub use nft::NFT;

/// The ruleset as the runtime's reader reads it ([`nft::read_ruleset`]: nft run only when it
/// is root's, bounded in time and output; each table's flags by the runtime's policy).
/// Whatever goes wrong is a reason, not a failure: the guest ports then count as not covered
/// by a rule.
pub fn read_ruleset(nft: &Path) -> Ruleset {
    match nft::read_ruleset(nft) {
        Ok(ruleset) => Ruleset::Read(ruleset),
        Err(why) => Ruleset::NotRead(why),
    }
}

/// Puts the guard's table in place ([`guard_commands`]), in one nft transaction.
pub fn install_guard(nft: &Path) -> Result<(), String> {
    nft::run(nft, &[&guard_commands()]).map(|_| ())
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
