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

With the node's SDN intent (the result of the module sdn_check, ``sdn``), the tenants can come
from the cluster (``tenants: discover``), each with its exit role from the zone's exit nodes;
otherwise the declared tenants are compared with it, and each disagreement, and the drift the
module found, is named with its fix (``sdn_mode``: fail or warn). The decision whether a failed
final assertion calls for FRR to be applied again (``frr_reapply``) is here too.

The documentation of the filters is in tenant_egress_plan.yml, frr_reapply.yml and
egress_probe_summary.yml, next to this file (ansible-doc reads it from there: a filter file may
hold several filters, so each has its own sidecar)."""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.yaml import yaml_load
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.display import Display
from ansible_collections.deevnet.net.plugins.plugin_utils.ifname import interface_name_problem, too_long

VARIABLE = "proxmox_node_network_tenant_egress"
SDN_VARIABLE = "proxmox_node_network_sdn"
SDN_MODES = ("fail", "warn", "ignore")
# Where sdn_check reads the applied SDN by default, as the role runs it.
RUNNING_CONFIG = "/etc/pve/sdn/.running-config"
# The real choices on a node without an applied SDN (/etc/pve is Proxmox's cluster file system:
# nothing there is created by hand).
SDN_CHOICES = (f"apply the SDN in Proxmox (Datacenter > SDN > Apply, or pvesh set /cluster/sdn) to have the "
               f"inventory compared with it, or, on a node without Proxmox's SDN (Debian with FRR and VRFs), set "
               f"{SDN_VARIABLE}: ignore")
# tenants: discover builds the tenants from the SDN instead of a list.
DISCOVER = "discover"
# What `zones.<zone>` may set for a discovered tenant; its name, VRF, L3VNI bridge and exit
# role are the SDN's.
ZONE_KEYS = ("gateway", "gateway6", "leak", "management_probes", "probe", "isolation_exempt")

# A declared tenant's options, as meta/argument_specs.yml documents them under `tenants` (a test
# holds the two equal, defaults aside: they are the role's, applied by the plan). The role's
# argument spec declares `tenants` as raw, a list or the word discover, so Ansible does not
# validate a listed tenant's options itself: the plan does, with Ansible's own validator.
TENANT_SPEC = {
    "name": {"type": "str", "required": True},
    "vrf": {"type": "str"},
    "leak": {"type": "str", "choices": ["static", "import"]},
    "l3vni_bridge": {"type": "str"},
    "gateway": {"type": "str"},
    "gateway6": {"type": "str"},
    "management_probes": {"type": "list", "elements": "str"},
    "isolation_exempt": {"type": "list", "elements": "str"},
    "probe": {"type": "dict", "options": {
        "address": {"type": "str", "required": True},
        "address6": {"type": "str"},
        "targets": {"type": "list", "elements": "dict", "required": True},
        "count": {"type": "int"},
    }},
}

# Toward the core: only subnet aggregates out, never the default nor a /32 host route EVPN
# learned (README.md, "All-exit fabric").
CORE_ROUTE_MAP = "DEEVNET-TO-CORE"
CORE_PREFIX_LIST = "LEAK-SUBNET-ONLY"
# The same for IPv6: a route-map of its own, since a route-map entry's match clauses must all
# match and an IPv4 prefix never matches an ipv6 prefix-list (one entry per family would rest on
# that); the names say the family.
CORE_ROUTE_MAP6 = "DEEVNET-TO-CORE-V6"
CORE_PREFIX_LIST6 = "LEAK-SUBNET-ONLY-V6"


def _plain(value):
    """`value` as plain dicts, lists and strings. Ansible passes its lazy containers (and tagged
    strings); ArgumentSpecValidator deep-copies what it validates, and deep-copying a lazy
    container makes ansible-core 2.19+ instantiate a PluginLoader with aliases, which it reports
    as a deprecation (removed in 2.25)."""
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value


def _role_file(*parts: str) -> Path:
    """A file of the role deevnet.net.proxmox_node_network: beside plugins/ in the installed
    collection, or under the repository's roles/ beside collection/ in the source tree."""
    here = Path(__file__).resolve()
    candidates = [here.parents[2] / "roles" / "proxmox_node_network" / Path(*parts),
                  here.parents[3] / "roles" / "proxmox_node_network" / Path(*parts)]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise AnsibleFilterError(f"the role's {'/'.join(parts)} is not at {candidates[0]}: the collection is incomplete; "
                             f"install it again (ansible-galaxy collection install --force deevnet.net)")


def _role_yaml(*parts: str) -> dict:
    return yaml_load(_role_file(*parts).read_text(encoding="utf-8")) or {}


def role_defaults() -> dict:
    """The defaults the role passes to the plan (defaults/main.yml), for a call without them."""
    return _role_yaml("defaults", "main.yml")["__proxmox_node_network_tenant_egress_defaults"]


def _validating(options: dict) -> dict:
    """An argument spec's options without their documentation, nested options too."""
    return {name: {key: (_validating(value) if key == "options" else value)
                   for key, value in option.items() if key not in ("description", "version_added")}
            for name, option in options.items()}


def settings_spec() -> dict:
    """The options of proxmox_node_network_tenant_egress as meta/argument_specs.yml documents
    them. The role declares the variable raw, so Ansible does not check its keys: a misspelt key
    would print the whole argument spec (about 30 KB) around one useful line. The plan checks
    them against this spec instead, and names the misspelt key and the closest valid one."""
    options = _role_yaml("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    return _validating(options[VARIABLE]["options"])


def validated_settings(settings: dict) -> dict:
    """The node's settings checked against settings_spec(), as Ansible checks a role's variables
    (and, like it, not converted: the plan's own checks read the values as given); a listed
    tenant's options are checked by validated_tenants. An unknown key is named with the closest
    known one."""
    spec = settings_spec()
    unknown = sorted(key for key in settings if key not in spec)
    if unknown:
        raise AnsibleFilterError("; ".join(_unknown_key(key, sorted(spec)) for key in unknown))
    result = ArgumentSpecValidator(spec).validate(dict(settings))
    if result.error_messages:
        raise AnsibleFilterError(f"{VARIABLE}: " + "; ".join(result.error_messages))
    return settings


def _unknown_key(key, known: list[str]) -> str:
    closest = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    fix = (f"did you mean {closest[0]}? rename it" if closest
           else f"remove it, or use one of: {', '.join(known)}")
    return f"{VARIABLE}.{key} is not a setting of the role (ansible-doc -t role deevnet.net.proxmox_node_network); {fix}"


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


def normalised_tenants(node: dict, tenant_defaults: dict, given_tenants: list, exits: list[bool],
                       where: str = f"{VARIABLE}.tenants") -> list[dict]:
    """Each tenant with its overrides resolved: VRF (vrf_<name> unless given), gateways (the
    node's unless the tenant has its own), management probes (the node's plus the tenant's), the
    leak design (the node's unless the tenant has its own), the zone's L3VNI bridge, its probe
    (or None) with its defaults, and whether the node is its exit (`exits`, one per tenant)."""
    probe_defaults = tenant_defaults.get("probe", {})
    plain_defaults = {key: value for key, value in tenant_defaults.items() if key != "probe"}
    tenants = []
    for index, (given, exit_here) in enumerate(zip(given_tenants, exits)):
        if not isinstance(given, dict) or not _given(given.get("name")):
            raise AnsibleFilterError(f"{where}[{index}]: {given!r} has no name; each tenant is a dict "
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
            "isolation_exempt": list(tenant["isolation_exempt"]),
            "probe": _with_defaults(probe, probe_defaults) if probe else None,
            "leak": tenant.get("leak") or node["leak"],
            "l3vni_bridge": tenant.get("l3vni_bridge") or l3vni_bridge_of(vrf),
            "exit": exit_here,
        })
    return tenants


