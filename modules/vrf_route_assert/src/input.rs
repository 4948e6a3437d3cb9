//! Lookups on the input path (`iif`): a packet arriving by an interface, as the kernel routes
//! it (`ip route get DST from SRC iif DEV`).
//!
//! The kernel ignores RTA_OIF on that path, so the VRF device is never sent: the lookup is in
//! the VRF of the arrival device (for a port of a VRF, the l3mdev rule matches on it, as for a
//! real packet), and the answer comes from that VRF's table, or main for the default VRF.
//!
//! Two refusals come back as errnos that mean something else too, so the arrival device's
//! sysctls are read to tell them apart (the kernel's `ip_route_input_slow`, measured on 6.18):
//! forwarding off answers EHOSTUNREACH, as an unreachable route does; the reverse-path filter
//! answers EINVAL (EXDEV before 6.13), as a blackhole route and a martian do. IPv6 has no
//! reverse-path filter, and its route lookup does not read forwarding at all (`ip6_forward`
//! does, afterwards), so a route it answers is checked against the forwarding sysctls here.

use crate::lookup::Answer;
use crate::params::LookupCheck;
use crate::Kernel;
use deevnet_runtime::netlink::{Family, Links, Lookup, Refusal, Route, RouteKind, RouteQuery};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::net::IpAddr;

pub const MAIN_TABLE: u32 = 254;

/// The VRF an arrival device puts the lookup in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrivalVrf {
    pub name: String,
    pub index: u32,
    pub table: u32,
}

/// Where an input lookup's packet arrives: the interface, and the VRF it is in (the VRF device
/// itself, or the one it is a port of); `vrf` is `None` for the default VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    pub iif: String,
    pub index: u32,
    pub vrf: Option<ArrivalVrf>,
}

impl Arrival {
    /// The interface named `iif`, or `None` when the node has none.
    pub fn of(links: &Links, iif: &str) -> Option<Self> {
        let link = links.by_name(iif)?;
        let vrf_link = match link.is_vrf() {
            true => Some(link),
            false => link
                .controller
                .and_then(|index| links.by_index(index))
                .filter(|controller| controller.is_vrf()),
        };
        let vrf = vrf_link.and_then(|vrf| {
            vrf.vrf_table.map(|table| ArrivalVrf {
                name: vrf.name.clone(),
                index: vrf.index,
                table,
            })
        });
        Some(Arrival {
            iif: iif.to_string(),
            index: link.index,
            vrf,
        })
    }

    /// The table whose answers are the arrival VRF's own: its table, main for the default VRF.
    pub fn own_table(&self) -> u32 {
        self.vrf.as_ref().map_or(MAIN_TABLE, |vrf| vrf.table)
    }

    /// The arrival VRF, as the messages name it.
    pub fn vrf_name(&self) -> String {
        match &self.vrf {
            Some(vrf) => vrf.name.clone(),
            None => "the default VRF".to_string(),
        }
    }

    /// The output lookup of `address` in the arrival VRF (`ip route get ADDRESS vrf NAME`).
    fn output_query(&self, address: IpAddr) -> RouteQuery {
        RouteQuery {
            oif: self.vrf.as_ref().map(|vrf| vrf.index),
            ..RouteQuery::to(address)
        }
    }
}

/// The arrival device does not forward the packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotForwarded {
    pub family: Family,
    /// The sysctls that decide, as the kernel reads them, with their values.
    pub sysctls: Vec<(SysctlKey, Option<String>)>,
}

/// The arrival device's reverse-path filter drops the packet's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReversePath {
    pub all: Option<String>,
    pub own: Option<String>,
    /// The larger of the two, as the kernel applies it; `None` when one is unreadable.
    pub effective: Option<u8>,
    /// Where the node routes the source back (the path the filter compares with `iif`).
    pub route_back: Lookup,
}

/// The larger of `all` and the interface's rp_filter, as the kernel applies it.
pub fn effective_rp_filter(all: Option<&str>, own: Option<&str>) -> Option<u8> {
    let level = |value: Option<&str>| value.and_then(|v| v.trim().parse::<u8>().ok());
    Some(level(all)?.max(level(own)?))
}

