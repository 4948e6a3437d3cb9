//! Invariants of `frr_local_stanza`'s parser, lint and editor, shared by the libFuzzer targets
//! (`frr_file`, `frr_stanzas`) and the stable smoke test
//! (`modules/fuzz_invariants/tests/it/frr_local_stanza.rs`). Each function panics, with the
//! input in the message, when an invariant breaks.

use crate::input::{split_at_nul, Input};
use frr_local_stanza::edit::{apply, Change};
use frr_local_stanza::grammar::stanza_identity;
use frr_local_stanza::lint::{lint, LintOptions};
use frr_local_stanza::params::Params;
use frr_local_stanza::parse::{parse, Item};
use frr_local_stanza::stanza::{check, Checks, Mode, Stanza, State};

/// Target `frr_file`: arbitrary bytes as `frr.conf.local`.
pub fn check_file_bytes(data: &[u8]) {
    file_invariants(&String::from_utf8_lossy(data));
}

/// What holds for any file: the parse covers every line once, in order; no finding points
/// outside the file; writing it back with no stanzas changes no byte.
pub fn file_invariants(text: &str) {
    let file = parse(text);
    let mut covered = Vec::with_capacity(file.lines.len());
    for item in &file.items {
        match item {
            Item::Loose(index) => covered.push(*index),
            Item::Stanza(c) => covered.extend(c.header_index..=c.last_index),
        }
    }
    assert!(
        covered.iter().copied().eq(0..file.lines.len()),
        "the parse does not cover each line once, in order: {text:?}"
    );
    for asn in [None, Some("45689".to_string())] {
        for finding in lint(text, &LintOptions { asn }) {
            assert!(
                finding.line >= 1 && finding.line <= file.lines.len(),
                "finding {finding:?} points at a line the file does not have ({} lines): {text:?}",
                file.lines.len()
            );
        }
    }
    let untouched = apply(text, &[]);
    assert!(
        untouched.text == text,
        "parse → write of an untouched file changed it: {text:?} became {:?}",
        untouched.text
    );
}

const HEADERS: &[&str] = &[
    "vrf vrf_tdemo",
    "vrf vrf_a",
    "vrf  vrf_a",
    "router bgp 45689",
    "router bgp 45689 vrf vrf_evpn",
    "router bgp 45689 vrf vrf_tdemo",
    "router bgp 65000",
    "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0",
    "ip prefix-list LEAK-SUBNET-ONLY seq 5 permit 0.0.0.0/0",
    "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31",
    "ip prefix-list L permit any",
    "ipv6 prefix-list L6 seq 5 permit any",
    "access-list A seq 1 permit any",
    "bgp community-list standard C seq 5 permit 1:1",
    "route-map MAP_VTEP_IN permit 1",
    "route-map R deny 10",
    "interface eth0",
    "ip route 0.0.0.0/0 1.1.1.1 vrf v",
    "ip nht resolve-via-default",
    "router ospf",
    "bfd",
    "line vty",
    "key chain K",
    "address-family ipv4 unicast",
    "# note",
];

const LINES: &[&str] = &[
    "ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default",
    "ip route 10.0.0.0/8 10.0.0.1",
    "neighbor VTEP peer-group",
    "neighbor VTEP activate",
    "import vrf default",
    "match ip address prefix-list L",
    "set metric 10",
    "vni 100",
    "  neighbor   VTEP   bfd ",
    "exit",
    "exit-vrf",
    "end",
    "a ! b",
    "address-family ipv4 unicast",
    "vrf w",
    "# note",
    "",
];

const FAMILIES: &[&str] = &[
    "address-family ipv4 unicast",
    "address-family ipv6 unicast",
    "address-family l2vpn evpn",
    "neighbor X activate",
];

fn one_stanza(input: &mut Input, depth: usize) -> Stanza {
    let header = match input.byte() % 8 {
        0 => input.text(40),
        _ if depth > 0 => input.pick(FAMILIES).to_string(),
        _ => input.pick(HEADERS).to_string(),
    };
    let lines = (0..input.below(4))
        .map(|_| match input.byte() % 8 {
            0 => input.text(30),
            _ => input.pick(LINES).to_string(),
        })
        .collect();
    let children = if depth == 0 && header.starts_with("router bgp") {
        (0..input.below(3))
            .map(|_| one_stanza(input, depth + 1))
            .collect()
    } else {
        Vec::new()
    };
    Stanza {
        header,
        lines,
        children,
        state: if input.byte().is_multiple_of(4) {
            State::Absent
        } else {
            State::Present
        },
        mode: if input.flag() {
            Mode::Merge
        } else {
            Mode::Exact
        },
        withdraw: Vec::new(),
    }
}

