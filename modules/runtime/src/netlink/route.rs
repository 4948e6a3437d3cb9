//! Routes and route lookups as plain data, and the requests that fetch them.
//!
//! Two kernel traps live here, once: a dump request must carry protocol and type `Unspec`
//! (under strict checking every header field is a filter, and rtnetlink's `RouteMessageBuilder`
//! defaults of static/unicast silently drop kernel, boot and unreachable routes), and a table id
//! above 255 only fits the `RTA_TABLE` attribute (the header's byte then reads 252).

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use netlink_packet_route::{
    route::{
        RouteAddress, RouteAttribute, RouteFlags, RouteMessage, RouteNextHop, RouteType, RouteVia,
    },
    AddressFamily,
};
use std::net::IpAddr;

/// RT_TABLE_COMPAT: what the header's one-byte table field holds for tables above 255.
const RT_TABLE_COMPAT: u8 = 252;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    pub fn of(address: &IpAddr) -> Self {
        match address {
            IpAddr::V4(_) => Family::V4,
            IpAddr::V6(_) => Family::V6,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Family::V4 => "IPv4",
            Family::V6 => "IPv6",
        }
    }

    fn address_family(&self) -> AddressFamily {
        match self {
            Family::V4 => AddressFamily::Inet,
            Family::V6 => AddressFamily::Inet6,
        }
    }

    /// The family's default prefix, `0.0.0.0/0` or `::/0`: the destination of a default
    /// route, which carries no RTA_DST.
    pub fn default_prefix(&self) -> IpNet {
        match self {
            Family::V4 => IpNet::V4(Ipv4Net::default()),
            Family::V6 => IpNet::V6(Ipv6Net::default()),
        }
    }
}

/// The route's type (`rtm_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    Unicast,
    Local,
    Broadcast,
    Anycast,
    Multicast,
    Blackhole,
    Unreachable,
    Prohibit,
    Throw,
    Other(u8),
}

impl RouteKind {
    /// The name `ip route` prints.
    pub fn name(&self) -> String {
        match self {
            RouteKind::Unicast => "unicast".into(),
            RouteKind::Local => "local".into(),
            RouteKind::Broadcast => "broadcast".into(),
            RouteKind::Anycast => "anycast".into(),
            RouteKind::Multicast => "multicast".into(),
            RouteKind::Blackhole => "blackhole".into(),
            RouteKind::Unreachable => "unreachable".into(),
            RouteKind::Prohibit => "prohibit".into(),
            RouteKind::Throw => "throw".into(),
            RouteKind::Other(value) => format!("type {value}"),
        }
    }
}

impl From<RouteType> for RouteKind {
    fn from(kind: RouteType) -> Self {
        match kind {
            RouteType::Unicast => RouteKind::Unicast,
            RouteType::Local => RouteKind::Local,
            RouteType::Broadcast => RouteKind::Broadcast,
            RouteType::Anycast => RouteKind::Anycast,
            RouteType::Multicast => RouteKind::Multicast,
            RouteType::BlackHole => RouteKind::Blackhole,
            RouteType::Unreachable => RouteKind::Unreachable,
            RouteType::Prohibit => RouteKind::Prohibit,
            RouteType::Throw => RouteKind::Throw,
            other => RouteKind::Other(u8::from(other)),
        }
    }
}

/// One path of a multipath route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextHop {
    pub gateway: Option<IpAddr>,
    pub oif: u32,
    /// As `ip route` prints it (the kernel stores weight - 1).
    pub weight: u16,
}

/// One route of a dump, or the answer to a route lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub family: Family,
    /// The table the route lives in (for a lookup: the table whose route matched; 0 when the
    /// kernel matched none and assumed the destination on-link on the given interface).
    pub table: u32,
    pub kind: RouteKind,
    /// The destination prefix (RTA_DST with the header's length; the family's `/0` for a
    /// default route, which carries no RTA_DST).
    pub destination: IpNet,
    /// RTA_GATEWAY, or RTA_VIA (an IPv6 next hop of an IPv4 route).
    pub gateway: Option<IpAddr>,
    /// The output interface's ifindex.
    pub oif: Option<u32>,
    /// The paths of a multipath route (empty otherwise).
    pub nexthops: Vec<NextHop>,
    /// The metric (RTA_PRIORITY).
    pub metric: Option<u32>,
    /// Who installed the route (`rtm_protocol`): see [`protocol_name`].
    pub protocol: u8,
    pub pref_source: Option<IpAddr>,
}

impl Route {
    /// A route with only what every route has; the rest is filled in by hand (tests) or from
    /// a netlink message.
    pub fn new(family: Family, table: u32, kind: RouteKind) -> Self {
        Route {
            family,
            table,
            kind,
            destination: family.default_prefix(),
            gateway: None,
            oif: None,
            nexthops: Vec::new(),
            metric: None,
            protocol: 0,
            pref_source: None,
        }
    }

    pub fn is_default(&self) -> bool {
        self.destination.prefix_len() == 0
    }

