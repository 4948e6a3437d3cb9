"""The role transit_router: its filters (collection/plugins/filter/transit_router.py) unit tested,
the rendered ruleset and the unit's gate lines run in private network namespaces, a traffic test
through a router namespace (allowed targets reached, private and VPC targets not; closed after a
flush, open again after the file is loaded), and the role refusing bad variables and missing
interfaces before it writes anything.

No systemd and no VLAN devices here: the router's interfaces are veths, and the role's runs stop
before the unit would be started (their paths point at the test's folder)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from itertools import count

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import ROOT, VENV_BIN, filter_plugin

ROLE = "deevnet.net.transit_router"
ROLE_DIR = ROOT / "roles" / "transit_router"
transit_router = filter_plugin("transit_router")
ROLE_DEFAULTS = yaml.safe_load((ROLE_DIR / "defaults" / "main.yml").read_text())

# The spec's example, the optional variables from the role's defaults.
EXAMPLE = {
    **ROLE_DEFAULTS,
    "transit_router_transit_interface": "eth0.40.199",
    "transit_router_transit_network": "198.51.100.0/24",
    "transit_router_uplink": "eth1",
    "transit_router_loadbalancer_ranges": ["172.16.50.0/24"],
    "transit_router_vpc_ranges": ["192.0.2.0/24", "10.202.0.0/24"],
}


def with_(**changes):
    return {**EXAMPLE, **{f"transit_router_{key}": value for key, value in changes.items()}}


SET = "\t\ttype ipv4_addr\n\t\tflags interval\n\t\tauto-merge\n"
EXPECTED_RULESET = (
    "# Managed by Ansible (deevnet.net.transit_router): what the transit network may reach. "
    "Loaded by deevnet-transit-router.service.\n"
    "table inet deevnet_transit {}\n"
    "delete table inet deevnet_transit\n"
    "table inet deevnet_transit {\n"
    "\tset vpc_ranges {\n" + SET + "\t\telements = { 10.202.0.0/24, 192.0.2.0/24 }\n\t}\n"
    "\tset loadbalancer_ranges {\n" + SET + "\t\telements = { 172.16.50.0/24 }\n\t}\n"
    "\tset private_ranges {\n" + SET
    + "\t\telements = { 10.0.0.0/8, 100.64.0.0/10, 169.254.0.0/16, 172.16.0.0/12, 192.168.0.0/16 }\n\t}\n"
    "\n"
    "\tchain prerouting {\n"
    "\t\ttype filter hook prerouting priority mangle; policy accept;\n"
    "\t\tiifname \"eth0.40.199\" meta mark set meta mark | 0x00400000\n"
    "\t\tiifname != \"eth0.40.199\" ct direction reply ct original ip saddr 198.51.100.0/24 meta mark set meta mark | 0x00400000\n"
    "\t}\n"
    "\n"
    "\tchain forward {\n"
    "\t\ttype filter hook forward priority -200; policy accept;\n"
    "\t\tiifname \"eth0.40.199\" jump from_transit\n"
    "\t\toifname \"eth0.40.199\" jump to_transit\n"
    "\t}\n"
    "\n"
    "\tchain from_transit {\n"
    "\t\tmeta nfproto ipv6 counter drop\n"
    "\t\toifname \"eth0.40.199\" counter drop\n"
    "\t\tip daddr @vpc_ranges counter drop\n"
    "\t\tip daddr @loadbalancer_ranges accept\n"
    "\t\tudp dport 53 accept\n"
    "\t\tudp dport 123 accept\n"
    "\t\tip daddr @private_ranges counter drop\n"
    "\t\toifname \"eth1\" accept\n"
    "\t\tcounter drop\n"
    "\t}\n"
    "\n"
    "\tchain to_transit {\n"
    "\t\tct state established,related accept\n"
    "\t\tcounter drop\n"
    "\t}\n"
    "\n"
    "\tchain postrouting {\n"
    "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
    "\t\tip saddr 198.51.100.0/24 oifname != \"eth0.40.199\" masquerade\n"
    "\t}\n"
    "}\n")

EXPECTED_UNIT = """\
# Managed by Ansible (deevnet.net.transit_router): the transit router's routing gate and rules, loaded before the network.
[Unit]
Description=deevnet.net transit router: routing gate and nftables rules of the transit network
DefaultDependencies=no
Wants=network-pre.target
After=nftables.service
Before=network-pre.target shutdown.target
Conflicts=shutdown.target
PartOf=nftables.service
ReloadPropagatedFrom=nftables.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStartPre=/bin/sh -c '/usr/sbin/ip -4 rule list priority 100 iif eth0.40.199 fwmark 0/0x400000 | /usr/bin/grep -q prohibit || /usr/sbin/ip -4 rule add priority 100 iif eth0.40.199 fwmark 0/0x400000 prohibit'
ExecStartPre=/bin/sh -c '/usr/sbin/ip -6 rule list priority 100 iif eth0.40.199 | /usr/bin/grep -q prohibit || /usr/sbin/ip -6 rule add priority 100 iif eth0.40.199 prohibit'
ExecStart=/usr/sbin/nft -f /etc/nftables.d/deevnet-transit-router.nft
ExecReload=/usr/sbin/nft -f /etc/nftables.d/deevnet-transit-router.nft
ExecStop=-/usr/sbin/nft delete table inet deevnet_transit