/// Target `frr_stanzas`: `FILE \0 DECISIONS`; the decisions pick stanzas (headers and lines
/// from tables of the real use cases and traps, or free text), states, modes and checks.
pub fn check_stanza_program(data: &[u8]) {
    let (file, program) = split_at_nul(data);
    let text = String::from_utf8_lossy(file);
    let mut input = Input::new(program);
    let strict = input.flag();
    let asn = *input.pick(&[None, Some("45689"), Some("65000")]);
    let stanzas: Vec<Stanza> = (0..=input.below(4))
        .map(|_| one_stanza(&mut input, 0))
        .collect();
    let checks = Checks {
        refuse_unrecognised_headers: strict,
        asn,
    };
    match check(&stanzas, checks) {
        Err(msg) => assert!(
            msg.starts_with("stanzas["),
            "a refusal names no item: {msg}"
        ),
        Ok(wanted) => edit_invariants(&text, &wanted),
    }
}

/// Applying checked stanzas: the result is a file like any other, and on a file whose blocks
/// are closed, a second application changes nothing, every present stanza is there, every
/// absent one is gone, and every stanza that is not managed keeps its bytes.
pub fn edit_invariants(text: &str, wanted: &[Stanza]) {
    let first = apply(text, wanted);
    assert_eq!(first.changes.len(), wanted.len(), "a change per stanza");
    file_invariants(&first.text);
    // Checked stanzas bring no control character (NUL, ESC, …) into the file: any in the
    // result was already in the source.
    let controls = |t: &str| t.chars().filter(|c| c.is_control() && *c != '\n').count();
    assert!(
        controls(&first.text) <= controls(text),
        "the edit wrote a control character\nSOURCE {text:?}\nSTANZAS {wanted:?}\nRESULT {:?}",
        first.text
    );
    let source = parse(text);
    let closed = source
        .stanzas()
        .all(|c| !c.is_block || c.terminator.is_some());
    if !closed {
        return;
    }
    let second = apply(&first.text, wanted);
    assert!(
        second.text == first.text && second.changes.iter().all(|(_, c)| *c == Change::Unchanged),
        "applying the same stanzas twice changed the file\nSOURCE {text:?}\nSTANZAS {wanted:?}\nFIRST {:?}\nSECOND {:?}\nCHANGES {:?}",
        first.text,
        second.text,
        second.changes
    );
    let result = parse(&first.text);
    let managed: Vec<String> = wanted.iter().map(|s| stanza_identity(&s.header)).collect();
    for stanza in wanted {
        let identity = stanza_identity(&stanza.header);
        let found = result
            .stanzas()
            .any(|c| stanza_identity(&c.header) == identity);
        assert_eq!(
            found,
            stanza.state == State::Present,
            "stanza {identity:?} ({:?}) after the edit\nSOURCE {text:?}\nSTANZAS {wanted:?}\nRESULT {:?}",
            stanza.state,
            first.text
        );
    }
    for context in source.stanzas() {
        if managed.contains(&stanza_identity(&context.header)) {
            continue;
        }
        let bytes = source.text_of(context.header_index, context.last_index);
        assert!(
            first.text.contains(bytes.trim_end_matches(['\n', '\r'])),
            "the unmanaged stanza {:?} lost bytes\nSOURCE {text:?}\nRESULT {:?}",
            context.header,
            first.text
        );
    }
}

/// Arguments the runtime accepted against the module's spec always become the module's typed
/// `Params` (its stanzas among them), and checking those never panics.
pub fn typed_arguments(validated: Option<serde_json::Map<String, serde_json::Value>>) {
    let Some((params, _)) = crate::spec_args::typed::<Params>(validated) else {
        return;
    };
    let stanzas = params.stanzas.unwrap_or_default();
    for strict in [false, true] {
        let _ = check(
            &stanzas,
            Checks {
                refuse_unrecognised_headers: strict,
                asn: Some("45689"),
            },
        );
    }
}
