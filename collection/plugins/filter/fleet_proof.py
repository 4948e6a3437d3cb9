# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric proof of the playbook deevnet.net.fabric_proof, as pure functions: what each node
asks its kernel and probes (``fleet_proof_plan``), and the report that puts every node's intent,
prediction and observation side by side (``fleet_proof_reconcile``). Nothing here reads a host.

- **Intent** is each node's Proxmox SDN as the module sdn_check reads it (zones, VNets, subnets,
  exit nodes, VTEP, applied version), and the cross-node checks on it: one SDN version, every
  VTEP known to every other member of each VNI (the module bgp_evpn_assert's VNIs), the exit
  nodes.
- **Prediction** is the node's kernel, asked by the module vrf_route_assert: for each tenant and
  destination, the output lookup in the tenant's VRF (the egress device, whether it fell through
  to the main table), whether the node's nftables NAT chains source-translate the tenant's
  workload leaving by that egress (walked on the node by the same module), and, for the returns,
  the input lookups that apply forwarding and rp_filter as the kernel does to a real packet
  arriving by the uplink or the L3VNI bridge.
- **Observation** is the module egress_probe, run once per node for every tenant there.

The report's format is documented in fleet_proof_reconcile.yml; the renderers are the filters of
fleet_report.py. The documentation of each filter is in its sidecar YAML, next to this file."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible_collections.deevnet.net.plugins.plugin_utils.fabric_proof_cells import (CellsError, ProofCells,
                                                                                     passed_summary, unobserved_summary)
from ansible_collections.deevnet.net.plugins.plugin_utils.reload_advice import reload_interfaces

FORMAT = "deevnet.net.fabric_proof/1"
# The destination classes given as targets, in the matrix's order, each with what the tenant's
# traffic to it must do. The classes made from the fleet itself follow them.
TARGET_CLASSES = (
    ("internet", "reply"),
    ("dns", "reply"),
    ("ntp", "reply"),
    ("management", "blocked"),
    ("private", "blocked"),
)
# How each given class is probed: DNS answers queries; the others answer echoes (the probe has
# no NTP client: an NTP server's reachability is its echo).
CLASS_PROTO = {"dns": "udp"}
DNS_PORT = 53
# The key that marks a cell predicted and by design not observed while the report is made.
UNOBSERVED = "unobserved"
# egress_probe's longest IPv4 prefix for a workload's address: room for the workload and its gateway.
LONGEST_WORKLOAD_PREFIX = 30


def _fail(filter_name: str, where: str, value, fix: str):
    raise AnsibleFilterError(f"{filter_name}: {where} is {value!r}; {fix}")


def _address(filter_name: str, where: str, value) -> str:
    try:
        return str(ipaddress.ip_address(str(value).strip()))
    except ValueError:
        _fail(filter_name, where, value, "give one IP address, e.g. 203.0.113.8 (no names: the proof "
                                         "must not depend on DNS)")


def _targets(filter_name: str, settings: Mapping, name: str) -> list:
    """A class's targets: addresses, or dicts with address (and proto and port for internet)."""
    given = settings.get(name) or []
    if isinstance(given, (str, bytes, Mapping)) or not isinstance(given, (list, tuple)):
        _fail(filter_name, f"settings.{name}", given, "give a list of addresses")
    targets = []
    for index, entry in enumerate(given):
        where = f"settings.{name}[{index}]"
        entry = dict(entry) if isinstance(entry, Mapping) else {"address": entry}
        target = {"address": _address(filter_name, f"{where}.address", entry.get("address")),
                  "proto": str(entry.get("proto") or CLASS_PROTO.get(name, "icmp"))}
        if target["proto"] not in ("icmp", "tcp", "udp"):
            _fail(filter_name, f"{where}.proto", target["proto"], "give icmp, tcp or udp")
        if entry.get("port") is not None:
            target["port"] = int(entry["port"])
        elif target["proto"] == "udp":
            target["port"] = DNS_PORT  # egress_probe's default, named so that its answer matches
        elif target["proto"] == "tcp":
            _fail(filter_name, f"{where}.port", None, "a tcp target needs the port to complete a handshake with")
        targets.append(target)
    return targets


def normalize_settings(settings, filter_name: str) -> dict:
    """The proof's settings, checked: each class's targets, the probe's count and timeout, the
    workload addresses given by hand, and where returns are forced to land."""
    if not isinstance(settings, Mapping):
        _fail(filter_name, "settings", settings, "give the dict the playbook builds from the fabric_proof_* variables")
    normalized = {name: _targets(filter_name, settings, name) for name, _expect in TARGET_CLASSES}
    if not normalized["internet"]:
        _fail(filter_name, "settings.internet", settings.get("internet"),
              "give at least one internet target: the returns are predicted from it as their source")
    for key, default, low, high in (("count", 3, 1, 10), ("timeout", 2, 1, 10)):
        value = settings.get(key, default)
        if isinstance(value, bool) or not str(value).isdecimal() or not low <= int(value) <= high:
            _fail(filter_name, f"settings.{key}", value, f"give a whole number from {low} to {high}")
        normalized[key] = int(value)
    peers = settings.get("isolation_peers", 3)
    if isinstance(peers, bool) or not str(peers).isdecimal():
        _fail(filter_name, "settings.isolation_peers", peers,
              "give how many other tenants each tenant must not reach, 0 or more (default 3)")
    normalized["isolation_peers"] = int(peers)
    normalized["full_size"] = bool(settings.get("full_size", True))
    normalized["workload_addresses"] = dict(settings.get("workload_addresses") or {})
    normalized["return_landing"] = dict(settings.get("return_landing") or {})
    normalized["start_at"] = settings.get("start_at")
    return normalized


def _node_inputs(node: str, facts) -> dict:
    """What the plan needs of one node: its sdn_check result, uplinks and management bridge."""
    facts = facts if isinstance(facts, Mapping) else {}
    sdn = facts.get("sdn") if isinstance(facts.get("sdn"), Mapping) else {}
    return {"sdn": sdn, "uplinks": list(facts.get("uplinks") or []),
            "management": facts.get("management") or "vmbr0"}


def _ipv4_subnet(zone: Mapping):
    """The zone's first VNet with an IPv4 subnet that has a gateway on the node: (vnet, subnet)."""
    for vnet in zone.get("vnets") or []:
        for subnet in vnet.get("subnets") or []:
            network = ipaddress.ip_network(subnet.get("cidr"), strict=False)
            if network.version == 4 and subnet.get("gateway"):
                return vnet, subnet
    return None, None


def _not_reloaded_vrfs(sdn: Mapping) -> set:
    """The VRFs of zones the node has not reloaded yet: on a node whose applied SDN version is
    older than the cluster's, each VRF the kernel lacks (sdn_check's drift: no such device). Such
    a zone came with the newer version; the version and drift checks name the node."""
    version = sdn.get("version") if isinstance(sdn.get("version"), Mapping) else {}
    running, applied = version.get("running"), version.get("applied")
    if not isinstance(running, int) or not isinstance(applied, int) or applied >= running:
        return set()
    return {str(drift.get("object")) for drift in sdn.get("drift") or []
            if isinstance(drift, Mapping) and drift.get("found") == "no such device"}


def tenants_of(node: str, facts: Mapping) -> list:
    """The node's tenants: each EVPN zone that applies to it and has an IPv4 subnet, but for a
    zone the node has not reloaded yet (_not_reloaded_vrfs): a node is proven as it runs, not
    probed for a VRF it does not have yet."""
    tenants = []
    sdn = _node_inputs(node, facts)["sdn"]
    not_reloaded = _not_reloaded_vrfs(sdn)
    for zone in sdn.get("zones") or []:
        if zone.get("type") != "evpn" or not zone.get("vrf") or zone["vrf"] in not_reloaded:
            continue
        vnet, subnet = _ipv4_subnet(zone)
        if vnet is None:
            continue
        tenants.append({
            "name": zone["name"], "vrf": zone["vrf"], "l3vni": zone.get("l3vni"),
            "l3vni_bridge": zone.get("l3vni_bridge"), "exit_node": bool(zone.get("exit_node")),
            "vtep": zone.get("vtep"), "vnet": vnet["name"], "vni": vnet.get("vni"),
            "vxlan_device": vnet.get("vxlan_device"),
            "mtu": vnet.get("mtu") or zone.get("mtu"), "subnet": subnet["cidr"],
            "gateway": subnet["gateway"], "snat": bool(subnet.get("snat")),
        })
    return tenants