def validated_tenants(declared: list) -> list:
    """The declared tenants, each checked against TENANT_SPEC (as Ansible checks a list of dicts
    with options), converted the same way; the message names the tenant's index and the problem."""
    validator = ArgumentSpecValidator(TENANT_SPEC)
    tenants = []
    for index, given in enumerate(declared):
        if not isinstance(given, dict) or not _given(given.get("name")):
            raise AnsibleFilterError(f"{VARIABLE}.tenants[{index}]: {given!r} has no name; each tenant is a dict "
                                     f"with at least its name, e.g. - name: tdemo")
        result = validator.validate({key: value for key, value in given.items() if value is not None})
        if result.error_messages:
            # Ansible's message for an unknown option starts with the option itself.
            raise AnsibleFilterError(f"{VARIABLE}.tenants[{index}] ({given['name']}): " + "; ".join(
                ("unknown option " if isinstance(error, UnsupportedError) else "") + str(error)
                for error in result.errors.errors))
        tenants.append({key: value for key, value in result.validated_parameters.items() if value is not None})
    return tenants


def forbidden_interfaces(node: dict) -> list[str]:
    """The interfaces tenant traffic must never leave by: every prefix connected on them is
    checked."""
    first = [node["management_interface"]] if _given(node.get("management_interface")) else []
    return first + list(node["management_interfaces"])


def shape_problems(node: dict, tenants: list[dict], ipv6: bool) -> list[str]:
    """What an exit node lacks, one message per rule: the variable, its value and the fix. Only
    the tenants it is the exit of count (a discovered zone may exit elsewhere)."""
    transit = node["transit_interface"]
    tenants = [tenant for tenant in tenants if tenant["exit"]]
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


# What a value must be before it is written to a file (frr.conf.local, sysctl keys, the modules'
# arguments): a tenant's name is a word of letters, digits, - and _ (it names the VRF vrf_<name>
# and the probe; FRR splits a line at a space); a BGP peer is one word (an address, an interface
# or a peer group); an ASN fits BGP's 32 bits.
TENANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
BGP_PEER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
MAX_ASN = 4294967295


def _address_problem(value, version: int) -> str:
    """Why `value` is not an address of IP `version` (4 or 6), or ""."""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return "is not an IP address"
    return "" if address.version == version else f"is IPv{address.version}, not IPv{version}"


def value_problems(node: dict, tenants: list[dict], given: list[dict], where: list[str]) -> list[str]:
    """Every value the plan writes to a file, checked before the plan is made (a gateway that is no
    address, a name with a space, would otherwise become an FRR line): one message per value, the
    variable, the value and the fix. `given` is what each tenant set itself, `where` its variable."""
    problems = []
    examples = {4: "10.20.50.1", 6: "2001:db8:50::1"}
    for key, version in (("transit_gateway", 4), ("transit_gateway6", 6)):
        value = node.get(key)
        if _given(value) and _address_problem(value, version):
            problems.append(f"{VARIABLE}.{key}: {value!r} {_address_problem(value, version)}; set it to the transit "
                            f"router's IPv{version} address, e.g. {examples[version]}")
    interfaces = [("transit_interface", node.get("transit_interface")),
                  ("management_interface", node.get("management_interface"))]
    interfaces += [(f"management_interfaces[{index}]", name)
                   for index, name in enumerate(node.get("management_interfaces") or [])]
    for key, name in interfaces:
        if _given(name) and interface_name_problem(name):
            problems.append(f"{VARIABLE}.{key}: {name!r} {interface_name_problem(name)}; give the name as `ip link` "
                            f"shows it, e.g. vmbr0.50")
    for index, address in enumerate(node.get("management_probes") or []):
        if _address_problem(address, 4) and _address_problem(address, 6):
            problems.append(f"{VARIABLE}.management_probes[{index}]: {address!r} is not an IP address; give an "
                            f"address on the management segment, e.g. 10.20.99.5")
    peer = node.get("core_peer")
    if _given(peer) and not (isinstance(peer, str) and BGP_PEER.fullmatch(peer)):
        problems.append(f"{VARIABLE}.core_peer: {peer!r} is not one word of letters, digits, '.', ':', '-' and "
                        f"'_'; give the peer's address, interface or peer group as FRR names it, e.g. bgpv6")
    for key in ("asn", "core_asn"):
        asn = node.get(key)
        if _given(asn) and (not isinstance(asn, int) or isinstance(asn, bool) or not 1 <= asn <= MAX_ASN):
            problems.append(f"{VARIABLE}.{key}: {asn!r} is not an AS number (a whole number from 1 to {MAX_ASN}); "
                            f"e.g. {key}: 65020")
    for tenant, own, at in zip(tenants, given, where):
        name = tenant["name"]
        if not (isinstance(name, str) and TENANT_NAME.fullmatch(name)):
            problems.append(f"{at}.name: {name!r} is not a tenant name: letters, digits, - and _ only (it names the "
                            f"VRF vrf_<name> and the probe); give the zone's name, e.g. tdemo")
            continue
        for key, version in (("gateway", 4), ("gateway6", 6)):
            value = own.get(key)
            if _given(value) and _address_problem(value, version):
                problems.append(f"{at}.{key}: {value!r} {_address_problem(value, version)}; set it to the tenant's "
                                f"IPv{version} transit gateway, e.g. {examples[version]}")
        for key in ("vrf", "l3vni_bridge"):
            value, problem = tenant[key], interface_name_problem(tenant[key])
            if not problem:
                continue
            if _given(own.get(key)):
                problems.append(f"{at}.{key}: {value!r} {problem}; give the device's name as `ip link` shows it")
                continue
            # Not set: made from the tenant's VRF (l3vni_bridge) or its name (both).
            source = "vrf" if key == "l3vni_bridge" and _given(own.get("vrf")) else "name"
            fix = f"give a shorter {source}" if too_long(value) else f"fix the {source}"
            problems.append(f"{at}.{source}: {own.get(source)!r} makes the {key} {value!r}, which {problem}; {fix}, "
                            f"or set {key}")
    return problems