[Install]
WantedBy=sysinit.target
"""


# --- the filters ---------------------------------------------------------------------------------

def test_the_example_passes():
    assert transit_router.transit_router_refusal(EXAMPLE) == []


def test_ruleset_text():
    assert transit_router.transit_router_ruleset(EXAMPLE) == EXPECTED_RULESET


def test_unit_text():
    assert transit_router.transit_router_unit(EXAMPLE) == EXPECTED_UNIT


def test_listed_servers_become_sets():
    text = transit_router.transit_router_ruleset(with_(dns_servers=["192.0.2.153", "9.9.9.9", "9.9.9.9"],
                                                       ntp_servers=["203.0.113.0/28"], vpc_ranges=["10.202.0.0/24"]))
    assert "\tset dns_servers {\n" + SET + "\t\telements = { 9.9.9.9, 192.0.2.153 }\n\t}\n" in text
    assert "\tset ntp_servers {\n" + SET + "\t\telements = { 203.0.113.0/28 }\n\t}\n" in text
    assert "\t\tudp dport 53 ip daddr @dns_servers accept\n\t\tudp dport 123 ip daddr @ntp_servers accept\n" in text
    # The sets in the spec's order: VPC, LoadBalancer, DNS, NTP, private.
    order = [text.index(f"set {name} ") for name in
             ("vpc_ranges", "loadbalancer_ranges", "dns_servers", "ntp_servers", "private_ranges")]
    assert order == sorted(order)


def test_any_accepts_the_port():
    text = transit_router.transit_router_ruleset(with_(dns_servers=["9.9.9.9"], ntp_servers="any"))
    assert "set ntp_servers" not in text and "\t\tudp dport 123 accept\n" in text
    assert "set dns_servers" in text and "udp dport 53 accept" not in text


def test_the_options_reach_the_text():
    variables = with_(table="tr_test", forward_priority=-300, gate_mark=0x10, gate_priority=77,
                      ruleset_path="/srv/tr.nft")
    ruleset, unit = transit_router.transit_router_ruleset(variables), transit_router.transit_router_unit(variables)
    assert "table inet tr_test {\n" in ruleset and "priority -300; policy accept;" in ruleset
    assert "meta mark set meta mark | 0x00000010\n" in ruleset
    assert "priority 77 iif eth0.40.199 fwmark 0/0x10 prohibit'" in unit
    assert "ExecStart=/usr/sbin/nft -f /srv/tr.nft\n" in unit and "ExecStop=-/usr/sbin/nft delete table inet tr_test\n" in unit


REFUSALS = [
    ({"transit_network": "198.51.100.1/24"}, "transit_router_transit_network: '198.51.100.1/24' is not an IPv4 CIDR"),
    ({"transit_network": "2001:db8::/64"}, "transit_router_transit_network: '2001:db8::/64' is not an IPv4 CIDR"),
    ({"loadbalancer_ranges": ["172.16.50.0/33"]}, "transit_router_loadbalancer_ranges: '172.16.50.0/33' is not an IPv4 CIDR"),
    ({"loadbalancer_ranges": ["172.16.50.10"]}, "transit_router_loadbalancer_ranges: '172.16.50.10' is not an IPv4 CIDR"),
    ({"dns_servers": ["9.9.9.300"]}, "transit_router_dns_servers: '9.9.9.300' is not an IPv4 address or CIDR"),
    ({"dns_servers": "all"}, "transit_router_dns_servers: 'all' is neither `any` nor a list"),
    ({"ntp_servers": []}, "transit_router_ntp_servers: the list is empty"),
    ({"loadbalancer_ranges": []}, "transit_router_loadbalancer_ranges: the list is empty"),
    ({"vpc_ranges": []}, "transit_router_vpc_ranges: the list is empty"),
    ({"private_ranges": []}, "transit_router_private_ranges: the list is empty"),
    ({"vpc_ranges": "10.202.0.0/24"}, "transit_router_vpc_ranges: '10.202.0.0/24' is not a list"),
    ({"transit_interface": "eth0.40.199.1234"}, "transit_router_transit_interface: 'eth0.40.199.1234' is a name the kernel refuses"),
    ({"uplink": "eth 1"}, "transit_router_uplink: 'eth 1' is a name the kernel refuses"),
    # 15 characters, 16 bytes: the kernel (and the runtime) count bytes.
    ({"uplink": "eth\u00e9" + "x" * 11}, "transit_router_uplink: 'eth\u00e9xxxxxxxxxxx' is a name the kernel refuses (it is "
                                        "longer than the 15 bytes"),
    ({"uplink": "eth1/2"}, "transit_router_uplink: 'eth1/2' is a name the kernel refuses"),
    ({"uplink": ""}, "transit_router_uplink: '' is not an interface name"),
    ({"uplink": "eth1;reboot"}, "transit_router_uplink: 'eth1;reboot' holds characters the unit's shell lines"),
    ({"uplink": "eth0.40.199"}, "transit_router_uplink: 'eth0.40.199' is also transit_router_transit_interface"),
    ({"loadbalancer_ranges": ["10.202.0.128/25"]},
     "transit_router_loadbalancer_ranges: 10.202.0.128/25 overlaps the VPC range 10.202.0.0/24"),
    ({"transit_network": "10.200.0.0/24"},
     "transit_router_private_ranges: 10.0.0.0/8 contains the transit network 10.200.0.0/24 and would swallow it; "
     "what crosses the transit network is decided by the transit rules"),
    ({"transit_network": "192.0.2.0/25"}, "transit_router_transit_network: 192.0.2.0/25 overlaps the VPC range 192.0.2.0/24"),
    ({"dns_servers": ["192.0.2.53"]}, "transit_router_dns_servers: 192.0.2.53 is inside the VPC range 192.0.2.0/24"),
    ({"ntp_servers": ["10.202.0.0/28"]}, "transit_router_ntp_servers: 10.202.0.0/28 is inside the VPC range 10.202.0.0/24"),
    ({"gate_mark": 3}, "transit_router_gate_mark: 3 (0x3) is not a single bit"),
    ({"gate_mark": 0}, "transit_router_gate_mark: 0 (0x0) is not a single bit"),
    ({"gate_mark": 2 ** 32}, "transit_router_gate_mark: 4294967296 (0x100000000) is not a single bit"),
    ({"gate_mark": "0x400000"}, "transit_router_gate_mark: '0x400000' is not an integer"),
    ({"gate_priority": 0}, "transit_router_gate_priority: 0 is outside 1..32765"),
    ({"gate_priority": 32766}, "transit_router_gate_priority: 32766 is outside 1..32765"),
    ({"forward_priority": "-200"}, "transit_router_forward_priority: '-200' is not an integer"),
    ({"forward_priority": True}, "transit_router_forward_priority: True is not an integer"),
    ({"forward_priority": 2 ** 32}, "transit_router_forward_priority: 4294967296 is outside nft's 32-bit priorities"),
    ({"table": "deevnet-transit"}, "transit_router_table: 'deevnet-transit' is not an nftables table name"),
    ({"ruleset_path": "relative.nft"}, "transit_router_ruleset_path: 'relative.nft' is not an absolute path"),
]


@pytest.mark.parametrize("changes, message", REFUSALS, ids=[message.split(":")[0] + f"-{index}"
                                                           for index, (_c, message) in enumerate(REFUSALS)])
def test_each_bad_variable_is_named_with_its_fix(changes, message):
    problems = transit_router.transit_router_refusal(with_(**changes))
    assert any(problem.startswith(message) for problem in problems), problems
    # Each message ends with what to do.
    assert all(re.search(r"; (set|correct|narrow|choose|use|list|rename|create)", problem) for problem in problems), problems


def test_swallowing_range_lists_ranges_around():
    problems = transit_router.transit_router_refusal(with_(transit_network="192.168.0.0/18"))
    assert problems == ["transit_router_private_ranges: 192.168.0.0/16 contains the transit network 192.168.0.0/18 "
                        "and would swallow it; what crosses the transit network is decided by the transit rules "
                        "(the hairpin drop, replies by connection state), not by the private drop; list the ranges "
                        "around it instead: 192.168.128.0/17, 192.168.64.0/18"]


def test_every_problem_is_reported_at_once():
    problems = transit_router.transit_router_refusal(with_(gate_mark=6, gate_priority=0, uplink="eth0.40.199"))
    assert [problem.split(":")[0] for problem in problems] == [
        "transit_router_uplink", "transit_router_gate_mark", "transit_router_gate_priority"]


def test_a_missing_variable_is_named():
    variables = dict(EXAMPLE)
    del variables["transit_router_gate_mark"]
    assert transit_router.transit_router_refusal(variables) == [
        "transit_router_gate_mark: not set; set it (the role's defaults/main.yml holds the optional ones)"]


@pytest.mark.parametrize("render", ["transit_router_ruleset", "transit_router_unit"])
def test_renderers_refuse_too(render):
    with pytest.raises(AnsibleFilterError, match="transit_router_gate_mark: 3 "):
        getattr(transit_router, render)(with_(gate_mark=3))
    with pytest.raises(AnsibleFilterError, match="mapping of the role's variables"):
        transit_router.transit_router_refusal(["not", "a", "mapping"])


# --- the rendered text, run in private network namespaces -------------------------------------

def in_netns(script: str, *args: str) -> subprocess.CompletedProcess:
    """`script` (sh) in a network namespace of its own, gone when it ends."""
    return subprocess.run(["unshare", "-n", "sh", "-ec", script, "sh", *args], capture_output=True, text=True)


def test_the_ruleset_loads_twice(tmp_path):
    ruleset = tmp_path / "transit.nft"
    ruleset.write_text(transit_router.transit_router_ruleset(with_(dns_servers=["9.9.9.9"])))
    proc = in_netns('nft -c -f "$1"; nft -f "$1"; nft -f "$1"; nft -j list ruleset', str(ruleset))
    assert proc.returncode == 0, proc.stderr
    items = json.loads(proc.stdout)["nftables"]
    tables = [item["table"]["name"] for item in items if "table" in item]
    rules = [item["rule"] for item in items if "rule" in item]
    # Loaded twice, still one table with each rule once.
    assert tables == ["deevnet_transit"]
    assert len(rules) == 2 + 2 + 9 + 2 + 1, rules


def test_gate_lines_add_one_rule_each():
    unit = transit_router.transit_router_unit(EXAMPLE)
    lines = re.findall(r"^ExecStartPre=/bin/sh -c '(.*)'$", unit, re.M)
    assert len(lines) == 2
    script = "\n".join(f"sh -c '{line}'\nsh -c '{line}'" for line in lines) + "\nip -4 rule show\necho ==\nip -6 rule show"
    proc = in_netns(script)
    assert proc.returncode == 0, proc.stderr
    v4, v6 = proc.stdout.split("==\n")
    assert [line for line in v4.splitlines() if "prohibit" in line] == [
        "100:\tfrom all fwmark 0/0x400000 iif eth0.40.199 [detached] prohibit"], v4
    assert [line for line in v6.splitlines() if "prohibit" in line] == [
        "100:\tfrom all iif eth0.40.199 [detached] prohibit"], v6


# --- traffic through a router namespace ---------------------------------------------------------

_names = count()
INTERNET, LOADBALANCER, DNS, PRIVATE, VPC = "203.0.113.8", "172.16.50.10", "10.20.0.53", "10.10.0.5", "10.202.0.5"
TRAFFIC = with_(transit_interface="tr-transit", uplink="tr-up", dns_servers=["10.20.0.53"], ntp_servers="any",
                vpc_ranges=["10.202.0.0/24"])
# Each arrival in the upstream namespace that counts, whatever its source (forwarded without
# masquerade, it would still be counted).
COUNTERS = {"internet-icmp": f"ip daddr {INTERNET} icmp type echo-request",
            "loadbalancer-icmp": f"ip daddr {LOADBALANCER} icmp type echo-request",
            "dns-53": f"ip daddr {DNS} udp dport 53", "dns-123": f"ip daddr {DNS} udp dport 123",
            "private-icmp": f"ip daddr {PRIVATE} icmp type echo-request", "private-53": f"ip daddr {PRIVATE} udp dport 53",
            "vpc-icmp": f"ip daddr {VPC} icmp type echo-request", "vpc-123": f"ip daddr {VPC} udp dport 123"}


# An ICMP echo request and its reply (a raw socket); exit status 0 when answered within a second.
PING = textwrap.dedent("""\
    import socket, struct, sys
    def checksum(data):
        total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
        total = (total >> 16) + (total & 0xFFFF)
        return ~(total + (total >> 16)) & 0xFFFF
    header = struct.pack("!BBHHH", 8, 0, 0, 0x7472, 1) + b"transit!"
    packet = header[:2] + struct.pack("!H", checksum(header)) + header[4:]
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.settimeout(1)
    sock.sendto(packet, (sys.argv[1], 0))
    try:
        while True:
            reply, source = sock.recvfrom(256)
            icmp = reply[(reply[0] & 0x0F) * 4:]
            if source[0] == sys.argv[1] and icmp[0] == 0 and icmp[4:6] == b"tr":
                sys.exit(0)
    except (socket.timeout, OSError):
        sys.exit(1)
    """)


def role_src_valid_mark() -> list[str]:
    """The names the role gives deevnet.net.sysctl_forwarding's src_valid_mark (tasks/main.yml)."""
    tasks = yaml.safe_load((ROLE_DIR / "tasks" / "main.yml").read_text())
    forwarding = next(task["deevnet.net.sysctl_forwarding"] for task in tasks if "deevnet.net.sysctl_forwarding" in task)
    return forwarding.get("src_valid_mark", [])


