//! The lint rules: one constant per rule, each naming the section of
//! `docs/proxmox-frr-merge.md` it comes from. `lint.rs` decides where a rule applies;
//! the wording of what goes wrong and what to write instead lives here.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Proxmox's merge drops, changes or breaks the construct: fails the task when
    /// `lint=error`.
    Error,
    /// Legal, but Proxmox's output differs from the file in a way worth knowing.
    Warning,
}

#[derive(Debug)]
pub struct Rule {
    /// The short name reported in each finding.
    pub name: &'static str,
    pub severity: Severity,
    /// Where `docs/proxmox-frr-merge.md` establishes it.
    pub spec: &'static str,
    /// What Proxmox does with the construct, in one sentence.
    pub summary: &'static str,
}

const fn rule(
    name: &'static str,
    severity: Severity,
    spec: &'static str,
    summary: &'static str,
) -> Rule {
    Rule {
        name,
        severity,
        spec,
        summary,
    }
}

use Severity::{Error, Warning};

pub const BANG_IN_COMMAND: Rule = rule(
    "bang-in-command",
    Error,
    "B.3 row 14, B.6 E8, B.7",
    "both parsers drop every line that holds a `!` anywhere, the command included",
);
pub const COMMENT_READ_AS_ADDRESS_FAMILY: Rule = rule(
    "comment-address-family",
    Error,
    "B.3 row 7, B.4 (the address-family pattern is not anchored and is tried before `!`)",
    "a comment that holds `address-family …` is taken as an address-family header",
);
pub const END_STATEMENT: Rule = rule(
    "end-statement",
    Error,
    "B.6 other facts, A.3",
    "`end` is copied into the block it stands in, and frr-reload then closes every context",
);
pub const TOP_LEVEL_LINE: Rule = rule(
    "top-level-line",
    Error,
    "B.3 (discard bin), B.4, B.6 E6",
    "a line outside every stanza is dropped without a word (1.2.x adds it to a vrf or interface block above it)",
);
pub const TOP_LEVEL_ROUTE: Rule = rule(
    "top-level-route",
    Error,
    "B.6 E6, C.2",
    "a top-level static route is dropped without a word",
);
pub const LIST_WITHOUT_SEQ: Rule = rule(
    "list-without-seq",
    Error,
    "B.6 E6, B.7",
    "a prefix-list or access-list entry without `seq N` is not recognised and is dropped",
);
pub const UNRECOGNISED_STANZA: Rule = rule(
    "unrecognised-stanza",
    Error,
    "B.6 other facts",
    "Proxmox's merge does not know this kind of stanza: the header and its body are dropped",
);
pub const INDENTED_HEADER: Rule = rule(
    "indented-header",
    Error,
    "B.7 (1.3.0 anchors headers at column 0; 1.2.x strips indentation)",
    "an indented stanza header is a body line to 1.3.0 and a new stanza to 1.2.x",
);
pub const INDENTED_TERMINATOR: Rule = rule(
    "indented-terminator",
    Error,
    "B.6 E3, B.7",
    "an indented `exit`/`exit-vrf` is not a terminator to 1.3.0: it is copied as a body line and vtysh rejects the result",
);
pub const EXIT_VRF: Rule = rule(
    "exit-vrf",
    Error,
    "B.6 E1a, B.4, C.1 rule 2",
    "the parser that shipped through PVE 9.1 keeps `exit-vrf` as a body line, so frr.conf gets two `exit-vrf` and vtysh rejects it",
);
pub const UNTERMINATED_BLOCK: Rule = rule(
    "unterminated-block",
    Error,
    "B.6 E1b, E7, B.4 (route-map)",
    "a block without `exit` at column 0 stays open: Proxmox adds the lines that follow it to the block (1.2.x loses a route-map entry)",
);
pub const ADDRESS_FAMILY_OUTSIDE_ROUTER: Rule = rule(
    "address-family-outside-router",
    Error,
    "B.6 E13",
    "an address-family outside a `router bgp` block is emitted at top level (1.3.0) or as a broken `router ` block (1.2.x)",
);
pub const ROUTER_LINE_AFTER_ADDRESS_FAMILY: Rule = rule(
    "router-line-after-address-family",
    Error,
    "B.6 E4, C.1 rule 4",
    "a router-level line after an address-family goes to the top level (1.3.0) or into the address-family (1.2.x)",
);
pub const ADDRESS_FAMILY_UNTERMINATED: Rule = rule(
    "address-family-unterminated",
    Warning,
    "C.1 rule 3",
    "an address-family without ` exit-address-family` relies on what Proxmox emits after it",
);
pub const EMPTY_STANZA: Rule = rule(
    "empty-stanza",
    Error,
    "B.6 E2, C.1 rule 5",
    "a block with no body makes the 1.3.0 merge fail (an undefined custom config) and FRR generation dies",
);
pub const BGP_ASN_MISMATCH: Rule = rule(
    "bgp-asn-mismatch",
    Error,
    "B.6 E5, C.1 rule 8",
    "a `router bgp` with another ASN than the generated router becomes a second BGP instance, which bgpd rejects",
);
pub const BGP_ASN_CONFLICT: Rule = rule(
    "bgp-asn-conflict",
    Error,
    "B.6 E5, E (one ASN per VRF)",
    "two `router bgp` stanzas for one VRF with different ASNs: bgpd accepts only one",
);
pub const HEADER_SPACING: Rule = rule(
    "header-spacing",
    Warning,
    "B.6 E14",
    "Proxmox matches headers literally: extra spaces make a separate block instead of folding into the generated one",
);
pub const ROUTE_MAP_GENERATED_NAME: Rule = rule(
    "route-map-generated-name",
    Error,
    "B.6 E10, B.3 step 2, D.2",
    "Proxmox puts its own entries of this route-map first and renumbers the local ones after them",
);
pub const ROUTE_MAP_ORDER: Rule = rule(
    "route-map-order",
    Error,
    "B.3 step 2, B.4 (route-maps)",
    "Proxmox renumbers route-map entries 1..n in file order, so entries out of sequence order are evaluated in file order",
);
pub const ROUTE_MAP_RENUMBERED: Rule = rule(
    "route-map-renumbered",
    Warning,
    "B.6 E10, B.3 step 2",
    "Proxmox rewrites route-map sequence numbers to 1..n in file order",
);