def _by_tenant_node(filter_name: str, settings: Mapping, key: str, tenant: str, node: str):
    """settings[key][tenant][node], each level checked to be a dict (None where not given)."""
    by_tenant = settings[key].get(tenant)
    if by_tenant is not None and not isinstance(by_tenant, Mapping):
        _fail(filter_name, f"settings.{key}.{tenant}", by_tenant, "give a dict of node: address")
    return (by_tenant or {}).get(node)


def _hosts_from_top(network):
    """The subnet's host addresses, the last first."""
    for value in range(int(network.broadcast_address) - 1, int(network.network_address), -1):
        yield ipaddress.IPv4Address(value)


def _reserved(fleet: Mapping) -> dict:
    """The addresses no workload may hold: every tenant subnet's network, broadcast and gateway
    address (egress_probe refuses a workload or a target there). {address: what it is}."""
    reserved = {}
    for tenants in fleet.values():
        for tenant in tenants.values():
            network = ipaddress.ip_network(tenant["subnet"], strict=False)
            reserved.setdefault(network.network_address, f"the network address of {network}")
            reserved.setdefault(network.broadcast_address, f"the broadcast address of {network}")
            reserved.setdefault(ipaddress.ip_address(tenant["gateway"]), f"{tenant['name']}'s gateway")
    return reserved


def _given_workloads(filter_name: str, fleet: Mapping, settings: Mapping, reserved: Mapping) -> dict:
    """The workloads given by hand (workload_addresses) and those of forced returns
    (return_landing), each checked to be a host of its tenant's subnet that no other workload holds
    and that is no subnet's network, broadcast or gateway address: {address: whose}."""
    held = {}
    for node, tenants in fleet.items():
        for name, tenant in sorted(tenants.items()):
            given = []
            by_hand = _by_tenant_node(filter_name, settings, "workload_addresses", name, node)
            if by_hand:
                given.append((f"settings.workload_addresses.{name}.{node}", by_hand, f"{name}'s workload on {node}"))
            landing = _by_tenant_node(filter_name, settings, "return_landing", name, node) or {}
            if not isinstance(landing, Mapping):
                _fail(filter_name, f"settings.return_landing.{name}.{node}", landing,
                      "give a dict of landing node: address")
            given += [(f"settings.return_landing.{name}.{node}.{other}", address,
                       f"{name}'s workload on {node} returning via {other}") for other, address in sorted(landing.items())]
            for where, value, whose in given:
                address = ipaddress.ip_address(_address(filter_name, where, value))
                network = ipaddress.ip_network(tenant["subnet"], strict=False)
                if address not in network:
                    _fail(filter_name, where, value, f"give a host address of {name}'s subnet {network}, where the "
                                                     "workload plugs in")
                taken = reserved.get(address) or held.get(address)
                if taken:
                    _fail(filter_name, where, value, f"it is {taken}, and two holders of one address answer each "
                                                     f"other's probes: give an unused host address of {network}")
                held[address] = whose
    return held


def _assign_workloads(filter_name: str, fleet: Mapping, nodes: list, settings: Mapping) -> None:
    """Each tenant's workload on each node: given by hand, else the next host of its subnet
    counted down from the last, in tenant-name and then play order, that holds no other workload
    of the fleet and no subnet's network, broadcast or gateway address. So no two workloads share
    an address: tenants numbered alike never probe their own address as another tenant's, and no
    node's egress_probe run holds two workloads with one address."""
    for node in nodes:
        for tenant in fleet[node].values():
            network = ipaddress.ip_network(tenant["subnet"], strict=False)
            if network.prefixlen > LONGEST_WORKLOAD_PREFIX:
                _fail(filter_name, f"the subnet of tenant {tenant['name']} (VNet {tenant['vnet']}) on {node}",
                      str(network), f"a workload needs a /{LONGEST_WORKLOAD_PREFIX} or shorter, with room for itself "
                                    "and the gateway: give the VNet's subnet a shorter prefix in the SDN, or leave "
                                    "that node out of the proof (fabric_proof_hosts)")
    reserved = _reserved(fleet)
    held = _given_workloads(filter_name, fleet, settings, reserved)
    free = {}
    for name in sorted({name for tenants in fleet.values() for name in tenants}):
        for node in nodes:
            tenant = fleet[node].get(name)
            if tenant is None:
                continue
            by_hand = _by_tenant_node(filter_name, settings, "workload_addresses", name, node)
            if by_hand:
                tenant["workload"] = str(ipaddress.ip_address(str(by_hand).strip()))
                continue
            network = ipaddress.ip_network(tenant["subnet"], strict=False)
            hosts = free.setdefault((name, network), _hosts_from_top(network))
            address = next((host for host in hosts if host not in reserved and host not in held), None)
            if address is None:
                _exhausted(filter_name, tenant, node, network, held)
            held[address] = f"{name}'s workload on {node}"
            tenant["workload"] = str(address)


def _exhausted(filter_name: str, tenant: Mapping, node: str, network, held: Mapping):
    usable = sum(1 for host in _hosts_from_top(network) if host != ipaddress.ip_address(tenant["gateway"]))
    holders = sorted(whose for address, whose in held.items() if address in network)
    _fail(filter_name, f"the subnet of tenant {tenant['name']} (VNet {tenant['vnet']})", str(network),
          f"it has no host left for the proof's workload on {node}: its {usable} host{'' if usable == 1 else 's'} "
          f"beside the gateway hold "
          f"{', '.join(holders) or 'nothing'}; give the VNet a subnet with a host for every node's workload (a /29 "
          "holds 5 beside its gateway), or prove fewer nodes at once (fabric_proof_hosts)")


def _fleet_tenants(filter_name: str, nodes_facts: Mapping, nodes: list, settings: Mapping) -> dict:
    """Every node's tenants, each with its workload address: {node: {tenant: tenant}}."""
    fleet = {node: {tenant["name"]: tenant for tenant in tenants_of(node, nodes_facts.get(node))} for node in nodes}
    _assign_workloads(filter_name, fleet, nodes, settings)
    return fleet


def _check_nodes(filter_name: str, nodes, facts) -> list:
    if isinstance(nodes, (str, bytes)) or not isinstance(nodes, (list, tuple)) or not nodes:
        _fail(filter_name, "nodes", nodes, "give the play's hosts (ansible_play_hosts_all)")
    if not isinstance(facts, Mapping):
        _fail(filter_name, "facts", facts, "give a dict of every node's gathered results, by node")
    return [str(node) for node in nodes]


def _return_workloads(settings: Mapping, tenant: str, node: str) -> dict:
    """The workloads whose returns the fabric is made to land on a given node: {landing: address}."""
    given = ((settings["return_landing"].get(tenant) or {}).get(node)) or {}
    return {str(landing): str(ipaddress.ip_address(address)) for landing, address in given.items()}


def _class_targets(settings: Mapping) -> list:
    """(column, expect, target) for every given target, in the matrix's order."""
    return [(name, expect, target) for name, expect in TARGET_CLASSES for target in settings[name]]


def _probe_target(target: Mapping, expect: str, **extra) -> dict:
    made = {"address": target["address"], "proto": target["proto"], "expect": expect}
    if target.get("port") is not None:
        made["port"] = target["port"]
    made.update(extra)
    return made


def isolation_peers(tenant: Mapping, tenants: Mapping, count: int) -> list:
    """The other tenants of the node that `tenant` must not reach: the next `count` in name order,
    around the ring, so that every tenant is probed by some other whatever their number (a
    probe takes at most 32 targets)."""
    names = sorted(tenants)
    start = names.index(tenant["name"])
    ring = names[start + 1:] + names[:start]
    return [tenants[name] for name in ring[:count]]