class Lab:
    """Three namespaces: a client on the transit network, the router, an upstream behind the
    uplink holding the Internet, LoadBalancer, DNS, private and VPC addresses.

    The router's rp_filter is `rp_filter` on every interface, `all` and `default` (systemd's
    50-default.conf sets 2, Ubuntu's 10-network-security.conf 1); src_valid_mark is 1 on the
    names the role sets it on, or on `src_valid_mark` when given."""

    def __init__(self, tmp_path, rp_filter: int = 0, src_valid_mark: list[str] | None = None,
                 ruleset: str | None = None):
        tag = f"{os.getpid()}-{next(_names)}"  # unique across pytest-xdist workers too
        self.client, self.router, self.upstream = (f"trc-{tag}", f"trr-{tag}", f"tru-{tag}")
        self.ruleset = tmp_path / "transit.nft"
        self.ruleset.write_text(ruleset or transit_router.transit_router_ruleset(TRAFFIC))
        for ns in (self.client, self.router, self.upstream):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        self.ip(self.router, "link add tr-transit type veth peer name c0")
        self.ip(self.router, f"link set c0 netns {self.client}")
        self.ip(self.router, "link add tr-up type veth peer name u0")
        self.ip(self.router, f"link set u0 netns {self.upstream}")
        for ns, commands in (
                (self.client, ["addr add 198.51.100.2/24 dev c0", "link set c0 up", "link set lo up",
                               "route add default via 198.51.100.1"]),
                (self.router, ["addr add 198.51.100.1/24 dev tr-transit", "addr add 203.0.113.1/29 dev tr-up",
                               "link set tr-transit up", "link set tr-up up", "link set lo up",
                               "route add default via 203.0.113.2"]),
                (self.upstream, ["addr add 203.0.113.2/29 dev u0", "link set u0 up", "link set lo up",
                                 *(f"addr add {a}/32 dev lo" for a in (INTERNET, LOADBALANCER, DNS, PRIVATE, VPC))])):
            for command in commands:
                self.ip(ns, command)
        self.sh(self.router, "sysctl -qw net.ipv4.ip_forward=1 " + " ".join(
            f"net.ipv4.conf.{name}.rp_filter={rp_filter}" for name in ("all", "default", "tr-transit", "tr-up")))
        marks = role_src_valid_mark() if src_valid_mark is None else src_valid_mark
        for name in ("all", "default", "tr-transit", "tr-up"):
            self.sh(self.router, f"sysctl -qw net.ipv4.conf.{name}.src_valid_mark={int(name in marks)}")
        rules = "\n".join(f'\t\t{match} counter comment "{name}"' for name, match in COUNTERS.items())
        self.sh(self.upstream, "nft -f -", stdin=f"table inet arrivals {{\n\tchain input {{\n\t\ttype filter hook "
                                                f"input priority 0; policy accept;\n{rules}\n\t}}\n}}\n")
        # The gate, as the unit adds it, then the table.
        for line in re.findall(r"^ExecStartPre=/bin/sh -c '(.*)'$", transit_router.transit_router_unit(TRAFFIC), re.M):
            self.sh(self.router, line)
        self.load()

    @staticmethod
    def ip(ns, command):
        subprocess.run(["ip", "-n", ns, *command.split()], check=True)

    @staticmethod
    def sh(ns, script, stdin=None, check=True):
        return subprocess.run(["ip", "netns", "exec", ns, "sh", "-ec", script], input=stdin, capture_output=True,
                              text=True, check=check)

    def load(self):
        self.sh(self.router, f"nft -f {self.ruleset}")

    def ping(self, address) -> bool:
        """One ICMP echo from the client (this machine has no ping): answered within a second?"""
        return subprocess.run(["ip", "netns", "exec", self.client, sys.executable, "-c", PING, address],
                              check=False).returncode == 0

    def udp(self, address, port):
        sender = f"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('{address}', {port}))"
        subprocess.run(["ip", "netns", "exec", self.client, sys.executable, "-c", sender], check=True)

    def arrivals(self) -> dict[str, int]:
        time.sleep(0.3)
        items = json.loads(self.sh(self.upstream, "nft -j list table inet arrivals").stdout)["nftables"]
        found = {}
        for item in items:
            rule = item.get("rule")
            if rule and "comment" in rule:
                found[rule["comment"]] = next(e["counter"]["packets"] for e in rule["expr"] if "counter" in e)
        return found

    def probe(self) -> dict[str, object]:
        """Sends to every target once; what was answered and what arrived upstream."""
        before = self.arrivals()
        answered = {name: self.ping(address) for name, address in
                    (("internet", INTERNET), ("loadbalancer", LOADBALANCER), ("private", PRIVATE), ("vpc", VPC))}
        for address, port in ((DNS, 53), (DNS, 123), (PRIVATE, 53), (VPC, 123)):
            self.udp(address, port)
        after = self.arrivals()
        return {"answered": answered, "arrived": {name for name in COUNTERS if after[name] > before[name]}}

    def close(self):
        for ns in (self.client, self.router, self.upstream):
            subprocess.run(["ip", "netns", "del", ns], check=False)


