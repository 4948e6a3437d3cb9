//! Arbitrary files through the parser, the lint and the editor: no panic, and the invariants
//! the module's promises rest on. Inputs come from a fixed-seed generator, so a failure
//! reproduces; each case prints nothing unless it fails.

use frr_local_stanza::edit::{apply, Change};
use frr_local_stanza::lint::{lint, LintOptions};
use frr_local_stanza::parse::{parse, Item};
use frr_local_stanza::stanza::{check, Checks, Mode, Stanza, State};

/// xorshift64*: small, deterministic, good enough to shuffle fragments.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const FRAGMENTS: &[&str] = &[
    "vrf vrf_a",
    "vrf vrf_b",
    "router bgp 45689",
    "router bgp 45689 vrf vrf_a",
    "router  bgp 1",
    "router ospf",
    "interface eth0",
    "route-map R permit 10",
    "route-map MAP_VTEP_IN deny 5",
    "ip prefix-list L seq 5 permit any",
    "ip prefix-list L permit any",
    "access-list A seq 1 permit any",
    "bgp community-list standard C seq 5 permit 1:1",
    "ip route 0.0.0.0/0 1.1.1.1 vrf v",
    "ip nht resolve-via-default",
    "key chain K",
    "line vty",
    "bfd",
    " peer 1.1.1.1",
    " ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default",
    "\tip route 1.0.0.0/8 2.2.2.2",
    " neighbor VTEP activate",
    " address-family ipv4 unicast",
    "address-family l2vpn evpn",
    "  neighbor VTEP activate",
    " exit-address-family",
    "exit-address-family",
    "exit",
    " exit",
    "exit-vrf",
    " exit-vrf",
    "exit-vni",
    "end",
    "!",
    "! comment",
    "! address-family x",
    "# hash",
    " x ! y",
    "",
    "   ",
    " vni 100",
    "  vni 200",
    "seq",
    "vrf",
    "route-map",
    "é ünïcode ✓",
    " ip prefix-list L seq 6 deny any",
    "router",
    "  ",
    "\t",
];

fn random_file(rng: &mut Rng) -> String {
    let lines = rng.next() % 40;
    let mut out = String::new();
    for _ in 0..lines {
        out.push_str(rng.pick(FRAGMENTS));
        out.push_str(match rng.next() % 10 {
            0 => "\r\n",
            1 => " ",
            _ => "\n",
        });
    }
    if rng.next().is_multiple_of(4) {
        out.pop();
    }
    out
}

#[test]
fn any_file_parses_lints_and_round_trips() {
    let mut rng = Rng(0x5eed_f00d_dead_beef);
    for case in 0..3000 {
        let source = random_file(&mut rng);
        let file = parse(&source);
        let mut covered = Vec::new();
        for item in &file.items {
            match item {
                Item::Loose(index) => covered.push(*index),
                Item::Stanza(c) => covered.extend(c.header_index..=c.last_index),
            }
        }
        assert_eq!(
            covered,
            (0..file.lines.len()).collect::<Vec<_>>(),
            "case {case}: {source:?}"
        );
        let findings = lint(
            &source,
            &LintOptions {
                asn: Some("45689".into()),
            },
        );
        assert!(
            findings
                .iter()
                .all(|f| f.line >= 1 && f.line <= file.lines.len()),
            "case {case}: a finding outside the file: {source:?}"
        );
        let edited = apply(&source, &[]);
        assert_eq!(
            edited.text, source,
            "case {case}: no stanzas must change nothing"
        );
    }
}

fn stanza(header: &str, lines: &[&str], mode: Mode, state: State) -> Stanza {
    Stanza {
        state,
        ..Stanza::present(header, lines, mode)
    }
}

/// Idempotence is promised for files whose blocks are closed: where a block is left open,
/// removing the stanza after it changes what the open block swallows, and the lint refuses
/// such a file anyway (`unterminated-block`).
#[test]
fn any_file_with_closed_blocks_reaches_the_requested_state_and_stays_there() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let mut tried = 0;
    for case in 0..20000 {
        let source = random_file(&mut rng);
        let closed = parse(&source)
            .stanzas()
            .all(|c| !c.is_block || c.terminator.is_some());
        if !closed {
            continue;
        }
        tried += 1;
        let mode = if rng.next().is_multiple_of(2) {
            Mode::Exact
        } else {
            Mode::Merge
        };
        let state = if rng.next().is_multiple_of(4) {
            State::Absent
        } else {
            State::Present
        };
        let mut bgp = stanza(
            "router bgp 45689",
            &["neighbor VTEP peer-group"],
            mode,
            state,
        );
        bgp.children = vec![stanza(
            "address-family ipv4 unicast",
            &["neighbor VTEP activate"],
            mode,
            State::Present,
        )];
        let wanted = check(
            &[
                stanza(
                    "vrf vrf_a",
                    &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
                    mode,
                    state,
                ),
                bgp,
                stanza("ip prefix-list L seq 5 permit any", &[], mode, state),
            ],
            Checks {
                refuse_unrecognised_headers: true,
                asn: Some("45689"),
            },
        )
        .unwrap();
        let first = apply(&source, &wanted);
        let second = apply(&first.text, &wanted);
        assert_eq!(
            second.text, first.text,
            "case {case}: not idempotent from {source:?}\nFIRST:\n{}\nCHANGES {:?}",
            first.text, second.changes
        );
        assert!(
            second.changes.iter().all(|(_, c)| *c == Change::Unchanged),
            "case {case}: {:?} from {source:?}",
            second.changes
        );
        let reparsed = parse(&first.text);
        let vrfs = reparsed
            .stanzas()
            .filter(|c| c.header == "vrf vrf_a")
            .count();
        assert_eq!(
            vrfs,
            usize::from(state == State::Present),
            "case {case}: {}",
            first.text
        );
    }
    assert!(
        tried >= 300,
        "only {tried} files with closed blocks were generated"
    );
}
