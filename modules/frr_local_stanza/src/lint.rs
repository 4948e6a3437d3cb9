//! Checks a whole `frr.conf.local` against Proxmox's merge, in both parser generations, and
//! reports every construct the merge would drop, change or break, at its line.
//!
//! Each generation is walked the way its Perl loop reads the file (spec B.3 for the 1.3.0
//! rewrite, B.4 for 0.7.2–1.2.5); what the generations share (the `!` rule, route-map
//! renumbering, ASNs) is checked once. A construct found by both walks is reported once,
//! naming both generations. The rules themselves, and what each one says, are in
//! [`crate::rules`]; this file only decides where a rule applies.

use crate::grammar::{self, BlockKind, ProxmoxHeader};
use crate::parse;
use crate::rules::{self, Rule, Severity};
use serde::Serialize;
use std::collections::BTreeMap;

/// A generation of Proxmox's `frr.conf.local` parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Generation {
    /// libpve-network-perl 0.7.2 … 1.2.5: PVE 7.3 to 9.1.
    #[serde(rename = "1.2.x")]
    Legacy,
    /// libpve-network-perl 1.3.0, the rewrite for the Rust/jinja renderer (PVE 9.2).
    #[serde(rename = "1.3.0")]
    Rewrite,
}

pub(crate) const BOTH: &[Generation] = &[Generation::Legacy, Generation::Rewrite];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// 1-based line number in the file.
    pub line: usize,
    pub severity: Severity,
    pub rule: &'static str,
    pub msg: String,
    /// The parser generations in which the construct goes wrong.
    pub generations: Vec<Generation>,
}

#[derive(Debug, Default, Clone)]
pub struct LintOptions {
    /// The ASN of the router Proxmox generates, when known.
    pub asn: Option<String>,
}

struct Collector {
    /// (line, rule name) → finding, merged across generations.
    findings: BTreeMap<(usize, &'static str), Finding>,
}

impl Collector {
    fn add(&mut self, index: usize, rule: &'static Rule, generations: &[Generation], msg: String) {
        let entry = self
            .findings
            .entry((index + 1, rule.name))
            .or_insert_with(|| Finding {
                line: index + 1,
                severity: rule.severity,
                rule: rule.name,
                msg: String::new(),
                generations: Vec::new(),
            });
        if entry.msg.is_empty() {
            entry.msg = msg;
        } else if !entry.msg.contains(&msg) {
            entry.msg = format!("{} / {}", entry.msg, msg);
        }
        for generation in generations {
            if !entry.generations.contains(generation) {
                entry.generations.push(*generation);
            }
        }
        entry.generations.sort();
    }
}

/// Every finding for `source`, in line order.
pub fn lint(source: &str, options: &LintOptions) -> Vec<Finding> {
    let lines = parse::split_lines(source);
    let mut out = Collector {
        findings: BTreeMap::new(),
    };
    // The lines both parsers act on: not blank, not a comment, no `!` (B.3 row 14, B.4).
    let mut significant: Vec<(usize, &str)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if trimmed.starts_with('!') {
            if is_address_family(trimmed) {
                out.add(
                    index,
                    &rules::COMMENT_READ_AS_ADDRESS_FAMILY,
                    BOTH,
                    rules::comment_read_as_address_family(trimmed),
                );
            }
            continue;
        }
        if trimmed.contains('!') {
            out.add(
                index,
                &rules::BANG_IN_COMMAND,
                BOTH,
                rules::bang_in_command(trimmed),
            );
            continue;
        }
        if trimmed == "end" {
            out.add(index, &rules::END_STATEMENT, BOTH, rules::end_statement());
            continue;
        }
        significant.push((index, line.text.trim_end()));
    }
    walk(&significant, Generation::Rewrite, &mut out);
    walk(&significant, Generation::Legacy, &mut out);
    check_route_maps(&significant, &mut out);
    check_headers(source, options, &mut out);
    out.findings.into_values().collect()
}