def frr_stanzas(node: dict, tenants: list[dict], exit_node: bool, ipv6: bool, frr_mode: str) -> list[dict]:
    """frr_local_stanza's `stanzas`: on an exit node, the default of each tenant VRF it is the exit
    of, by its leak design, then the core's filter (with core_peer); on a member node none (the
    role's earlier stanzas go)."""
    if not exit_node:
        return []
    families = ["ipv4", "ipv6"] if ipv6 else ["ipv4"]
    stanzas = []
    for tenant in tenants:
        if not tenant["exit"]:
            continue
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
    return stanzas + core_stanzas(node, ipv6)


def core_families(node: dict, ipv6: bool) -> list[str]:
    """The unicast families the session with the core carries: IPv4 always (activated by the
    role on an IPv6-only fabric), IPv6 with the role's IPv6 or on an IPv6-only fabric, where
    Proxmox activates the peers in ipv6 unicast whatever the role does."""
    return ["ipv4", "ipv6"] if ipv6 or boolean(node["fabric_ipv6_only"], strict=True) else ["ipv4"]


def core_stanzas(node: dict, ipv6: bool = False) -> list[dict]:
    """Toward the core (exit nodes with core_peer): the IPv4 activation when the fabric is defined
    IPv6-only, and only subnet aggregates out, in each family the session carries
    (core_families). IPv4: the default (exactly 0.0.0.0/0) denied, every prefix up to /31
    permitted, so a /32 host route (EVPN's type-2 MAC/IP routes) is not. IPv6 the same: ::/0
    denied, up to /127 permitted, so a /128 host route is not; a /127 is a point-to-point
    link's subnet (RFC 6164), as a /31 is IPv4's, not a host. Every host route is held back,
    the node's own loopbacks included: a fabric whose VTEPs reach each other only by /32 or /128
    routes through the core needs them carried another way (a VTEP subnet, or the fabric's own
    IGP)."""
    peer = node.get("core_peer")
    if not _given(peer):
        return []
    lines = [f"neighbor {peer} activate"] if boolean(node["fabric_ipv6_only"], strict=True) else []
    lines.append(f"neighbor {peer} route-map {CORE_ROUTE_MAP} out")
    families = [{"header": "address-family ipv4 unicast", "lines": lines}]
    filters = [
        {"header": f"ip prefix-list {CORE_PREFIX_LIST} seq 5 deny 0.0.0.0/0"},
        {"header": f"ip prefix-list {CORE_PREFIX_LIST} seq 10 permit 0.0.0.0/0 le 31"},
        {"header": f"route-map {CORE_ROUTE_MAP} permit 1",
         "lines": [f"match ip address prefix-list {CORE_PREFIX_LIST}"]},
    ]
    if "ipv6" in core_families(node, ipv6):
        families.append({"header": "address-family ipv6 unicast",
                         "lines": [f"neighbor {peer} route-map {CORE_ROUTE_MAP6} out"]})
        filters += [
            {"header": f"ipv6 prefix-list {CORE_PREFIX_LIST6} seq 5 deny ::/0"},
            {"header": f"ipv6 prefix-list {CORE_PREFIX_LIST6} seq 10 permit ::/0 le 127"},
            {"header": f"route-map {CORE_ROUTE_MAP6} permit 1",
             "lines": [f"match ipv6 address prefix-list {CORE_PREFIX_LIST6}"]},
        ]
    return [{"header": f"router bgp {node['asn']}", "children": families}] + filters


def control_plane(node: dict, tenants: list[dict], exit_node: bool, ipv6: bool, intent) -> dict:
    """deevnet.net.bgp_evpn_assert's `peers`, `vnis` and `fabric_ipv6_only`, on an exit node with
    core_peer (else empty: the task skips). The core peer (a peer group is expanded by the module)
    in the families the session carries (core_families), the default received in each family a
    tenant of the import design takes it from (IPv6 only with the role's IPv6), nothing but
    aggregates advertised, and the core's AS when `core_asn` says it. The VNIs: each tenant
    zone's L3VNI, then its VNets' VNIs, as the node's SDN intent declares them (none without the
    SDN). Not planned, for want of the knowledge: the fabric's own EVPN peers and each VNI's
    remote VTEPs (sdn_check reports only this node's VTEP)."""
    peer = node.get("core_peer")
    if not exit_node or not _given(peer):
        return {}
    imported = any(tenant["exit"] and tenant["leak"] == "import" for tenant in tenants)
    core = {
        "peer": peer,
        "vrf": "default",
        "address_families": [f"{family}_unicast" for family in core_families(node, ipv6)],
        "receives_default": (["ipv4", "ipv6"] if ipv6 else ["ipv4"]) if imported else [],
        "advertises": "aggregates_only",
    }
    if _given(node.get("core_asn")):
        core["remote_as"] = node["core_asn"]
    return {"peers": [core], "vnis": [{"vni": vni} for vni in tenant_vnis(tenants, intent)],
            "fabric_ipv6_only": boolean(node["fabric_ipv6_only"], strict=True)}


def tenant_vnis(tenants: list[dict], intent) -> list[int]:
    """Each tenant's L3VNI and its VNets' VNIs, in the tenants' order, from the SDN intent's EVPN
    zone with the tenant's VRF; none for a tenant without one (or without the SDN)."""
    zones = {zone.get("vrf"): zone for zone in (intent or {}).get("zones", [])
             if isinstance(zone, dict) and zone.get("type") == "evpn"}
    vnis = []
    for tenant in tenants:
        zone = zones.get(tenant["vrf"])
        if zone is None:
            continue
        found = [zone.get("l3vni")] + [vnet.get("vni") for vnet in zone.get("vnets") or [] if isinstance(vnet, dict)]
        vnis += [vni for vni in found if isinstance(vni, int) and not isinstance(vni, bool) and vni not in vnis]
    return vnis


