//! The node's kernel: rtnetlink for links, routes and lookups, `/proc/sys` for forwarding and
//! rp_filter, nft (the runtime's trusted, bounded read) for the ruleset.

use crate::vrf_support::{judge, DriverEvidence, VrfSupport};
use crate::Kernel;
use deevnet_runtime::netlink::{Family, Links, Lookup, Netlink, NetlinkError, Route, RouteQuery};
use deevnet_runtime::nft::{self, Ruleset};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::path::Path;

pub struct NodeKernel {
    netlink: Netlink,
}

impl NodeKernel {
    /// Connects in the calling thread's network namespace.
    pub fn connect() -> Result<Self, NetlinkError> {
        Ok(NodeKernel {
            netlink: Netlink::connect()?,
        })
    }
}

impl Kernel for NodeKernel {
    fn links(&mut self) -> Result<Links, Failure> {
        Ok(self.netlink.links()?)
    }

    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
        Ok(self.netlink.routes(family, table)?)
    }

    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
        Ok(self.netlink.route_get(query)?)
    }

    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
        let key = match family {
            Family::V4 => SysctlKey::ipv4_conf(dev, "forwarding"),
            Family::V6 => SysctlKey::ipv6_conf(dev, "forwarding"),
        };
        Ok(key.read()?)
    }

    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        Ok(SysctlKey::ipv4_conf(dev, "rp_filter").read()?)
    }

    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        Ok(SysctlKey::ipv6_conf(dev, "force_forwarding").read()?)
    }

    fn vrf_support(&mut self) -> VrfSupport {
        judge(&driver_evidence())
    }

    fn nft_ruleset(&mut self) -> Result<Ruleset, String> {
        nft::read_ruleset(Path::new(nft::NFT))
    }
}

/// What this host shows of its vrf driver: /sys/module and /proc/modules are the kernel's
/// own, whatever the network namespace.
fn driver_evidence() -> DriverEvidence {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|text| text.trim().to_string())
        .unwrap_or_default();
    let lists: Vec<String> = ["modules.dep", "modules.builtin"]
        .iter()
        .filter_map(|name| std::fs::read_to_string(format!("/lib/modules/{release}/{name}")).ok())
        .collect();
    DriverEvidence {
        driver_present: Path::new("/sys/module/vrf").exists(),
        loads_modules: Path::new("/proc/modules").exists(),
        module_installed: (!lists.is_empty()).then(|| lists.iter().any(|text| names_vrf_ko(text))),
        release,
    }
}

/// Whether a modules.dep or modules.builtin lists the vrf driver (`kernel/drivers/net/vrf.ko`,
/// compressed or not, at the start of a line).
fn names_vrf_ko(text: &str) -> bool {
    text.lines().any(|line| {
        let path = line.split(':').next().unwrap_or_default();
        path.rsplit('/')
            .next()
            .is_some_and(|file| file == "vrf.ko" || file.starts_with("vrf.ko."))
    })
}
