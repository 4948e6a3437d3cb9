//! What the module read from the node beyond the links: bridge VLANs, fdb, each slave's
//! driver and txvlan feature, the bridge's IPv6 switch, the bond's configured slaves.

use crate::guest_ports::Ruleset;
use deevnet_runtime::netlink::ethtool::Feature;
use deevnet_runtime::netlink::{FdbEntry, PortVlans};
use std::collections::BTreeMap;

/// What the module read from the node, beyond the links.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub port_vlans: Vec<PortVlans>,
    pub fdb: Vec<FdbEntry>,
    /// Each slave's driver and txvlan feature, by slave name.
    pub slaves: BTreeMap<String, SlaveState>,
    /// `net.ipv6.conf.BRIDGE.disable_ipv6`; `None` when the kernel has no IPv6.
    pub bridge_disable_ipv6: Option<String>,
    /// The slaves `interfaces_file` lists for the bond ([`crate::interfaces`]).
    pub configured_slaves: Vec<String>,
    /// The bridge-family nftables rules, read when a guest port is to be audited.
    pub ruleset: Ruleset,
    /// This run put the guest VLAN guard in place (or would, in check mode).
    pub guard_changed: bool,
}

/// One bond slave's driver and the state of the feature that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaveState {
    pub driver: Option<String>,
    pub feature: Feature,
    /// This run switched it off (or would, in check mode).
    pub changed: bool,
}
