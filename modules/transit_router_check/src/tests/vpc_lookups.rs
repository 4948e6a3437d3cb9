use super::*;
use crate::checks::VpcLookups;
use crate::evaluate;
use crate::routes::{probe_points, read_lookup, Lookup};
use deevnet_runtime::nft::ranges::Range;

const VPC_POLICY: &str = include_str!("../../tests/data/ip-6.1/route-get-vpc-policy.json");
const INTERNET: &str = include_str!("../../tests/data/ip-6.1/route-get-internet.json");
const INTERNET_ROUTE: &str = include_str!("../../tests/data/ip-6.1/route-get-internet-route.json");
const UNMARKED: &str = include_str!("../../tests/data/ip-6.1/route-get-unmarked.txt");
const BLACKHOLE: &str = include_str!("../../tests/data/ip-6.1/route-get-blackhole.txt");

/// The trusted runner's error for a failed `ip`, ending with what ip printed.
fn failed(stderr: &str) -> Result<String, String> {
    Err(format!(
        "/usr/sbin/ip -j route get fibmatch ... failed (exit status: 2): {}",
        stderr.trim()
    ))
}

fn lookups(vpc: Vec<(&str, Lookup)>) -> VpcLookups {
    VpcLookups {
        source: "198.51.100.2".into(),
        internet: Some(("1.1.1.1".into(), read_lookup(&Ok(INTERNET.into())))),
        vpc: vpc.into_iter().map(|(a, l)| (a.to_string(), l)).collect(),
    }
}

/// TR10: `ip rule to <vpc> lookup 7` with a default in table 7 leaves no route into the VPC in
/// any table, but the kernel forwards a marked transit packet there: a violation.
#[test]
fn a_vpc_reached_by_policy_routing_is_a_violation() {
    let mut observed = enforced();
    assert!(crate::routes::into_vpc(&observed.routes, &request().vpc_ranges).is_empty());
    observed.vpc_lookups = Ok(lookups(vec![(
        "10.202.0.0",
        read_lookup(&Ok(VPC_POLICY.into())),
    )]));
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["vpc_route"]);
    let check = report
        .checks
        .iter()
        .find(|c| c.name == "vpc_route")
        .expect("reported");
    assert!(
        check.message.contains("a marked transit packet from 198.51.100.2 to 10.202.0.0 is forwarded by default via 198.51.100.2 dev tr-transit table 7"),
        "{}",
        check.message
    );
}

/// TR10, must not pass the other way: the Internet's own route (the table's private drop stands
/// in front of it), a prohibit and a blackhole are no route into a VPC; an answer the module
/// cannot read is a violation naming it.
#[test]
fn the_internets_route_and_the_refusals_pass_and_an_unread_answer_does_not() {
    assert_eq!(
        read_lookup(&failed(UNMARKED)),
        Lookup::NotForwarded("prohibited".into())
    );
    assert_eq!(
        read_lookup(&failed(BLACKHOLE)),
        Lookup::NotForwarded("blackholed".into())
    );
    let mut observed = enforced();
    observed.vpc_lookups = Ok(lookups(vec![
        ("192.0.2.0", read_lookup(&Ok(INTERNET_ROUTE.into()))),
        ("10.202.0.0", read_lookup(&failed(UNMARKED))),
    ]));
    assert!(evaluate(&request(), &observed).violations.is_empty());
    observed.vpc_lookups = Ok(lookups(vec![(
        "10.202.0.0",
        read_lookup(&failed("Error: something else")),
    )]));
    assert_eq!(evaluate(&request(), &observed).violations, ["vpc_route"]);
    observed.vpc_lookups = Err("the router holds every address of the transit network".into());
    assert_eq!(evaluate(&request(), &observed).violations, ["vpc_route"]);
}

/// TR10: the addresses asked are each VPC range's first and where each overlapping route or rule
/// prefix starts and ends inside it.
#[test]
fn the_probed_addresses_cover_every_prefix_boundary_inside_the_vpc_ranges() {
    let vpc = [Range::parse_cidr("10.202.0.0/24").expect("CIDR")];
    let rule = [Range::parse_cidr("10.202.0.128/26").expect("CIDR")];
    let points = probe_points(&vpc, &recorded_routes(), &rule);
    let shown: Vec<String> = points
        .iter()
        .map(|p| std::net::Ipv4Addr::from(*p).to_string())
        .collect();
    assert_eq!(shown, ["10.202.0.0", "10.202.0.128", "10.202.0.192"]);
}

/// TR10: a default route back into the transit network (toward an egress gateway) is the
/// Internet's route too, and still a route into the VPCs.
#[test]
fn a_lookup_back_out_of_the_transit_interface_is_a_violation_even_as_the_internets_route() {
    let back = || Lookup::Forwarded {
        route: "default via 198.51.100.3 dev tr-transit table main".into(),
        dev: Some("tr-transit".into()),
    };
    let mut observed = enforced();
    observed.vpc_lookups = Ok(VpcLookups {
        source: "198.51.100.2".into(),
        internet: Some(("1.1.1.1".into(), back())),
        vpc: vec![("10.202.0.0".into(), back())],
    });
    assert_eq!(evaluate(&request(), &observed).violations, ["vpc_route"]);
}