/// `address-family (.+)$`, unanchored, as both parsers match it.
fn is_address_family(text: &str) -> bool {
    text.match_indices("address-family ")
        .any(|(at, m)| !text[at + m.len()..].trim().is_empty())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Block(BlockKind),
    RouteMap,
}

struct OpenBlock<'a> {
    shape: Shape,
    header_index: usize,
    header: &'a str,
    commands: usize,
    /// The address-family open now, by its header line.
    address_family: Option<usize>,
    /// The `exit-address-family` that closed the last address-family.
    left_address_family: bool,
    /// 1.2.x: the `exit` that does not close a vrf or interface block.
    ignored_exit: Option<usize>,
}

/// One generation's reading of the file (spec B.3 / B.4), reporting what goes wrong.
fn walk(lines: &[(usize, &str)], generation: Generation, out: &mut Collector) {
    let mut walk = Walk {
        generation,
        rewrite: generation == Generation::Rewrite,
        open: None,
        in_dropped_stanza: false,
        out,
    };
    for &(index, raw) in lines {
        walk.line(index, raw);
    }
    finish(walk.open, None, generation, walk.out);
}

/// Where one generation's walk is: the section open now, and where its findings go.
struct Walk<'a, 'o> {
    generation: Generation,
    rewrite: bool,
    open: Option<OpenBlock<'a>>,
    /// Inside the body of a stanza Proxmox does not recognise: its lines are not reported
    /// one by one, the header finding covers them.
    in_dropped_stanza: bool,
    out: &'o mut Collector,
}