def _tenant_probes(node: str, tenant: Mapping, fleet: Mapping, settings: Mapping, inputs: Mapping) -> list:
    """The egress_probe probes of one tenant on one node: its workload with every class target,
    the other tenants' workloads, its peers on the other nodes; and one workload per forced
    return, probing the first internet target."""
    targets = [_probe_target(target, expect) for _column, expect, target in _class_targets(settings)]
    for other in isolation_peers(tenant, fleet[node], settings["isolation_peers"]):
        targets.append({"address": other["workload"], "proto": "icmp", "expect": "blocked"})
    for peer_node, tenants in fleet.items():
        peer = tenants.get(tenant["name"])
        if peer_node == node or peer is None:
            continue
        # Their answers must come across the VNet's VXLAN port, not from a neighbour on this node.
        crossing = {"address": peer["workload"], "proto": "icmp", "expect": "reply", "peer": True,
                    "via": tenant["vxlan_device"]}
        targets.append(crossing)
        if settings["full_size"]:
            targets.append(dict(crossing, size="mtu"))
    prefix = ipaddress.ip_network(tenant["subnet"], strict=False).prefixlen
    base = {"vrf": tenant["vrf"], "vnet": tenant["vnet"], "gateway": tenant["gateway"],
            "forbidden_interfaces": [inputs["management"]]}
    if tenant["exit_node"] and len(inputs["uplinks"]) == 1:
        # The perimeter: answers must come back by it, and a blocked target may be dropped
        # beyond it (by the core), never by another way out of the node.
        base["expect_egress_interface"] = inputs["uplinks"][0]
    probes = [dict(base, name=tenant["name"], address=f"{tenant['workload']}/{prefix}", targets=targets)]
    first = settings["internet"][0]
    for landing, address in sorted(_return_workloads(settings, tenant["name"], node).items()):
        probes.append(dict(base, name=f"{tenant['name']}-via-{landing}", address=f"{address}/{prefix}",
                           targets=[_probe_target(first, "reply")]))
    return probes


def _tenant_lookups(node: str, tenant: Mapping, fleet: Mapping, settings: Mapping) -> dict:
    """vrf_route_assert's entry for one tenant VRF: every class target and the other tenants'
    workloads, looked up as the tenant's traffic is, each with whether the node's NAT chains
    source-translate the tenant's workload leaving by the answer; and the return to its own
    workload as it enters the VRF by the L3VNI bridge (forwarding and rp_filter applied)."""
    # Every output lookup predicts the source NAT of the tenant's packets leaving by its answer.
    own = {"table": "any", "snat_src": tenant["workload"]}
    lookups = [dict(own, dst=target["address"]) for _column, _expect, target in _class_targets(settings)]
    lookups += [dict(own, dst=other["workload"])
                for other in isolation_peers(tenant, fleet[node], settings["isolation_peers"])]
    if tenant.get("l3vni_bridge"):
        lookups.append({"dst": tenant["workload"], "src": settings["internet"][0]["address"],
                        "iif": tenant["l3vni_bridge"], "table": "any"})
    return {"name": tenant["vrf"], "lookups": _unique(lookups)}


def _return_lookups(node: str, uplinks: list, fleet: Mapping, settings: Mapping) -> dict:
    """The default VRF's entry: every node's workloads, this node's own included, as their
    returns enter this node by each uplink (forwarding and rp_filter applied)."""
    source = settings["internet"][0]["address"]
    lookups = [{"dst": tenant["workload"], "src": source, "iif": uplink, "table": "any"}
               for tenants in fleet.values() for tenant in tenants.values() for uplink in uplinks]
    return {"name": "default", "lookups": _unique(lookups)}


def _unique(entries: list) -> list:
    seen, kept = set(), []
    for entry in entries:
        key = tuple(sorted(entry.items()))
        if key not in seen:
            seen.add(key)
            kept.append(entry)
    return kept


# egress_probe's limits for one run (its MAX_PROBES and MAX_TARGETS).
MAX_PROBES = 128
MAX_TARGETS = 32


def _check_run_limits(node: str, probes: list) -> None:
    """The node's one egress_probe run within the module's limits, or why not and what to change."""
    if len(probes) > MAX_PROBES:
        raise AnsibleFilterError(
            f"fleet_proof_plan: {node} would run {len(probes)} probes, more than the {MAX_PROBES} of one egress_probe "
            "run (one per tenant and one per forced return); give fewer fabric_proof_return_landing workloads, or "
            "prove the tenants in groups (fabric_proof_hosts and a tenant subset per run)")
    for probe in probes:
        if len(probe["targets"]) > MAX_TARGETS:
            raise AnsibleFilterError(
                f"fleet_proof_plan: {node}'s probe {probe['name']} would have {len(probe['targets'])} targets, more "
                f"than the {MAX_TARGETS} of one probe; give fewer targets per class, a smaller isolation_peers, or "
                "full_size false (each other node adds two)")


def fleet_proof_plan(facts, nodes, node, settings) -> dict:
    """What `node` asks and probes: its tenants (each with its workload), the VNIs for
    bgp_evpn_assert, the VRFs and lookups for vrf_route_assert, the probes for egress_probe."""
    nodes = _check_nodes("fleet_proof_plan", nodes, facts)
    if node not in nodes:
        _fail("fleet_proof_plan", "node", node, f"give one of the play's hosts {nodes}")
    settings = normalize_settings(settings, "fleet_proof_plan")
    fleet = _fleet_tenants("fleet_proof_plan", facts, nodes, settings)
    made = node_plan(fleet, node, facts.get(node), settings)
    _check_run_limits(node, made["probes"])
    return made


def fleet_plans(facts, nodes, settings) -> dict:
    """Every node's plan at once, the fleet's workloads assigned once: {node: plan}. Not checked
    against egress_probe's limits for one run (fleet_proof_plan is): what a node would be asked."""
    nodes = _check_nodes("fleet_plans", nodes, facts)
    settings = normalize_settings(settings, "fleet_plans")
    fleet = _fleet_tenants("fleet_plans", facts, nodes, settings)
    return {node: node_plan(fleet, node, facts.get(node), settings) for node in nodes}


def node_plan(fleet: Mapping, node: str, facts, settings: Mapping) -> dict:
    """What `node` asks and probes, its fleet's workloads assigned (_fleet_tenants)."""
    inputs = _node_inputs(node, facts)
    mine = list(fleet[node].values())
    vnis = sorted({vni for tenant in mine for vni in (tenant["l3vni"], tenant["vni"]) if vni})
    vrfs = [_tenant_lookups(node, tenant, fleet, settings) for tenant in mine]
    if inputs["uplinks"]:
        vrfs.append(_return_lookups(node, inputs["uplinks"], fleet, settings))
    probes = [probe for tenant in mine
              for probe in _tenant_probes(node, tenant, fleet, settings, inputs)]
    return {"tenants": mine, "vnis": [{"vni": vni} for vni in vnis], "vrfs": vrfs, "probes": probes,
            "count": settings["count"], "timeout": settings["timeout"]}


class Findings:
    """The report's findings, each once: numbered F1, F2, ... in the order they are found, the
    same (node, subject, text) twice being one finding."""

    def __init__(self):
        self.entries = []
        self._ids = {}

    def add(self, node, subject: str, text: str, fix: str, awaits_reload: bool = False) -> str:
        """`awaits_reload`: only the node's SDN reload is missing (sdn_check's own word for a
        device the running version adds); kept on the finding only when true."""
        key = (node, subject, text)
        if key not in self._ids:
            self._ids[key] = f"F{len(self.entries) + 1}"
            entry = {"id": self._ids[key], "node": node, "subject": subject, "text": text, "fix": fix}
            if awaits_reload:
                entry["awaits_reload"] = True
            self.entries.append(entry)
        return self._ids[key]


