use super::*;

fn refused(changes: serde_json::Value) -> String {
    Request::from_params(params(changes)).expect_err("refused")
}

#[test]
fn the_recorded_nodes_options_are_valid() {
    let request = request();
    assert_eq!(request.gate_mark, 0x40_0000);
    assert_eq!(request.dns_servers, None);
    assert_eq!(request.transit_network.to_string(), "198.51.100.0/24");
}

#[test]
fn each_bad_option_is_refused_naming_it_the_value_and_the_fix() {
    for (changes, start) in [
        (json!({"gate_mark": 3}), "gate_mark: 3 is not a single bit"),
        (json!({"gate_mark": 0}), "gate_mark: 0 is not a single bit"),
        (
            json!({"gate_mark": 1_i64 << 32}),
            "gate_mark: 4294967296 is not a single bit",
        ),
        (
            json!({"vpc_ranges": ["10.202.0.0/33"]}),
            "vpc_ranges: '10.202.0.0/33' is not an IPv4 CIDR",
        ),
        (json!({"vpc_ranges": []}), "vpc_ranges: the list is empty"),
        (
            json!({"loadbalancer_ranges": ["fd00::/64"]}),
            "loadbalancer_ranges: 'fd00::/64' is not an IPv4 CIDR",
        ),
        (
            json!({"transit_network": "198.51.100.0"}),
            "transit_network: '198.51.100.0' is not an IPv4 CIDR",
        ),
        (
            json!({"transit_interface": "eth0/1"}),
            "transit_interface: 'eth0/1' is not a valid interface name",
        ),
        (
            json!({"uplink": "a-name-far-too-long"}),
            "uplink: 'a-name-far-too-long' is not a valid interface name",
        ),
        (
            json!({"uplink": "tr-transit"}),
            "uplink: 'tr-transit' is the transit interface itself",
        ),
        (json!({"gate_priority": 0}), "gate_priority"),
        (json!({"gate_priority": 32766}), "gate_priority"),
        (
            json!({"dns_servers": "some"}),
            "dns_servers: \"some\" is neither the string any nor a list",
        ),
        (
            json!({"ntp_servers": ["pool"]}),
            "ntp_servers: 'pool' is not an IPv4 CIDR",
        ),
        (
            json!({"table": "1bad"}),
            "table: '1bad' is not an nftables table name",
        ),
    ] {
        let msg = refused(changes.clone());
        assert!(msg.starts_with(start), "{changes}: {msg}");
    }
}

#[test]
fn the_transit_network_cidr_with_host_bits_is_its_prefix() {
    let request =
        Request::from_params(params(json!({"transit_network": "198.51.100.1/24"}))).expect("valid");
    assert_eq!(request.transit_network.to_string(), "198.51.100.0/24");
}

/// The list `transit_router_private_ranges` in the role's defaults, the one place the default
/// lives (the role's argument spec is held to it by tests/ansible/test_transit_router_role.py).
fn role_default_private_ranges() -> Vec<String> {
    let defaults = include_str!("../../../../roles/transit_router/defaults/main.yml");
    defaults
        .lines()
        .skip_while(|line| *line != "transit_router_private_ranges:")
        .skip(1)
        .map_while(|line| line.strip_prefix("  - "))
        .map(|item| item.trim().to_string())
        .collect()
}

#[test]
fn the_default_private_ranges_are_the_roles() {
    let role = role_default_private_ranges();
    assert!(
        !role.is_empty(),
        "no transit_router_private_ranges list in the role's defaults"
    );
    assert_eq!(DEFAULT_PRIVATE_RANGES, role.as_slice());
}