@pytest.fixture
def lab(tmp_path, request):
    """The Lab as the role leaves it; an indirect parameter is the router's rp_filter."""
    made = Lab(tmp_path, rp_filter=getattr(request, "param", 0))
    yield made
    made.close()


RP_FILTER = [0, 1, 2]


ALLOWED = {"answered": {"internet": True, "loadbalancer": True, "private": False, "vpc": False},
           "arrived": {"internet-icmp", "loadbalancer-icmp", "dns-53", "dns-123"}}
CLOSED = {"answered": {"internet": False, "loadbalancer": False, "private": False, "vpc": False}, "arrived": set()}


@pytest.mark.parametrize("lab", RP_FILTER, indirect=True, ids=[f"rp_filter={m}" for m in RP_FILTER])
def test_traffic_allowed_flush_closes_load_reopens(lab):
    # Replies come back only masqueraded: the upstream has no route to the transit network.
    assert lab.probe() == ALLOWED
    # Every table gone: the routing gate refuses what arrives on the transit interface, nothing is
    # forwarded; the router itself still answers (rule 0, lookup local, comes first).
    lab.sh(lab.router, "nft flush ruleset")
    assert lab.probe() == CLOSED
    assert lab.ping("198.51.100.1")
    # The file loaded again: open to the same targets.
    lab.load()
    assert lab.probe() == ALLOWED