def _check(check_id: str, label: str, problems: list, findings: Findings, ok_text: str) -> dict:
    """A fleet check from its problems, each (node, subject, text, fix[, awaits_reload])."""
    ids = [findings.add(*problem) for problem in problems]
    text = "; ".join(problem[2] for problem in problems) if problems else ok_text
    return {"id": check_id, "label": label, "ok": not problems, "text": text, "findings": ids}


def _version_check(gathered: Mapping, reached: list, findings: Findings) -> dict:
    """One SDN version: every node applied the version the cluster runs."""
    versions = {node: (gathered[node].get("sdn") or {}).get("version") or {} for node in reached}
    running = sorted({v.get("running") for v in versions.values() if v.get("running") is not None})
    problems = []
    if len(running) > 1:
        problems.append((None, "/etc/pve/sdn/.running-config",
                         f"the nodes read different running SDN versions {running}",
                         "check the cluster file system (pmxcfs) on the nodes that differ"))
    target = running[-1] if running else None
    for node in reached:
        applied = versions[node].get("applied")
        if target is not None and applied != target:
            problems.append((node, "/etc/network/interfaces.d/sdn",
                             f"{node} applied SDN version {applied}, the cluster runs {target}",
                             f"apply the SDN on {node}: {reload_interfaces(node)}"))
    return _check("sdn_version", "one SDN version", problems, findings,
                  f"every node applied SDN version {target}" if target is not None else "no SDN version read")


def _evpn_vnis(result) -> dict:
    """bgp_evpn_assert's VNIs by number: {vni: entry}."""
    vnis = (result or {}).get("vnis") if isinstance(result, Mapping) else None
    return {entry.get("vni"): entry for entry in vnis or [] if isinstance(entry, Mapping)}


def _vtep_check(fleet: Mapping, gathered: Mapping, reached: list, findings: Findings) -> dict:
    """Every VTEP appears as a remote VTEP of each VNI on every other member of its zone."""
    problems = []
    for node in reached:
        vnis = _evpn_vnis(gathered[node].get("evpn"))
        for tenant in fleet[node].values():
            members = {other: tenants[tenant["name"]]["vtep"] for other, tenants in fleet.items()
                       if other != node and tenant["name"] in tenants}
            # The flood list of the tenant's L2 VNI: an L3 VNI's next hops come only with routes,
            # so a tenant without workloads anywhere rightly has none.
            for vni in (tenant["vni"],):
                if not vni:
                    continue
                entry = vnis.get(vni) or {}
                if not entry.get("type"):
                    problems.append((node, f"VNI {vni}", f"VNI {vni} of {tenant['name']} is missing on {node}",
                                     f"re-create its devices: {reload_interfaces(node)}"))
                    continue
                known = set(entry.get("remote_vteps") or [])
                for other, vtep in sorted(members.items()):
                    if vtep and vtep not in known:
                        problems.append((node, f"VNI {vni}",
                                         f"{node}'s VNI {vni} does not know {other}'s VTEP {vtep}",
                                         f"check that VNI {vni} exists on {other} and that the EVPN session "
                                         f"between {node} and {other} is up (bgp_evpn_assert)"))
    return _check("vtep_mesh", "every VTEP known", problems, findings,
                  "every VNI knows the VTEP of every other member")


def _exit_check(fleet: Mapping, gathered: Mapping, reached: list, findings: Findings) -> dict:
    """The exit nodes are the ones the zone lists, where the inventory declares them too."""
    problems = []
    for node in reached:
        declared = gathered[node].get("exit")
        for tenant in fleet[node].values():
            if declared is not None and bool(declared) != tenant["exit_node"]:
                problems.append((node, f"zone {tenant['name']}",
                                 f"{node} is {'' if declared else 'not '}an exit node in the inventory, but zone "
                                 f"{tenant['name']} {'does not list' if declared else 'lists'} it",
                                 "make the zone's exit nodes and the inventory's fabric_proof_exit agree"))
    return _check("exit_nodes", "exit nodes as the zones list", problems, findings,
                  "every node's exit role is the one its zones list")


def _reached_check(nodes: list, reached: list, gathered: Mapping, findings: Findings) -> dict:
    """Every node reached, and each one's modules ran: a module that refused its arguments or
    failed before reading anything leaves that node's cells without a side, which says why."""
    problems = [(node, node, f"{node} was not reached or failed before its results were gathered",
                 f"see the play's output for {node}") for node in nodes if node not in reached]
    for node in reached:
        for key, module in (("probe", "egress_probe"), ("lookups", "vrf_route_assert"), ("evpn", "bgp_evpn_assert")):
            result = gathered[node].get(key)
            read = {"probe": "probes", "lookups": "checks", "evpn": "vnis"}[key]
            if isinstance(result, Mapping) and result.get("failed") and not result.get(read):
                problems.append((node, module, f"{node}: {module} gave no result: {result.get('msg')}",
                                 f"run deevnet.net.{module} on {node} with the arguments of the play's plan"))
    return _check("nodes_reached", "every node reached, its modules run", problems, findings,
                  f"all {len(nodes)} nodes reached, their modules run")


def _nat(answer: Mapping, src: str):
    """vrf_route_assert's prediction of source NAT for packets from `src` leaving by the answer's
    device (its lookup's snat_src): (True, False or None when it could not tell, why)."""
    snat = answer.get("snat")
    if not isinstance(snat, Mapping) or snat.get("src") != src:
        return None, f"source NAT not predicted: the lookup has no answer for packets from {src}"
    translated = snat.get("translated")
    return (translated if isinstance(translated, bool) else None), str(snat.get("why") or "no reason given")


def _lookup_answers(result) -> dict:
    """vrf_route_assert's lookup answers: {(vrf, dst, iif or None): actual}."""
    answers = {}
    checks = result.get("checks") if isinstance(result, Mapping) else None
    for check in checks or []:
        name = str(check.get("check") or "")
        if not name.startswith("lookup "):
            continue
        actual = check.get("actual") or {}
        expected = check.get("expected") or {}
        iif = actual.get("iif") or expected.get("iif")
        # Only a refusal's words are read (_input_problem): an answer that is a route is kept as
        # the result's own dict, not copied (a fleet's lookups are many).
        answers[(check.get("vrf"), name.split()[1], iif)] = (
            actual if actual.get("type") == "unicast" else dict(actual, msg=check.get("msg")))
    return answers


def _probe_targets(result) -> dict:
    """egress_probe's targets: {(probe name, address, proto, port, size): (target, its probe's
    message)}, the results' own dicts (a fleet's targets are many: none is copied)."""
    found = {}
    probes = result.get("probes") if isinstance(result, Mapping) else None
    for probe in probes or []:
        for target in probe.get("targets") or []:
            size = None if target.get("size") is None else "mtu"
            key = (probe.get("name"), target.get("address"), target.get("proto"), target.get("port"), size)
            found[key] = (target, probe.get("msg") or "")
    return found


def _route_text(answer: Mapping) -> str:
    if answer.get("type") == "refused":
        return f"refused ({answer.get('reason')})"
    table = answer.get("table")
    through = ", fall-through to the main table" if answer.get("fall_through") else ""
    via = f"via {answer['via']} " if answer.get("via") else ""
    return f"{via}dev {answer.get('dev')} (table {table}{through})"


