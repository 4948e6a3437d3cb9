//! Guests at the zone's MTU: every guest port of the zone bridge (by Proxmox VE's names,
//! [`guest_name`](crate::guest_ports::guest_name)) whose MTU differs from the zone's. Proxmox VE
//! sets a guest port's MTU when it plugs it, at the guest's start, so after the zone's MTU
//! changes a guest started before keeps the old one: a port below the zone drops the zone's
//! full-size frames toward the guest, one above lets the guest send frames the zone drops.
//! The zone's MTU is `zone_mtu` when given, the zone bridge's own MTU otherwise ([`audit`]).

use crate::guest_ports::GuestName;
use deevnet_runtime::netlink::Link;
use serde::Serialize;

/// One guest port not at the zone's MTU (`guest_mtu.ports` in the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuestMtuFinding {
    pub port: String,
    /// `tap`, `veth`, `fwpr` or `fwln`.
    pub kind: &'static str,
    pub vmid: u32,
    /// The guest's NIC, `net<nic>` in its configuration.
    pub nic: u32,
    /// `null` when the kernel reported none.
    pub mtu: Option<u32>,
    pub fix: String,
}

/// `guest_mtu` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuestMtuReport {
    /// The zone bridge.
    pub bridge: String,
    /// The MTU the guest ports are held to; `null` when neither `zone_mtu` nor the bridge gives
    /// one.
    pub zone_mtu: Option<u32>,
    /// Where [`Self::zone_mtu`] comes from: `zone_mtu` (the option) or `bridge` (the zone
    /// bridge's MTU).
    pub zone_mtu_from: &'static str,
    /// How many guest ports the bridge has, each compared.
    pub checked: usize,
    /// How many are not at the zone's MTU: the length of [`Self::ports`].
    pub count: usize,
    pub ports: Vec<GuestMtuFinding>,
}

/// Compares each of `guests` (the zone bridge's guest ports) with the zone's MTU: `zone_mtu`, or
/// when not given `bridge`'s own MTU.
pub fn audit(bridge: &Link, guests: &[(Link, GuestName)], zone_mtu: Option<u32>) -> GuestMtuReport {
    let (zone, zone_mtu_from) = match zone_mtu {
        Some(mtu) => (Some(mtu), "zone_mtu"),
        None => (bridge.mtu, "bridge"),
    };
    let ports: Vec<GuestMtuFinding> = match zone {
        None => Vec::new(),
        Some(zone) => guests
            .iter()
            .filter(|(port, _)| port.mtu != Some(zone))
            .map(|(port, guest)| GuestMtuFinding {
                port: port.name.clone(),
                kind: guest.kind,
                vmid: guest.vmid,
                nic: guest.nic,
                mtu: port.mtu,
                fix: crate::fix::guest_mtu(guest, &bridge.name, zone, bridge.mtu == Some(zone)),
            })
            .collect(),
    };
    GuestMtuReport {
        bridge: bridge.name.clone(),
        zone_mtu: zone,
        zone_mtu_from,
        checked: guests.len(),
        count: ports.len(),
        ports,
    }
}

impl GuestMtuFinding {
    /// `tap100i0 (VM 100, MTU 1500)`.
    pub fn brief(&self) -> String {
        format!(
            "{} ({} {}, MTU {})",
            self.port,
            guest_word(self.kind),
            self.vmid,
            self.mtu
                .map(|m| m.to_string())
                .unwrap_or_else(|| "not reported".into())
        )
    }
}

impl GuestMtuReport {
    /// The count for the run's message: how many guest ports differ from the zone's MTU, of how
    /// many, naming each.
    pub fn summary(&self) -> String {
        let guests = |n: usize| format!("{n} guest interface{}", if n == 1 { "" } else { "s" });
        match self.zone_mtu {
            _ if self.checked == 0 => format!("no guest interface on {}", self.bridge),
            None => format!(
                "{} on {} not compared: the zone's MTU is unknown",
                guests(self.checked),
                self.bridge
            ),
            Some(zone) if self.count == 0 => format!(
                "{} on {} at the zone MTU {zone}",
                guests(self.checked),
                self.bridge
            ),
            Some(zone) => {
                let named: Vec<String> = self.ports.iter().map(GuestMtuFinding::brief).collect();
                format!(
                    "{} of {} on {} not at the zone MTU {zone}: {}",
                    self.count,
                    guests(self.checked),
                    self.bridge,
                    named.join(", ")
                )
            }
        }
    }
}

/// What a guest port's kind says about the guest: a tap is a VM's, a veth a container's, a
/// firewall port either's.
pub fn guest_word(kind: &str) -> &'static str {
    match kind {
        "tap" => "VM",
        "veth" => "container",
        _ => "VM or container",
    }
}