ANSWERLESS = {**ALLOWED, "answered": {name: False for name in ALLOWED["answered"]}}


@pytest.mark.parametrize("rp_filter", [1, 2])
def test_reverse_path_check_needs_the_replys_mark_and_src_valid_mark(tmp_path, rp_filter):
    # What the role's two halves prevent, each missing in turn under rp_filter 1 or 2: the
    # allowed targets receive, but no reply comes back. A reply's reverse-path check looks its
    # source up as if it came in on the transit interface, where the gate refuses what lacks the
    # mark: without src_valid_mark the check drops the mark, without the table's reply rule the
    # reply has none.
    assert role_src_valid_mark() == ["all"]
    unmarked = "".join(line for line in transit_router.transit_router_ruleset(TRAFFIC).splitlines(keepends=True)
                       if "ct direction reply" not in line)
    for lab in (Lab(tmp_path, rp_filter, src_valid_mark=[]), Lab(tmp_path, rp_filter, ruleset=unmarked)):
        try:
            assert lab.probe() == ANSWERLESS
        finally:
            lab.close()
    # The transit interface's own src_valid_mark is not the one the check reads.
    lab = Lab(tmp_path, rp_filter, src_valid_mark=["tr-transit"])
    try:
        assert lab.probe() == ANSWERLESS
        # Both halves: answered.
        lab.sh(lab.router, "sysctl -qw net.ipv4.conf.all.src_valid_mark=1")
        assert lab.probe() == ALLOWED
    finally:
        lab.close()