def predict_reply(answer, tenant: Mapping, node: Mapping, dst: str):
    """The kernel's prediction for a target that must answer: (verdict, dev, nat, text, problem)."""
    if not answer:
        return "unknown", None, None, f"{dst}: no lookup answer was gathered", None
    route = _route_text(answer)
    if answer.get("type") != "unicast":
        return "blocked", None, None, f"{dst} in {tenant['vrf']}: {route}", (
            tenant["vrf"], f"{tenant['vrf']} has no route to {dst}: {route}",
            "give the VRF a default (the role's tenant-egress: a leaked default, or import vrf default)")
    dev = answer.get("dev")
    nat, nat_text = _nat(answer, tenant["workload"])
    text = f"{dst} in {tenant['vrf']}: {route}; {nat_text}"
    if dev == node["management"] or answer.get("fall_through"):
        return "blocked", dev, nat, text, (
            tenant["vrf"], f"{tenant['vrf']} falls through to the main table: tenant packets to {dst} leave by "
                           f"{dev} untranslated",
            "give the VRF its own default (import vrf default, or the leaked static default)")
    if nat is not None and nat != tenant["snat"]:
        said = "source-translates" if nat else "does not source-translate"
        return "blocked", dev, nat, text, (
            f"nat {dev}", f"the ruleset {said} {tenant['subnet']} leaving by {dev}, but the subnet's snat is "
                          f"{'on' if tenant['snat'] else 'off'}",
            f"apply the SDN again so that Proxmox's SNAT rule for {tenant['subnet']} matches: "
            f"{reload_interfaces(node['name'])}")
    return "reply", dev, nat, text, None


def predict_blocked(answer, tenant: Mapping, node: Mapping, dst: str, vnets: Mapping):
    """The kernel's prediction for a target that must stay unreachable from the tenant: it must
    not be delivered on the node (its management side, another tenant's VNet, the node itself)."""
    if not answer:
        return "unknown", None, None, f"{dst}: no lookup answer was gathered", None
    route = _route_text(answer)
    text = f"{dst} in {tenant['vrf']}: {route}"
    dev = answer.get("dev")
    if answer.get("type") == "local":
        return "reply", dev, None, text, (tenant["vrf"], f"{dst} is delivered to {tenant['vrf']}'s node itself",
                                          "give the VRF its own default so its lookups stop falling through")
    if answer.get("type") != "unicast":
        return "blocked", None, None, text, None
    if dev == node["management"]:
        return "reply", dev, None, text, (
            tenant["vrf"], f"{tenant['vrf']} reaches {dst} on the management side by {dev}",
            "give the VRF its own default so its lookups stop falling through to the main table")
    if dev in vnets and vnets[dev] != tenant["name"]:
        return "reply", dev, None, text, (
            f"route {dst} in {tenant['vrf']}",
            f"a route leaked between tenants: {tenant['vrf']} reaches {dst} by {dev}, {vnets[dev]}'s VNet",
            f"remove the route from {tenant['vrf']} (`ip route show vrf {tenant['vrf']}`) and the import or "
            f"route-map that leaks it")
    if answer.get("fall_through"):
        # Whatever the main table holds decides for the tenant: no isolation of the VRF's own.
        return "reply", dev, None, text, (
            tenant["vrf"], f"{tenant['vrf']} falls through to the main table: {dst} resolves by {dev} there",
            "give the VRF its own default (import vrf default, or the leaked static default)")
    return "blocked", dev, None, text, None


def observe(target) -> tuple:
    """egress_probe's verdict on one target: (verdict as reply/blocked/unknown/not_run, text)."""
    if not target:
        return "not_run", "not probed"
    text = (f"{target.get('received', 0)}/{target.get('sent', 0)} replies"
            + (f", {target['error']}" if target.get("error") else "")
            + (f", left by {', '.join(str(name) for name in target['left_by'])}" if target.get("left_by") else ""))
    if target.get("passed"):
        return target.get("expect"), text
    other = "blocked" if target.get("expect") == "reply" else "reply"
    return other, text


def _probe_problem(probe_msg, address: str) -> str:
    """egress_probe's words about one target: its probe's message has a line per failed probe,
    the probe's name first and its targets' problems after it, separated by '; '."""
    for line in str(probe_msg or "").splitlines():
        name, _colon, problems = line.partition(": ")
        for problem in problems.split("; "):
            if problem.startswith(f"{address} "):
                return f"{name}: {problem}"
    return ""


def _combine(expect: str, parts: list, findings: Findings, node: str) -> dict:
    """A cell from its targets' (prediction, observation) parts: the verdict, and each reason it
    is not a pass as a finding. A prediction's problem is the finding (it names the device or the
    route); an observation that fails where the kernel predicts success is a finding of its own,
    beyond the node; a prediction of failure that the probe contradicts is a disagreement."""
    ids, verdict = [], "pass"
    for part in parts:
        pred, obs = part["prediction"], part["observation"]
        if obs["verdict"] == "not_run":
            verdict = "not_run"
        elif pred.get("problem"):
            ids.append(findings.add(pred.get("node", node), *pred["problem"]))
            if obs["verdict"] == expect:
                ids.append(findings.add(node, part["subject"], (
                    f"the kernel's lookup predicts {pred['verdict']} ({pred['text']}) but the probe saw "
                    f"{obs['verdict']}: prediction and observation disagree"),
                    "apply what the node runs (FRR or the SDN not reloaded), or find the route the kernel "
                    "holds and FRR does not"))
        elif obs["verdict"] not in (expect, "unknown"):
            beyond = f"the kernel of {node} routes it as expected: look beyond the node (the core, its routes back, a firewall)"
            ids.append(findings.add(node, part["subject"], obs.get("problem") or f"{part['subject']}: {obs['text']}",
                                    part.get("fix") or beyond))
        elif obs["verdict"] == "unknown" and verdict == "pass":
            verdict = "unknown"
    if ids and verdict != "not_run":
        verdict = "fail"
    for part in parts:
        part["prediction"].pop("problem", None)
        part["prediction"].pop("node", None)
    return {
        "expect": expect, "target": ", ".join(part["target"] for part in parts),
        "prediction": _merged([part["prediction"] for part in parts], expect),
        "observation": _merged([part["observation"] for part in parts], expect),
        "verdict": verdict, "findings": list(dict.fromkeys(ids)),
    }


def _merged(parts: list, expect: str) -> dict:
    """One side (prediction or observation) of a cell over its targets: the first verdict that is
    not the expected one, else the expected one where any target gave it."""
    if len(parts) == 1:  # most cells: one target, its side as it is (the rule below gives the same)
        merged = {"verdict": parts[0]["verdict"], "text": parts[0].get("text") or ""}
        merged.update((key, parts[0][key]) for key in ("dev", "nat", "fall_through") if key in parts[0])
        return merged
    verdicts = [part["verdict"] for part in parts]
    off = [verdict for verdict in verdicts if verdict not in (expect, "unknown")]
    verdict = "not_run" if "not_run" in verdicts else off[0] if off else expect if expect in verdicts else "unknown"
    merged = {"verdict": verdict, "text": "; ".join(part["text"] for part in parts if part.get("text"))}
    for key in ("dev", "nat", "fall_through"):
        values = [part.get(key) for part in parts if key in part]
        if values:
            merged[key] = values[0] if all(value == values[0] for value in values) else None
    return merged


def _prediction(verdict, dev, nat, text, problem, **extra) -> dict:
    made = {"verdict": verdict, "dev": dev, "nat": nat, "text": text, "problem": problem}
    made.update(extra)
    return made


def _observation(observed, address: str) -> dict:
    """The observation of one target from _probe_targets' (target, message), or None."""
    target, probe_msg = observed or (None, "")
    verdict, text = observe(target)
    return {"verdict": verdict, "text": text, "problem": _probe_problem(probe_msg, address) or None}


def _class_cells(row: Mapping, settings: Mapping, findings: Findings) -> list:
    """The cells of the given classes (internet, DNS, NTP, management, private) of one row."""
    tenant, node = row["tenant"], row["node"]
    cells = []
    for name, expect in TARGET_CLASSES:
        parts = []
        for target in settings[name]:
            address = target["address"]
            answer = node["answers"].get((tenant["vrf"], address, None))
            if expect == "reply":
                predicted = _prediction(*predict_reply(answer, tenant, node, address))
                if not predicted["problem"]:
                    predicted["problem"] = _own_return_problem(tenant, node)
            else:
                predicted = _prediction(*predict_blocked(answer, tenant, node, address, row["vnets"]))
            predicted["fall_through"] = bool((answer or {}).get("fall_through"))
            observed = node["observed"].get((tenant["name"], address, target["proto"], target.get("port"), None))
            parts.append({"target": f"{address} {target['proto']}" + (f"/{target['port']}" if target.get("port") else ""),
                          "subject": f"{tenant['name']} -> {address}", "prediction": predicted,
                          "observation": _observation(observed, address)})
        if parts:
            cells.append(dict(_combine(expect, parts, findings, node["name"]), column=name))
    return cells


