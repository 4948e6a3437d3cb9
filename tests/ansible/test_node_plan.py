"""The role's planning (collection/plugins/filter/node_plan.py), without a node: for every node
shape and leak design, exactly what each module task of the role gets; each rule of an exit
node's shape fails with its own message; the defaults are the documented ones, applied once.

The expected outputs are what the role's Jinja produced before it moved into the filter (rendered
with ansible's templar, the same inputs), except that a tenant's `probe` now carries its `count`
(its default applied once, here, instead of in the task)."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import ROOT, VENV_BIN

ROLE = ROOT / "roles" / "proxmox_node_network"
_spec = importlib.util.spec_from_file_location("node_plan", ROOT / "collection" / "plugins" / "filter" / "node_plan.py")
node_plan = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(node_plan)

ROLE_DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
DEFAULTS = ROLE_DEFAULTS["__proxmox_node_network_tenant_egress_defaults"]


def plan(settings, ipv6=False, frr_mode="exact", undeclared_vrfs="fail"):
    return node_plan.tenant_egress_plan(settings, DEFAULTS, ipv6=ipv6, frr_mode=frr_mode,
                                        undeclared_vrfs=undeclared_vrfs)


def shape_error(settings, ipv6=False) -> list[str]:
    with pytest.raises(AnsibleFilterError) as raised:
        plan(settings, ipv6=ipv6)
    return str(raised.value).splitlines()


# --- the defaults ---------------------------------------------------------------------------------

def _documented_defaults(options: dict) -> dict:
    """The `default:` of each option in an argument spec, suboptions nested."""
    found = {}
    for name, spec in options.items():
        if "default" in spec:
            found[name] = spec["default"]
        elif spec.get("options"):
            nested = _documented_defaults(spec["options"])
            if nested:
                found[name] = nested
    return found


def test_the_plan_applies_the_defaults_the_argument_spec_documents():
    main = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    documented = _documented_defaults(main["proxmox_node_network_tenant_egress"]["options"])
    tenant = documented.pop("tenants")
    assert DEFAULTS == {**documented, "tenant": tenant}
    assert ROLE_DEFAULTS["__proxmox_node_network_qinq_uplink_defaults"] == \
        _documented_defaults(main["proxmox_node_network_qinq_uplink"]["options"])
    for name, spec in main.items():
        if "default" in spec:
            assert ROLE_DEFAULTS[name] == spec["default"], name


def test_no_task_or_role_variable_carries_a_default_of_its_own():
    # Business defaults live in defaults/main.yml and argument_specs.yml: `| default(...)` in vars
    # and tasks only handles results that may lack a key, an unset section or `omit`.
    allowed = re.compile(r"default\((omit|false|'\?'|''|\[\]|\{\}|proxmox_tenant_egress \| default\(\{\}\)|"
                         r"proxmox_qinq_uplink \| default\(\{\}\))\)")
    for path in [*(ROLE / "tasks").glob("*.yml"), ROLE / "vars" / "main.yml"]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for use in re.findall(r"default\((?:[^()]|\([^()]*\))*\)", line):
                assert allowed.fullmatch(use), f"{path.name}:{number}: {use}"
    tasks = (ROLE / "tasks" / "tenant_egress.yml").read_text() + (ROLE / "tasks" / "qinq_uplink.yml").read_text()
    for business_default in ("default(3)", "default('static')", "'vrf_' ~", "fix_txvlan | default"):
        assert business_default not in tasks


def test_the_role_has_no_jinja_programs_left():
    for path in ROLE.rglob("*.yml"):
        assert not re.search(r"\{%-?\s*set\b", path.read_text()), path


# --- node shapes and leak designs ---------------------------------------------------------------

def test_an_exit_node_of_the_static_design():
    assert plan({"transit_interface": "vmbr0.50", "transit_gateway": "198.51.100.65", "management_interface": "vmbr0",
                 "management_probes": ["198.51.100.5", "198.51.100.11"], "asn": 65020,
                 "tenants": [{"name": "tdemo"}]}) == {
        "exit_node": True,
        "transit_interface": "vmbr0.50",
        "tenants": [{"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "198.51.100.65", "gateway6": "",
                     "management_probes": ["198.51.100.5", "198.51.100.11"], "probe": None, "leak": "static",
                     "l3vni_bridge": "vrfbr_tdemo"}],
        "declared_vrfs": [{"name": "vrf_tdemo", "forwarding": False}],
        "forbidden_interfaces": ["vmbr0"],
        "rp_filter": {},
        "frr_stanzas": [{"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 198.51.100.65 nexthop-vrf default"],
                         "mode": "exact"}],
        "asn": 65020,
        "route_assertions": [{"name": "vrf_tdemo",
                              "lookups": [{"dst": "198.51.100.5", "dev": "vmbr0.50", "via": "198.51.100.65", "not_dev": "vmbr0"},
                                          {"dst": "198.51.100.11", "dev": "vmbr0.50", "via": "198.51.100.65", "not_dev": "vmbr0"}],
                              "forbidden_interfaces": ["vmbr0"],
                              "default_via": "198.51.100.65"}],
        "undeclared_vrfs": "fail",
        "probes": [],
    }


def test_an_exit_node_of_the_static_design_with_ipv6_and_a_probed_tenant():
    # molecule/default's exit node.
    assert plan({"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "transit_gateway6": "2001:db8:50::1",
                 "management_interface": "vmbr0", "management_probes": ["10.20.99.5"], "asn": 65020,
                 "tenants": [{"name": "tdemo", "management_probes": ["10.20.99.1"],
                              "probe": {"address": "10.20.129.250/24",
                                        "targets": [{"address": "203.0.113.8"},
                                                    {"address": "203.0.113.8", "proto": "tcp", "port": 443},
                                                    {"address": "203.0.113.8", "proto": "udp"}]}}]},
                ipv6=True) == {
        "exit_node": True,
        "transit_interface": "vmbr0.50",
        "tenants": [{"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "10.20.50.1", "gateway6": "2001:db8:50::1",
                     "management_probes": ["10.20.99.5", "10.20.99.1"],
                     "probe": {"count": 3, "address": "10.20.129.250/24",
                               "targets": [{"address": "203.0.113.8"},
                                           {"address": "203.0.113.8", "proto": "tcp", "port": 443},
                                           {"address": "203.0.113.8", "proto": "udp"}]},
                     "leak": "static", "l3vni_bridge": "vrfbr_tdemo"}],
        "declared_vrfs": [{"name": "vrf_tdemo", "forwarding": False}],
        "forbidden_interfaces": ["vmbr0"],
        "rp_filter": {},
        "frr_stanzas": [{"header": "vrf vrf_tdemo",
                         "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default",
                                   "ipv6 route ::/0 2001:db8:50::1 nexthop-vrf default"],
                         "mode": "exact"}],
        "asn": 65020,
        "route_assertions": [{"name": "vrf_tdemo",
                              "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "via": "10.20.50.1", "not_dev": "vmbr0"},
                                          {"dst": "10.20.99.1", "dev": "vmbr0.50", "via": "10.20.50.1", "not_dev": "vmbr0"}],
                              "forbidden_interfaces": ["vmbr0"],
                              "default_via": "10.20.50.1",
                              "ipv6_default_via": "2001:db8:50::1"}],
        "undeclared_vrfs": "fail",
        "probes": [{"tenant": "tdemo", "vrf": "vrf_tdemo", "address": "10.20.129.250/24",
                    "targets": [{"address": "203.0.113.8"},
                                {"address": "203.0.113.8", "proto": "tcp", "port": 443},
                                {"address": "203.0.113.8", "proto": "udp"},
                                {"address": "10.20.99.5", "expect": "none"},
                                {"address": "10.20.99.1", "expect": "none"}],
                    "count": 3, "forbidden_interfaces": ["vmbr0"], "expect_egress_interface": "vmbr0.50"}],
    }


def test_a_tenant_s_own_vrf_gateway_probes_and_probe_count_win_over_the_node_s():
    result = plan({"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "management_interface": "vmbr0",
                   "management_interfaces": ["vmbr9"],
                   "tenants": [{"name": "tdemo"},
                               {"name": "acme", "vrf": "vrf_acme_prod", "gateway": "10.20.50.9",
                                "management_probes": ["10.20.99.7"],
                                "probe": {"address": "10.20.131.250/24", "targets": [{"address": "203.0.113.8"}],
                                          "count": 5}}]},
                  frr_mode="merge")
    assert result["tenants"] == [
        {"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "10.20.50.1", "gateway6": "", "management_probes": [],
         "probe": None, "leak": "static", "l3vni_bridge": "vrfbr_tdemo"},
        {"name": "acme", "vrf": "vrf_acme_prod", "gateway": "10.20.50.9", "gateway6": "",
         "management_probes": ["10.20.99.7"],
         "probe": {"count": 5, "address": "10.20.131.250/24", "targets": [{"address": "203.0.113.8"}]},
         "leak": "static", "l3vni_bridge": "vrfbr_acme_prod"}]
    assert result["forbidden_interfaces"] == ["vmbr0", "vmbr9"]
    assert result["frr_stanzas"] == [
        {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"], "mode": "merge"},
        {"header": "vrf vrf_acme_prod", "lines": ["ip route 0.0.0.0/0 10.20.50.9 nexthop-vrf default"], "mode": "merge"}]
    assert result["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0", "vmbr9"], "default_via": "10.20.50.1"},
        {"name": "vrf_acme_prod",
         "lookups": [{"dst": "10.20.99.7", "dev": "vmbr0.50", "via": "10.20.50.9", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0", "vmbr9"], "default_via": "10.20.50.9"}]
    assert result["probes"] == [
        {"tenant": "acme", "vrf": "vrf_acme_prod", "address": "10.20.131.250/24",
         "targets": [{"address": "203.0.113.8"}, {"address": "10.20.99.7", "expect": "none"}],
         "count": 5, "forbidden_interfaces": ["vmbr0", "vmbr9"], "expect_egress_interface": "vmbr0.50"}]
    assert "asn" not in result


def test_an_all_exit_node_of_the_import_design():
    # molecule/all-exit's hypervisors.
    assert plan({"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                 "fabric_ipv6_only": True, "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}) == {
        "exit_node": True,
        "transit_interface": "nic5",
        "tenants": [{"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "", "gateway6": "", "management_probes": [],
                     "probe": None, "leak": "import", "l3vni_bridge": "vrfbr_tdemo"}],
        "declared_vrfs": [{"name": "vrf_tdemo", "forwarding": False}],
        "forbidden_interfaces": ["vmbr0"],
        "rp_filter": {"all": 0, "default": 0, "nic5": 0, "vrfbr_tdemo": 0},
        "frr_stanzas": [
            {"header": "router bgp 45689 vrf vrf_tdemo",
             "children": [{"header": "address-family ipv4 unicast", "lines": ["import vrf default"]}]},
            {"header": "router bgp 45689",
             "children": [{"header": "address-family ipv4 unicast",
                           "lines": ["neighbor bgpv6 activate", "neighbor bgpv6 route-map DEEVNET-TO-CORE out"]}]},
            {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0"},
            {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31"},
            {"header": "route-map DEEVNET-TO-CORE permit 1", "lines": ["match ip address prefix-list LEAK-SUBNET-ONLY"]}],
        "asn": 45689,
        "route_assertions": [{"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0"],
                              "default_dev": "nic5", "asymmetric_returns": True}],
        "undeclared_vrfs": "fail",
        "probes": [],
    }


def test_the_import_design_with_ipv6_a_dual_stack_fabric_and_named_l3vni_bridges():
    result = plan({"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                   "management_interface": "vmbr0", "management_probes": ["10.20.99.5"],
                   "tenants": [{"name": "tdemo"}, {"name": "acme", "vrf": "vrf_acme_prod", "l3vni_bridge": "vrfbr_acmeprod"},
                               {"name": "beta", "vrf": "vrf_beta_x"}]},
                  ipv6=True)
    # rp_filter off on each tenant's L3VNI bridge: given, or Proxmox's vrfbr_<VRF without vrf_>.
    assert result["rp_filter"] == {"all": 0, "default": 0, "nic5": 0, "vrfbr_tdemo": 0, "vrfbr_acmeprod": 0,
                                   "vrfbr_beta_x": 0}
    assert list(result["rp_filter"]) == ["all", "default", "nic5", "vrfbr_tdemo", "vrfbr_acmeprod", "vrfbr_beta_x"]
    both_families = [{"header": "address-family ipv4 unicast", "lines": ["import vrf default"]},
                     {"header": "address-family ipv6 unicast", "lines": ["import vrf default"]}]
    assert result["frr_stanzas"] == [
        {"header": "router bgp 45689 vrf vrf_tdemo", "children": both_families},
        {"header": "router bgp 45689 vrf vrf_acme_prod", "children": both_families},
        {"header": "router bgp 45689 vrf vrf_beta_x", "children": both_families},
        # A dual-stack fabric: no IPv4 activation, only the filter toward the core.
        {"header": "router bgp 45689",
         "children": [{"header": "address-family ipv4 unicast", "lines": ["neighbor bgpv6 route-map DEEVNET-TO-CORE out"]}]},
        {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0"},
        {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31"},
        {"header": "route-map DEEVNET-TO-CORE permit 1", "lines": ["match ip address prefix-list LEAK-SUBNET-ONLY"]}]
    assert result["route_assertions"] == [
        {"name": vrf, "lookups": [{"dst": "10.20.99.5", "dev": "nic5", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0"], "default_dev": "nic5", "asymmetric_returns": True, "ipv6_default_dev": "nic5"}
        for vrf in ("vrf_tdemo", "vrf_acme_prod", "vrf_beta_x")]


def test_an_exit_node_with_tenants_of_both_designs():
    result = plan({"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "asn": 65020,
                   "management_interface": "vmbr0", "management_probes": ["10.20.99.5"],
                   "tenants": [{"name": "tdemo"},
                               {"name": "imp", "leak": "import",
                                "probe": {"address": "10.20.140.250/24", "targets": [{"address": "203.0.113.8"}]}}]})
    assert [tenant["leak"] for tenant in result["tenants"]] == ["static", "import"]
    assert result["rp_filter"] == {"all": 0, "default": 0, "vmbr0.50": 0, "vrfbr_imp": 0}
    assert result["frr_stanzas"] == [
        {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"], "mode": "exact"},
        {"header": "router bgp 65020 vrf vrf_imp",
         "children": [{"header": "address-family ipv4 unicast", "lines": ["import vrf default"]}]}]
    assert result["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "via": "10.20.50.1", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0"], "default_via": "10.20.50.1"},
        {"name": "vrf_imp", "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0"], "default_dev": "vmbr0.50", "asymmetric_returns": True}]
    assert result["probes"] == [
        {"tenant": "imp", "vrf": "vrf_imp", "address": "10.20.140.250/24",
         "targets": [{"address": "203.0.113.8"}, {"address": "10.20.99.5", "expect": "none"}],
         "count": 3, "forbidden_interfaces": ["vmbr0"], "expect_egress_interface": "vmbr0.50"}]


def test_an_import_node_with_a_static_tenant():
    result = plan({"transit_interface": "nic5", "leak": "import", "asn": 45689, "management_interface": "vmbr0",
                   "tenants": [{"name": "tdemo"}, {"name": "st", "leak": "static", "gateway": "10.20.50.7"}]})
    assert result["rp_filter"] == {"all": 0, "default": 0, "nic5": 0, "vrfbr_tdemo": 0}
    assert result["frr_stanzas"] == [
        {"header": "router bgp 45689 vrf vrf_tdemo",
         "children": [{"header": "address-family ipv4 unicast", "lines": ["import vrf default"]}]},
        {"header": "vrf vrf_st", "lines": ["ip route 0.0.0.0/0 10.20.50.7 nexthop-vrf default"], "mode": "exact"}]
    assert result["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0"], "default_dev": "nic5",
         "asymmetric_returns": True},
        {"name": "vrf_st", "lookups": [], "forbidden_interfaces": ["vmbr0"], "default_via": "10.20.50.7"}]


def test_a_member_node():
    # molecule/member's member node: nothing switched on, the stanzas the role once wrote go, the
    # VRFs must not fall through; undeclared VRFs are not inspected.
    assert plan({"management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}) == {
        "exit_node": False,
        "transit_interface": None,
        "tenants": [{"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "", "gateway6": "", "management_probes": [],
                     "probe": None, "leak": "static", "l3vni_bridge": "vrfbr_tdemo"}],
        "declared_vrfs": [{"name": "vrf_tdemo", "forwarding": False}],
        "forbidden_interfaces": ["vmbr0"],
        "rp_filter": {},
        "frr_stanzas": [],
        "route_assertions": [{"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0"],
                              "no_fall_through": True, "forwarding": False}],
        "undeclared_vrfs": "ignore",
        "probes": [],
    }


def test_a_member_node_with_probes_ipv6_and_an_asn():
    result = plan({"management_interface": "vmbr0", "management_interfaces": ["vmbr9"], "management_probes": ["10.20.99.5"],
                   "asn": 65020,
                   "tenants": [{"name": "tdemo", "probe": {"address": "10.20.129.250/24", "targets": [{"address": "10.20.129.1"}]}},
                               {"name": "acme", "vrf": "vrf_acme_prod", "management_probes": ["10.20.99.7"]}]},
                  ipv6=True, undeclared_vrfs="warn")
    assert result["frr_stanzas"] == []
    assert result["asn"] == 65020  # still lints whatever router bgp stanza the file has
    assert result["undeclared_vrfs"] == "ignore"
    assert result["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [{"dst": "10.20.99.5", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0", "vmbr9"], "no_fall_through": True, "forwarding": False},
        {"name": "vrf_acme_prod", "lookups": [{"dst": "10.20.99.5", "not_dev": "vmbr0"}, {"dst": "10.20.99.7", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0", "vmbr9"], "no_fall_through": True, "forwarding": False}]
    # No transit interface to expect the probe's packets on.
    assert result["probes"] == [
        {"tenant": "tdemo", "vrf": "vrf_tdemo", "address": "10.20.129.250/24",
         "targets": [{"address": "10.20.129.1"}, {"address": "10.20.99.5", "expect": "none"}],
         "count": 3, "forbidden_interfaces": ["vmbr0", "vmbr9"]}]


def test_a_member_node_is_held_to_no_exit_rule():
    assert plan({"tenants": [{"name": "tdemo"}], "fabric_ipv6_only": True}, ipv6=True)["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": [], "no_fall_through": True, "forwarding": False}]


def test_a_qinq_only_node_plans_no_tenant_egress():
    # main.yml skips the section when the settings are empty; the plan of nothing is nothing.
    assert plan({}) == {"exit_node": False, "transit_interface": None, "tenants": [], "declared_vrfs": [],
                        "forbidden_interfaces": [], "rp_filter": {}, "frr_stanzas": [], "route_assertions": [],
                        "undeclared_vrfs": "ignore", "probes": []}


# --- the rules of an exit node's shape, one message each -------------------------------------------

EXIT = {"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "management_interface": "vmbr0",
        "tenants": [{"name": "tdemo"}]}


def test_a_static_tenant_without_a_gateway_is_named():
    settings = {**EXIT, "transit_gateway": None, "tenants": [{"name": "tdemo"}, {"name": "tother", "gateway": "10.20.50.9"}]}
    assert shape_error(settings) == [
        "proxmox_node_network_tenant_egress.transit_gateway is unset: an exit node (transit_interface vmbr0.50) needs "
        "transit_gateway (or a gateway on every tenant of the static leak design; missing for: tdemo); set "
        "transit_gateway to the transit router's address, or a gateway on each of those tenants, or leak: import "
        "where the default is learned from the core over BGP"]


def test_an_exit_node_without_a_management_interface_is_told_so():
    assert shape_error({**EXIT, "management_interface": ""}) == [
        "proxmox_node_network_tenant_egress.management_interface is unset and management_interfaces is empty: an exit "
        "node (transit_interface vmbr0.50) needs the interface tenant traffic must never leave by; set "
        "management_interface to the management bridge, e.g. vmbr0"]
    # management_interfaces alone is enough.
    assert plan({**EXIT, "management_interface": None, "management_interfaces": ["vmbr9"]})["forbidden_interfaces"] == ["vmbr9"]


def test_ipv6_needs_a_gateway6_for_every_static_tenant():
    settings = {**EXIT, "asn": 65020,
                "tenants": [{"name": "tdemo"}, {"name": "t6", "gateway6": "2001:db8:50::9"}, {"name": "imp", "leak": "import"}]}
    assert shape_error(settings, ipv6=True) == [
        "proxmox_node_network_tenant_egress.transit_gateway6 is unset and proxmox_node_network_ipv6 is true: an exit "
        "node with IPv6 needs transit_gateway6 (or gateway6 on every tenant of the static leak design; missing for: "
        "tdemo); set transit_gateway6, or gateway6 on each of those tenants, or proxmox_node_network_ipv6: false"]
    assert plan(settings)["exit_node"]  # without IPv6 the same settings are complete


def test_the_import_design_needs_the_asn():
    settings = {"transit_interface": "nic5", "leak": "import", "management_interface": "vmbr0",
                "tenants": [{"name": "tdemo"}, {"name": "acme"}]}
    assert shape_error(settings) == [
        "proxmox_node_network_tenant_egress.asn is unset: router bgp stanzas, which must name the ASN of the BGP "
        "router Proxmox generates, are needed for the tenants of the import leak design (tdemo, acme); set asn to it "
        "(e.g. asn: 65020)"]


def test_core_peer_needs_the_asn():
    assert shape_error({**EXIT, "core_peer": "bgpv6"}) == [
        "proxmox_node_network_tenant_egress.asn is unset: router bgp stanzas, which must name the ASN of the BGP "
        "router Proxmox generates, are needed for core_peer (bgpv6); set asn to it (e.g. asn: 65020)"]


def test_fabric_ipv6_only_needs_core_peer():
    assert shape_error({**EXIT, "asn": 65020, "fabric_ipv6_only": True}) == [
        "proxmox_node_network_tenant_egress.fabric_ipv6_only is true but core_peer is unset: the IPv4 activation it "
        "adds is for the peer toward the core; set core_peer to that peer or peer group (e.g. core_peer: bgpv6), or "
        "fabric_ipv6_only: false"]


def test_every_broken_rule_has_its_own_line():
    lines = shape_error({"transit_interface": "vmbr0.50", "fabric_ipv6_only": True,
                         "tenants": [{"name": "tdemo"}, {"name": "imp", "leak": "import"}]}, ipv6=True)
    assert [line.split(" ", 1)[0] for line in lines] == [
        "proxmox_node_network_tenant_egress.transit_gateway", "proxmox_node_network_tenant_egress.management_interface",
        "proxmox_node_network_tenant_egress.transit_gateway6", "proxmox_node_network_tenant_egress.asn",
        "proxmox_node_network_tenant_egress.fabric_ipv6_only"]
    assert "needed for the tenants of the import leak design (imp);" in lines[3]


def test_a_tenant_without_a_name_is_refused_naming_its_index():
    with pytest.raises(AnsibleFilterError, match=re.escape(
            "proxmox_node_network_tenant_egress.tenants[1]: {'vrf': 'vrf_x'} has no name; each tenant is a dict with at "
            "least its name, e.g. - name: tdemo")):
        plan({**EXIT, "tenants": [{"name": "tdemo"}, {"vrf": "vrf_x"}]})


# --- through Ansible --------------------------------------------------------------------------------

def test_ansible_doc_documents_the_filter_and_every_part_of_the_plan(ansible_env):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "filter", "-j", "deevnet.net.tenant_egress_plan"],
                          env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["deevnet.net.tenant_egress_plan"]
    assert doc["doc"]["name"] == "tenant_egress_plan"
    assert set(doc["doc"]["options"]) == {"_input", "defaults", "ipv6", "frr_mode", "undeclared_vrfs"}
    assert "deevnet.net.tenant_egress_plan(" in doc["examples"]
    planned = plan({**EXIT, "asn": 65020})
    assert set(doc["return"]["_value"]["contains"]) == set(planned)


def _debug(ansible_env, expression: str) -> subprocess.CompletedProcess:
    return subprocess.run([VENV_BIN / "ansible", "localhost", "-m", "ansible.builtin.debug", "-a",
                           json.dumps({"msg": expression})], env=ansible_env, capture_output=True, text=True)


def test_the_installed_filter_plans_and_refuses(ansible_env):
    settings = {"transit_interface": "nic5", "leak": "import", "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}
    expression = "{{ %s | deevnet.net.tenant_egress_plan(%s) | to_json }}"
    planned = _debug(ansible_env, expression % (json.dumps({**settings, "asn": 45689}), json.dumps(DEFAULTS)))
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert '\\"rp_filter\\": {\\"all\\": 0, \\"default\\": 0, \\"nic5\\": 0, \\"vrfbr_tdemo\\": 0}' in planned.stdout, \
        planned.stdout
    refused = _debug(ansible_env, expression % (json.dumps(settings), json.dumps(DEFAULTS)))
    assert refused.returncode != 0
    assert "proxmox_node_network_tenant_egress.asn is unset" in refused.stdout + refused.stderr
