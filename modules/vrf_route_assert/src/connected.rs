//! `forbidden_interfaces`: a lookup generated for every prefix connected on a forbidden
//! interface, so that checking "tenant traffic never reaches the management side by it" needs
//! no hand-picked addresses. The prefixes are the main table's connected routes (protocol
//! kernel, no gateway) on those interfaces; IPv6 link-local and multicast ones are left out.

use crate::fall_through::{is_link_scoped, NodeTables};
use crate::params::{LookupCheck, VrfCheck};
use crate::Kernel;
use deevnet_runtime::netlink::{Links, RouteKind};
use deevnet_runtime::Failure;
use ipnet::IpNet;
use std::collections::BTreeSet;
use std::net::IpAddr;

/// `rtm_protocol` of the routes the kernel adds for an interface's addresses.
const PROTOCOL_KERNEL: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedPrefix {
    pub prefix: IpNet,
    pub dev: String,
}

pub struct Generated {
    pub lookup: LookupCheck,
    pub prefix: ConnectedPrefix,
}

#[derive(Default)]
pub struct ForbiddenLookups {
    pub lookups: Vec<Generated>,
    /// Forbidden interfaces with no connected prefix, so nothing to look up.
    pub notes: Vec<String>,
}

pub fn forbidden_lookups(
    kernel: &mut impl Kernel,
    links: &Links,
    main: &mut NodeTables,
    check: &VrfCheck,
) -> Result<ForbiddenLookups, Failure> {
    let mut generated = ForbiddenLookups::default();
    for (i, dev) in check.forbidden_interfaces.iter().enumerate() {
        let Some(link) = links.by_name(dev) else {
            return Err(Failure::new(format!(
                "{}.forbidden_interfaces[{i}]: '{dev}' is no interface on this node; give the \
                 interfaces tenant traffic must never leave by as ip link names them (such as \
                 the management bridge vmbr0), or remove it",
                check.location
            )));
        };
        let before = generated.lookups.len();
        for family in check.families() {
            let own = main.own_addresses(kernel, family)?.clone();
            for route in main.routes(kernel, family)? {
                let connected = route.kind == RouteKind::Unicast
                    && route.protocol == PROTOCOL_KERNEL
                    && route.gateway.is_none()
                    && route.oif == Some(link.index)
                    && route.destination.prefix_len() > 0
                    && !is_link_scoped(&route.destination);
                if !connected {
                    continue;
                }
                generated.lookups.push(Generated {
                    lookup: LookupCheck {
                        not_dev: Some(dev.clone()),
                        ..LookupCheck::of(address_in(&route.destination, &own))
                    },
                    prefix: ConnectedPrefix {
                        prefix: route.destination,
                        dev: dev.clone(),
                    },
                });
            }
        }
        if generated.lookups.len() == before {
            let families: Vec<&str> = check.families().iter().map(|f| f.name()).collect();
            generated.notes.push(format!(
                "{}: {dev} (in forbidden_interfaces) has no connected {} prefix in the main \
                 table, so no lookup was generated for it",
                check.name,
                families.join(" or ")
            ));
        }
    }
    Ok(generated)
}

/// An address inside the prefix to look up: its first host that is not one of the node's own
/// addresses (a lookup of those is answered as local, not routed), nor the IPv6 subnet-router
/// anycast address.
pub fn address_in(prefix: &IpNet, own: &BTreeSet<IpAddr>) -> IpAddr {
    let network = prefix.network();
    let subnet_router = prefix.addr().is_ipv6() && prefix.prefix_len() < 127;
    prefix
        .hosts()
        .filter(|a| !(subnet_router && *a == network))
        .find(|a| !own.contains(a))
        .unwrap_or(network)
}
