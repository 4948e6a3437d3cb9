//! The lint held against what Proxmox's merge really made of real files
//! (`tests/data/pve-merge`, the source of truth for these vectors), and against the edge table
//! of `docs/proxmox-frr-merge.md` (B.6, B.7).

use frr_local_stanza::lint::{lint, Finding, Generation, LintOptions};
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pve-merge")
}

fn read(name: &str) -> String {
    fs::read_to_string(data().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn findings(source: &str) -> Vec<Finding> {
    lint(source, &LintOptions::default())
}

const GENERATIONS: [(Generation, &str); 2] =
    [(Generation::Rewrite, "130"), (Generation::Legacy, "12x")];

#[test]
fn the_portable_file_is_clean_and_fully_merged_by_both_generations() {
    let portable = read("frr.conf.local.portable");
    assert_eq!(findings(&portable), []);
    for merged in [
        "merged_1.3.0_caseA.conf",
        "merged_1.3.0_caseB.conf",
        "merged_1.2.x_caseA_portable.conf",
        "merged_1.2.x_caseB_portable.conf",
    ] {
        let output = read(merged);
        let present: Vec<&str> = output.lines().map(str::trim).collect();
        for line in portable
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('!'))
        {
            assert!(present.contains(&line), "{merged} lacks `{line}`");
        }
        assert!(!output.contains(" exit-vrf\nexit-vrf"), "{merged}");
    }
}

#[test]
fn the_exit_vrf_variant_is_caught_where_the_old_parser_doubles_it() {
    let source = read("frr.conf.local.exit-vrf");
    let found = findings(&source);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0].line, found[0].rule), (7, "exit-vrf"));
    assert_eq!(found[0].generations, [Generation::Legacy]);
    for case in ["caseA", "caseB"] {
        let legacy = read(&format!("merged_1.2.x_{case}_exit-vrf.conf"));
        assert!(
            legacy.contains(" exit-vrf\nexit-vrf"),
            "the vector shows the doubled terminator"
        );
        let rewrite = read(&format!("merged_1.3.0_{case}.conf"));
        assert!(!rewrite.contains(" exit-vrf"), "1.3.0 handles it");
    }
}

/// Lines of `input` that `out` (the merge of base config + input) does not carry: neither as
/// an added line (out minus base, as a multiset) nor, for headers and terminators, anywhere.
fn lost_lines(input: &str, base: &str, out: &str) -> Vec<usize> {
    let mut added: HashMap<&str, isize> = HashMap::new();
    for line in out.lines() {
        *added.entry(line.trim()).or_default() += 1;
    }
    for line in base.lines() {
        *added.entry(line.trim()).or_default() -= 1;
    }
    let anywhere: Vec<&str> = out.lines().map(str::trim).collect();
    let mut lost = Vec::new();
    for (index, line) in input.lines().enumerate() {
        let text = line.trim();
        if text.is_empty() || text.starts_with('!') {
            continue;
        }
        let structural = !line.starts_with(' ') || text.starts_with("exit");
        let kept = match added.get_mut(text) {
            Some(count) if *count > 0 => {
                *count -= 1;
                true
            }
            _ => structural && anywhere.contains(&text),
        };
        if !kept {
            lost.push(index + 1);
        }
    }
    lost
}

#[test]
fn every_line_a_real_merge_dropped_or_changed_is_caught_at_its_line() {
    let mut checked = 0;
    for case in ["e1a", "e2", "e3", "e6", "e10"] {
        let input = read(&format!("edge/{case}.conf"));
        let found = findings(&input);
        for (generation, suffix) in GENERATIONS {
            let out = read(&format!("edge/{case}.{suffix}.out"));
            let base = read(&format!("edge/base.{suffix}.out"));
            let flagged = |line: usize| {
                found
                    .iter()
                    .any(|f| f.line == line && f.generations.contains(&generation))
            };
            if out.trim().is_empty() {
                // The merge itself died (E2): some error must name this generation.
                assert!(
                    found.iter().any(|f| f.generations.contains(&generation)),
                    "{case}.{suffix}: the merge failed, the lint saw nothing: {found:#?}"
                );
                checked += 1;
                continue;
            }
            for line in lost_lines(&input, &base, &out) {
                assert!(
                    flagged(line),
                    "{case}.{suffix}: line {line} is lost by the merge but not flagged: {found:#?}"
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 8,
        "only {checked} lost lines were checked: the vectors did not load"
    );
}

/// (line, rule, generations) of one expected finding.
type Expected = (usize, &'static str, &'static [Generation]);
/// A case of the spec's edge table: name, file, expected (line, rule).
type EdgeCase = (&'static str, &'static str, &'static [(usize, &'static str)]);

/// Lines the merge keeps but breaks (vtysh rejects the output): explicit, from the vectors.
#[test]
fn constructs_the_real_merges_break_are_caught() {
    use Generation::{Legacy, Rewrite};
    let expected: &[(&str, &[Expected])] = &[
        ("e1a", &[(3, "exit-vrf", &[Legacy])]),
        (
            "e2",
            &[(1, "empty-stanza", &[Rewrite]), (2, "exit-vrf", &[Legacy])],
        ),
        (
            "e3",
            &[
                (1, "unterminated-block", &[Rewrite]),
                (3, "exit-vrf", &[Legacy]),
                (3, "indented-terminator", &[Rewrite]),
            ],
        ),
        (
            "e6",
            &[
                (1, "top-level-route", &[Legacy, Rewrite]),
                (2, "list-without-seq", &[Legacy, Rewrite]),
                (3, "top-level-line", &[Legacy, Rewrite]),
            ],
        ),
        (
            "e10",
            &[
                (1, "route-map-generated-name", &[Legacy, Rewrite]),
                (5, "route-map-renumbered", &[Legacy, Rewrite]),
            ],
        ),
    ];
    for (case, wanted) in expected {
        let found: Vec<Expected> = findings(&read(&format!("edge/{case}.conf")))
            .iter()
            .map(|f| (f.line, f.rule, leak(f.generations.clone())))
            .collect();
        assert_eq!(&found, wanted, "{case}");
    }
    // The evidence the expectations rest on.
    assert!(read("edge/e1a.12x.out").contains(" exit-vrf\nexit-vrf"));
    assert!(read("edge/e2.130.out").trim().is_empty());
    assert!(read("edge/e3.130.out").contains(" exit-vrf\nexit-vrf"));
    assert!(read("edge/e10.130.out").contains("route-map MAP_VTEP_IN deny 2"));
}

fn leak(generations: Vec<Generation>) -> &'static [Generation] {
    Box::leak(generations.into_boxed_slice())
}

