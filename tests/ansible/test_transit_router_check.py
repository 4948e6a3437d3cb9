"""deevnet.net.transit_router_check through Ansible, ad hoc as an operator runs it, in a `node`
namespace where the test sets up the router itself: a veth pair for the transit interface and
the uplink, the spec's ruleset loaded from the test's own persisted file, the routing gate, a unit
file enabled in a temp folder. Each fault the audit must name is made on a real kernel: the
ruleset flushed, the gate removed, a route into a VPC, an accept ahead of the private drop, the
persisted file drifted, a planted file, and bad input."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, VENV_BIN, assert_documentation_matches_binary, filter_plugin, oneline_result
from test_return_keys import assert_keys_match_return

MODULE = "deevnet.net.transit_router_check"
TRANSIT, UPLINK = "tr-transit", "tr-up"

# The persisted ruleset in the shape the role renders (DNS and NTP `any`).
RULESET = f"""\
# Managed by Ansible (deevnet.net.transit_router): what the transit network may reach.
table inet deevnet_transit {{}}
delete table inet deevnet_transit
table inet deevnet_transit {{
\tset vpc_ranges {{
\t\ttype ipv4_addr
\t\tflags interval
\t\tauto-merge
\t\telements = {{ 10.202.0.0/24, 192.0.2.0/24 }}
\t}}
\tset loadbalancer_ranges {{
\t\ttype ipv4_addr
\t\tflags interval
\t\tauto-merge
\t\telements = {{ 10.96.100.0/28 }}
\t}}
\tset private_ranges {{
\t\ttype ipv4_addr
\t\tflags interval
\t\tauto-merge
\t\telements = {{ 10.0.0.0/8, 100.64.0.0/10, 169.254.0.0/16, 172.16.0.0/12, 192.168.0.0/16 }}
\t}}

\tchain prerouting {{
\t\ttype filter hook prerouting priority mangle; policy accept;
\t\tiifname "{TRANSIT}" meta mark set meta mark | 0x00400000
\t}}

\tchain forward {{
\t\ttype filter hook forward priority -200; policy accept;
\t\tiifname "{TRANSIT}" jump from_transit
\t\toifname "{TRANSIT}" jump to_transit
\t}}

\tchain from_transit {{
\t\tmeta nfproto ipv6 counter drop
\t\toifname "{TRANSIT}" counter drop
\t\tip daddr @vpc_ranges counter drop
\t\tip daddr @loadbalancer_ranges accept
\t\tudp dport 53 accept
\t\tudp dport 123 accept
\t\tip daddr @private_ranges counter drop
\t\toifname "{UPLINK}" accept
\t\tcounter drop
\t}}

\tchain to_transit {{
\t\tct state established,related accept
\t\tcounter drop
\t}}

\tchain postrouting {{
\t\ttype nat hook postrouting priority srcnat; policy accept;
\t\tip saddr 198.51.100.0/24 oifname != "{TRANSIT}" masquerade
\t}}
}}
"""

# The role's variables for the same router: its filter renders the ruleset the role persists.
ROLE_VARIABLES = {
    **yaml.safe_load((ROOT / "roles" / "transit_router" / "defaults" / "main.yml").read_text()),
    "transit_router_transit_interface": TRANSIT,
    "transit_router_transit_network": "198.51.100.0/24",
    "transit_router_uplink": UPLINK,
    "transit_router_loadbalancer_ranges": ["10.96.100.0/28"],
    "transit_router_vpc_ranges": ["10.202.0.0/24", "192.0.2.0/24"],
}

UNIT = """\
[Unit]
Description=deevnet.net transit router: routing gate and nftables rules of the transit network
PartOf=nftables.service
ReloadPropagatedFrom=nftables.service