impl<'a> Walk<'a, '_> {
    /// One line, read as the generation's loop reads it: the first of these steps that takes
    /// the line decides what it is.
    fn line(&mut self, index: usize, raw: &'a str) {
        let column0 = !raw.starts_with([' ', '\t']);
        let text = raw.trim_start();
        let taken = self.section_header(index, text, column0)
            || self.address_family(index, text)
            || self.block_end(index, text, column0)
            || self.misplaced_terminator_or_header(index, text, column0);
        if !taken {
            self.content(index, text, column0);
        }
    }

    fn add(&mut self, index: usize, rule: &'static Rule, msg: String) {
        self.out.add(index, rule, &[self.generation], msg);
    }

    /// A header Proxmox recognises: a block or route-map opens a section (closing the one
    /// open), a list line is copied to the output and changes no section.
    fn section_header(&mut self, index: usize, text: &'a str, column0: bool) -> bool {
        // 1.3.0 anchors its header patterns at column 0; 1.2.x strips indentation first.
        let header = if self.rewrite && !column0 {
            None
        } else {
            grammar::proxmox_header(text)
        };
        let shape = match header {
            Some(ProxmoxHeader::Block(kind)) => Shape::Block(kind),
            Some(ProxmoxHeader::RouteMap) => Shape::RouteMap,
            Some(ProxmoxHeader::List) => {
                self.in_dropped_stanza = false;
                return true;
            }
            None => return false,
        };
        finish(self.open.take(), None, self.generation, self.out);
        self.open = Some(OpenBlock::new(shape, index, text));
        self.in_dropped_stanza = false;
        true
    }

    /// `address-family ...` opens one inside a router block (elsewhere it is a finding);
    /// `exit-address-family` closes it.
    fn address_family(&mut self, index: usize, text: &str) -> bool {
        if is_address_family(text) {
            match self.open.as_mut() {
                Some(block) if block.shape == Shape::Block(BlockKind::Router) => {
                    block.address_family = Some(index);
                    block.left_address_family = false;
                }
                _ => self.add(
                    index,
                    &rules::ADDRESS_FAMILY_OUTSIDE_ROUTER,
                    rules::address_family_outside_router(text),
                ),
            }
            return true;
        }
        let closes_address_family = if self.rewrite {
            text.ends_with("exit-address-family")
        } else {
            text == "exit-address-family"
        };
        if closes_address_family {
            if let Some(block) = self.open.as_mut() {
                block.address_family = None;
                block.left_address_family = true;
            }
        }
        closes_address_family
    }

    /// The `exit` that ends the open section; in 1.2.x, one that leaves a vrf or interface
    /// block open (B.4).
    fn block_end(&mut self, index: usize, text: &str, column0: bool) -> bool {
        let closes_block = if self.rewrite {
            column0 && text.starts_with("exit")
        } else {
            text == "exit"
        };
        if !closes_block {
            return false;
        }
        match self.open.take() {
            Some(mut block)
                if !self.rewrite
                    && matches!(
                        block.shape,
                        Shape::Block(BlockKind::Vrf | BlockKind::Interface)
                    ) =>
            {
                block.ignored_exit = Some(index);
                self.open = Some(block);
            }
            block => {
                finish(block, Some(index), self.generation, self.out);
                self.in_dropped_stanza = false;
            }
        }
        true
    }

    /// An `exit...` that ends nothing (indented in 1.3.0, `exit-vrf` in a section), and in
    /// 1.3.0 an indented header, which it does not recognise.
    fn misplaced_terminator_or_header(&mut self, index: usize, text: &str, column0: bool) -> bool {
        if text.starts_with("exit") {
            // With no block open the line falls into the discard bin, harmlessly.
            if self.rewrite && self.open.is_some() {
                self.add(
                    index,
                    &rules::INDENTED_TERMINATOR,
                    rules::indented_terminator(text),
                );
            } else if self.open.is_some() && text.starts_with("exit-vrf") {
                self.add(index, &rules::EXIT_VRF, rules::exit_vrf());
            }
            return true;
        }
        if self.rewrite && !column0 && grammar::proxmox_header(text).is_some() {
            self.add(index, &rules::INDENTED_HEADER, rules::indented_header(text));
            return true;
        }
        false
    }

    /// Anything else: content of the section that is open, if any.
    fn content(&mut self, index: usize, text: &str, column0: bool) {
        let only = &[self.generation][..];
        match self.open.as_mut() {
            Some(block) if block.ignored_exit.is_none() => {
                block.commands += 1;
                if block.left_address_family && block.address_family.is_none() {
                    self.out.add(
                        index,
                        &rules::ROUTER_LINE_AFTER_ADDRESS_FAMILY,
                        only,
                        rules::router_line_after_address_family(text, block.header),
                    );
                }
            }
            Some(block) => {
                let kind = match block.shape {
                    Shape::Block(kind) => kind.word(),
                    Shape::RouteMap => "route-map",
                };
                let (rule, msg) = rules::after_ignored_exit(text, block.header, kind);
                self.out.add(index, rule, only, msg);
            }
            None if self.in_dropped_stanza && !column0 => {}
            None => {
                let (rule, msg) = rules::not_a_stanza(text);
                self.out.add(index, rule, only, msg);
                self.in_dropped_stanza = rule.name == rules::UNRECOGNISED_STANZA.name;
            }
        }
    }
}

impl<'a> OpenBlock<'a> {
    fn new(shape: Shape, header_index: usize, header: &'a str) -> Self {
        OpenBlock {
            shape,
            header_index,
            header,
            commands: 0,
            address_family: None,
            left_address_family: false,
            ignored_exit: None,
        }
    }
}

/// A block ends: at its `exit` (`terminator`), or without one at the next header or the end.
fn finish(
    block: Option<OpenBlock>,
    terminator: Option<usize>,
    generation: Generation,
    out: &mut Collector,
) {
    let Some(block) = block else { return };
    let rewrite = generation == Generation::Rewrite;
    let only = &[generation][..];
    let header = block.header;
    if let Some(af_index) = block.address_family {
        out.add(
            af_index,
            &rules::ADDRESS_FAMILY_UNTERMINATED,
            only,
            rules::address_family_unterminated(),
        );
    }
    // Only 1.3.0 fails on an empty block (B.6 E2); an empty route-map entry is legal.
    if rewrite && block.commands == 0 && block.shape != Shape::RouteMap {
        out.add(
            block.header_index,
            &rules::EMPTY_STANZA,
            only,
            rules::empty_stanza(header),
        );
    }
    let lost = match block.shape {
        // 1.2.x stores a route-map entry only at its `exit` (B.4).
        Shape::RouteMap => terminator.is_none(),
        // 1.2.x closes other blocks itself; 1.3.0 needs the column-0 terminator (E1b, E7).
        Shape::Block(_) => rewrite && terminator.is_none(),
    };
    if lost {
        let legacy_route_map = block.shape == Shape::RouteMap && !rewrite;
        out.add(
            block.header_index,
            &rules::UNTERMINATED_BLOCK,
            only,
            rules::unterminated_block(header, legacy_route_map),
        );
    }
}

