# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role transit_router as pure functions of its variables: what is wrong with them
(transit_router_refusal), the nftables file it persists (transit_router_ruleset) and the systemd
unit that loads it behind the routing gate (transit_router_unit). Nothing here reads a host.

Each filter's documentation is in the .yml file of its name, next to this file."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible_collections.deevnet.net.plugins.plugin_utils.ifname import MAX_BYTES, interface_name_problem

PREFIX = "transit_router_"
# The variables every filter reads, named as the role names them (the role's defaults fill the
# optional ones, so each is always present).
VARIABLES = ("transit_interface", "transit_network", "uplink", "loadbalancer_ranges", "dns_servers",
             "ntp_servers", "vpc_ranges", "private_ranges", "table", "forward_priority", "gate_mark",
             "gate_priority", "ruleset_path")
# The name goes into the nft file's quotes and, unquoted, into the unit's shell lines: of what the
# kernel allows, only these characters are safe in both (no quote, `$`, `%`, `;`, `|` ...).
IFNAME_SAFE = re.compile(r"[A-Za-z0-9_.@+=-]+")
# An nft identifier (the table's name): a letter, then letters, digits and underscores.
NFT_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
GATE_PRIORITY_RANGE = (1, 32765)
HEADER_RULESET = ("# Managed by Ansible (deevnet.net.transit_router): what the transit network may reach. "
                  "Loaded by deevnet-transit-router.service.")
HEADER_UNIT = ("# Managed by Ansible (deevnet.net.transit_router): the transit router's routing gate and "
               "rules, loaded before the network.")


def _name(key: str) -> str:
    return PREFIX + key


def _interface_problem(key: str, value) -> str | None:
    if not isinstance(value, str) or not value:
        return f"{_name(key)}: {value!r} is not an interface name; set it to the device's name, e.g. eth1"
    problem = interface_name_problem(value)
    if problem:
        return (f"{_name(key)}: {value!r} is a name the kernel refuses (it {problem}; 1 to {MAX_BYTES} bytes, "
                f"not . or .., no /, : or whitespace); set it to the device's name as `ip link` shows it")
    if not IFNAME_SAFE.fullmatch(value):
        return (f"{_name(key)}: {value!r} holds characters the unit's shell lines and the nft file cannot carry "
                f"safely (only letters, digits and _ . @ + = - are taken); rename the device (`ip link set "
                f"... name ...`) and set the new name")
    return None


def _network(value, allow_address: bool):
    """The IPv4 network `value` names, or None when it names none. A prefix with host bits set is
    refused: it is a typo more often than a range."""
    if not isinstance(value, str) or (not allow_address and "/" not in value):
        return None
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError:
        return None
    return network if network.version == 4 else None


def _networks(key: str, value, problems: list[str], allow_address: bool = False) -> list:
    """The networks of a list variable; each bad element, or an empty list, is a problem."""
    what = "IPv4 address or CIDR" if allow_address else "IPv4 CIDR"
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        problems.append(f"{_name(key)}: {value!r} is not a list; set it to a list of {what}s, e.g. [192.0.2.0/24]")
        return []
    if not value:
        problems.append(f"{_name(key)}: the list is empty; set at least one {what}"
                        + (" (or `any`)" if allow_address else ""))
        return []
    networks = []
    for element in value:
        network = _network(element, allow_address)
        if network is None:
            problems.append(f"{_name(key)}: {element!r} is not an {what} (host bits unset, e.g. 192.0.2.0/24); "
                            f"correct or remove it")
        else:
            networks.append(network)
    return networks


def _servers(key: str, value, problems: list[str]) -> list:
    """DNS or NTP servers: the word `any`, or a list of addresses and CIDRs."""
    if value == "any":
        return []
    if isinstance(value, str):
        problems.append(f"{_name(key)}: {value!r} is neither `any` nor a list; set it to `any` or to a list "
                        f"of IPv4 addresses or CIDRs")
        return []
    return _networks(key, value, problems, allow_address=True)