def _own_return_problem(tenant: Mapping, node: Mapping):
    """Why the answers to the tenant's traffic, landing back on its own node by an uplink, would
    be dropped there (forwarding, rp_filter); None when they are forwarded."""
    for uplink in node["uplinks"]:
        answer = node["answers"].get(("default", tenant["workload"], uplink))
        problem = _input_problem(answer, node["name"], tenant["workload"], uplink)[2] if answer else None
        if problem:
            return problem
    return None


def _tenant_cells(row: Mapping, findings: Findings) -> list:
    """One cell per other tenant of the node: its workload must stay unreachable."""
    tenant, node, cells = row["tenant"], row["node"], []
    for other in isolation_peers(tenant, row["fleet"][node["name"]], row["isolation_peers"]):
        address = other["workload"]
        answer = node["answers"].get((tenant["vrf"], address, None))
        predicted = _prediction(*predict_blocked(answer, tenant, node, address, row["vnets"]))
        observed = node["observed"].get((tenant["name"], address, "icmp", None, None))
        part = {"target": address, "subject": f"{tenant['name']} -> {other['name']} {address}",
                "prediction": predicted, "observation": _observation(observed, address),
                "fix": f"find what connects {tenant['vrf']} and {other['vrf']} on {node['name']}"}
        cells.append(dict(_combine("blocked", [part], findings, node["name"]), column=f"tenant:{other['name']}"))
    return cells


def _peer_cells(row: Mapping, findings: Findings, full_size: bool) -> list:
    """Per other node with the tenant: its workload there answers across the fabric, small and,
    with full_size, at the VNet's MTU with DF set. Predicted from the EVPN VNI's remote VTEPs."""
    tenant, node, cells = row["tenant"], row["node"], []
    known = set((node["vnis"].get(tenant["vni"]) or {}).get("remote_vteps") or [])
    for other, tenants in row["fleet"].items():
        peer = tenants.get(tenant["name"])
        if other == node["name"] or peer is None:
            continue
        if not node["evpn"]:
            predicted = ("unknown", None, None, "the VNIs were not read", None)
        elif peer["vtep"] in known:
            predicted = ("reply", tenant["vnet"], None, f"VNI {tenant['vni']} floods to {other}'s VTEP {peer['vtep']}", None)
        else:
            predicted = ("blocked", None, None, f"VNI {tenant['vni']} does not know {other}'s VTEP {peer['vtep']}",
                         (f"VNI {tenant['vni']}", f"{node['name']}'s VNI {tenant['vni']} does not know {other}'s VTEP "
                          f"{peer['vtep']}", f"check VNI {tenant['vni']} on {other} and the EVPN session"))
        for column, size in (("peer", None), ("peer-df", "mtu")):
            if size and not full_size:
                continue
            observed = node["observed"].get((tenant["name"], peer["workload"], "icmp", None, size))
            if predicted[4] is None and _observed_as(observed, "reply"):
                cells.append(_passed_cell(f"{column}:{other}"))
                continue
            part = {"target": peer["workload"] + (" DF mtu" if size else ""),
                    "subject": f"{tenant['name']} {node['name']} -> {other}" + (" full-size DF" if size else ""),
                    "prediction": _prediction(*predicted), "observation": _observation(observed, peer["workload"]),
                    "fix": f"look at the underlay between {node['name']} and {other}: its MTU must carry the VNet's "
                           f"{tenant.get('mtu')} bytes plus VXLAN's 50" if size else None}
            cells.append(dict(_combine("reply", [part], findings, node["name"]), column=f"{column}:{other}"))
    return cells


def _input_problem(answer, node: str, dst: str, iif: str):
    """(verdict, text, problem) of an input lookup: the return to `dst` arriving on `iif`."""
    if not answer:
        return "unknown", f"{node}: no lookup of {dst} arriving on {iif} was gathered", None
    if answer.get("type") == "unicast":
        return "reply", f"{node}: {dst} from {iif} {_route_text(answer)}", None
    reason = answer.get("reason")
    setting = {"not_forwarded": "forwarding", "reverse_path": "rp_filter"}.get(reason)
    subject = f"net.ipv4.conf.{iif}.{setting}" if setting else f"{dst} arriving on {iif}"
    # vrf_route_assert's words are `VRF: DST from SRC arriving by IIF <what happens>: <why>`: the
    # why is the node's, the same for every workload, so it is one finding per node and device.
    why = str(answer.get("msg") or "").split(": ", 2)
    text = (f"{node} drops the returns arriving on {iif}: {why[2]}" if setting and len(why) == 3
            else answer.get("msg") or f"{node} drops returns to {dst} arriving on {iif}: {_route_text(answer)}")
    fix = {"forwarding": f"set {subject}=1 on {node} (deevnet.net.sysctl_forwarding; the role's tenant-egress)",
           "rp_filter": f"set {subject}=0 and net.ipv4.conf.all.rp_filter=0 on {node} (the role's tenant-egress)"
           }.get(setting, f"give {node} a route to {dst}")
    return "blocked", f"{node}: {dst} from {iif} {_route_text(answer)}", (subject, text, fix)


def _advertised(tenant: Mapping, node: Mapping) -> list:
    """A return landing on another node reaches the workload by the host route EVPN carries from
    the workload's node (a type-2 route from the VNet's L2 VNI, imported into the VRF over the L3
    VNI): without the L2 VNI on its node, no other node learns where the workload is."""
    if not node["evpn"]:
        return []
    if (node["vnis"].get(tenant["vni"]) or {}).get("type"):
        return [(node["name"], "reply", f"{node['name']}: VNI {tenant['vni']} advertises its workloads", None)]
    text = f"VNI {tenant['vni']} of {tenant['name']} is missing on {node['name']}"
    return [(node["name"], "blocked", text, (f"VNI {tenant['vni']}", text,
                                             f"re-create its devices: {reload_interfaces(node['name'])}"))]


def _not_landed(name: str) -> str:
    return f"not observed: returns land where the core sends them (no return_landing for {name})"


def _routed(steps: list) -> bool:
    """Whether every step of a return (_return_cells) has a lookup answer that is a route."""
    return bool(steps) and all(answer and answer.get("type") == "unicast" for _where, answer, _iif in steps)


def _unobserved_cell(name: str) -> dict:
    """A return through `name` predicted as expected and by design not observed, as _combine makes
    it and the report keeps it (_fold): its texts, which the summary does not keep, not made."""
    return {"verdict": "unknown", "expect": "reply", "findings": [], "prediction": {"verdict": "reply"},
            "observation": {"verdict": "unknown", "text": _not_landed(name)}, "column": f"return:{name}",
            UNOBSERVED: True}


def _observed_as(observed, expect: str) -> bool:
    """Whether egress_probe's target (from _probe_targets) went as `expect`: observe()'s verdict."""
    return bool(observed and observed[0].get("passed") and observed[0].get("expect") == expect)


def _passed_cell(column: str) -> dict:
    """A cell that passed as the report keeps it (its key; _fold): made without its texts, which a
    passing cell does not keep, for a target whose prediction had no problem and went as expected."""
    return {"verdict": "pass", "column": column}