/// Route-map entries are renumbered 1..n per name, in file order, after the generated ones
/// (B.3 step 2; B.4 renders them by position too).
fn check_route_maps(lines: &[(usize, &str)], out: &mut Collector) {
    const GENERATED: &[&str] = &["MAP_VTEP_IN", "MAP_VTEP_OUT"];
    let mut by_name: BTreeMap<&str, Vec<(usize, &str, u64)>> = BTreeMap::new();
    for &(index, raw) in lines {
        let Some(rest) = raw.trim_start().strip_prefix("route-map ") else {
            continue;
        };
        if let Some((name, action, digits)) = grammar::route_map_sequence(rest) {
            let seq = digits.parse().unwrap_or(u64::MAX);
            by_name.entry(name).or_default().push((index, action, seq));
        }
    }
    for (name, entries) in by_name {
        if GENERATED.contains(&name) {
            for (index, action, seq) in &entries {
                out.add(
                    *index,
                    &rules::ROUTE_MAP_GENERATED_NAME,
                    BOTH,
                    rules::route_map_generated_name(name, action, *seq),
                );
            }
            continue;
        }
        let ascending = entries.windows(2).all(|pair| pair[0].2 < pair[1].2);
        for (position, (index, action, seq)) in entries.iter().enumerate() {
            let new_seq = position as u64 + 1;
            if !ascending {
                out.add(
                    *index,
                    &rules::ROUTE_MAP_ORDER,
                    BOTH,
                    rules::route_map_order(name, action, *seq, new_seq),
                );
            } else if *seq != new_seq {
                out.add(
                    *index,
                    &rules::ROUTE_MAP_RENUMBERED,
                    BOTH,
                    rules::route_map_renumbered(name, action, *seq, new_seq),
                );
            }
        }
    }
}

/// Rules on stanza headers as frr-reload sees them: ASNs (E5) and spacing (E14).
fn check_headers(source: &str, options: &LintOptions, out: &mut Collector) {
    let file = parse::parse(source);
    let mut instances: BTreeMap<Option<String>, (String, usize)> = BTreeMap::new();
    for stanza in file.stanzas() {
        let raw = file.lines[stanza.header_index].text.trim();
        if raw.contains('!') {
            continue;
        }
        if let Some((asn, vrf)) = grammar::bgp_instance(&stanza.header) {
            match &options.asn {
                Some(expected) if expected != asn => out.add(
                    stanza.header_index,
                    &rules::BGP_ASN_MISMATCH,
                    BOTH,
                    rules::bgp_asn_mismatch(&stanza.header, asn, vrf, expected),
                ),
                _ => {}
            }
            let key = vrf.map(str::to_string);
            match instances.get(&key) {
                Some((first_asn, first_index)) if first_asn != asn => out.add(
                    stanza.header_index,
                    &rules::BGP_ASN_CONFLICT,
                    BOTH,
                    rules::bgp_asn_conflict(&stanza.header, asn, vrf, first_index + 1, first_asn),
                ),
                Some(_) => {}
                None => {
                    instances.insert(key, (asn.to_string(), stanza.header_index));
                }
            }
        }
        let is_block_header = matches!(
            grammar::proxmox_header(raw),
            Some(ProxmoxHeader::Block(_) | ProxmoxHeader::RouteMap)
        );
        if is_block_header && raw != stanza.header {
            out.add(
                stanza.header_index,
                &rules::HEADER_SPACING,
                BOTH,
                rules::header_spacing(raw, &stanza.header),
            );
        }
    }
}

/// Whether any finding fails a task run with `lint=error`.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}