/// The input lookup of `lookup` (which has `src`) arriving by `arrival`, with the refusals the
/// errno cannot tell apart decided from the arrival device's sysctls.
pub fn answer(
    kernel: &mut impl Kernel,
    arrival: &Arrival,
    lookup: &LookupCheck,
) -> Result<Answer, Failure> {
    let query = RouteQuery {
        source: lookup.src,
        iif: Some(arrival.index),
        ..RouteQuery::to(lookup.dst)
    };
    match (Family::of(&lookup.dst), kernel.route_get(&query)?) {
        (Family::V4, Lookup::Refused(Refusal::Unreachable)) => ipv4_forwarding(kernel, arrival),
        (Family::V4, Lookup::Refused(refusal @ (Refusal::Blackhole | Refusal::ReversePath))) => {
            ipv4_invalid(kernel, arrival, lookup, refusal)
        }
        (Family::V6, Lookup::Route(route)) if route.kind == RouteKind::Unicast => {
            ipv6_forwarding(kernel, arrival, route)
        }
        (_, answer) => Ok(Answer::Kernel(answer)),
    }
}

/// EHOSTUNREACH: the kernel answers it for an unreachable route, and for a packet it would
/// forward when the arrival device's forwarding is off (`IN_DEV_FORWARD`, the device's own
/// value: writing `all` sets every device's). With forwarding on, the route is unreachable.
/// With it off, an unreachable route answers the same, but nothing arriving there is forwarded
/// anyway, so forwarding is the finding to fix first.
fn ipv4_forwarding(kernel: &mut impl Kernel, arrival: &Arrival) -> Result<Answer, Failure> {
    let value = kernel.forwarding(Family::V4, &arrival.iif)?;
    if value.as_deref() == Some("1") {
        return Ok(Answer::Kernel(Lookup::Refused(Refusal::Unreachable)));
    }
    let key = SysctlKey::ipv4_conf(&arrival.iif, "forwarding");
    Ok(Answer::NotForwarded(NotForwarded {
        family: Family::V4,
        sysctls: vec![(key, value)],
    }))
}

/// EINVAL (or EXDEV): the errno alone would take a blackhole route for the reverse-path filter.
/// The kernel checks the destination's route before the source, so the destination's output
/// lookup in the arrival VRF finds a blackhole first; otherwise the arrival device's effective
/// rp_filter decides: on, the filter dropped the source (EXDEV says so on any kernel); off, the
/// kernel refused a martian address.
fn ipv4_invalid(
    kernel: &mut impl Kernel,
    arrival: &Arrival,
    lookup: &LookupCheck,
    refusal: Refusal,
) -> Result<Answer, Failure> {
    if refusal == Refusal::Blackhole {
        let to_dst = kernel.route_get(&arrival.output_query(lookup.dst))?;
        if to_dst == Lookup::Refused(Refusal::Blackhole) {
            return Ok(Answer::Kernel(to_dst));
        }
    }
    let all = kernel.rp_filter("all")?;
    let own = kernel.rp_filter(&arrival.iif)?;
    let effective = effective_rp_filter(all.as_deref(), own.as_deref());
    if refusal == Refusal::Blackhole && effective == Some(0) {
        return Ok(Answer::Martian);
    }
    // Where the source goes back, for the message: the path the filter compared with iif.
    let route_back = match lookup.src {
        Some(src) => kernel.route_get(&arrival.output_query(src))?,
        None => Lookup::Refused(Refusal::NoRoute),
    };
    Ok(Answer::ReversePath(ReversePath {
        all,
        own,
        effective,
        route_back,
    }))
}

/// A route answered on IPv6: forwarded only with `net.ipv6.conf.all.forwarding` on, or (6.17
/// and later) the arrival device's `force_forwarding`; its own `forwarding` only makes it a
/// router or a host (measured: off on the device, on for all, the packet is forwarded).
fn ipv6_forwarding(
    kernel: &mut impl Kernel,
    arrival: &Arrival,
    route: Route,
) -> Result<Answer, Failure> {
    let all = kernel.forwarding(Family::V6, "all")?;
    if all.as_deref() == Some("1") {
        return Ok(Answer::Kernel(Lookup::Route(route)));
    }
    let force = kernel.ipv6_force_forwarding(&arrival.iif)?;
    if force.as_deref() == Some("1") {
        return Ok(Answer::Kernel(Lookup::Route(route)));
    }
    let mut sysctls = vec![(SysctlKey::ipv6_conf("all", "forwarding"), all)];
    // Kernels before 6.17 have no force_forwarding: nothing to name.
    if force.is_some() {
        sysctls.push((
            SysctlKey::ipv6_conf(&arrival.iif, "force_forwarding"),
            force,
        ));
    }
    Ok(Answer::NotForwarded(NotForwarded {
        family: Family::V6,
        sysctls,
    }))
}
