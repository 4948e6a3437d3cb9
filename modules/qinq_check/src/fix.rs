//! What each failed check tells the operator to do, one function per rule, so that each wording
//! lives here only. Two rules hold for all of them, after the Cozystack guide and the role:
//! - the change is made now on the running node and persisted where the node reads it at boot;
//! - only the interfaces concerned are brought up (`ifup IFACE`): never a reload of the whole
//!   network configuration, which on a node with stale entries re-applies them all, and never a
//!   `post-up` line, since the role persists the offload with a udev rule.

/// The udev rule the role writes (roles/proxmox_node_network/tasks/qinq_uplink.yml) to keep the
/// tag-insertion offload off on every NIC under the uplink.
pub const UDEV_RULE: &str = "/etc/udev/rules.d/70-deevnet-qinq-txvlan-off.rules";

/// How the role is run for this section: its tag, and the setting that persists the offload.
const ROLE_RUN: &str = "the role proxmox_node_network with --tags qinq-uplink and fix_txvlan: true";

/// The uplink VLAN device is down or missing from the kernel.
pub fn bring_up(parent: &str, uplink: &str) -> String {
    format!("bring up only these interfaces: ifup {parent} {uplink}")
}

/// A port (the uplink or a trunk) is not a port of the zone bridge.
pub fn bridge_port(port: &str, bridge: &str) -> String {
    format!(
        "ip link set {port} master {bridge} now, and list {port} in bridge-ports of {bridge}'s stanza in /etc/network/interfaces"
    )
}

/// The zone bridge does not filter VLANs.
pub fn vlan_filtering(bridge: &str) -> String {
    format!(
        "ip link set {bridge} type bridge vlan_filtering 1 now, and bridge-vlan-aware yes in {bridge}'s stanza in /etc/network/interfaces"
    )
}

/// Zone VLANs missing on a port.
pub fn vlans_missing(port: &str, missing: &str) -> String {
    format!("bridge vlan add dev {port} vid {missing} (bridge-vids in /etc/network/interfaces)")
}

/// Zone VLANs sent untagged on a port.
pub fn vlans_untagged(port: &str, untagged: &str) -> String {
    format!("bridge vlan add dev {port} vid {untagged} (tagged: without 'untagged')")
}

/// A bond without a slave.
pub fn enslave(bond: &str) -> String {
    format!(
        "list the uplink NICs in bond-slaves of {bond}'s stanza in /etc/network/interfaces, then bring up only the bond: ifup {bond}"
    )
}

/// The tag-insertion offload is on, and the driver can switch it.
pub fn txvlan_off(nic: &str, feature: &str) -> String {
    format!(
        "switch it off and keep it off: {ROLE_RUN} (it writes the udev rule {UDEV_RULE}); now only: this module with fix_txvlan=true, or ethtool -K {nic} {feature} off"
    )
}

/// The tag-insertion offload is fixed on by the driver.
pub fn txvlan_fixed(nic: &str) -> String {
    format!("the driver cannot switch it off: move {nic} to a NIC whose driver can")
}

/// The zone MTU is more than the uplink VLAN device allows.
pub fn zone_mtu(uplink: &str, parent: &str, needed: u32, allowed: u32) -> String {
    format!("raise the MTU of {uplink} (and {parent}) to {needed}, or lower zone_mtu to {allowed}")
}

/// A hop's MTU is short.
pub fn hop_mtu(link: &str, required: u32) -> String {
    format!(
        "ip link set {link} mtu {required} now, and mtu {required} in {link}'s stanza in /etc/network/interfaces"
    )
}

/// Frames from the far side arrive without their inner tag.
pub const FAR_SIDE_TAG_LOST: &str = "the far side's frames arrive without their inner tag: switch the tag-insertion offload off on every NIC under the far host's uplink, and keep it off: the role proxmox_node_network with --tags qinq-uplink and fix_txvlan: true there";

/// A peer was not learned at all.
pub const PEER_SILENT: &str =
    "make the peer send (ping it), then check its VLAN and the uplink's VLANs";

