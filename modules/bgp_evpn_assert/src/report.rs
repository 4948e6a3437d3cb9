//! What the module reports ([`Report`]: every result key besides `changed` and `msg`, declared
//! once for success and failure; RETURN in collection/plugins/modules/bgp_evpn_assert.py), and
//! its message. Pure.

use serde::Serialize;
use std::collections::BTreeMap;

/// One thing FRR reports that differs from what was asked, with its fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The peer (`peer swp1 in VRF default`) or the VNI (`VNI 10001`).
    pub object: String,
    pub expected: String,
    pub found: String,
    pub fix: String,
}

impl Finding {
    pub fn line(&self) -> String {
        format!(
            "{}: expected {}, found {}; {}",
            self.object, self.expected, self.found, self.fix
        )
    }
}

/// The default route per family: `null` when it was not asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DefaultReceived {
    pub ipv4: Option<bool>,
    pub ipv6: Option<bool>,
}

/// One neighbor as FRR reports it (a peer group's members each have one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeerReport {
    pub peer: String,
    pub vrf: String,
    /// The peer group it was found through, if it was named by its group.
    pub peer_group: Option<String>,
    pub state: String,
    pub remote_as: Option<u32>,
    pub local_as: Option<u32>,
    /// The families negotiated with it (ipv4_unicast, ipv6_unicast, l2vpn_evpn).
    pub address_families: Vec<String>,
    pub last_reset: Option<String>,
    pub last_notification: Option<String>,
    /// Accepted prefixes per activated family.
    pub prefixes_received: BTreeMap<String, u64>,
    pub default_received: DefaultReceived,
    /// /32 and /128 advertised to it; `null` unless `advertises: aggregates_only`.
    pub advertised_host_routes: Option<Vec<String>>,
    /// A default advertised to it; `null` unless `advertises: aggregates_only`.
    pub advertised_default: Option<bool>,
}

/// One expected VNI as FRR reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VniReport {
    pub vni: u32,
    /// "L2" or "L3"; `null` when FRR does not have the VNI.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub vrf: Option<String>,
    pub remote_vteps: Vec<String>,
}

/// The result keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub peers: Vec<PeerReport>,
    pub vnis: Vec<VniReport>,
    pub findings: Vec<Finding>,
}

impl Report {
    /// `msg` when every check passed.
    pub fn summary(&self) -> String {
        let established = self.peers.len();
        format!(
            "{established} BGP session{} Established with the expected address families, routes and AS; {} VNI{} present with the expected VTEPs",
            if established == 1 { "" } else { "s" },
            self.vnis.len(),
            if self.vnis.len() == 1 { "" } else { "s" }
        )
    }

    /// One line per finding.
    pub fn finding_lines(&self) -> Vec<String> {
        self.findings.iter().map(Finding::line).collect()
    }
}
