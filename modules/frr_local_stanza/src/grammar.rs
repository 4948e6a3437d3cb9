//! What a line *is*, to FRR's `frr-reload.py` and to Proxmox's merge.
//!
//! Two readers of the same file disagree, and the module has to know both:
//! * `frr-reload.py` (spec A.1–A.3) ignores indentation, collapses whitespace and opens a
//!   context when a line starts with one of the keywords of the current level (`ctx_keywords`);
//! * Proxmox's merge (spec B.3, B.4) recognises a fixed set of stanza headers by regular
//!   expression, anchored at column 0 in the 1.3.0 rewrite and after stripping indentation in
//!   the parser that shipped through PVE 9.1.

/// One entry of `frr-reload.py`'s `ctx_keywords` (spec A.2): a line starting with `prefix`
/// opens a context whose own lines are matched against `children`.
#[derive(Debug)]
pub struct Keyword {
    pub prefix: &'static str,
    pub children: &'static [Keyword],
}

const fn leaf(prefix: &'static str) -> Keyword {
    Keyword {
        prefix,
        children: &[],
    }
}

const BGP_AF: &[Keyword] = &[leaf("vni ")];
const ROUTER_BGP: &[Keyword] = &[
    Keyword {
        prefix: "address-family ",
        children: BGP_AF,
    },
    leaf("vnc defaults"),
    leaf("vnc nve-group "),
    leaf("vnc l2-group "),
    leaf("vrf-policy "),
    leaf("bmp targets "),
    leaf("segment-routing srv6"),
];
const ROUTER_ISIS: &[Keyword] = &[Keyword {
    prefix: "segment-routing srv6",
    children: &[leaf("node-msd")],
}];
const MPLS_LDP: &[Keyword] = &[Keyword {
    prefix: "address-family ",
    children: &[leaf("interface ")],
}];
pub(crate) const SR_TE_POLICY: &[Keyword] = &[leaf("candidate-path ")];
const SR_TE: &[Keyword] = &[
    leaf("segment-list "),
    Keyword {
        prefix: "policy ",
        children: SR_TE_POLICY,
    },
    Keyword {
        prefix: "pcep",
        children: &[leaf("pcc"), leaf("pce "), leaf("pce-config ")],
    },
];
const SRV6: &[Keyword] = &[
    Keyword {
        prefix: "locators",
        children: &[leaf("locator ")],
    },
    leaf("static-sids"),
    leaf("encapsulation"),
    Keyword {
        prefix: "formats",
        children: &[leaf("format")],
    },
];
const SEGMENT_ROUTING: &[Keyword] = &[
    Keyword {
        prefix: "traffic-eng",
        children: SR_TE,
    },
    Keyword {
        prefix: "srv6",
        children: SRV6,
    },
];

/// `ctx_keywords` of `frr-reload.py` 10.4.1, top level (spec A.2).
pub const TOP_LEVEL: &[Keyword] = &[
    Keyword {
        prefix: "router bgp ",
        children: ROUTER_BGP,
    },
    leaf("router rip"),
    leaf("router ripng"),
    leaf("router openfabric "),
    leaf("router ospf"),
    leaf("router ospf6"),
    leaf("router eigrp "),
    leaf("router babel"),
    leaf("router pim"),
    leaf("router pim6"),
    Keyword {
        prefix: "router isis ",
        children: ROUTER_ISIS,
    },
    Keyword {
        prefix: "mpls ldp",
        children: MPLS_LDP,
    },
    Keyword {
        prefix: "l2vpn ",
        children: &[leaf("member pseudowire ")],
    },
    Keyword {
        prefix: "key chain ",
        children: &[leaf("key ")],
    },
    Keyword {
        prefix: "vrf ",
        children: &[leaf("rpki")],
    },
    Keyword {
        prefix: "interface ",
        children: &[leaf("link-params")],
    },
    leaf("pseudowire "),
    leaf("nexthop-group "),
    leaf("route-map "),
    leaf("pbr-map "),
    leaf("rpki"),
    leaf("line vty"),
    Keyword {
        prefix: "segment-routing",
        children: SEGMENT_ROUTING,
    },
    Keyword {
        prefix: "bfd",
        children: &[leaf("peer "), leaf("profile ")],
    },
];

/// The keyword of `level` that `line` (normalised) opens, if any.
pub fn opening_keyword<'k>(level: &'k [Keyword], line: &str) -> Option<&'k Keyword> {
    level.iter().find(|k| {
        line.starts_with(k.prefix)
            // frr-reload's one exception: an explicit candidate path is a one-line context.
            && !(k.prefix == "candidate-path " && line.contains("explicit"))
    })
}