/// Every rule, for the documentation and for the test that each one can fire.
pub const ALL: &[&Rule] = &[
    &BANG_IN_COMMAND,
    &COMMENT_READ_AS_ADDRESS_FAMILY,
    &END_STATEMENT,
    &TOP_LEVEL_LINE,
    &TOP_LEVEL_ROUTE,
    &LIST_WITHOUT_SEQ,
    &UNRECOGNISED_STANZA,
    &INDENTED_HEADER,
    &INDENTED_TERMINATOR,
    &EXIT_VRF,
    &UNTERMINATED_BLOCK,
    &ADDRESS_FAMILY_OUTSIDE_ROUTER,
    &ROUTER_LINE_AFTER_ADDRESS_FAMILY,
    &ADDRESS_FAMILY_UNTERMINATED,
    &EMPTY_STANZA,
    &BGP_ASN_MISMATCH,
    &BGP_ASN_CONFLICT,
    &HEADER_SPACING,
    &ROUTE_MAP_GENERATED_NAME,
    &ROUTE_MAP_ORDER,
    &ROUTE_MAP_RENUMBERED,
];

// What each rule says: one function per rule (`not_a_stanza` below covers the four rules of a
// line outside every stanza), called by `lint.rs` where the rule applies. Each message names the
// construct, what Proxmox does with it and what to write instead.

/// [`COMMENT_READ_AS_ADDRESS_FAMILY`]: `comment` is the trimmed comment line.
pub fn comment_read_as_address_family(comment: &str) -> String {
    format!(
        "the comment `{comment}` holds `address-family …`, which both parsers read as an address-family header before they skip comments; reword the comment"
    )
}

/// [`BANG_IN_COMMAND`]: `line` is the trimmed line.
pub fn bang_in_command(line: &str) -> String {
    format!(
        "`{line}` holds a `!`, so Proxmox's merge drops the whole line; remove the `!` and what follows it, or move the remark to a line of its own that starts with `!`"
    )
}

/// [`END_STATEMENT`].
pub fn end_statement() -> String {
    "`end` is not a terminator Proxmox knows: it is copied into frr.conf, where frr-reload closes every context at it; delete it and close blocks with `exit`".to_string()
}

/// [`ADDRESS_FAMILY_OUTSIDE_ROUTER`]: `line` is the address-family line.
pub fn address_family_outside_router(line: &str) -> String {
    format!(
        "`{line}` is not inside a `router bgp` block; put it under the router it belongs to (a child of that stanza)"
    )
}