    /// Every (gateway, interface) pair the route sends through: its own, or its paths'.
    pub fn paths(&self) -> Vec<(Option<IpAddr>, Option<u32>)> {
        if self.nexthops.is_empty() {
            vec![(self.gateway, self.oif)]
        } else {
            self.nexthops
                .iter()
                .map(|hop| (hop.gateway, Some(hop.oif)))
                .collect()
        }
    }
}

/// The name of a routing table as `ip route` prints it.
pub fn table_name(table: u32) -> String {
    match table {
        0 => "unspec".into(),
        253 => "default".into(),
        254 => "main".into(),
        255 => "local".into(),
        other => other.to_string(),
    }
}

/// The name of a route protocol (`/etc/iproute2/rt_protos` and FRR's additions), or its
/// number.
pub fn protocol_name(protocol: u8) -> String {
    let name = match protocol {
        0 => "unspec",
        1 => "redirect",
        2 => "kernel",
        3 => "boot",
        4 => "static",
        8 => "gated",
        9 => "ra",
        10 => "mrt",
        11 => "zebra",
        12 => "bird",
        13 => "dnrouted",
        14 => "xorp",
        15 => "ntk",
        16 => "dhcp",
        17 => "mrouted",
        18 => "keepalived",
        42 => "babel",
        99 => "openr",
        // FRR's, as its /etc/iproute2/rt_protos.d/frr.conf names them (196: zebra's static).
        186 => "bgp",
        187 => "isis",
        188 => "ospf",
        189 => "rip",
        190 => "ripng",
        191 => "nhrp",
        192 => "eigrp",
        193 => "ldp",
        194 => "sharp",
        195 => "pbr",
        196 => "static",
        197 => "openfabric",
        198 => "srte",
        other => return other.to_string(),
    };
    name.to_string()
}

/// How the kernel refused a route lookup: the route that matched drops the packet, no route
/// matched at all, or (on the input path, with `iif`) the packet would not be forwarded. These
/// come back as errnos, not as routes.
///
/// On the input path the errnos are the ones of `ip_route_input_slow`, and some mean more than
/// one thing: EHOSTUNREACH is also forwarding off on the arrival device, and EINVAL also a
/// source that fails validation (a martian, or the reverse-path filter on kernels 6.13 and
/// later, where every drop reason of the input path is answered EINVAL). Only the caller, with
/// the arrival device's sysctls, can tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// EHOSTUNREACH: an `unreachable` route matched (e.g. a VRF's catch-all default).
    Unreachable,
    /// EINVAL: a `blackhole` route matched.
    Blackhole,
    /// EACCES: a `prohibit` route matched.
    Prohibit,
    /// ENETUNREACH: no route matched in any table the rules reached.
    NoRoute,
    /// EXDEV: the reverse-path filter (`rp_filter`) refused the source of a packet arriving by
    /// `iif`. Only kernels before 6.13 answer so; later ones answer EINVAL.
    ReversePath,
}

impl Refusal {
    pub fn from_errno(errno: i32) -> Option<Self> {
        match errno {
            libc::EHOSTUNREACH => Some(Refusal::Unreachable),
            libc::EINVAL => Some(Refusal::Blackhole),
            libc::EACCES => Some(Refusal::Prohibit),
            libc::ENETUNREACH => Some(Refusal::NoRoute),
            libc::EXDEV => Some(Refusal::ReversePath),
            _ => None,
        }
    }

    /// The refusal as one word, for the answers modules report.
    pub fn name(&self) -> &'static str {
        match self {
            Refusal::Unreachable => "unreachable",
            Refusal::Blackhole => "blackhole",
            Refusal::Prohibit => "prohibit",
            Refusal::NoRoute => "no_route",
            Refusal::ReversePath => "reverse_path",
        }
    }

    pub fn describe(&self) -> &'static str {
        match self {
            Refusal::Unreachable => "unreachable (an unreachable route matched)",
            Refusal::Blackhole => "dropped (a blackhole route matched)",
            Refusal::Prohibit => "prohibited (a prohibit route matched)",
            Refusal::NoRoute => "unreachable (no route matched: network unreachable)",
            Refusal::ReversePath => "dropped by the reverse-path filter (rp_filter)",
        }
    }
}

/// The kernel's answer to `ip route get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Route(Route),
    Refused(Refusal),
}

fn address(address: &RouteAddress) -> Option<IpAddr> {
    match address {
        RouteAddress::Inet(v4) => Some(IpAddr::V4(*v4)),
        RouteAddress::Inet6(v6) => Some(IpAddr::V6(*v6)),
        _ => None,
    }
}

fn via(via: &RouteVia) -> Option<IpAddr> {
    match via {
        RouteVia::Inet(v4) => Some(IpAddr::V4(*v4)),
        RouteVia::Inet6(v6) => Some(IpAddr::V6(*v6)),
        _ => None,
    }
}

