//! The node's kernel: rtnetlink for links, routes and lookups, `/proc/sys` for forwarding and rp_filter.

use crate::Kernel;
use deevnet_runtime::netlink::{Family, Links, Lookup, Netlink, NetlinkError, Route, RouteQuery};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;

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
}