/// [`INDENTED_TERMINATOR`]: `line` is the terminator, without its indentation.
pub fn indented_terminator(line: &str) -> String {
    format!(
        "`{line}` is indented, so 1.3.0 copies it into the block as a command and vtysh rejects frr.conf; write `exit` at column 0"
    )
}

/// [`EXIT_VRF`].
pub fn exit_vrf() -> String {
    "`exit-vrf` is kept as a body line by the parser that shipped through PVE 9.1, which then adds its own `exit-vrf`: vtysh fails with `Unknown command: exit-vrf` and Proxmox restarts FRR; write `exit` at column 0 instead".to_string()
}

/// [`INDENTED_HEADER`]: `line` is the header, without its indentation.
pub fn indented_header(line: &str) -> String {
    format!(
        "`{line}` is indented: 1.3.0 reads it as a line of the block above, 1.2.x as a new stanza; write stanza headers at column 0, or drop the line"
    )
}

/// [`ROUTER_LINE_AFTER_ADDRESS_FAMILY`]: `line` follows an `exit-address-family` in the block
/// opened by `header`.
pub fn router_line_after_address_family(line: &str, header: &str) -> String {
    format!(
        "`{line}` follows an `exit-address-family` in `{header}`: 1.3.0 may move it to the top level, 1.2.x keeps it in the address-family; put router-level lines before the first address-family"
    )
}

/// A line after the `exit` that 1.2.x does not take as closing the `block` (`vrf`,
/// `interface`, …) opened by `header`: the rule the line breaks at top level
/// ([`not_a_stanza`]), with what 1.2.x does with it instead.
pub fn after_ignored_exit(line: &str, header: &str, block: &str) -> (&'static Rule, String) {
    let (rule, _) = not_a_stanza(line);
    (
        rule,
        format!(
            "`{line}` comes after the `exit` of `{header}`, and 1.2.x does not close a {block} block at `exit`: it adds the line to that block; move it inside a stanza, or drop it"
        ),
    )
}

/// [`ADDRESS_FAMILY_UNTERMINATED`].
pub fn address_family_unterminated() -> String {
    "this address-family has no ` exit-address-family`; close it before the next address-family or the router's `exit`".to_string()
}

/// [`EMPTY_STANZA`]: `header` opens the empty block.
pub fn empty_stanza(header: &str) -> String {
    format!(
        "`{header}` has no body: 1.3.0's merge dies on an empty folded block and frr.conf is not generated; give it at least one line, or remove the stanza"
    )
}

/// [`UNTERMINATED_BLOCK`]: `header` opens the block; `legacy_route_map`: a route-map entry
/// read by 1.2.x (lost), otherwise a block 1.3.0 leaves open.
pub fn unterminated_block(header: &str, legacy_route_map: bool) -> String {
    let consequence = if legacy_route_map {
        "1.2.x stores a route-map entry only at its `exit`, so this one is lost"
    } else {
        "1.3.0 leaves the block open in frr.conf and whatever Proxmox emits after it (your next lines, generated routes) lands inside it"
    };
    format!("`{header}` is not closed by `exit` at column 0: {consequence}; end it with `exit`")
}

/// [`ROUTE_MAP_GENERATED_NAME`]: the entry `route-map {name} {action} {seq}`.
pub fn route_map_generated_name(name: &str, action: &str, seq: u64) -> String {
    format!(
        "`route-map {name} {action} {seq}`: {name} is generated by Proxmox's EVPN controller, whose entries come first, and yours are renumbered after them (a `deny` meant to come first is never reached); give your route-map its own name and reference it"
    )
}

/// [`ROUTE_MAP_ORDER`]: the entry `route-map {name} {action} {seq}` becomes number `new_seq`.
pub fn route_map_order(name: &str, action: &str, seq: u64, new_seq: u64) -> String {
    format!(
        "`route-map {name} {action} {seq}` becomes `{action} {new_seq}`: Proxmox numbers entries in file order, which here differs from their sequence numbers; write the entries of {name} in ascending sequence order"
    )
}

/// [`ROUTE_MAP_RENUMBERED`]: the entry `route-map {name} {action} {seq}` becomes number
/// `new_seq`.
pub fn route_map_renumbered(name: &str, action: &str, seq: u64, new_seq: u64) -> String {
    format!(
        "`route-map {name} {action} {seq}` becomes `route-map {name} {action} {new_seq}` in frr.conf (same order, new number); number entries 1, 2, … to keep the file and frr.conf alike"
    )
}