fn next_hop(hop: &RouteNextHop) -> NextHop {
    let gateway = hop.attributes.iter().find_map(|attribute| match attribute {
        RouteAttribute::Gateway(gateway) => address(gateway),
        RouteAttribute::Via(gateway) => via(gateway),
        _ => None,
    });
    NextHop {
        gateway,
        oif: hop.interface_index,
        weight: u16::from(hop.hops) + 1,
    }
}

/// The destination prefix of a route message: RTA_DST (the family's unspecified address
/// without one) with the header's length. `None` for an address of the other family or a
/// length longer than the family's, which the kernel never sends.
fn destination(family: Family, prefix_len: u8, destination: Option<IpAddr>) -> Option<IpNet> {
    let address = destination.unwrap_or(family.default_prefix().addr());
    if Family::of(&address) != family {
        return None;
    }
    IpNet::new(address, prefix_len).ok()
}

/// Takes what the modules need out of one RTM_NEWROUTE message; `None` for a family other than
/// IPv4 and IPv6 (MPLS, multicast dumps), which no caller asked for, and for a destination no
/// prefix of the family can hold (see `destination`).
pub fn route_from_message(message: &RouteMessage) -> Option<Route> {
    let family = match message.header.address_family {
        AddressFamily::Inet => Family::V4,
        AddressFamily::Inet6 => Family::V6,
        _ => return None,
    };
    let mut route = Route::new(
        family,
        u32::from(message.header.table),
        message.header.kind.into(),
    );
    let mut dst = None;
    route.protocol = u8::from(message.header.protocol);
    for attribute in &message.attributes {
        match attribute {
            // The header's byte reads 252 for tables above 255: the attribute is the truth.
            RouteAttribute::Table(table) => route.table = *table,
            RouteAttribute::Destination(destination) => dst = address(destination),
            RouteAttribute::Gateway(gateway) => route.gateway = address(gateway),
            RouteAttribute::Via(gateway) => route.gateway = via(gateway),
            RouteAttribute::Oif(index) => route.oif = Some(*index),
            RouteAttribute::Priority(metric) => route.metric = Some(*metric),
            RouteAttribute::PrefSource(source) => route.pref_source = address(source),
            RouteAttribute::MultiPath(hops) => route.nexthops = hops.iter().map(next_hop).collect(),
            _ => {}
        }
    }
    route.destination = destination(family, message.header.destination_prefix_length, dst)?;
    Some(route)
}

/// The RTM_GETROUTE dump request for every route of one table.
pub fn dump_request(family: Family, table: u32) -> RouteMessage {
    let mut message = RouteMessage::default();
    message.header.address_family = family.address_family();
    // Protocol, scope and type stay Unspec (0), which strict checking reads as "any".
    message.header.table = u8::try_from(table).unwrap_or(RT_TABLE_COMPAT);
    message.attributes.push(RouteAttribute::Table(table));
    message
}

/// What `ip route get` asks: the destination, and what else the packet has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteQuery {
    pub destination: IpAddr,
    /// RTA_SRC (`from SRC`): the packet's source, of the destination's family.
    pub source: Option<IpAddr>,
    /// RTA_IIF (`iif DEV`): the packet arrives by this interface, so the kernel routes it on
    /// the input path, as a packet to forward (the device's forwarding and rp_filter apply). The
    /// kernel ignores RTA_OIF then, and the VRF is the arrival device's (its l3mdev rule).
    pub iif: Option<u32>,
    /// RTA_OIF (`oif DEV`, or the VRF device for `vrf NAME`): the output lookup is pinned to it.
    pub oif: Option<u32>,
}

impl RouteQuery {
    /// The output lookup of `destination`, pinned to nothing.
    pub fn to(destination: IpAddr) -> Self {
        RouteQuery {
            destination,
            source: None,
            iif: None,
            oif: None,
        }
    }
}

/// The RTM_GETROUTE request of `ip route get DESTINATION [from SOURCE] [iif DEV] [vrf NAME]`:
/// `oif` is the VRF device's ifindex (iproute2 sends exactly that for `vrf NAME`), or any
/// interface to pin the lookup to.
pub fn lookup_request(query: &RouteQuery) -> RouteMessage {
    let family = Family::of(&query.destination);
    let mut message = RouteMessage::default();
    message.header.address_family = family.address_family();
    // The host prefix: /32 or /128 (strict checking refuses any other length, for either).
    message.header.destination_prefix_length = IpNet::from(query.destination).prefix_len();
    if family == Family::V4 {
        // Without it the IPv4 answer names table main whatever table matched. The IPv6
        // validator refuses the flag (EINVAL), and IPv6 answers carry the real table anyway.
        message.header.flags = RouteFlags::LookupTable;
    }
    message
        .attributes
        .push(RouteAttribute::Destination(query.destination.into()));
    if let Some(source) = query.source {
        message.header.source_prefix_length = IpNet::from(source).prefix_len();
        message
            .attributes
            .push(RouteAttribute::Source(source.into()));
    }
    if let Some(iif) = query.iif {
        message.attributes.push(RouteAttribute::Iif(iif));
    }
    if let Some(oif) = query.oif {
        message.attributes.push(RouteAttribute::Oif(oif));
    }
    message
}