def rp_filter(node: dict, tenants: list[dict], exit_node: bool) -> dict:
    """sysctl_forwarding's `rp_filter`, for the import design: a return that lands on another node
    enters the tenant's VRF on its L3VNI bridge, which has no IPv4 address, and the VRF's default
    leaves by the uplink, so the kernel drops it even in loose mode; off on `all` (the kernel
    applies the larger of `all` and the device's), `default`, the uplink and each such tenant's
    L3VNI bridge."""
    imported = [tenant for tenant in tenants if tenant["exit"] and tenant["leak"] == "import"]
    if not exit_node or not imported:
        return {}
    values = {"all": 0, "default": 0, node["transit_interface"]: 0}
    values.update({tenant["l3vni_bridge"]: 0 for tenant in imported})
    return values


def route_assertions(node: dict, tenants: list[dict], ipv6: bool) -> list[dict]:
    """vrf_route_assert's `vrfs` for the final proof. Per tenant: each management probe's lookup
    must not leave by the first forbidden interface (where the node is the tenant's exit it leaves
    by the transit interface, via the gateway with the static design); the VRF's default by its
    leak design where the node is its exit, elsewhere no fall-through to the main table and no
    forwarding."""
    transit = node.get("transit_interface")
    forbidden = forbidden_interfaces(node)
    entries = []
    for tenant in tenants:
        exit_node = tenant["exit"]
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
            # Returns the core delivers to another node enter the VRF on its L3VNI bridge: its
            # rp_filter is checked as well as the uplink's (rp_filter() sets both to 0).
            entry.update({"default_dev": transit, "asymmetric_returns": True, "l3vni_bridge": tenant["l3vni_bridge"]})
            if ipv6:
                entry["ipv6_default_dev"] = transit
        else:
            entry["default_via"] = tenant["gateway"]
            if ipv6:
                entry["ipv6_default_via"] = tenant["gateway6"]
        entries.append(entry)
    return entries


def _family(address: str, where: str) -> int:
    """4 or 6, of an address with or without its prefix length."""
    try:
        return ipaddress.ip_interface(address).version
    except ValueError:
        raise AnsibleFilterError(f"{where}: {address!r} is not an IP address; give one such as 10.20.129.250/24 "
                                 f"or fd00:129::250/64") from None


def _host(address: str) -> str:
    """The address without its prefix length."""
    return str(ipaddress.ip_interface(address).ip)


def isolation_range_target(given: str, where: str) -> str:
    """The address a listed private range is probed at: an address as it is, a range's first host
    (its network address for a /31, /32, /127 or /128)."""
    try:
        network = ipaddress.ip_network(given, strict=False)
    except ValueError:
        raise AnsibleFilterError(f"{where}: {given!r} is neither an address nor a range; give one such as "
                                 f"10.0.0.0/8 or 172.16.0.1") from None
    if "/" not in given or network.num_addresses <= 2:
        return str(ipaddress.ip_interface(given).ip)
    return str(network.network_address + 1)


def _own_subnet(unit: dict):
    """The probing tenant's own subnet: its workload's address with its prefix length."""
    return ipaddress.ip_interface(unit["address"]).network


def _range_target_outside(address: str, given: str, own) -> str | None:
    """The address a private range is probed at by a tenant whose own subnet is `own`: its usual
    one (isolation_range_target) unless that lies in `own`, then the first address after `own`
    that is still a host of the range; None when the range holds none (it lies inside `own`)."""
    if ipaddress.ip_address(address) not in own:
        return address
    if "/" not in given:
        return None
    network = ipaddress.ip_network(given, strict=False)
    following = int(own.broadcast_address) + 1
    if following > int(network.broadcast_address) or following < int(network.network_address):
        return None
    # An IPv4 range's broadcast address is no host (egress_probe refuses it as a target).
    if network.version == 4 and network.num_addresses > 2 and following == int(network.broadcast_address):
        return None
    return str(ipaddress.ip_address(following))


def _exempt(address: str, origin_tenant, exempt: list[str]) -> bool:
    """Whether a tenant opted out of an isolation target: by the address, a range holding it, or
    the name of the tenant it belongs to."""
    for entry in exempt:
        if origin_tenant is not None and entry == origin_tenant:
            return True
        try:
            if ipaddress.ip_address(address) in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def _probe_units(tenants: list[dict], ipv6: bool) -> list[dict]:
    """One unit per probed tenant and family: `name` (the tenant's, `<tenant>/ipv6` for its IPv6
    probe), the tenant, the workload's address and its own targets of that family."""
    units = []
    for index, tenant in enumerate(tenants):
        probe = tenant["probe"]
        if not probe:
            continue
        where = f"{VARIABLE}.tenants[{index}] ({tenant['name']}).probe"
        if _family(probe["address"], f"{where}.address") != 4:
            raise AnsibleFilterError(f"{where}.address: {probe['address']!r} is IPv6; address is the IPv4 "
                                     f"workload, address6 the IPv6 one")
        address6 = probe.get("address6")
        if _given(address6):
            if _family(address6, f"{where}.address6") != 6:
                raise AnsibleFilterError(f"{where}.address6: {address6!r} is not IPv6; give one such as "
                                         f"fd00:129::250/64")
            if not ipv6:
                raise AnsibleFilterError(f"{where}.address6: {address6!r} is set but proxmox_node_network_ipv6 is "
                                         f"false; set proxmox_node_network_ipv6: true to probe both families, or "
                                         f"remove address6")
        by_family = {4: [], 6: []}
        for number, target in enumerate(probe["targets"]):
            if not isinstance(target, dict) or not _given(target.get("address")):
                raise AnsibleFilterError(f"{where}.targets[{number}]: {target!r} has no address; e.g. "
                                         f"{{address: 203.0.113.8}}")
            by_family[_family(target["address"], f"{where}.targets[{number}].address")].append(target)
        if by_family[6] and not _given(address6):
            raise AnsibleFilterError(f"{where}.targets: {by_family[6][0]['address']} is IPv6 but the probe has no "
                                     f"address6; set address6 to an unused IPv6 address of the tenant's subnet "
                                     f"(with proxmox_node_network_ipv6: true)")
        if not by_family[4]:
            raise AnsibleFilterError(f"{where}.targets: no IPv4 target for address {probe['address']}; add one, "
                                     f"such as {{address: 203.0.113.8}}")
        units.append({"name": tenant["name"], "tenant": tenant, "family": 4,
                      "address": probe["address"], "targets": by_family[4]})
        if _given(address6):
            if not by_family[6]:
                raise AnsibleFilterError(f"{where}.targets: no IPv6 target for address6 {address6}; add one, such "
                                         f"as {{address: '2001:db8:113::8'}}")
            units.append({"name": tenant["name"] + "/ipv6", "tenant": tenant, "family": 6,
                          "address": address6, "targets": by_family[6]})
    return units