/// The BGP instance of a VRF, as the ASN rules name it.
fn bgp_instance_name(vrf: Option<&str>) -> String {
    vrf.map_or("the default instance".to_string(), |v| format!("VRF {v}"))
}

/// [`BGP_ASN_MISMATCH`]: `header` (normalised) uses `asn` for `vrf`, the generated router
/// `expected`.
pub fn bgp_asn_mismatch(header: &str, asn: &str, vrf: Option<&str>, expected: &str) -> String {
    format!(
        "`{header}` uses ASN {asn}, but the router Proxmox generates has ASN {expected}: the merge emits a second BGP instance for {}, which bgpd rejects; write `router bgp {expected}{}`",
        bgp_instance_name(vrf),
        vrf.map(|v| format!(" vrf {v}")).unwrap_or_default()
    )
}

/// [`BGP_ASN_CONFLICT`]: `header` (normalised) gives `vrf` the ASN `asn`, line `first_line`
/// (1-based) `first_asn`.
pub fn bgp_asn_conflict(
    header: &str,
    asn: &str,
    vrf: Option<&str>,
    first_line: usize,
    first_asn: &str,
) -> String {
    format!(
        "`{header}` gives {} ASN {asn}, but line {first_line} gives it ASN {first_asn}; use one ASN, the generated router's",
        bgp_instance_name(vrf)
    )
}

/// [`HEADER_SPACING`]: `raw` is the header as written, `header` as Proxmox's output has it.
pub fn header_spacing(raw: &str, header: &str) -> String {
    format!(
        "`{raw}` has runs of spaces or tabs: Proxmox compares headers as written, so it becomes a block of its own instead of joining the generated `{header}`; write `{header}`"
    )
}

/// For a line that Proxmox does not take as a stanza: the rule it breaks and what to write
/// instead. `text` is trimmed; shared by the lint and by the check of the `stanzas` option.
pub fn not_a_stanza(text: &str) -> (&'static Rule, String) {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["ip" | "ipv6", "route", ..] => (&TOP_LEVEL_ROUTE, route_advice(&words)),
        ["ip" | "ipv6", "prefix-list", name, ..] | ["access-list", name, ..] => {
            let at = if words[0] == "access-list" { 2 } else { 3 };
            let mut fixed: Vec<&str> = words[..at].to_vec();
            fixed.extend(["seq", "5"]);
            fixed.extend(&words[at..]);
            (
                &LIST_WITHOUT_SEQ,
                format!(
                    "`{text}` has no `seq N`, so Proxmox does not recognise it and drops it; number the entry of {name}, e.g. `{}`",
                    fixed.join(" ")
                ),
            )
        }
        _ if crate::grammar::opening_keyword(crate::grammar::TOP_LEVEL, &crate::grammar::normalise(text)).is_some() => (
            &UNRECOGNISED_STANZA,
            format!(
                "`{text}` opens a stanza that Proxmox's merge does not recognise: it and its body are dropped; only router, vrf, interface, route-map, numbered prefix-list/access-list entries and bgp community-list reach frr.conf, configure the rest outside frr.conf.local"
            ),
        ),
        _ => (
            &TOP_LEVEL_LINE,
            format!(
                "`{text}` is not inside a stanza that Proxmox recognises: its merge drops it without a word; put it in a router, vrf or interface block, or configure it outside frr.conf.local"
            ),
        ),
    }
}

/// `ip route P NH … vrf V …` → the `vrf V` block that says the same.
fn route_advice(words: &[&str]) -> String {
    let text = words.join(" ");
    let vrf_at = words.iter().position(|w| *w == "vrf");
    match vrf_at.and_then(|at| words.get(at + 1).map(|name| (at, name))) {
        Some((at, name)) => {
            let route: Vec<&str> = words[..at]
                .iter()
                .chain(&words[at + 2..])
                .copied()
                .collect();
            format!(
                "`{text}` at top level is dropped by Proxmox's merge; write the route inside its VRF: `vrf {name}` / ` {}` / `exit`",
                route.join(" ")
            )
        }
        None => format!(
            "`{text}` at top level is dropped by Proxmox's merge, and frr.conf.local cannot carry a route of the default VRF; put it in /etc/network/interfaces, or in a `vrf NAME` block for a tenant VRF"
        ),
    }
}