/// A line as `frr-reload.py` sees it: stripped, runs of whitespace collapsed to one space.
pub fn normalise(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How a line is read as a stanza header by Proxmox's merge (both generations use the same
/// expressions; they differ in whether indentation is stripped first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxmoxHeader {
    /// `^router (.+)$`, `^vrf (.+)$`, `^interface (.+)$`: a block closed by `exit`.
    Block(BlockKind),
    /// `^route-map (.+) (permit|deny) (\d+)`: a block whose sequence number Proxmox rewrites.
    RouteMap,
    /// `^bgp community-list`, `^access-list … seq N …`, `^ip(v6)? prefix-list … seq N …`:
    /// a one-line stanza copied to the output.
    List,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Router,
    Vrf,
    Interface,
}

impl BlockKind {
    pub fn word(self) -> &'static str {
        match self {
            BlockKind::Router => "router",
            BlockKind::Vrf => "vrf",
            BlockKind::Interface => "interface",
        }
    }
}

/// The Proxmox stanza kind that `text` (already without leading whitespace where the
/// generation strips it; trailing whitespace removed) opens, following spec B.3 rows 1–11.
pub fn proxmox_header(text: &str) -> Option<ProxmoxHeader> {
    let after = |prefix: &str| text.strip_prefix(prefix).filter(|rest| !rest.is_empty());
    if after("router ").is_some() {
        return Some(ProxmoxHeader::Block(BlockKind::Router));
    }
    if after("vrf ").is_some() {
        return Some(ProxmoxHeader::Block(BlockKind::Vrf));
    }
    if after("interface ").is_some() {
        return Some(ProxmoxHeader::Block(BlockKind::Interface));
    }
    if after("bgp community-list ").is_some() {
        return Some(ProxmoxHeader::List);
    }
    if let Some(rest) = after("route-map ") {
        if route_map_sequence(rest).is_some() {
            return Some(ProxmoxHeader::RouteMap);
        }
    }
    if let Some(rest) = after("access-list ") {
        if has_sequence(rest, true) {
            return Some(ProxmoxHeader::List);
        }
    }
    for prefix in ["ip prefix-list ", "ipv6 prefix-list "] {
        if let Some(rest) = after(prefix) {
            if has_sequence(rest, false) {
                return Some(ProxmoxHeader::List);
            }
        }
    }
    None
}

/// `(.+) seq (\d+) (.+)$` (`tail_required`) or `(.+) seq (\d+) (.*)$` on `rest`.
fn has_sequence(rest: &str, tail_required: bool) -> bool {
    rest.match_indices(" seq ").any(|(at, marker)| {
        if at == 0 {
            return false;
        }
        let after = &rest[at + marker.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0
            && after[digits..]
                .strip_prefix(' ')
                .is_some_and(|tail| !tail_required || !tail.is_empty())
    })
}

/// For `route-map (.+) (permit|deny) (\d+)`: the map's name, the action and the digits.
pub fn route_map_sequence(rest: &str) -> Option<(&str, &str, &str)> {
    for action in [" permit ", " deny "] {
        for (at, marker) in rest.match_indices(action) {
            if at == 0 {
                continue;
            }
            let after = &rest[at + marker.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                return Some((&rest[..at], marker.trim(), &after[..digits]));
            }
        }
    }
    None
}

/// The identity of a top-level stanza: its normalised header, except for the entries of the
/// numbered lists, which are identified by list and sequence number so that an entry can be
/// updated in place (spec A.5).
pub fn stanza_identity(header: &str) -> String {
    match list_entry(header) {
        Some(entry) => format!("{} seq {}", entry.list, entry.seq),
        None => header.to_string(),
    }
}

/// An entry of a numbered list: `ip prefix-list NAME seq N …` and its kin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// The kind and the name, `ip prefix-list LEAK-SUBNET-ONLY`.
    pub list: String,
    pub seq: u64,
}

/// The list and sequence number of a normalised one-line stanza, when it has them.
pub fn list_entry(header: &str) -> Option<ListEntry> {
    let words: Vec<&str> = header.split(' ').collect();
    let name_at = match words.as_slice() {
        ["ip" | "ipv6", "prefix-list", ..] => 2,
        ["access-list", ..] => 1,
        ["bgp", "community-list" | "extcommunity-list", "standard" | "expanded", ..] => 3,
        ["bgp", "community-list" | "extcommunity-list", ..] => 2,
        _ => return None,
    };
    let seq_at = name_at + 1;
    if words.get(seq_at) != Some(&"seq") {
        return None;
    }
    let seq = words.get(seq_at + 1)?.parse().ok()?;
    Some(ListEntry {
        list: words[..=name_at].join(" "),
        seq,
    })
}

/// `router bgp ASN [vrf NAME]`: the ASN and the VRF (`None` for the default instance).
pub fn bgp_instance(header: &str) -> Option<(&str, Option<&str>)> {
    let rest = header.strip_prefix("router bgp ")?;
    let mut words = rest.split(' ');
    let asn = words.next().filter(|w| !w.is_empty())?;
    match (words.next(), words.next()) {
        (Some("vrf"), Some(vrf)) => Some((asn, Some(vrf))),
        _ => Some((asn, None)),
    }
}