[Install]
WantedBy=sysinit.target
"""

GATE = [
    ("-4", f"priority 100 iif {TRANSIT} fwmark 0/0x400000 prohibit"),
    ("-6", f"priority 100 iif {TRANSIT} prohibit"),
]


class Router:
    """The node's namespace as a transit router, its files in `tmp`."""

    def __init__(self, node, tmp: Path):
        self.node = node
        self.ruleset = tmp / "nftables.d" / "deevnet-transit-router.nft"
        self.unit = tmp / "systemd" / "deevnet-transit-router.service"
        self.ruleset.parent.mkdir()
        (self.unit.parent / "sysinit.target.wants").mkdir(parents=True)
        self.ruleset.write_text(RULESET)
        self.unit.write_text(UNIT)
        (self.unit.parent / "sysinit.target.wants" / self.unit.name).symlink_to(self.unit)
        node.ip("link", "add", TRANSIT, "type", "veth", "peer", "name", UPLINK)
        # A changed ip_forward sets every interface's forwarding, the transit one's too.
        node.set_proc("net/ipv4/ip_forward", "1")
        self.args = (f"transit_interface={TRANSIT} transit_network=198.51.100.0/24 uplink={UPLINK} "
                     "loadbalancer_ranges=10.96.100.0/28 vpc_ranges=10.202.0.0/24,192.0.2.0/24 "
                     "private_ranges=10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,169.254.0.0/16 "
                     f"ruleset_path={self.ruleset} unit_path={self.unit} "
                     f"nftables_conf_path={tmp / 'nftables.conf'}")

    def sh(self, script: str) -> str:
        proc = subprocess.run(["ip", "netns", "exec", self.node.netns, "sh", "-c", script],
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{script}: {proc.stderr}"
        return proc.stdout

    def enforce(self) -> None:
        for family, rule in GATE:
            self.sh(f"ip {family} rule add {rule}")
        self.sh(f"nft -f {self.ruleset}")

    def audit(self, env: dict, extra_args: str = "", *options: str) -> tuple[str, dict]:
        proc = self.node.run(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m", MODULE,
                             "-a", f"{self.args} {extra_args}", *options)
        return oneline_result(proc.stdout)


@pytest.fixture
def router(node, tmp_path):
    return Router(node, tmp_path)


def failed_check(result: dict, name: str) -> dict:
    check = next(c for c in result["checks"] if c["name"] == name)
    assert not check["ok"], check
    return check


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("transit_router_check", ansible_env)


def test_the_enforced_router_passes_every_check_in_check_mode_too(router, ansible_env):
    router.enforce()
    before = router.sh("nft list ruleset; ip rule; ip -6 rule")
    for options in ((), ("--check",)):
        status, result = router.audit(ansible_env, "", *options)
        assert status == "SUCCESS", result
        assert result["state"] == "enforced" and result["violations"] == [], result
        assert result["changed"] is False
        assert result["gate"] == {"ipv4": True, "ipv6": True}
        assert result["forwarding"] == {"ip_forward": True, "transit": True}
        assert [c["name"] for c in result["checks"]] == [
            "table_present", "open_forward_policy", "first_in_forward", "private_accept_ahead",
            "vpc_route", "uplink_snat", "routing_gate", "forwarding", "persisted", "reload_survival",
            "transit_interface", "legacy_tables", "reverse_path"]
        assert result["forward_chains"] == [{"family": "inet", "table": "deevnet_transit", "chain": "forward",
                                             "priority": -200, "policy": "accept"}]
        assert result["msg"] == "transit router enforced: all 13 checks passed"
    assert router.sh("nft list ruleset; ip rule; ip -6 rule") == before, "the audit changed the node"


def test_a_flushed_ruleset_leaves_the_router_closed_by_the_gate(router, ansible_env):
    router.enforce()
    router.sh("nft flush ruleset")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["state"] == "closed", result
    assert result["violations"] == ["table_present", "open_forward_policy", "first_in_forward",
                                    "private_accept_ahead", "uplink_snat", "persisted"], result
    assert result["msg"].startswith("transit router closed: table_present: table inet deevnet_transit is absent."), result["msg"]
    assert f"Fix: load the persisted ruleset: `nft -f {router.ruleset}`" in result["msg"], result["msg"]


def test_no_gate_and_no_table_with_forwarding_on_is_open(router, ansible_env):
    router.enforce()
    router.sh("nft flush ruleset && " + " && ".join(f"ip {family} rule del {rule}" for family, rule in GATE))
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["state"] == "open", result
    assert result["gate"] == {"ipv4": False, "ipv6": False}
    assert "a forward policy of accept with no collection rules" in failed_check(result, "open_forward_policy")["message"]
    assert f"`ip -4 rule add {GATE[0][1]}`" in failed_check(result, "routing_gate")["fix"]


def test_a_route_into_a_vpc_range_is_named_with_its_table(router, ansible_env):
    router.enforce()
    router.sh(f"ip link set {UPLINK} up && ip addr add 10.9.0.1/24 dev {UPLINK} && "
              "ip route add 10.202.0.0/25 via 10.9.0.2 table 7 && ip route add blackhole 192.0.2.0/24")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["violations"] == ["vpc_route"], result
    assert result["state"] == "enforced", "a route into a VPC does not open the table's decision"
    assert result["routes_into_vpc"] == [{"dst": "10.202.0.0/25", "table": "7", "dev": UPLINK, "gateway": "10.9.0.2"}]
    check = failed_check(result, "vpc_route")
    assert "10.202.0.0/25 in table 7" in check["message"], check
    assert check["fix"].startswith("`ip route del 10.202.0.0/25 table 7`"), check


def test_an_accept_for_a_private_range_ahead_of_the_drop_is_named(router, ansible_env):
    router.enforce()
    router.sh("nft insert rule inet deevnet_transit from_transit ip daddr 10.0.0.0/8 accept")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["state"] == "closed", "the gate holds while the table does not decide"
    assert result["violations"] == ["private_accept_ahead", "persisted"], result
    message = failed_check(result, "private_accept_ahead")["message"]
    assert "inet deevnet_transit from_transit (rule handle" in message and "accepts 10.0.0.0/8" in message, message


def test_the_roles_rendered_ruleset_is_enforced(router, ansible_env):
    # The role's own ruleset, DNS and NTP `any` behind the VPC drop: no finding (issue 45's
    # stricter walk, mark writers and paths around forward must not fault it).
    router.ruleset.write_text(filter_plugin("transit_router").transit_router_ruleset(ROLE_VARIABLES))
    router.enforce()
    status, result = router.audit(ansible_env)
    assert status == "SUCCESS", result
    assert result["state"] == "enforced" and result["violations"] == [], result


def test_dns_any_ahead_of_the_vpc_drop_is_named(router, ansible_env):
    # Issue 45, TR3: `udp dport 53 accept` first lets UDP 53 reach every VPC.
    router.enforce()
    router.sh("nft insert rule inet deevnet_transit from_transit udp dport 53 accept")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["state"] == "closed", result
    assert result["violations"] == ["private_accept_ahead", "persisted"], result
    message = failed_check(result, "private_accept_ahead")["message"]
    assert "accepts any destination" in message and "192.0.2.0/24" in message, message


def test_a_rate_limited_private_drop_is_named(router, ansible_env):
    # Issue 45, TR2: a limited drop drops only some packets; the uplink accept gets the rest.
    router.enforce()
    listing = router.sh("nft -a list chain inet deevnet_transit from_transit")
    handle = next(line.rsplit(" ", 1)[1] for line in listing.splitlines() if "@private_ranges" in line)
    router.sh(f"nft replace rule inet deevnet_transit from_transit handle {handle} "
              "ip daddr @private_ranges limit rate 10/second counter drop")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["state"] == "closed", result
    message = failed_check(result, "private_accept_ahead")["message"]
    assert "accepts any destination" in message, message
    assert "172.16.0.0/12" in message, message


def test_another_table_setting_the_gate_bit_leaves_the_router_open(router, ansible_env):
    # Issue 45, TR1: the gate passes every packet with the bit, whoever set it.
    router.enforce()
    router.sh("nft add table ip mangle && nft add chain ip mangle PREROUTING "
              "'{ type filter hook prerouting priority -150; }' && "
              "nft add rule ip mangle PREROUTING meta mark set meta mark or 0x400000")
    for deleted in (False, True):
        if deleted:
            router.sh("nft delete table inet deevnet_transit")
        status, result = router.audit(ansible_env)
        assert status == "FAILED!", result
        assert result["state"] == "open", result
        message = failed_check(result, "routing_gate")["message"]
        assert "ip mangle PREROUTING (rule handle 2) sets the packet mark" in message, message


def test_a_persisted_file_that_differs_from_the_running_table_names_the_difference(router, ansible_env):
    router.enforce()
    router.ruleset.write_text(RULESET.replace("\t\tudp dport 123 accept\n", ""))
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["violations"] == ["persisted"], result
    message = failed_check(result, "persisted")["message"]
    assert "differs from the running table: running but not in" in message, message
    assert '"right":123' in message, message


def test_a_bridged_transit_interface_leaves_nothing_provable(router, ansible_env):
    router.enforce()
    router.sh(f"ip link add br-t type bridge && ip link set {TRANSIT} master br-t")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["state"] == "open", "the gate's iif and the table's iifname see br-t"
    assert result["violations"] == ["transit_interface"], result
    assert f"{TRANSIT} is enslaved to br-t" in failed_check(result, "transit_interface")["message"]


def test_rp_filter_on_the_uplink_without_marked_answers_is_a_violation_of_availability(router, ansible_env):
    router.enforce()
    router.sh(f"echo 2 > /proc/sys/net/ipv4/conf/{UPLINK}/rp_filter")
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["violations"] == ["reverse_path"], result
    assert result["state"] == "enforced", "availability changes no state"
    assert "net.ipv4.conf.all.src_valid_mark=1" in failed_check(result, "reverse_path")["fix"]


@pytest.mark.parametrize(("bad", "start"), [
    ("uplink=eth9", "uplink: 'eth9' does not exist on this node"),
    ("vpc_ranges=10.202.0.0/33", "vpc_ranges: '10.202.0.0/33' is not an IPv4 CIDR"),
    ("gate_mark=3", "gate_mark: 3 is not a single bit"),
])
def test_bad_input_is_refused_naming_the_option(router, ansible_env, bad, start):
    router.enforce()
    status, result = router.audit(ansible_env, bad)
    assert status == "FAILED!", result
    assert result["msg"].startswith(start), result["msg"]
    assert "state" not in result, result


def test_a_planted_world_writable_ruleset_file_is_refused(router, ansible_env):
    router.enforce()
    os.chmod(router.ruleset, 0o666)
    status, result = router.audit(ansible_env)
    assert status == "FAILED!", result
    assert result["violations"] == ["persisted"], result
    message = failed_check(result, "persisted")["message"]
    assert "could have been written by another user than root" in message, message
    assert "writable by its group or others (mode 0666)" in message, message


def test_the_result_keys_match_return(router, ansible_env):
    runs = [router.audit(ansible_env, "gate_mark=3")]
    runs.append(router.audit(ansible_env))
    router.enforce()
    runs.append(router.audit(ansible_env))
    assert [status for status, _ in runs] == ["FAILED!", "FAILED!", "SUCCESS"], runs
    assert_keys_match_return("transit_router_check", ansible_env, [(s, set(r)) for s, r in runs])