def _management_targets(unit: dict, isolated: bool) -> list[tuple[dict, str]]:
    """The tenant's management probes of the unit's family: isolation targets where it is
    `isolated` (but those it exempts), else leak probes, judged by their path only."""
    tenant = unit["tenant"]
    return [({"address": address,
              "expect": "blocked" if isolated and not _exempt(address, None, tenant["isolation_exempt"]) else "none"},
             "a management address")
            for address in tenant["management_probes"]
            if _family(address, f"{VARIABLE}.management_probes") == unit["family"]]


def _range_targets(node: dict) -> list[tuple[str, str]]:
    """The node's isolation_targets, each as the address it is probed at and the range it stands
    for; read once per run."""
    return [(isolation_range_target(given, f"{VARIABLE}.isolation_targets[{index}]"), given)
            for index, given in enumerate(node["isolation_targets"])]


def isolation_targets(unit: dict, units: list[dict], ranges: list[tuple[str, str]],
                      peers: int) -> list[tuple[dict, str]]:
    """The blocked targets of one probe, each with where it comes from: up to `peers` other
    tenants' workloads of the same family (the next ones in the run, round the ring, so every
    tenant is both prober and probed while a run of N tenants has N × peers targets, not N²), the
    management probes (on-link addresses the tenant must never reach) and the operator's
    isolation targets (`ranges`, _range_targets). A tenant's isolation_exempt takes any of them
    out (a management probe then stays a leak probe, judged by its path only).

    No derived target is the probe's own address or inside the tenant's own subnet: there the
    address is the tenant's own segment (tenants in VRFs of their own may be numbered alike), so
    a probe would prove nothing about another tenant, and egress_probe refuses its own address.
    A peer numbered inside that subnet is passed over for the next one round the ring; a range is
    probed at its first host outside the subnet, or not at all when it lies inside it."""
    exempt = unit["tenant"]["isolation_exempt"]
    own = _own_subnet(unit)
    same_family = [other for other in units if other["family"] == unit["family"]]
    position = same_family.index(unit)
    ring = [same_family[(position + step) % len(same_family)] for step in range(1, len(same_family))]
    provable = [other for other in ring if ipaddress.ip_address(_host(other["address"])) not in own]
    found = []
    for other in provable[:peers]:
        address = _host(other["address"])
        if not _exempt(address, other["tenant"]["name"], exempt):
            found.append(({"address": address, "expect": "blocked"}, f"tenant {other['tenant']['name']}'s workload"))
    found += _management_targets(unit, isolated=True)
    for address, given in ranges:
        if _family(address, "") != unit["family"]:
            continue
        address = _range_target_outside(address, given, own)
        if address is not None and not _exempt(address, None, exempt):
            found.append(({"address": address, "expect": "blocked"}, f"the private range {given}"))
    return found


def egress_probe_run(node: dict, tenants: list[dict], ipv6: bool) -> dict:
    """egress_probe's arguments for one run of every probed tenant at once (`probes`, `count` the
    largest a tenant asks for, the run's `forbidden_interfaces`), and `origins`: per probe, where
    each of its isolation targets comes from (the summary names who answered). A tenant the node
    is the exit of gets its isolation targets (isolation_targets) and the transit interface its
    packets must leave by; elsewhere the tenant's packets rightly leave toward its exit node, so
    its management probes stay leak probes and no target is blocked. Empty without a probe."""
    units = _probe_units(tenants, ipv6)
    if not units:
        return {}
    peers = node["isolation_peers"]
    if not isinstance(peers, int) or isinstance(peers, bool) or peers < 0:
        raise AnsibleFilterError(f"{VARIABLE}.isolation_peers: {peers!r} is not a whole number of 0 or more; it is "
                                 f"how many other tenants each probed tenant must not reach (0: none)")
    ranges = _range_targets(node) if any(unit["tenant"]["exit"] for unit in units) else []
    probes, origins = [], {}
    for unit in units:
        exit_here = unit["tenant"]["exit"]
        isolation = (isolation_targets(unit, units, ranges, peers) if exit_here
                     else _management_targets(unit, isolated=False))
        entry = {
            "name": unit["name"],
            "vrf": unit["tenant"]["vrf"],
            "address": unit["address"],
            "targets": list(unit["targets"]) + [target for target, _origin in isolation],
        }
        if exit_here:
            entry["expect_egress_interface"] = node["transit_interface"]
        probes.append(entry)
        origins[unit["name"]] = {target["address"]: origin for target, origin in isolation}
    return {
        "probes": probes,
        "count": max(unit["tenant"]["probe"]["count"] for unit in units),
        "forbidden_interfaces": forbidden_interfaces(node),
        "origins": origins,
    }


def egress_probe_summary(result, run, check_mode=False) -> dict:
    """What the role's probe step says per probed tenant, from egress_probe's result and the plan's
    run: `lines`, one per probe (its verdict, the targets that answered, and each isolation target
    with how it was blocked, or who answered and whose it is), `failed` and `msg` (the module's
    message, each address that answered though it must be blocked named with its origin).
    Judged from the verdict, since the role's failed_when replaces the registered `failed`: a
    result without one (a refusal, an error) fails; a failed or inconclusive verdict fails, but in
    check mode, where the module reported its findings as warnings (nothing was fixed yet)."""
    if not isinstance(result, dict):
        raise AnsibleFilterError(f"egress_probe_summary: expected egress_probe's result, got {result!r}")
    origins = (run or {}).get("origins") or {}
    lines, named = [], []
    for probe in result.get("probes") or []:
        whose = origins.get(probe.get("name"), {})
        targets = probe.get("targets") or []
        answering = [target for target in targets if target.get("expect") == "reply"]
        answered = sum(1 for target in answering if target.get("passed"))
        blocked = []
        for target in (target for target in targets if target.get("expect") == "blocked"):
            origin = whose.get(target.get("address"), "a target of the inventory")
            if target.get("passed"):
                blocked.append(f"{target['address']} ({origin}) blocked: {target.get('blocked_by')}")
            else:
                who = target.get("answered_by") or "nobody (its probes left the node by another interface)"
                blocked.append(f"{target['address']} ({origin}) NOT blocked: answered by {who}")
                named.append(f"{probe.get('name')}: {target['address']} is {origin}")
        isolation = "; ".join(blocked) if blocked else "no isolation target"
        lines.append(f"{probe.get('name')}: {probe.get('verdict')}; egress {answered}/{len(answering)} targets "
                     f"answered; isolation: {isolation}")
    msg = result.get("msg", "")
    if named:
        msg = "\n".join([msg] + named)
    verdict = result.get("verdict")
    failed = verdict is None or (verdict != "passed" and not boolean(check_mode, strict=True))
    return {"lines": lines or [msg], "failed": failed, "msg": msg}