def test_without_the_gate_a_flush_forwards_all(lab):
    # What the gate prevents: the same flush with the gate's rules removed forwards to every target.
    lab.sh(lab.router, "ip -4 rule del priority 100; nft flush ruleset")
    forwarded = lab.probe()["arrived"]
    assert {"private-icmp", "vpc-icmp", "vpc-123", "private-53"} <= forwarded, forwarded


# --- the role, up to the point where it would write ----------------------------------------------

def site(tmp_path, variables: dict):
    playbook = tmp_path / "site.yml"
    written = tmp_path / "written"
    written.mkdir()
    paths = {"transit_router_ruleset_path": str(written / "nftables.d" / "transit.nft"),
             "transit_router_unit_path": str(written / "deevnet-transit-router.service"),
             "transit_router_sysctl_path": str(written / "90-transit.conf")}
    required = {key: value for key, value in EXAMPLE.items() if key not in ROLE_DEFAULTS}
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "connection": "local", "gather_facts": False,
                                         "vars": {**required, **paths, **variables}, "roles": [ROLE]}],
                                       sort_keys=False))
    return playbook, written


@pytest.mark.parametrize("check", [False, True], ids=["real run", "check mode"])
def test_bad_variables_refused_first(node, ansible_env, tmp_path, check):
    playbook, written = site(tmp_path, {"transit_router_transit_interface": node.transit,
                                        "transit_router_uplink": "peer0", "transit_router_gate_mark": 3,
                                        "transit_router_transit_network": "10.200.0.0/24"})
    proc = node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook), *(["--check"] if check else []))
    assert proc.returncode != 0, proc.stdout
    text = proc.stdout.replace("\\n", "\n")
    assert "the transit router cannot be set up as given; nothing was changed:" in text, proc.stdout
    assert "transit_router_gate_mark: 3 (0x3) is not a single bit" in text, proc.stdout
    assert "transit_router_private_ranges: 10.0.0.0/8 contains the transit network 10.200.0.0/24" in text, proc.stdout
    assert sorted(written.rglob("*")) == []


def test_missing_interface_refused_first(node, ansible_env, tmp_path):
    playbook, written = site(tmp_path, {"transit_router_transit_interface": node.transit,
                                        "transit_router_uplink": "eth9"})
    proc = node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook))
    assert proc.returncode != 0, proc.stdout
    assert "transit_router_uplink: no interface eth9 on this node; create it" in proc.stdout, proc.stdout
    assert "transit_router_transit_interface: no interface" not in proc.stdout, proc.stdout
    assert sorted(written.rglob("*")) == []


# --- the role's interface -------------------------------------------------------------------------

SPECS = yaml.safe_load((ROLE_DIR / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]


def code(path) -> str:
    """A YAML file of the role without its comments."""
    return "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))


def test_variables_documented_with_defaults():
    defaults = {name: spec["default"] for name, spec in SPECS.items() if "default" in spec}
    assert defaults == ROLE_DEFAULTS
    required = {name for name, spec in SPECS.items() if spec.get("required")}
    assert required == {"transit_router_transit_interface", "transit_router_transit_network", "transit_router_uplink",
                        "transit_router_loadbalancer_ranges", "transit_router_vpc_ranges"}
    # Every transit_router_ variable the role reads is documented, and every documented one is
    # read; the role's own (vars/main.yml, registered results, task vars) are not set by users.
    text = "\n".join(code(path) for path in (*sorted((ROLE_DIR / "tasks").glob("*.yml")), ROLE_DIR / "vars" / "main.yml"))
    own = set(yaml.safe_load((ROLE_DIR / "vars" / "main.yml").read_text()))
    own |= set(re.findall(r"register: (\w+)", text)) | set(re.findall(r"^    (transit_router_\w+):", text, re.M))
    read = set(re.findall(r"(?<![.\w])transit_router_\w+", text))
    assert read - own == set(SPECS), (read - own) ^ set(SPECS)


def test_filters_read_what_the_role_passes():
    passed = set(yaml.safe_load((ROLE_DIR / "vars" / "main.yml").read_text())["__transit_router_variables"])
    assert passed == {f"transit_router_{key}" for key in transit_router.VARIABLES}


def test_ansible_doc_documents_the_role(ansible_env):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "role", ROLE], env=ansible_env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for name in SPECS:
        assert name in proc.stdout, name
    assert "default: /etc/nftables.d/deevnet-transit-router.nft" in proc.stdout, proc.stdout


