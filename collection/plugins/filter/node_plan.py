# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The planning of the role deevnet.net.proxmox_node_network, as pure functions: from the node's
tenant-egress settings to what each of the role's module tasks gets. Nothing here reads the node;
the role's tasks pass the plan's parts to the modules.

The node's shape comes from the data: a ``transit_interface`` makes an exit node (forwarding, a
leaked default per tenant), without one the node is a member node whose VRFs default through the
fabric. Each tenant's default on an exit node comes from its leak design: ``static`` (a leaked
static default via the transit gateway) or ``import`` (the default VRF's BGP routes imported).

The documentation of the filter is in tenant_egress_plan.yml, next to this file (ansible-doc
reads it from there: a filter file may hold several filters, so each has its own sidecar)."""

from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

VARIABLE = "proxmox_node_network_tenant_egress"

# Toward the core: only subnet aggregates out, never the default nor a /32 host route EVPN
# learned (README.md, "All-exit fabric").
CORE_ROUTE_MAP = "DEEVNET-TO-CORE"
CORE_PREFIX_LIST = "LEAK-SUBNET-ONLY"


def _given(value) -> bool:
    """A key counts as given when it is set to something: Ansible's argument spec treats a null
    the same as a missing key."""
    return value is not None and value != ""


def _with_defaults(given: dict, defaults: dict) -> dict:
    """`given` over `defaults`, a key set to null counting as not given."""
    merged = dict(defaults)
    merged.update({key: value for key, value in given.items() if value is not None})
    return merged


def _names(tenants: list[dict]) -> str:
    return ", ".join(tenant["name"] for tenant in tenants) or "none"


def node_settings(settings: dict, defaults: dict) -> dict:
    """The node's settings with the role's defaults applied (the tenants' own come later)."""
    node_defaults = {key: value for key, value in defaults.items() if key != "tenant"}
    return _with_defaults(settings or {}, node_defaults)


def l3vni_bridge_of(vrf: str) -> str:
    """Proxmox's name of a zone's L3VNI bridge: vrfbr_<zone>, the zone being the VRF's name
    without its vrf_ prefix."""
    return "vrfbr_" + re.sub("^vrf_", "", vrf)


def normalised_tenants(node: dict, tenant_defaults: dict) -> list[dict]:
    """Each tenant with its overrides resolved: VRF (vrf_<name> unless given), gateways (the
    node's unless the tenant has its own), management probes (the node's plus the tenant's), the
    leak design (the node's unless the tenant has its own), the zone's L3VNI bridge, and its
    probe (or None) with its defaults."""
    probe_defaults = tenant_defaults.get("probe", {})
    plain_defaults = {key: value for key, value in tenant_defaults.items() if key != "probe"}
    tenants = []
    for index, given in enumerate(node.get("tenants") or []):
        if not isinstance(given, dict) or not _given(given.get("name")):
            raise AnsibleFilterError(f"{VARIABLE}.tenants[{index}]: {given!r} has no name; each tenant is a dict "
                                     f"with at least its name, e.g. - name: tdemo")
        tenant = _with_defaults(given, plain_defaults)
        vrf = tenant.get("vrf") or "vrf_" + tenant["name"]
        probe = tenant.get("probe")
        tenants.append({
            "name": tenant["name"],
            "vrf": vrf,
            "gateway": tenant.get("gateway") or node.get("transit_gateway") or "",
            "gateway6": tenant.get("gateway6") or node.get("transit_gateway6") or "",
            "management_probes": list(node["management_probes"]) + list(tenant["management_probes"]),
            "probe": _with_defaults(probe, probe_defaults) if probe else None,
            "leak": tenant.get("leak") or node["leak"],
            "l3vni_bridge": tenant.get("l3vni_bridge") or l3vni_bridge_of(vrf),
        })
    return tenants


def forbidden_interfaces(node: dict) -> list[str]:
    """The interfaces tenant traffic must never leave by: every prefix connected on them is
    checked."""
    first = [node["management_interface"]] if _given(node.get("management_interface")) else []
    return first + list(node["management_interfaces"])


def shape_problems(node: dict, tenants: list[dict], ipv6: bool) -> list[str]:
    """What an exit node lacks, one message per rule: the variable, its value and the fix."""
    transit = node["transit_interface"]
    static = [tenant for tenant in tenants if tenant["leak"] == "static"]
    imported = [tenant for tenant in tenants if tenant["leak"] == "import"]
    problems = []
    without_gateway = [tenant for tenant in static if not tenant["gateway"]]
    if without_gateway:
        problems.append(
            f"{VARIABLE}.transit_gateway is unset: an exit node (transit_interface {transit}) needs "
            f"transit_gateway (or a gateway on every tenant of the static leak design; missing for: "
            f"{_names(without_gateway)}); set transit_gateway to the transit router's address, or a gateway "
            f"on each of those tenants, or leak: import where the default is learned from the core over BGP")
    if not forbidden_interfaces(node):
        problems.append(
            f"{VARIABLE}.management_interface is unset and management_interfaces is empty: an exit node "
            f"(transit_interface {transit}) needs the interface tenant traffic must never leave by; set "
            f"management_interface to the management bridge, e.g. vmbr0")
    without_gateway6 = [tenant for tenant in static if not tenant["gateway6"]]
    if ipv6 and without_gateway6:
        problems.append(
            f"{VARIABLE}.transit_gateway6 is unset and proxmox_node_network_ipv6 is true: an exit node with "
            f"IPv6 needs transit_gateway6 (or gateway6 on every tenant of the static leak design; missing for: "
            f"{_names(without_gateway6)}); set transit_gateway6, or gateway6 on each of those tenants, or "
            f"proxmox_node_network_ipv6: false")
    needs_asn = ([f"the tenants of the import leak design ({_names(imported)})"] if imported else []) + \
        ([f"core_peer ({node['core_peer']})"] if _given(node.get("core_peer")) else [])
    if needs_asn and not _given(node.get("asn")):
        problems.append(
            f"{VARIABLE}.asn is unset: router bgp stanzas, which must name the ASN of the BGP router Proxmox "
            f"generates, are needed for {' and for '.join(needs_asn)}; set asn to it (e.g. asn: 65020)")
    if boolean(node["fabric_ipv6_only"], strict=True) and not _given(node.get("core_peer")):
        problems.append(
            f"{VARIABLE}.fabric_ipv6_only is true but core_peer is unset: the IPv4 activation it adds is for "
            f"the peer toward the core; set core_peer to that peer or peer group (e.g. core_peer: bgpv6), "
            f"or fabric_ipv6_only: false")
    return problems


def frr_stanzas(node: dict, tenants: list[dict], ipv6: bool, frr_mode: str) -> list[dict]:
    """frr_local_stanza's `stanzas`: on an exit node, each tenant VRF's default by its leak design,
    then the core's filter (with core_peer); on a member node none (the role's earlier stanzas go)."""
    if not _given(node.get("transit_interface")):
        return []
    families = ["ipv4", "ipv6"] if ipv6 else ["ipv4"]
    stanzas = []
    for tenant in tenants:
        if tenant["leak"] == "import":
            stanzas.append({
                "header": f"router bgp {node['asn']} vrf {tenant['vrf']}",
                "children": [{"header": f"address-family {family} unicast", "lines": ["import vrf default"]}
                             for family in families]})
        else:
            lines = [f"ip route 0.0.0.0/0 {tenant['gateway']} nexthop-vrf default"]
            if ipv6:
                lines.append(f"ipv6 route ::/0 {tenant['gateway6']} nexthop-vrf default")
            stanzas.append({"header": f"vrf {tenant['vrf']}", "lines": lines, "mode": frr_mode})
    return stanzas + core_stanzas(node)


def core_stanzas(node: dict) -> list[dict]:
    """Toward the core (exit nodes with core_peer): the IPv4 activation when the fabric is defined
    IPv6-only, and only subnet aggregates out."""
    peer = node.get("core_peer")
    if not _given(node.get("transit_interface")) or not _given(peer):
        return []
    lines = [f"neighbor {peer} activate"] if boolean(node["fabric_ipv6_only"], strict=True) else []
    lines.append(f"neighbor {peer} route-map {CORE_ROUTE_MAP} out")
    return [
        {"header": f"router bgp {node['asn']}",
         "children": [{"header": "address-family ipv4 unicast", "lines": lines}]},
        {"header": f"ip prefix-list {CORE_PREFIX_LIST} seq 5 deny 0.0.0.0/0"},
        {"header": f"ip prefix-list {CORE_PREFIX_LIST} seq 10 permit 0.0.0.0/0 le 31"},
        {"header": f"route-map {CORE_ROUTE_MAP} permit 1",
         "lines": [f"match ip address prefix-list {CORE_PREFIX_LIST}"]},
    ]


def rp_filter(node: dict, tenants: list[dict]) -> dict:
    """sysctl_forwarding's `rp_filter`, for the import design: a return that lands on another node
    enters the tenant's VRF on its L3VNI bridge, which has no IPv4 address, and the VRF's default
    leaves by the uplink, so the kernel drops it even in loose mode; off on `all` (the kernel
    applies the larger of `all` and the device's), `default`, the uplink and each such tenant's
    L3VNI bridge."""
    imported = [tenant for tenant in tenants if tenant["leak"] == "import"]
    if not _given(node.get("transit_interface")) or not imported:
        return {}
    values = {"all": 0, "default": 0, node["transit_interface"]: 0}
    values.update({tenant["l3vni_bridge"]: 0 for tenant in imported})
    return values


def route_assertions(node: dict, tenants: list[dict], ipv6: bool) -> list[dict]:
    """vrf_route_assert's `vrfs` for the final proof. Per tenant: each management probe's lookup
    must not leave by the first forbidden interface (on an exit node it leaves by the transit
    interface, via the gateway with the static design); the VRF's default by its leak design on an
    exit node, on a member node no fall-through to the main table and no forwarding."""
    transit = node.get("transit_interface")
    exit_node = _given(transit)
    forbidden = forbidden_interfaces(node)
    entries = []
    for tenant in tenants:
        lookups = []
        for probe in tenant["management_probes"]:
            lookup = {"dst": probe}
            if exit_node:
                lookup["dev"] = transit
                if tenant["leak"] == "static":
                    lookup["via"] = tenant["gateway"]
            if forbidden:
                lookup["not_dev"] = forbidden[0]
            lookups.append(lookup)
        entry = {"name": tenant["vrf"], "lookups": lookups, "forbidden_interfaces": forbidden}
        if not exit_node:
            entry.update({"no_fall_through": True, "forwarding": False})
        elif tenant["leak"] == "import":
            entry.update({"default_dev": transit, "asymmetric_returns": True})
            if ipv6:
                entry["ipv6_default_dev"] = transit
        else:
            entry["default_via"] = tenant["gateway"]
            if ipv6:
                entry["ipv6_default_via"] = tenant["gateway6"]
        entries.append(entry)
    return entries


def egress_probes(node: dict, tenants: list[dict]) -> list[dict]:
    """egress_probe's arguments, one entry per tenant with a `probe` (`tenant` names it): its
    targets plus the management probes as leak probes (expect none), the forbidden interfaces, and
    on an exit node the transit interface its packets must leave by."""
    transit = node.get("transit_interface")
    probes = []
    for tenant in tenants:
        probe = tenant["probe"]
        if not probe:
            continue
        entry = {
            "tenant": tenant["name"],
            "vrf": tenant["vrf"],
            "address": probe["address"],
            "targets": list(probe["targets"]) + [{"address": address, "expect": "none"}
                                                 for address in tenant["management_probes"]],
            "count": probe["count"],
            "forbidden_interfaces": forbidden_interfaces(node),
        }
        if _given(transit):
            entry["expect_egress_interface"] = transit
        probes.append(entry)
    return probes


def tenant_egress_plan(settings: dict, defaults: dict, ipv6=False, frr_mode: str = "exact",
                       undeclared_vrfs: str = "fail") -> dict:
    """The whole plan of the tenant-egress section; raises AnsibleFilterError, one message per
    rule the node's shape breaks, before anything is planned for a node it would break."""
    if not isinstance(settings, dict):
        raise AnsibleFilterError(f"{VARIABLE}: expected a dict of the node's settings, got {settings!r}; "
                                 f"see ansible-doc -t role deevnet.net.proxmox_node_network")
    if not isinstance(defaults, dict):
        raise AnsibleFilterError(f"tenant_egress_plan: defaults must be the role's dict of defaults, got {defaults!r}")
    ipv6 = boolean(ipv6, strict=True)
    node = node_settings(settings, defaults)
    tenants = normalised_tenants(node, defaults.get("tenant", {}))
    exit_node = _given(node.get("transit_interface"))
    if exit_node:
        problems = shape_problems(node, tenants, ipv6)
        if problems:
            raise AnsibleFilterError("\n".join(problems))
    plan = {
        "exit_node": exit_node,
        "transit_interface": node["transit_interface"] if exit_node else None,
        "tenants": tenants,
        "declared_vrfs": [{"name": tenant["vrf"], "forwarding": False} for tenant in tenants],
        "forbidden_interfaces": forbidden_interfaces(node),
        "rp_filter": rp_filter(node, tenants),
        "frr_stanzas": frr_stanzas(node, tenants, ipv6, frr_mode),
        "route_assertions": route_assertions(node, tenants, ipv6),
        "undeclared_vrfs": undeclared_vrfs if exit_node else "ignore",
        "probes": egress_probes(node, tenants),
    }
    if _given(node.get("asn")):
        plan["asn"] = node["asn"]
    return plan


class FilterModule:
    """deevnet.net.tenant_egress_plan."""

    def filters(self):
        return {"tenant_egress_plan": tenant_egress_plan}