# --- the SDN: discovered tenants, disagreements, drift -------------------------------------------

def sdn_absent(sdn) -> bool:
    """Whether sdn_check found no applied SDN on the node (its failure with `sdn_applied: false`:
    no running configuration, so no SDN was ever applied on the cluster, or the node is no Proxmox
    VE node). The role registers sdn_check's result without failing the task (its failed_when
    replaces `failed`), so that this plan decides."""
    return isinstance(sdn, Mapping) and sdn.get("sdn_applied") is False


def sdn_absent_warning(sdn_mode: str) -> str:
    """What the role says when the SDN is not applied on the node and the plan can go on with the
    inventory alone: why, and the two real choices."""
    return (f"{SDN_VARIABLE} is {sdn_mode}, but the cluster's SDN is not applied on this node ({RUNNING_CONFIG} "
            f"does not exist: no SDN was ever applied, or this is not a Proxmox VE node), so the plan comes from "
            f"the inventory alone, not compared with the SDN; {SDN_CHOICES}")


def _sdn_intent(sdn, sdn_mode: str):
    """The module's result, checked for the keys the plan reads; None with sdn_mode ignore or
    when no SDN is applied on the node (sdn_absent). Any other failure of sdn_check fails the
    plan with the module's own message."""
    if sdn_mode == "ignore" or sdn_absent(sdn):
        return None
    missing = [key for key in ("node", "zones", "tenants", "drift") if not isinstance(sdn, dict) or key not in sdn]
    if missing and isinstance(sdn, dict) and sdn.get("msg"):
        raise AnsibleFilterError(f"the cluster's SDN could not be read (deevnet.net.sdn_check, {SDN_VARIABLE}: "
                                 f"{sdn_mode}): {sdn['msg']}")
    if missing:
        raise AnsibleFilterError(
            f"{SDN_VARIABLE} is {sdn_mode} but the node's SDN intent (the result of deevnet.net.sdn_check) lacks "
            f"{', '.join(missing)}: the role's first tenant-egress step registers it; run the role's tenant-egress "
            f"tasks as a whole, or set {SDN_VARIABLE}: ignore to plan from the inventory alone")
    for index, tenant in enumerate(sdn["tenants"]):
        if not isinstance(tenant, dict) or not all(key in tenant for key in ("name", "vrf", "exit_node")):
            raise AnsibleFilterError(f"the SDN intent's tenants[{index}] ({tenant!r}) lacks name, vrf or exit_node")
    return sdn


def _zone_settings(node: dict, discover: bool) -> dict:
    """`zones`: per-zone settings of the discovered tenants, each checked against ZONE_KEYS."""
    zones = node.get("zones")
    if not _given(zones):
        return {}
    if not discover:
        raise AnsibleFilterError(
            f"{VARIABLE}.zones is set but tenants is a list: zones holds the settings of discovered tenants "
            f"(tenants: discover); with a tenant list, put {', '.join(ZONE_KEYS)} on each tenant instead")
    if not isinstance(zones, dict):
        raise AnsibleFilterError(f"{VARIABLE}.zones: expected a dict keyed by zone name, got {zones!r}; "
                                 f"e.g. zones: {{tdemo: {{gateway: 10.20.50.9}}}}")
    for zone, settings in zones.items():
        unknown = sorted(set(settings or {}) - set(ZONE_KEYS)) if isinstance(settings, dict) else None
        if unknown is None or unknown:
            raise AnsibleFilterError(
                f"{VARIABLE}.zones.{zone}: {settings!r} is not a dict of {', '.join(ZONE_KEYS)}"
                + (f" (unknown: {', '.join(unknown)}; the zone's name, VRF, L3VNI bridge and exit role are "
                   f"the SDN's)" if unknown else ""))
        if _given(settings.get("leak")) and settings["leak"] not in ("static", "import"):
            raise AnsibleFilterError(f"{VARIABLE}.zones.{zone}.leak: {settings['leak']!r} is neither static nor import")
        probe = settings.get("probe")
        if _given(probe) and not (isinstance(probe, dict) and _given(probe.get("address")) and probe.get("targets")):
            raise AnsibleFilterError(f"{VARIABLE}.zones.{zone}.probe: {probe!r} needs address and targets, as a "
                                     f"tenant's probe does")
    return zones


def _evpn_names(intent: dict) -> str:
    return ", ".join(tenant["name"] for tenant in intent["tenants"]) or "none"


def _zone_of_vrf(vrf: str) -> str:
    """Proxmox names a zone's VRF vrf_<zone>."""
    return re.sub("^vrf_", "", vrf)


def declared_disagreements(node: dict, tenants: list[dict], intent: dict) -> list[str]:
    """The declared tenants against the SDN, each way: a tenant with no EVPN zone here, an exit
    zone not declared, the inventory's exit role against the zone's exit nodes."""
    host = intent["node"]
    transit = node.get("transit_interface")
    by_vrf = {tenant["vrf"]: tenant for tenant in intent["tenants"]}
    zone_types = {zone.get("name"): zone.get("type") for zone in intent["zones"] if isinstance(zone, dict)}
    found = []
    for tenant in tenants:
        zone = by_vrf.get(tenant["vrf"])
        if zone is None:
            name = _zone_of_vrf(tenant["vrf"])
            other = (f"; zone {name} applies here but is a {zone_types[name]} zone, which has no VRF"
                     if zone_types.get(name) not in (None, "evpn") else "")
            if not tenant["vrf"].startswith("vrf_"):
                name = tenant["name"]
                other += f"; Proxmox names a zone's VRF vrf_<zone>, so {tenant['vrf']} is no zone's"
            found.append(
                f"tenant {tenant['name']}: the inventory declares it on node {host} (VRF {tenant['vrf']}); the SDN has "
                f"no EVPN zone with that VRF that applies to {host} (EVPN zones here: {_evpn_names(intent)}){other}; "
                f"fix: create the EVPN zone {name} (or add {host} to its nodes) and apply the SDN, or remove the "
                f"tenant from {VARIABLE}.tenants")
        elif _given(transit) and not zone["exit_node"]:
            found.append(
                f"tenant {tenant['name']}: the inventory makes node {host} its exit node (transit_interface "
                f"{transit}); the SDN's zone {zone['name']} does not list {host} in its exit nodes, so Proxmox "
                f"treats {host} as a member there; fix: add {host} to the exit nodes of zone {zone['name']} and "
                f"apply the SDN, or make {host} a member node (no transit_interface), or set tenants: discover, "
                f"which follows each zone's exit nodes")
        elif not _given(transit) and zone["exit_node"]:
            found.append(
                f"tenant {tenant['name']}: the SDN's zone {zone['name']} lists node {host} in its exit nodes; the "
                f"inventory makes {host} a member node (no transit_interface), so the VRF {tenant['vrf']} gets no "
                f"default here; fix: set transit_interface (and transit_gateway) for {host}, or remove {host} from "
                f"the exit nodes of zone {zone['name']} and apply the SDN")
    declared = {tenant["vrf"] for tenant in tenants}
    for zone in intent["tenants"]:
        if zone["exit_node"] and zone["vrf"] not in declared:
            found.append(
                f"zone {zone['name']}: the SDN lists node {host} in its exit nodes (VRF {zone['vrf']}); the "
                f"inventory declares no tenant with that VRF; fix: add - name: {zone['name']} to "
                f"{VARIABLE}.tenants (or set tenants: discover), or remove {host} from the zone's exit nodes and "
                f"apply the SDN")
    return found


