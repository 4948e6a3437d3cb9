//! Inputs the fuzz targets found breaking an invariant, kept as plain tests (TESTING.md).

use frr_local_stanza::edit::apply;
use frr_local_stanza::stanza::{check, Checks, Mode, Stanza};

fn stanza(header: &str, lines: &[&str], mode: Mode) -> Stanza {
    Stanza::present(header, lines, mode)
}

const LENIENT: Checks = Checks {
    refuse_unrecognised_headers: false,
    asn: None,
};

/// frr_stanzas found: with lint=warn a `# …` header was written as a comment, never found
/// again, and added once more on every run; a `# …` line in merge mode the same.
#[test]
fn comments_as_headers_or_lines_are_refused_not_added_on_every_run() {
    let err = check(&[stanza("# note", &[], Mode::Exact)], LENIENT).unwrap_err();
    assert!(
        err.starts_with("stanzas[0].header='# note' is a comment"),
        "{err}"
    );
    let err = check(
        &[stanza(
            "route-map R deny 10",
            &["vni 100", "# note"],
            Mode::Merge,
        )],
        LENIENT,
    )
    .unwrap_err();
    assert!(
        err.starts_with("stanzas[0].lines[1]='# note' is a comment"),
        "{err}"
    );
}

/// frr_stanzas found: with lint=warn a top-level `address-family …` with no lines was reported
/// as added while nothing was written.
#[test]
fn a_top_level_address_family_is_refused_instead_of_silently_dropped() {
    let err = check(
        &[stanza("address-family ipv4 unicast", &[], Mode::Merge)],
        LENIENT,
    )
    .unwrap_err();
    assert!(err.contains("lives inside `router bgp …`"), "{err}");
}

/// What the fixes keep: the same stanzas applied twice give the same file.
#[test]
fn the_found_cases_now_reach_a_fixed_point() {
    let wanted = check(
        &[stanza("route-map R deny 10", &["vni 100"], Mode::Merge)],
        LENIENT,
    )
    .unwrap();
    let first = apply("frr version 10.4.1\n", &wanted);
    assert_eq!(apply(&first.text, &wanted).text, first.text);
}

/// `make fuzz` (frr_stanzas) found: a line that opens a nested context (`rpki` under `vrf`)
/// swallowed the lines after it, so merge mode added them again on every run.
#[test]
fn a_line_that_opens_a_nested_context_is_refused() {
    let err = check(
        &[stanza(
            "vrf vrf_a",
            &["rpki", "ip route 0.0.0.0/0 10.20.50.1"],
            Mode::Merge,
        )],
        LENIENT,
    )
    .unwrap_err();
    assert!(
        err.starts_with("stanzas[0].lines[0]='rpki' opens a context (`rpki`)"),
        "{err}"
    );
}

/// `make fuzz` (frr_stanzas) found: a body line starting with a top-level keyword (`rpki…`
/// under a route-map) ended the stanza there, so merge mode added the rest again on every run.
#[test]
fn a_line_that_starts_a_top_level_context_is_refused() {
    let err = check(
        &[stanza(
            "route-map R deny 10",
            &[
                "rpki.50.1 vrf x",
                "ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default",
            ],
            Mode::Merge,
        )],
        LENIENT,
    )
    .unwrap_err();
    assert!(
        err.starts_with(
            "stanzas[0].lines[0]='rpki.50.1 vrf x' starts a top-level context (`rpki`)"
        ),
        "{err}"
    );
}

/// `make fuzz` (frr_stanzas) found: `vni 100` in an address-family of a `router bgp` opens a
/// nested context there, so merge mode added it again on every run.
#[test]
fn a_line_that_opens_a_context_inside_an_address_family_is_refused() {
    let mut router = stanza(
        "router bgp 45689 vrf vrf_evpn",
        &["neighbor VTEP bfd"],
        Mode::Merge,
    );
    router.children = vec![stanza(
        "address-family ipv6 unicast",
        &["vni 100"],
        Mode::Merge,
    )];
    let err = check(&[router], LENIENT).unwrap_err();
    assert!(
        err.starts_with("stanzas[0].children[0].lines[0]='vni 100' opens a context (`vni`)"),
        "{err}"
    );
}

/// `make fuzz` (frr_stanzas) found: `router openfabricX` is a block to Proxmox's merge but no
/// context to frr-reload, so its lines read as top-level commands and were added every run.
#[test]
fn a_block_header_frr_does_not_open_is_refused() {
    let err = check(
        &[stanza(
            "router openfabricx",
            &["set metric 10"],
            Mode::Exact,
        )],
        LENIENT,
    )
    .unwrap_err();
    assert!(
        err.starts_with("stanzas[0].header='router openfabricx' opens no context FRR knows"),
        "{err}"
    );
    let wanted = check(
        &[stanza(
            "router openfabric x",
            &["net 49.0001.1111.1111.1111.00"],
            Mode::Exact,
        )],
        LENIENT,
    )
    .unwrap();
    let first = apply("", &wanted);
    assert_eq!(apply(&first.text, &wanted).text, first.text);
}

/// Issue "Safe on a real node", 9: a NUL (or another control character) in a header or a line
/// was written into the file as it was.
#[test]
fn control_characters_in_headers_and_lines_are_refused() {
    for (header, line) in [
        ("vrf v\0", "x"),
        ("vrf v", "ip route 1.0.0.0/8\0 2.2.2.2"),
        ("vrf v", "x\u{7}"),
    ] {
        let err = check(&[stanza(header, &[line], Mode::Merge)], LENIENT).unwrap_err();
        assert!(err.contains("contains the control character U+00"), "{err}");
        let at = if header.contains('\0') {
            "stanzas[0].header="
        } else {
            "stanzas[0].lines[0]="
        };
        assert!(err.starts_with(at), "{err}");
    }
}