def _return_cells(row: Mapping, nodes: Mapping, settings: Mapping, findings: Findings) -> list:
    """Per other node X: the tenant's traffic back to this row's workload, entering the fabric at
    X by its uplinks, is forwarded there and accepted where it enters the tenant's VRF here.
    Observed only where the fabric is made to land those returns on X (settings.return_landing)."""
    tenant, node, cells = row["tenant"], row["node"], []
    source = settings["internet"][0]
    forced = _return_workloads(settings, tenant["name"], node["name"])
    advertised = bool((node["vnis"].get(tenant["vni"]) or {}).get("type"))
    for name, landing in nodes.items():
        if name == node["name"]:
            continue
        steps = [(name, landing["answers"].get(("default", tenant["workload"], uplink)), uplink)
                 for uplink in landing["uplinks"]]
        if tenant.get("l3vni_bridge"):
            steps.append((node["name"], node["answers"].get((tenant["vrf"], tenant["workload"], tenant["l3vni_bridge"])),
                          tenant["l3vni_bridge"]))
        if name not in forced and _routed(steps) and (not node["evpn"] or advertised):
            # Every step a route and the VNI advertised: the prediction below would be reply.
            cells.append(_unobserved_cell(name))
            continue
        judged = [(where,) + _input_problem(answer, where, tenant["workload"], iif) for where, answer, iif in steps]
        if name in forced:
            # The pair's workload sends its request as the tenant's traffic does: its way out is
            # part of what the observation proves.
            out = predict_reply(node["answers"].get((tenant["vrf"], source["address"], None)), tenant, node,
                                source["address"])
            judged.insert(0, (node["name"], out[0], out[3], out[4]))
        judged += _advertised(tenant, node)
        failing = [step for step in judged if step[3]]
        verdicts = [step[1] for step in judged]
        verdict = "blocked" if failing else "unknown" if not judged or "unknown" in verdicts else "reply"
        if verdict == "reply" and name not in forced:
            cells.append(_unobserved_cell(name))
            continue
        predicted = _prediction(verdict, None, None, "; ".join(step[2] for step in judged) or "no uplink named",
                                failing[0][3] if failing else None, node=failing[0][0] if failing else node["name"])
        if name in forced:
            observed = node["observed"].get((f"{tenant['name']}-via-{name}", source["address"], source["proto"],
                                             source.get("port"), None))
            observation = _observation(observed, source["address"])
        else:
            observation = {"verdict": "unknown", "problem": None, "text": _not_landed(name)}
        part = {"target": f"{forced.get(name, tenant['workload'])} via {name}",
                "subject": f"{tenant['name']}@{node['name']} returns via {name}",
                "prediction": predicted, "observation": observation}
        cell = dict(_combine("reply", [part], findings, node["name"]), column=f"return:{name}")
        # Predicted and by design not observed: the document summarises these (_fold).
        cell[UNOBSERVED] = name not in forced
        cells.append(cell)
    return cells


def _drift_check(gathered: Mapping, reached: list, findings: Findings) -> dict:
    """What each node's kernel has that its SDN does not declare (sdn_check's drift)."""
    problems = []
    for node in reached:
        for drift in (gathered[node].get("sdn") or {}).get("drift") or []:
            problems.append((node, str(drift.get("object")),
                             f"{node}: {drift.get('object')}: declared {drift.get('declared')}, found "
                             f"{drift.get('found')}", str(drift.get("fix")), drift.get("awaits_reload") is True))
    return _check("sdn_drift", "kernel as the SDN declares", problems, findings,
                  "every node's kernel has what its SDN declares")


def _late(facts) -> float:
    """How late the node's egress_probe run began probing after the shared start (0: on time)."""
    probe = facts.get("probe") if isinstance(facts, Mapping) else None
    late = probe.get("start_late_secs") if isinstance(probe, Mapping) else None
    return float(late) if isinstance(late, (int, float)) else 0.0


def _window_check(gathered: Mapping, reached: list, settings: Mapping, findings: Findings) -> dict:
    """Every node probed within the shared window: a node that began later than one attempt's
    timeout after the start may have missed its peers, whose workloads were already gone."""
    tolerance = (settings["count"] - 1) * settings["timeout"]
    problems = [(node, "start_at", f"{node} began probing {_late(gathered[node]):.1f} s after the shared start, "
                 f"later than the {tolerance} s its peers wait", "give forks at least the node count (-f), or a larger "
                 "fabric_proof_start_margin") for node in reached if _late(gathered[node]) > tolerance]
    return _check("start_window", "every node in the shared window", problems, findings,
                  "every node began probing within the shared window")


def _node_context(name: str, facts) -> dict:
    facts = facts if isinstance(facts, Mapping) else {}
    inputs = _node_inputs(name, facts)
    return {"name": name, "management": inputs["management"], "uplinks": inputs["uplinks"],
            "evpn": facts.get("evpn"), "vnis": _evpn_vnis(facts.get("evpn")),
            "answers": _lookup_answers(facts.get("lookups")),
            "observed": _probe_targets(facts.get("probe"))}


def _columns(nodes: list, fleet: Mapping, full_size: bool) -> list:
    def column(column_id, label, kind, node=None, tenant=None):
        return {"id": column_id, "label": label, "kind": kind, "node": node, "tenant": tenant}
    columns = [column(name, "mgmt" if name == "management" else name, name) for name, _expect in TARGET_CLASSES]
    tenant_names = sorted({name for tenants in fleet.values() for name in tenants})
    columns += [column(f"tenant:{name}", name, "tenant", tenant=name) for name in tenant_names]
    columns += [column(f"peer:{node}", node, "peer", node=node) for node in nodes]
    if full_size:
        columns += [column(f"peer-df:{node}", f"{node} DF", "peer_df", node=node) for node in nodes]
    columns += [column(f"return:{node}", f"via {node}", "return", node=node) for node in nodes]
    return columns


def _summary(counted: dict, checks: list, findings: Findings) -> dict:
    return {"cells": sum(counted.values()), "passed": counted["pass"], "failed": counted["fail"],
            "unknown": counted["unknown"], "not_run": counted["not_run"],
            "checks_failed": sum(not check["ok"] for check in checks), "findings": len(findings.entries)}


def _tenant_entries(fleet: Mapping, reached: list) -> list:
    """The document's tenants, by name: each with its VRF and its subnets over the nodes."""
    tenants = {}
    for node in reached:
        for tenant in fleet[node].values():
            tenants.setdefault(tenant["name"], {"name": tenant["name"], "vrf": tenant["vrf"], "subnets": []})
            if tenant["subnet"] not in tenants[tenant["name"]]["subnets"]:
                tenants[tenant["name"]]["subnets"].append(tenant["subnet"])
    return [tenants[name] for name in sorted(tenants)]


def _reconciled_cells(fleet: Mapping, contexts: Mapping, settings: Mapping, findings: Findings, tenants: list):
    """Every row's cells as the document keeps them (plugin_utils/fabric_proof_cells.py): each
    cell that failed, was not run or is undecided for a reason of its own in full; the passing
    ones, and the undecided ones predicted and by design not observed, as tenant indexes per node
    and column, folded in as they are made so that their texts are never all held at once.
    Returns (cells, passed, unobserved, the verdicts' counts)."""
    index = {tenant["name"]: position for position, tenant in enumerate(tenants)}
    vnets = {tenant["vnet"]: tenant["name"] for node_tenants in fleet.values() for tenant in node_tenants.values()}
    listed, passed, unobserved, counted = [], {}, {}, {"pass": 0, "fail": 0, "unknown": 0, "not_run": 0}
    for node, context in contexts.items():
        kept = (passed.setdefault(node, {}), unobserved.setdefault(node, {}))
        for tenant in fleet[node].values():
            row = {"tenant": tenant, "node": context, "fleet": fleet, "vnets": vnets,
                   "isolation_peers": settings["isolation_peers"]}
            for cell in (_class_cells(row, settings, findings) + _tenant_cells(row, findings)
                         + _peer_cells(row, findings, settings["full_size"])
                         + _return_cells(row, contexts, settings, findings)):
                counted[cell["verdict"]] += 1
                if not _fold(cell, index[tenant["name"]], *kept):
                    listed.append(dict(cell, tenant=tenant["name"], node=node))
    return listed, passed_summary(passed), unobserved_summary(unobserved), counted