def test_tasks_tagged_ordered_from_filters():
    tasks = yaml.safe_load((ROLE_DIR / "tasks" / "main.yml").read_text())
    audit = yaml.safe_load((ROLE_DIR / "tasks" / "audit.yml").read_text())
    for path in sorted((ROLE_DIR / "tasks").glob("*.yml")):
        assert all("transit-router" in task.get("tags", []) for task in yaml.safe_load(path.read_text())), path
    copies = [task["ansible.builtin.copy"] for task in tasks if "ansible.builtin.copy" in task]
    assert [copy["content"] for copy in copies] == [
        "{{ __transit_router_variables | deevnet.net.transit_router_ruleset }}",
        "{{ __transit_router_variables | deevnet.net.transit_router_unit }}"]
    assert copies[0]["validate"] == "/usr/sbin/nft -c -f %s"
    modules = [next(key for key in task if "." in key) for task in tasks]
    # The refusal first; forwarding after the unit is started; the audit (its own file) last.
    assert modules[0] == "ansible.builtin.fail" and "transit_router_refusal" in tasks[0]["vars"]["transit_router_refusal"]
    assert modules.index("deevnet.net.sysctl_forwarding") > max(
        index for index, module in enumerate(modules) if module == "ansible.builtin.systemd_service")
    assert modules[-1] == "ansible.builtin.include_tasks" and tasks[-1]["ansible.builtin.include_tasks"]["file"] == "audit.yml"
    # The running table and gate brought to the files after the unit, before forwarding; no
    # reload keyed on a file change (the audit's reading decides).
    included = [task["ansible.builtin.include_tasks"]["file"] for task in tasks if "ansible.builtin.include_tasks" in task]
    assert included == ["running.yml", "audit.yml"]
    running_at = next(i for i, task in enumerate(tasks) if task.get("ansible.builtin.include_tasks", {}).get("file") == "running.yml")
    assert max(i for i, m in enumerate(modules) if m == "ansible.builtin.systemd_service") < running_at < modules.index(
        "deevnet.net.sysctl_forwarding")
    assert all(task["ansible.builtin.systemd_service"].get("state") != "reloaded"
               for task in tasks if "ansible.builtin.systemd_service" in task)
    read = yaml.safe_load((ROLE_DIR / "tasks" / "read.yml").read_text())
    running = yaml.safe_load((ROLE_DIR / "tasks" / "running.yml").read_text())
    assert [next(key for key in task if "." in key) for task in audit] == [
        "ansible.builtin.include_tasks", "ansible.builtin.debug", "ansible.builtin.fail"]
    assert [next(key for key in task if "." in key) for task in running] == [
        "ansible.builtin.include_tasks", "ansible.builtin.command", "ansible.builtin.command"]
    assert audit[0]["ansible.builtin.include_tasks"] == running[0]["ansible.builtin.include_tasks"] == "read.yml"
    # The running table's commands are the unit's own lines.
    assert running[1]["loop"] == "{{ __transit_router_variables | deevnet.net.transit_router_gate_commands }}"
    assert running[2]["ansible.builtin.command"]["argv"] == ["/usr/sbin/nft", "-f", "{{ transit_router_ruleset_path }}"]
    assert [next(key for key in task if "." in key) for task in read] == ["deevnet.net.transit_router_check"]
    options = read[0]["deevnet.net.transit_router_check"]
    assert options == {option: "{{ transit_router_%s }}" % option for option in (
        "transit_interface", "transit_network", "uplink", "loadbalancer_ranges", "dns_servers", "ntp_servers",
        "vpc_ranges", "private_ranges", "table", "forward_priority", "gate_mark", "gate_priority", "ruleset_path",
        "unit_path")}
    assert read[0]["register"] == "transit_router_audit" and read[0]["failed_when"] is False


def test_check_run_diffs_writes_nothing(node, ansible_env, tmp_path):
    # Both files' diffs, nothing written. This machine's sysctl.d folders do not hold the test's
    # sysctl path, so sysctl_forwarding stops the run there; what came before is what is checked.
    playbook, written = site(tmp_path, {"transit_router_transit_interface": node.transit,
                                        "transit_router_uplink": "peer0"})
    proc = node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook), "--check", "--diff")
    variables = {**EXAMPLE, "transit_router_transit_interface": node.transit, "transit_router_uplink": "peer0",
                 "transit_router_ruleset_path": str(written / "nftables.d" / "transit.nft")}
    # The diff holds each file's text as the filters render it.
    for text in (transit_router.transit_router_ruleset(variables), transit_router.transit_router_unit(variables)):
        for line in text.splitlines():
            assert f"+{line}" in proc.stdout, (line, proc.stdout)
    assert "changed: [localhost]" in proc.stdout, proc.stdout
    assert sorted(written.rglob("*")) == [], proc.stdout
    assert node.proc("net/ipv4/conf/all/forwarding") == "0"


def tasks_reported(stdout: str) -> dict[str, str]:
    """Each task's name (role prefix dropped) -> the first status the default callback printed under it."""
    found, task = {}, None
    for line in stdout.splitlines():
        header = re.match(r"TASK \[(?:[\w.]+ : )?(.*)\] \**$", line)
        if header:
            task = header.group(1)
        elif task and task not in found and re.match(r"(ok|changed|skipping|fatal): ", line):
            found[task] = line.split(":")[0]
    return found


RULESET_TASK = "The transit router's nftables file (what the transit network may reach)"
UNIT_TASK = "The transit router's unit (the routing gate, then the table, before the network)"