/// The zone bridge has IPv6 on.
pub fn bridge_ipv6(bridge: &str) -> String {
    format!(
        "sysctl -w net.ipv6.conf.{bridge}.disable_ipv6=1 now; the role's qinq-uplink tag persists it in /etc/sysctl.d"
    )
}

/// The name patterns of guest ports, each in two rules of [`GUEST_VLAN_RULE`] (one per tag type).
pub const GUEST_NAME_PATTERNS: [&str; 4] = ["tap*", "veth*", "fwpr*", "fwln*"];

/// The bridge-family nftables table that keeps guests' tagged frames off the uplink, as the
/// operator writes it and as `guest_vlan_guard` installs it. One name pattern and one tag type
/// per rule, no set: in a set (`iifname { "tap*", ... }`) nft 1.0.6 prints a literal `"tap\*"`
/// as `"tap*"`, so the audit could not tell the guard from a rule that matches no guest; and
/// nft 1.0.6's `-j list ruleset` aborts on this table set dormant when each rule holds an
/// anonymous set of tag types (`ether type { 8021q, 8021ad }`).
pub const GUEST_VLAN_RULE: &str = "table bridge deevnet_guest_vlan { chain prerouting { type filter hook prerouting priority -300; iifname \"tap*\" ether type 8021q drop; iifname \"tap*\" ether type 8021ad drop; iifname \"veth*\" ether type 8021q drop; iifname \"veth*\" ether type 8021ad drop; iifname \"fwpr*\" ether type 8021q drop; iifname \"fwpr*\" ether type 8021ad drop; iifname \"fwln*\" ether type 8021q drop; iifname \"fwln*\" ether type 8021ad drop; }; }";

/// A guest port can send 802.1Q/802.1ad frames onto the uplink through `bridge`.
pub fn guest_port(bridge: &str, host_vlans: &[u16]) -> String {
    let vlans: Vec<String> = host_vlans.iter().map(u16::to_string).collect();
    format!(
        "drop guests' 802.1Q and 802.1ad frames with bridge-family nftables rules loaded at boot (in /etc/nftables.conf with nftables.service enabled): {GUEST_VLAN_RULE}; or make {bridge} VLAN-aware (bridge-vlan-aware yes) with bridge-vids that exclude VLAN {}",
        vlans.join(", ")
    )
}

/// A guest's port on the zone bridge is not at the zone's MTU. Proxmox VE sets a tap's (and the
/// firewall ports') MTU when it plugs them, at the guest's start: a running guest keeps the MTU
/// of its start until it starts again, and the NIC's `mtu=` also tells a VirtIO NIC inside the
/// guest. `follows_bridge`: the bridge's MTU is the zone's, so `mtu=1` (the bridge's) fits too.
pub fn guest_mtu(
    guest: &crate::guest_ports::GuestName,
    bridge: &str,
    zone_mtu: u32,
    follows_bridge: bool,
) -> String {
    let (vmid, nic) = (guest.vmid, guest.nic);
    let or_bridge = if follows_bridge {
        ", or mtu=1 to follow the bridge"
    } else {
        ""
    };
    let vm = format!(
        "qm set {vmid} --net{nic} <model>=<mac>,bridge={bridge},...,mtu={zone_mtu} (net{nic}'s other settings as qm config {vmid} shows them{or_bridge}), then qm reboot {vmid}"
    );
    let container = format!(
        "pct set {vmid} --net{nic} name=<name>,bridge={bridge},...,mtu={zone_mtu} (net{nic}'s other settings as pct config {vmid} shows them), then pct reboot {vmid}"
    );
    let restart = "a running guest keeps the MTU Proxmox gave its ports when it started";
    match guest.kind {
        "tap" => format!("set VM {vmid}'s NIC to the zone's MTU and start it again: {vm}; {restart}"),
        "veth" => format!("set container {vmid}'s NIC to the zone's MTU and start it again: {container}; {restart}"),
        _ => format!(
            "set VM or container {vmid}'s NIC (behind its firewall bridge fwbr{vmid}i{nic}) to the zone's MTU and start it again: a VM with {vm}, a container with {container}; {restart}"
        ),
    }
}