def discovered_tenants(node: dict, intent: dict, zones: dict) -> tuple[list[dict], list[bool], list[str]]:
    """tenants: discover. One tenant per EVPN zone that applies to the node, its name, VRF, L3VNI
    bridge and exit role the SDN's, its gateways, probes and leak design from `zones.<zone>` (else
    the node's); the node is a zone's exit only when the inventory gives it a transit interface.
    Also what the inventory says that the SDN does not: a zone that is not here, an exit zone
    without a transit interface, a transit interface that no zone exits by."""
    host = intent["node"]
    transit = node.get("transit_interface")
    given, exits, found = [], [], []
    for zone in intent["tenants"]:
        tenant = {**(zones.get(zone["name"]) or {}), "name": zone["name"], "vrf": zone["vrf"]}
        if _given(zone.get("l3vni_bridge")):
            tenant["l3vni_bridge"] = zone["l3vni_bridge"]
        given.append(tenant)
        exits.append(bool(zone["exit_node"]) and _given(transit))
        if zone["exit_node"] and not _given(transit):
            found.append(
                f"zone {zone['name']}: the SDN lists node {host} in its exit nodes; the inventory makes {host} a "
                f"member node (no transit_interface), so the VRF {zone['vrf']} gets no default here; fix: set "
                f"transit_interface (and transit_gateway, or zones.{zone['name']}.gateway) for {host}, or remove "
                f"{host} from the zone's exit nodes and apply the SDN")
    if _given(transit) and not any(zone["exit_node"] for zone in intent["tenants"]):
        found.append(
            f"node {host}: the inventory makes it an exit node (transit_interface {transit}); the SDN lists it in "
            f"the exit nodes of no EVPN zone that applies to it (EVPN zones here: {_evpn_names(intent)}); fix: add "
            f"{host} to the exit nodes of its zones and apply the SDN, or remove transit_interface")
    names = {zone["name"] for zone in intent["tenants"]}
    for zone in zones:
        if zone not in names:
            found.append(
                f"zones.{zone}: the inventory has settings for zone {zone}; the SDN has no EVPN zone {zone} that "
                f"applies to node {host} (EVPN zones here: {_evpn_names(intent)}); fix: remove zones.{zone} or "
                f"name one of those zones")
    return given, exits, found


def drift_lines(intent: dict) -> list[str]:
    """Each drift finding of the module on one line: the object, what the SDN declares, what the
    node has, the fix."""
    return [f"{finding.get('object')}: the SDN declares {finding.get('declared')}, the node has "
            f"{finding.get('found')}; fix: {finding.get('fix')}" for finding in intent["drift"]]


def sdn_report(sdn_mode: str, source: str, intent, disagreements: list[str], absent: bool = False) -> dict:
    """What the role does with the SDN's findings: fail (one message, every disagreement and drift
    finding on its own line), or warn (the disagreements as warnings; the module warned of the
    drift itself), or nothing. With no SDN applied on the node (`absent`), whatever the mode: one
    warning naming the choices, and `absent` says it in short (the role's summary lists it as
    missing)."""
    drift = drift_lines(intent) if intent else []
    failure = ""
    if sdn_mode == "fail" and (disagreements or drift):
        failure = "\n".join(
            [f"node {intent['node']}: {len(disagreements)} disagreement(s) between the inventory and the cluster's "
             f"SDN, {len(drift)} drift finding(s) of the node from the SDN ({SDN_VARIABLE}: warn reports them "
             f"without failing, ignore skips the SDN):"]
            + [f"disagreement: {line}" for line in disagreements] + [f"drift: {line}" for line in drift])
    warnings = [f"SDN disagreement: {line}" for line in disagreements] if sdn_mode == "warn" else []
    report = {
        "mode": sdn_mode,
        "tenants_from": source,
        "disagreements": disagreements,
        "drift": drift,
        "failure": failure,
        "warnings": warnings + ([sdn_absent_warning(sdn_mode)] if absent else []),
    }
    if absent:
        report["absent"] = (f"not applied on this node ({RUNNING_CONFIG} does not exist); apply it in Proxmox, or, on "
                            f"a node without Proxmox's SDN, set {SDN_VARIABLE}: ignore")
    return report