def test_real_run_files_then_none_changed(node, ansible_env, tmp_path):
    # No systemd here: each run stops where it would enable the unit, after both files.
    playbook, written = site(tmp_path, {"transit_router_transit_interface": node.transit,
                                        "transit_router_uplink": "peer0"})
    variables = {**EXAMPLE, "transit_router_transit_interface": node.transit, "transit_router_uplink": "peer0",
                 "transit_router_ruleset_path": str(written / "nftables.d" / "transit.nft")}
    first = node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook))
    ruleset, unit = written / "nftables.d" / "transit.nft", written / "deevnet-transit-router.service"
    assert ruleset.read_text() == transit_router.transit_router_ruleset(variables), first.stdout
    assert unit.read_text() == transit_router.transit_router_unit(variables)
    assert {oct(path.stat().st_mode & 0o777) for path in (ruleset, unit)} == {"0o644"}
    reported = tasks_reported(first.stdout)
    assert (reported[RULESET_TASK], reported[UNIT_TASK]) == ("changed", "changed"), first.stdout
    assert reported["The unit enabled for boot"] == "fatal", first.stdout
    second = tasks_reported(node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook)).stdout)
    assert (second[RULESET_TASK], second[UNIT_TASK]) == ("ok", "ok"), second



# --- a run of the role again, on what the audit reads (the router in its namespace) ------------

RUNNING_TASKS = {"gate": "The routing gate added again, a rule missing (the unit's ExecStartPre lines)",
                 "table": "The table loaded from its file, absent or not what the file says (the unit's ExecReload)"}


class Rerun:
    """The role's running.yml, then its audit (audit.yml, which fails the run on anything but a
    clean `enforced`), run in the Lab's router namespace: the part of the role that decides from
    what the audit reads. The namespace has no systemd: the unit file is written and enabled the
    way `systemctl enable` does (its link in sysinit.target.wants), and the Lab put the gate and
    the table in place as the unit's start does."""

    def __init__(self, lab: Lab, tmp_path, env):
        self.lab, self.env = lab, env
        unit = tmp_path / "deevnet-transit-router.service"
        variables = {**TRAFFIC, "transit_router_ruleset_path": str(lab.ruleset),
                     "transit_router_unit_path": str(unit)}
        unit.write_text(transit_router.transit_router_unit(variables))
        (tmp_path / "sysinit.target.wants").mkdir()
        (tmp_path / "sysinit.target.wants" / unit.name).symlink_to(unit)
        self.playbook = tmp_path / "rerun.yml"
        self.playbook.write_text(yaml.safe_dump([{
            "hosts": "localhost", "connection": "local", "gather_facts": False, "vars": variables,
            "tasks": [{"ansible.builtin.include_role": {"name": ROLE, "tasks_from": part}}
                      for part in ("running", "audit")]}], sort_keys=False))

    def run(self, *options: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
        proc = subprocess.run(["ip", "netns", "exec", self.lab.router, str(VENV_BIN / "ansible-playbook"),
                               str(self.playbook), *options], env=self.env, capture_output=True, text=True)
        reported = tasks_reported(proc.stdout)
        return proc, {key: reported.get(name, "absent") for key, name in RUNNING_TASKS.items()}

    def unchanged(self):
        proc, reported = self.run()
        assert proc.returncode == 0 and reported == {"gate": "skipping", "table": "skipping"}, proc.stdout
        assert re.search(r"localhost\s*: ok=\d+\s+changed=0 ", proc.stdout), proc.stdout


@pytest.fixture
def rerun(tmp_path, ansible_env, request):
    lab = Lab(tmp_path, rp_filter=getattr(request, "param", 2))
    yield Rerun(lab, tmp_path, ansible_env)
    lab.close()


def test_rerun_after_a_flush_loads_the_table_then_changes_nothing(rerun):
    # A healthy router: nothing to do (the audit says enforced).
    rerun.unchanged()
    rerun.lab.sh(rerun.lab.router, "nft flush ruleset")
    assert rerun.lab.probe() == CLOSED
    # The unit would still be active and no file changed: the audit's reading reloads the table.
    proc, reported = rerun.run()
    assert proc.returncode == 0 and reported == {"gate": "skipping", "table": "changed"}, proc.stdout
    assert rerun.lab.probe() == ALLOWED
    rerun.unchanged()


def test_rerun_puts_back_a_missing_gate_and_a_changed_table(rerun):
    lab = rerun.lab
    lab.sh(lab.router, "ip -4 rule del priority 100")
    proc, reported = rerun.run()
    assert proc.returncode == 0 and reported == {"gate": "changed", "table": "skipping"}, proc.stdout
    gates = lab.sh(lab.router, "ip -4 rule show priority 100; ip -6 rule show priority 100").stdout.splitlines()
    assert len(gates) == 2 and all("prohibit" in line for line in gates), gates
    # A table that differs from its file (an accept ahead of every drop): reloaded from the file.
    lab.sh(lab.router, "nft insert rule inet deevnet_transit from_transit accept")
    assert {"private-icmp", "vpc-icmp"} <= lab.probe()["arrived"]
    proc, reported = rerun.run()
    assert proc.returncode == 0 and reported == {"gate": "skipping", "table": "changed"}, proc.stdout
    assert lab.probe() == ALLOWED
    rerun.unchanged()


def test_check_mode_after_a_flush_says_so_and_changes_nothing(rerun):
    rerun.lab.sh(rerun.lab.router, "nft flush ruleset")
    proc, reported = rerun.run("--check")
    assert proc.returncode == 0 and reported == {"gate": "skipping", "table": "skipping"}, proc.stdout
    assert "A real run would change the running table, then audit the router again" in proc.stdout, proc.stdout
    assert rerun.lab.sh(rerun.lab.router, "nft list ruleset").stdout.strip() == ""
    assert rerun.lab.probe() == CLOSED