def _integer(key: str, value, problems: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(f"{_name(key)}: {value!r} is not an integer; set it to a number")
        return None
    return value


def _overlaps(left, right) -> list[tuple]:
    return [(a, b) for a in left for b in right if a.overlaps(b)]


def _join(networks) -> str:
    return ", ".join(str(network) for network in networks)


def _shown(network) -> str:
    """A network as written: a single address without its /32."""
    return str(network.network_address) if network.prefixlen == network.max_prefixlen else str(network)


def _around(outer, inner) -> list:
    """The ranges of `outer` that leave `inner` out, largest first."""
    return sorted(outer.address_exclude(inner), key=lambda network: (network.prefixlen, network))


def transit_router_refusal(variables) -> list[str]:
    """What is wrong with the role's variables, one message each (naming the variable, the value
    and the fix); an empty list when the role may go on. `variables` maps each role variable's
    full name (transit_router_...) to its value."""
    if not isinstance(variables, Mapping):
        raise AnsibleFilterError(f"transit_router_refusal: the input must be a mapping of the role's variables "
                                 f"(transit_router_...), not {type(variables).__name__}")
    missing = [_name(key) for key in VARIABLES if _name(key) not in variables]
    if missing:
        return [f"{name}: not set; set it (the role's defaults/main.yml holds the optional ones)" for name in missing]
    value = {key: variables[_name(key)] for key in VARIABLES}
    problems: list[str] = []

    for key in ("transit_interface", "uplink"):
        problem = _interface_problem(key, value[key])
        if problem:
            problems.append(problem)
    if isinstance(value["uplink"], str) and value["uplink"] == value["transit_interface"]:
        problems.append(f"{_name('uplink')}: {value['uplink']!r} is also transit_router_transit_interface; set it to "
                        f"the interface toward the Internet")

    transit = _network(value["transit_network"], allow_address=False)
    if transit is None:
        problems.append(f"{_name('transit_network')}: {value['transit_network']!r} is not an IPv4 CIDR (host bits "
                        f"unset, e.g. 198.51.100.0/24); set it to the transit network's prefix")
    loadbalancers = _networks("loadbalancer_ranges", value["loadbalancer_ranges"], problems)
    vpcs = _networks("vpc_ranges", value["vpc_ranges"], problems)
    privates = _networks("private_ranges", value["private_ranges"], problems)
    dns = _servers("dns_servers", value["dns_servers"], problems)
    ntp = _servers("ntp_servers", value["ntp_servers"], problems)

    for loadbalancer, vpc in _overlaps(loadbalancers, vpcs):
        problems.append(f"{_name('loadbalancer_ranges')}: {loadbalancer} overlaps the VPC range {vpc} (the transit "
                        f"network may reach the LoadBalancer ranges and never a VPC); narrow one of them")
    if transit is not None:
        for private in privates:
            if private.supernet_of(transit):
                problems.append(
                    f"{_name('private_ranges')}: {private} contains the transit network {transit} and would swallow "
                    f"it; what crosses the transit network is decided by the transit rules (the hairpin drop, "
                    f"replies by connection state), not by the private drop; list the ranges around it instead: "
                    f"{_join(_around(private, transit)) or '(none: leave it out)'}")
        for vpc in vpcs:
            if vpc.overlaps(transit):
                problems.append(f"{_name('transit_network')}: {transit} overlaps the VPC range {vpc}; the egress "
                                f"gateways SNAT onto the transit network, which must be no VPC's; choose ranges "
                                f"that do not overlap")
    for key, servers in (("dns_servers", dns), ("ntp_servers", ntp)):
        for server, vpc in _overlaps(servers, vpcs):
            problems.append(f"{_name(key)}: {_shown(server)} is inside the VPC range {vpc} (no VPC range may be "
                            f"reached from the transit network); use a server outside it (or `any`)")

    mark = _integer("gate_mark", value["gate_mark"], problems)
    if mark is not None and not (0 < mark < 2 ** 32 and mark & (mark - 1) == 0):
        problems.append(f"{_name('gate_mark')}: {mark} ({mark:#x}) is not a single bit of the 32-bit packet mark; "
                        f"set one bit no other tool uses, e.g. 4194304 (0x400000)")
    priority = _integer("gate_priority", value["gate_priority"], problems)
    low, high = GATE_PRIORITY_RANGE
    if priority is not None and not low <= priority <= high:
        problems.append(f"{_name('gate_priority')}: {priority} is outside {low}..{high} (0 is the local table's "
                        f"rule, 32766 main's); set it below every rule that could route transit traffic, e.g. 100")
    forward = _integer("forward_priority", value["forward_priority"], problems)
    if forward is not None and not -2 ** 31 <= forward < 2 ** 31:
        problems.append(f"{_name('forward_priority')}: {forward} is outside nft's 32-bit priorities, which nft "
                        f"would silently wrap (to 0 for 2**32); set it below every other forward chain's, e.g. -200")
    table = value["table"]
    if not isinstance(table, str) or not NFT_IDENTIFIER.fullmatch(table):
        problems.append(f"{_name('table')}: {table!r} is not an nftables table name (a letter, then letters, "
                        f"digits or _); set it to e.g. deevnet_transit")
    path = value["ruleset_path"]
    if not isinstance(path, str) or not path.startswith("/") or re.search(r"[\s'\"\\%]", path):
        problems.append(f"{_name('ruleset_path')}: {path!r} is not an absolute path without whitespace, quotes, "
                        f"backslashes or %; set it to e.g. /etc/nftables.d/deevnet-transit-router.nft")
    return problems


def _checked(variables, caller: str) -> dict:
    problems = transit_router_refusal(variables)
    if problems:
        raise AnsibleFilterError(f"{caller}: the role's variables are refused:\n" + "\n".join(problems))
    return {key: variables[_name(key)] for key in VARIABLES}


def _elements(values) -> str:
    """A set's elements, each once, in address order (as written: an address stays an address)."""
    unique = {str(value): ipaddress.ip_network(value) for value in values}
    ordered = sorted(unique, key=lambda text: (unique[text].network_address, unique[text].prefixlen))
    return ", ".join(ordered)


def _set(name: str, values) -> list[str]:
    return [f"\tset {name} {{", "\t\ttype ipv4_addr", "\t\tflags interval", "\t\tauto-merge",
            f"\t\telements = {{ {_elements(values)} }}", "\t}"]


def transit_router_ruleset(variables) -> str:
    """The persisted nftables file: the table replaced in one transaction (created, deleted,
    declared again), so loading it never leaves a gap and never touches another table."""
    value = _checked(variables, "transit_router_ruleset")
    transit, uplink, table = value["transit_interface"], value["uplink"], value["table"]
    sets = _set("vpc_ranges", value["vpc_ranges"]) + _set("loadbalancer_ranges", value["loadbalancer_ranges"])
    service_rules = []
    for key, port in (("dns_servers", 53), ("ntp_servers", 123)):
        if value[key] == "any":
            service_rules.append(f"\t\tudp dport {port} accept")
        else:
            sets += _set(key, value[key])
            service_rules.append(f"\t\tudp dport {port} ip daddr @{key} accept")
    sets += _set("private_ranges", value["private_ranges"])
    lines = [
        HEADER_RULESET,
        f"table inet {table} {{}}",
        f"delete table inet {table}",
        f"table inet {table} {{",
        *sets,
        "",
        "\tchain prerouting {",
        "\t\ttype filter hook prerouting priority mangle; policy accept;",
        f"\t\tiifname \"{transit}\" meta mark set meta mark | {value['gate_mark']:#010x}",
        # A reply to the transit network is checked for its reverse path (rp_filter 1 or 2) by
        # a lookup as if it came in on the transit interface: without the mark (and
        # src_valid_mark), the gate refuses that lookup and the reply is dropped. Never on the
        # transit interface itself, so the gate's bit is set there by the rule above alone.
        f"\t\tiifname != \"{transit}\" ct direction reply ct original ip saddr {value['transit_network']} "
        f"meta mark set meta mark | {value['gate_mark']:#010x}",
        "\t}",
        "",
        "\tchain forward {",
        f"\t\ttype filter hook forward priority {value['forward_priority']}; policy accept;",
        f"\t\tiifname \"{transit}\" jump from_transit",
        f"\t\toifname \"{transit}\" jump to_transit",
        "\t}",
        "",
        "\tchain from_transit {",
        "\t\tmeta nfproto ipv6 counter drop",
        f"\t\toifname \"{transit}\" counter drop",
        "\t\tip daddr @vpc_ranges counter drop",
        "\t\tip daddr @loadbalancer_ranges accept",
        *service_rules,
        "\t\tip daddr @private_ranges counter drop",
        f"\t\toifname \"{uplink}\" accept",
        "\t\tcounter drop",
        "\t}",
        "",
        "\tchain to_transit {",
        "\t\tct state established,related accept",
        "\t\tcounter drop",
        "\t}",
        "",
        "\tchain postrouting {",
        "\t\ttype nat hook postrouting priority srcnat; policy accept;",
        f"\t\tip saddr {value['transit_network']} oifname != \"{transit}\" masquerade",
        "\t}",
        "}",
    ]
    return "\n".join(lines) + "\n"


def transit_router_gate_commands(variables) -> list[str]:
    """The two shell lines that put the routing gate in place, each adding its rule only when it
    is not there yet (so a restart adds no second rule)."""
    value = _checked(variables, "transit_router_gate_commands")
    where = f"priority {value['gate_priority']} iif {value['transit_interface']}"
    v4 = f"{where} fwmark 0/{value['gate_mark']:#x}"
    return [f"/usr/sbin/ip -4 rule list {v4} | /usr/bin/grep -q prohibit || /usr/sbin/ip -4 rule add {v4} prohibit",
            f"/usr/sbin/ip -6 rule list {where} | /usr/bin/grep -q prohibit || /usr/sbin/ip -6 rule add {where} prohibit"]


def transit_router_unit(variables) -> str:
    """The systemd unit: the gate first (ExecStartPre), then the table; stopping removes the table
    and leaves the gate, so a stopped unit means a closed router."""
    value = _checked(variables, "transit_router_unit")
    load = f"/usr/sbin/nft -f {value['ruleset_path']}"
    lines = [
        HEADER_UNIT,
        "[Unit]",
        "Description=deevnet.net transit router: routing gate and nftables rules of the transit network",
        "DefaultDependencies=no",
        "Wants=network-pre.target",
        "After=nftables.service",
        "Before=network-pre.target shutdown.target",
        "Conflicts=shutdown.target",
        "PartOf=nftables.service",
        "ReloadPropagatedFrom=nftables.service",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        *(f"ExecStartPre=/bin/sh -c '{command}'" for command in transit_router_gate_commands(variables)),
        f"ExecStart={load}",
        f"ExecReload={load}",
        f"ExecStop=-/usr/sbin/nft delete table inet {value['table']}",
        "",
        "[Install]",
        "WantedBy=sysinit.target",
    ]
    return "\n".join(lines) + "\n"


class FilterModule:
    """deevnet.net.transit_router_refusal, transit_router_ruleset, transit_router_unit,
    transit_router_gate_commands."""

    def filters(self):
        return {"transit_router_refusal": transit_router_refusal,
                "transit_router_ruleset": transit_router_ruleset,
                "transit_router_unit": transit_router_unit,
                "transit_router_gate_commands": transit_router_gate_commands}