def tenant_egress_plan(settings: dict, defaults: dict | None = None, ipv6=False, frr_mode: str = "exact",
                       undeclared_vrfs: str = "fail", sdn=None, sdn_mode: str = "ignore") -> dict:
    """The whole plan of the tenant-egress section; raises AnsibleFilterError, one message per
    rule the node's shape breaks, before anything is planned for a node it would break. With the
    node's SDN intent (`sdn`, unless `sdn_mode` is ignore) the tenants may be discovered, and the
    disagreements and drift are in the plan's `sdn` (a failure message, or warnings)."""
    settings, sdn = _plain(settings), _plain(sdn)
    if not isinstance(settings, dict):
        raise AnsibleFilterError(f"{VARIABLE}: expected a dict of the node's settings, got {settings!r}; "
                                 f"see ansible-doc -t role deevnet.net.proxmox_node_network")
    # Without defaults, the role's own (defaults/main.yml), as the role passes them.
    defaults = role_defaults() if defaults is None else _plain(defaults)
    if not isinstance(defaults, dict):
        raise AnsibleFilterError(f"tenant_egress_plan: defaults must be the role's dict of defaults, got {defaults!r}; "
                                 f"leave it out for the role's own (defaults/main.yml)")
    # No settings plan nothing (a QinQ-only node); given ones are checked as the role documents them.
    settings = validated_settings(settings) if settings else settings
    if sdn_mode not in SDN_MODES:
        raise AnsibleFilterError(f"{SDN_VARIABLE}: {sdn_mode!r} is not one of {', '.join(SDN_MODES)}")
    ipv6 = boolean(ipv6, strict=True)
    node = node_settings(settings, defaults)
    declared = node.get("tenants") or []
    discover = declared == DISCOVER
    if not discover and not isinstance(declared, list):
        raise AnsibleFilterError(f"{VARIABLE}.tenants: {declared!r} is neither a list of tenants nor "
                                 f"{DISCOVER!r}; e.g. tenants: [{{name: tdemo}}], or tenants: {DISCOVER}")
    if discover and sdn_mode == "ignore":
        raise AnsibleFilterError(f"{VARIABLE}.tenants is {DISCOVER} but {SDN_VARIABLE} is ignore: the tenants "
                                 f"come from the node's SDN intent, which ignore does not read; set {SDN_VARIABLE} "
                                 f"to fail or warn, or list the tenants")
    absent = sdn_mode != "ignore" and sdn_absent(sdn)
    if discover and absent:
        raise AnsibleFilterError(f"{VARIABLE}.tenants is {DISCOVER}, which takes the tenants from the cluster's SDN, "
                                 f"but the SDN is not applied on this node ({RUNNING_CONFIG} does not exist: no SDN "
                                 f"was ever applied, or this is not a Proxmox VE node); apply the SDN in Proxmox "
                                 f"(Datacenter > SDN > Apply, or pvesh set /cluster/sdn), or list the tenants (and, "
                                 f"on a node without Proxmox's SDN, set {SDN_VARIABLE}: ignore)")
    intent = _sdn_intent(sdn, sdn_mode)
    zones = _zone_settings(node, discover)
    transit_given = _given(node.get("transit_interface"))
    if discover:
        given, exits, disagreements = discovered_tenants(node, intent, zones)
        tenants = normalised_tenants(node, defaults.get("tenant", {}), given, exits, where="the SDN's tenants")
        exit_node = any(exits)
    else:
        declared = validated_tenants(declared)
        tenants = normalised_tenants(node, defaults.get("tenant", {}), declared, [transit_given] * len(declared))
        disagreements = declared_disagreements(node, tenants, intent) if intent else []
        exit_node = transit_given
    report = sdn_report(sdn_mode, "sdn" if discover else "inventory", intent, disagreements, absent)
    where = ([f"{VARIABLE}.zones.{tenant['name']}" for tenant in given] if discover
             else [f"{VARIABLE}.tenants[{index}] ({tenant['name']})" for index, tenant in enumerate(declared)])
    problems = value_problems(node, tenants, given if discover else declared, where)
    if exit_node:
        problems += shape_problems(node, tenants, ipv6)
    if problems:
        # What the SDN says fails the run as well: one message with both, nothing lost.
        raise AnsibleFilterError("\n".join(problems + ([report["failure"]] if report["failure"] else [])))
    plan = {
        "exit_node": exit_node,
        "transit_interface": node["transit_interface"] if exit_node else None,
        "tenants": tenants,
        "declared_vrfs": [{"name": tenant["vrf"], "forwarding": False} for tenant in tenants],
        "forbidden_interfaces": forbidden_interfaces(node),
        "rp_filter": rp_filter(node, tenants, exit_node),
        "frr_stanzas": frr_stanzas(node, tenants, exit_node, ipv6, frr_mode),
        "route_assertions": route_assertions(node, tenants, ipv6),
        "undeclared_vrfs": undeclared_vrfs if exit_node else "ignore",
        "egress_probe": egress_probe_run(node, tenants, ipv6),
        "control_plane": control_plane(node, tenants, exit_node, ipv6, intent),
        "sdn": report,
    }
    if _given(node.get("asn")):
        plan["asn"] = node["asn"]
    return plan


# --- FRR applied again when the kernel lacks what frr.conf.local implies ---------------------------

def frr_reapply(assertion, plan: dict, frr_changed=False) -> bool:
    """Whether the final assertion's result calls for FRR to load the merged configuration once
    more: frr.conf.local did not change in this run (else it was just applied), and a default the
    file implies is missing from the kernel (a failed `default_route` check of a VRF the node is the
    exit of; the file gives it its default). A VRF that does not exist, a leak by a management
    interface or a member's fall-through is not FRR's to repair. Read from the checks alone: in
    check mode the module reports its findings without failing. The role computes it once, in the
    task after the assertion, and judges the assertion's failure after it."""
    if boolean(frr_changed, strict=True) or not isinstance(assertion, dict):
        return False
    implied = {tenant["vrf"] for tenant in plan.get("tenants", []) if tenant.get("exit")}
    if not plan.get("frr_stanzas"):
        return False
    return any(check.get("check") == "default_route" and not check.get("ok") and check.get("vrf") in implied
               for check in assertion.get("checks") or [])


def frr_reapply_check_mode_warning(apply_command) -> str:
    """What a check run says when a real run would apply FRR again."""
    command = " ".join(apply_command) if isinstance(apply_command, (list, tuple)) else str(apply_command)
    return (f"a real run would apply FRR again ({command}): frr.conf.local is unchanged but the kernel "
            f"lacks a default it implies")


def _frr_reapply_warned(assertion, plan: dict, frr_changed=False, check_mode=False, apply_command=()) -> bool:
    """The filter as the role calls it: the decision, and in check mode, where nothing is applied,
    the re-apply a real run would do shown as an Ansible warning."""
    decision = frr_reapply(assertion, plan, frr_changed)
    if decision and boolean(check_mode, strict=True):
        Display().warning(frr_reapply_check_mode_warning(apply_command))
    return decision


def _tenant_egress_plan_warned(*args, **kwargs) -> dict:
    """The filter as the role calls it: the plan, its SDN warnings shown as Ansible warnings."""
    plan = tenant_egress_plan(*args, **kwargs)
    for warning in plan["sdn"]["warnings"]:
        Display().warning(warning)
    return plan


class FilterModule:
    """deevnet.net.tenant_egress_plan, deevnet.net.frr_reapply and deevnet.net.egress_probe_summary."""

    def filters(self):
        return {"tenant_egress_plan": _tenant_egress_plan_warned, "frr_reapply": _frr_reapply_warned,
                "egress_probe_summary": egress_probe_summary}