def _fold(cell: dict, index: int, passed: dict, unobserved: dict) -> bool:
    """The cell folded into the node's summaries when it passed, or is undecided only because it
    was predicted (as expected) and by design not observed; False when it must be kept in full."""
    by_design = cell.pop(UNOBSERVED, False)
    if cell["verdict"] == "pass":
        passed.setdefault(cell["column"], []).append(index)
        return True
    predicted, observation = cell["prediction"]["verdict"], cell["observation"]
    if cell["verdict"] == "unknown" and by_design and not cell["findings"] and predicted == cell["expect"]:
        entry = unobserved.setdefault(cell["column"], ([], predicted, observation["text"]))
        if entry[2] == observation["text"]:
            entry[0].append(index)
            return True
    return False


def fleet_proof_reconcile(facts, nodes, settings, generated=None, qinq=None) -> dict:
    """The report: every node's gathered results (facts, by node: reached, sdn, evpn, lookups,
    probe, uplinks, management, exit) reconciled into cells, fleet checks and findings;
    `qinq`, the rows of the QinQ acceptance matrix when the playbook ran it."""
    nodes = _check_nodes("fleet_proof_reconcile", nodes, facts)
    settings = normalize_settings(settings, "fleet_proof_reconcile")
    gathered = {node: facts.get(node) if isinstance(facts.get(node), Mapping) else {} for node in nodes}
    reached = [node for node in nodes if gathered[node].get("reached") and gathered[node].get("sdn")]
    fleet = _fleet_tenants("fleet_proof_reconcile", {node: gathered[node] for node in reached}, nodes, settings)
    findings = Findings()
    checks = [_reached_check(nodes, reached, gathered, findings), _version_check(gathered, reached, findings),
              _vtep_check(fleet, gathered, reached, findings), _exit_check(fleet, gathered, reached, findings),
              _drift_check(gathered, reached, findings), _window_check(gathered, reached, settings, findings)]
    contexts = {node: _node_context(node, gathered[node]) for node in reached}
    tenants = _tenant_entries(fleet, reached)
    cells, passed, unobserved, counted = _reconciled_cells(fleet, contexts, settings, findings, tenants)
    return {
        "format": FORMAT, "generated": generated,
        "nodes": [_node_entry(node, gathered[node], fleet.get(node) or {}, node in reached) for node in nodes],
        "tenants": tenants, "columns": _columns(nodes, fleet, settings["full_size"]),
        "cells": cells, "passed": passed, "unobserved": unobserved, "findings": findings.entries, "checks": checks,
        "qinq": _qinq(qinq), "summary": _summary(counted, checks, findings),
    }


def _node_entry(name: str, facts: Mapping, tenants: Mapping, reached: bool) -> dict:
    version = (facts.get("sdn") or {}).get("version") or {}
    vteps = sorted({tenant["vtep"] for tenant in tenants.values() if tenant.get("vtep")})
    return {"name": name, "exit": any(tenant["exit_node"] for tenant in tenants.values()),
            "vtep": vteps[0] if vteps else None, "sdn_version": version.get("applied"),
            "uplinks": list(facts.get("uplinks") or []), "management": facts.get("management") or "vmbr0",
            "reached": reached}


def _qinq(qinq):
    """The QinQ acceptance matrix folded in: {hosts, rows}, when the playbook ran it."""
    if isinstance(qinq, Mapping) and qinq.get("rows") is not None:
        return {"hosts": list(qinq.get("hosts") or []), "rows": list(qinq["rows"])}
    return None


# What the playbook registers on each node, by the key of the node's gathered facts.
REGISTERED = {"sdn": "fabric_proof_sdn", "evpn": "fabric_proof_evpn", "lookups": "fabric_proof_lookups",
              "probe": "fabric_proof_probe"}


def _registered(result):
    """A registered result, or None when the task did not run there (skipped, or never reached)."""
    if not isinstance(result, Mapping) or result.get("skipped"):
        return None
    return result


def fleet_proof_facts(hostvars, nodes) -> dict:
    """Every node's gathered facts as the plan and the report read them, from the playbook's
    registered results and the node's variables (fabric_proof_uplinks,
    fabric_proof_management_bridge, fabric_proof_exit); a node without its SDN result is not
    reached."""
    nodes = _check_nodes("fleet_proof_facts", nodes, hostvars)
    facts = {}
    for node in nodes:
        variables = hostvars[node] if node in hostvars else {}
        gathered = {key: _registered(variables.get(name)) for key, name in REGISTERED.items()}
        sdn = gathered["sdn"] or {}
        gathered["reached"] = bool(sdn) and not sdn.get("failed") and not sdn.get("unreachable")
        gathered["uplinks"] = list(variables.get("fabric_proof_uplinks") or [])
        gathered["management"] = variables.get("fabric_proof_management_bridge") or "vmbr0"
        gathered["exit"] = variables.get("fabric_proof_exit")
        facts[node] = gathered
    return facts


def _patterns(filter_name: str, expected: Mapping, key: str) -> dict:
    given = expected.get(key) or {}
    if not isinstance(given, Mapping):
        _fail(filter_name, f"expected.{key}", given, "give a dict of node: pattern")
    try:
        return {str(node): re.compile(str(pattern)) for node, pattern in given.items()}
    except re.error as error:
        _fail(filter_name, f"expected.{key}", given, f"give regular expressions ({error})")


def fleet_report_unexpected(report, expected) -> list:
    """What in `report` lies outside what a known fault may fail: `expected` gives the cells that
    may fail (cells, node: a pattern of their columns), the findings' subjects (findings, node:
    pattern) and the fleet checks that must fail (checks). Each node named must have a failing
    cell or a finding, so a fault the proof did not name is unexpected too. Empty when the
    report is exactly as expected."""
    name = "fleet_report_unexpected"
    if not isinstance(report, Mapping) or report.get("format") != FORMAT:
        _fail(name, "report", report if not isinstance(report, Mapping) else report.get("format"),
              "give the document deevnet.net.fleet_proof_reconcile made")
    if not isinstance(expected, Mapping):
        _fail(name, "expected", expected, "give a dict with cells, findings and checks")
    cells, subjects = _patterns(name, expected, "cells"), _patterns(name, expected, "findings")
    unexpected = []
    failing = [cell for cell in report.get("cells") or [] if cell.get("verdict") != "pass"]
    # The undecided cells the document summarises are not passes either.
    try:
        summarised = ProofCells({"cells": [], "tenants": report.get("tenants") or [],
                                 "unobserved": report.get("unobserved")})
    except (CellsError, KeyError, TypeError) as error:
        _fail(name, "report.unobserved", report.get("unobserved"), f"give the whole document ({error})")
    failing += [summarised.get(key) for key in summarised.summarised_keys()]
    for cell in failing:
        pattern = cells.get(cell.get("node"))
        if pattern is None or not pattern.search(str(cell.get("column"))):
            unexpected.append(f"cell {cell.get('tenant')}@{cell.get('node')} {cell.get('column')}: {cell.get('verdict')}")
    for node in cells:
        if not any(cell.get("node") == node for cell in failing):
            unexpected.append(f"no failing cell on {node}")
    for finding in report.get("findings") or []:
        pattern = subjects.get(finding.get("node"))
        if pattern is None or not pattern.search(str(finding.get("subject"))):
            unexpected.append(f"finding {finding.get('node')} {finding.get('subject')}: {finding.get('text')}")
    for node in subjects:
        if not any(finding.get("node") == node for finding in report.get("findings") or []):
            unexpected.append(f"no finding on {node}")
    failed = sorted(check.get("id") for check in report.get("checks") or [] if not check.get("ok"))
    if failed != sorted(expected.get("checks") or []):
        unexpected.append(f"fleet checks failed {failed}, expected {sorted(expected.get('checks') or [])}")
    return unexpected


class FilterModule:
    """deevnet.net.fleet_proof_facts, fleet_proof_plan, fleet_proof_reconcile and fleet_report_unexpected."""

    def filters(self):
        return {"fleet_proof_facts": fleet_proof_facts, "fleet_proof_plan": fleet_proof_plan,
                "fleet_proof_reconcile": fleet_proof_reconcile, "fleet_report_unexpected": fleet_report_unexpected}