/// The rest of the spec's edge table (B.6), as files of our own.
#[test]
fn the_spec_edge_table_cases_without_vectors() {
    let cases: &[EdgeCase] = &[
        (
            "E1b: a vrf without terminator, then a list entry",
            "vrf vrf_other\n ip route 0.0.0.0/0 10.9.9.1 nexthop-vrf default\nip prefix-list P seq 5 permit 10.0.0.0/8 le 24\n",
            &[(1, "unterminated-block")],
        ),
        (
            "E4: a router-level line after a new address-family",
            "router bgp 45689\n address-family ipv4 unicast\n  neighbor VTEP activate\n exit-address-family\n neighbor VTEP bfd\nexit\n",
            &[(5, "router-line-after-address-family")],
        ),
        (
            "E7: a router left open absorbs a top-level route",
            "router bgp 45689 vrf vrf_evpn\n bgp router-id 10.0.0.1\nip route 10.0.0.0/8 10.0.0.254\nip prefix-list P seq 5 permit 10.0.0.0/8\n",
            &[(1, "unterminated-block")],
        ),
        (
            "E8: `#` comments are harmless, a trailing `!` remark drops the command",
            "# top\nvrf vrf_tdemo\n # inside\n ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default ! leak\n ip route 10.0.0.0/8 10.20.50.1\nexit\n",
            &[(4, "bang-in-command")],
        ),
        (
            "E9: the same vrf twice is folded",
            "vrf vrf_tdemo\n ip route 10.0.0.0/8 10.20.50.1\nexit\n!\nvrf vrf_tdemo\n ip route 10.1.0.0/16 10.20.50.1\nexit\n",
            &[],
        ),
        (
            "E11: whitespace-only lines and TAB indentation are fine",
            "vrf vrf_tdemo\n  \t\n\tip route 10.0.0.0/8 10.20.50.1\nexit\n",
            &[],
        ),
        (
            "E12: a router for a VRF Proxmox does not generate",
            "router bgp 45689 vrf vrf_new\n address-family ipv4 unicast\n  import vrf default\n exit-address-family\nexit\n",
            &[],
        ),
        (
            "E13: an address-family outside any router",
            "address-family ipv4 unicast\n neighbor VTEP activate\nexit-address-family\n",
            &[(1, "address-family-outside-router"), (2, "top-level-line")],
        ),
        (
            "E14: two spaces before the ASN",
            "router bgp  45689\n neighbor VTEP bfd\nexit\n",
            &[(1, "header-spacing")],
        ),
        (
            "B.7: an indented header",
            "vrf vrf_a\n ip route 10.0.0.0/8 10.20.50.1\nexit\n ip prefix-list P seq 5 permit any\n",
            &[(4, "indented-header")],
        ),
        (
            "B.6: `end` and an unrecognised stanza",
            "line vty\n exec-timeout 0 0\nexit\nend\n",
            &[(1, "unrecognised-stanza"), (4, "end-statement")],
        ),
    ];
    for (name, source, wanted) in cases {
        let found: Vec<(usize, &str)> = findings(source).iter().map(|f| (f.line, f.rule)).collect();
        assert_eq!(&found, wanted, "{name}");
    }
    let e5 = lint(
        "router bgp 65000 vrf vrf_evpn\n neighbor X bfd\nexit\n",
        &LintOptions {
            asn: Some("45689".into()),
        },
    );
    assert_eq!(e5.len(), 1);
    assert_eq!((e5[0].line, e5[0].rule), (1, "bgp-asn-mismatch"), "E5");
}

/// The crate's README lists every rule with its severity and spec section.
#[test]
fn the_readme_documents_every_rule() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for rule in frr_local_stanza::rules::ALL {
        let severity = match rule.severity {
            frr_local_stanza::rules::Severity::Error => "error",
            frr_local_stanza::rules::Severity::Warning => "warning",
        };
        let row = format!("| `{}` | {severity} | {} |", rule.name, rule.spec);
        assert!(
            readme.contains(&row),
            "README.md lacks the row starting {row}"
        );
    }
}
