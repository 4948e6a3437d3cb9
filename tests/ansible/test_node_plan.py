"""The role's planning (collection/plugins/filter/node_plan.py), without a node: for every node
shape and leak design, exactly what each module task of the role gets; each rule of an exit
node's shape fails with its own message; the defaults are the documented ones, applied once.

The expected outputs are what the role's Jinja produced before it moved into the filter (rendered
with ansible's templar, the same inputs), except that a tenant's `probe` now carries its `count`
(its default applied once, here, instead of in the task)."""
from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import ROOT, VENV_BIN, filter_plugin, plugin_utils

ROLE = ROOT / "roles" / "proxmox_node_network"
node_plan = filter_plugin("node_plan")

ROLE_DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
DEFAULTS = ROLE_DEFAULTS["__proxmox_node_network_tenant_egress_defaults"]


def plan(settings, ipv6=False, frr_mode="exact", undeclared_vrfs="fail"):
    return node_plan.tenant_egress_plan(settings, DEFAULTS, ipv6=ipv6, frr_mode=frr_mode,
                                        undeclared_vrfs=undeclared_vrfs)


# The plan's `sdn` part when the SDN is not read (the filter's default, the role's `ignore`).
NO_SDN = {"mode": "ignore", "tenants_from": "inventory", "disagreements": [], "drift": [], "failure": "",
          "warnings": []}


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


def _without(spec: dict, keys=("description", "default")) -> dict:
    """An argument spec's options without the keys that do not validate (nested)."""
    return {name: {key: (_without(value) if key == "options" else value) for key, value in option.items()
                   if key not in keys}
            for name, option in spec.items()}


def test_the_plan_validates_a_listed_tenant_as_the_argument_spec_documents():
    # `tenants` is raw (a list or discover), so Ansible no longer checks a listed tenant's options:
    # the plan's TENANT_SPEC does, and must be what argument_specs.yml documents.
    main = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    tenants = main["proxmox_node_network_tenant_egress"]["options"]["tenants"]
    assert tenants["type"] == "raw"
    assert _without(tenants["options"]) == node_plan.TENANT_SPEC


def test_a_listed_tenant_with_a_bad_option_is_refused_naming_it():
    for tenant, problem in (({"name": "tdemo", "leak": "imported"}, "value of leak must be one of: static, import, "
                                                                      "got: imported"),
                            ({"name": "tdemo", "gw": "10.20.50.9"}, "unknown option gw. Supported parameters include: gateway,"),
                            ({"name": "tdemo", "probe": {"address": "10.20.129.250/24"}},
                             "missing required arguments: targets found in probe")):
        with pytest.raises(AnsibleFilterError) as raised:
            plan({**EXIT, "tenants": [{"name": "ok"}, tenant]})
        assert str(raised.value).startswith("proxmox_node_network_tenant_egress.tenants[1] (tdemo): "), raised.value
        assert problem in str(raised.value), raised.value


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
                     "management_probes": ["198.51.100.5", "198.51.100.11"], "isolation_exempt": [], "probe": None, "leak": "static",
                     "l3vni_bridge": "vrfbr_tdemo", "exit": True}],
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
        "egress_probe": {},
        "control_plane": {},
        "sdn": NO_SDN,
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
                     "isolation_exempt": [], "probe": {"count": 3, "address": "10.20.129.250/24",
                               "targets": [{"address": "203.0.113.8"},
                                           {"address": "203.0.113.8", "proto": "tcp", "port": 443},
                                           {"address": "203.0.113.8", "proto": "udp"}]},
                     "leak": "static", "l3vni_bridge": "vrfbr_tdemo", "exit": True}],
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
        # One run; the management probes are isolation targets of a tenant the node is the exit of.
        "egress_probe": {"probes": [{"name": "tdemo", "vrf": "vrf_tdemo", "address": "10.20.129.250/24",
                                     "targets": [{"address": "203.0.113.8"},
                                                 {"address": "203.0.113.8", "proto": "tcp", "port": 443},
                                                 {"address": "203.0.113.8", "proto": "udp"},
                                                 {"address": "10.20.99.5", "expect": "blocked"},
                                                 {"address": "10.20.99.1", "expect": "blocked"}],
                                     "expect_egress_interface": "vmbr0.50"}],
                         "count": 3, "forbidden_interfaces": ["vmbr0"],
                         "origins": {"tdemo": {"10.20.99.5": "a management address", "10.20.99.1": "a management address"}}},
        "control_plane": {},
        "sdn": NO_SDN,
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
         "isolation_exempt": [], "probe": None, "leak": "static", "l3vni_bridge": "vrfbr_tdemo", "exit": True},
        {"name": "acme", "vrf": "vrf_acme_prod", "gateway": "10.20.50.9", "gateway6": "",
         "management_probes": ["10.20.99.7"],
         "isolation_exempt": [], "probe": {"count": 5, "address": "10.20.131.250/24", "targets": [{"address": "203.0.113.8"}]},
         "leak": "static", "l3vni_bridge": "vrfbr_acme_prod", "exit": True}]
    assert result["forbidden_interfaces"] == ["vmbr0", "vmbr9"]
    assert result["frr_stanzas"] == [
        {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"], "mode": "merge"},
        {"header": "vrf vrf_acme_prod", "lines": ["ip route 0.0.0.0/0 10.20.50.9 nexthop-vrf default"], "mode": "merge"}]
    assert result["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0", "vmbr9"], "default_via": "10.20.50.1"},
        {"name": "vrf_acme_prod",
         "lookups": [{"dst": "10.20.99.7", "dev": "vmbr0.50", "via": "10.20.50.9", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0", "vmbr9"], "default_via": "10.20.50.9"}]
    assert result["egress_probe"] == {
        "probes": [{"name": "acme", "vrf": "vrf_acme_prod", "address": "10.20.131.250/24",
                    "targets": [{"address": "203.0.113.8"}, {"address": "10.20.99.7", "expect": "blocked"}],
                    "expect_egress_interface": "vmbr0.50"}],
        "count": 5, "forbidden_interfaces": ["vmbr0", "vmbr9"],
        "origins": {"acme": {"10.20.99.7": "a management address"}}}
    assert "asn" not in result


# Toward the core: no default and no host route, per family (/32 and /128), subnets and aggregates only.
CORE_FILTERS = [
    {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0"},
    {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31"},
    {"header": "route-map DEEVNET-TO-CORE permit 1", "lines": ["match ip address prefix-list LEAK-SUBNET-ONLY"]}]
CORE_FILTERS6 = [
    {"header": "ipv6 prefix-list LEAK-SUBNET-ONLY-V6 seq 5 deny ::/0"},
    {"header": "ipv6 prefix-list LEAK-SUBNET-ONLY-V6 seq 10 permit ::/0 le 127"},
    {"header": "route-map DEEVNET-TO-CORE-V6 permit 1", "lines": ["match ipv6 address prefix-list LEAK-SUBNET-ONLY-V6"]}]


def test_an_all_exit_node_of_the_import_design():
    # molecule/all-exit's hypervisors.
    assert plan({"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                 "fabric_ipv6_only": True, "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}) == {
        "exit_node": True,
        "transit_interface": "nic5",
        "tenants": [{"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "", "gateway6": "", "management_probes": [],
                     "isolation_exempt": [], "probe": None, "leak": "import", "l3vni_bridge": "vrfbr_tdemo", "exit": True}],
        "declared_vrfs": [{"name": "vrf_tdemo", "forwarding": False}],
        "forbidden_interfaces": ["vmbr0"],
        "rp_filter": {"all": 0, "default": 0, "nic5": 0, "vrfbr_tdemo": 0},
        "frr_stanzas": [
            {"header": "router bgp 45689 vrf vrf_tdemo",
             "children": [{"header": "address-family ipv4 unicast", "lines": ["import vrf default"]}]},
            # An IPv6-only fabric: the session carries IPv6 unicast whatever the role's IPv6, so
            # IPv6 is filtered too.
            {"header": "router bgp 45689",
             "children": [{"header": "address-family ipv4 unicast",
                           "lines": ["neighbor bgpv6 activate", "neighbor bgpv6 route-map DEEVNET-TO-CORE out"]},
                          {"header": "address-family ipv6 unicast",
                           "lines": ["neighbor bgpv6 route-map DEEVNET-TO-CORE-V6 out"]}]},
            *CORE_FILTERS, *CORE_FILTERS6],
        "asn": 45689,
        "route_assertions": [{"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0"],
                              "default_dev": "nic5", "asymmetric_returns": True,
                              "l3vni_bridge": "vrfbr_tdemo"}],
        "undeclared_vrfs": "fail",
        "egress_probe": {},
        # The control plane asserted in FRR: the core session in both families the IPv6-only fabric
        # carries, the IPv4 default received (the import design's), aggregates only out; no VNI
        # without the SDN, no remote AS without core_asn.
        "control_plane": {"peers": [{"peer": "bgpv6", "vrf": "default", "address_families": ["ipv4_unicast", "ipv6_unicast"],
                                     "receives_default": ["ipv4"], "advertises": "aggregates_only"}],
                          "vnis": [], "fabric_ipv6_only": True},
        "sdn": NO_SDN,
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
        # A dual-stack fabric: no IPv4 activation, only the filters toward the core, both families.
        {"header": "router bgp 45689",
         "children": [{"header": "address-family ipv4 unicast", "lines": ["neighbor bgpv6 route-map DEEVNET-TO-CORE out"]},
                      {"header": "address-family ipv6 unicast",
                       "lines": ["neighbor bgpv6 route-map DEEVNET-TO-CORE-V6 out"]}]},
        *CORE_FILTERS, *CORE_FILTERS6]
    assert result["route_assertions"] == [
        {"name": vrf, "lookups": [{"dst": "10.20.99.5", "dev": "nic5", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0"], "default_dev": "nic5", "asymmetric_returns": True, "ipv6_default_dev": "nic5",
         "l3vni_bridge": bridge}
        for vrf, bridge in (("vrf_tdemo", "vrfbr_tdemo"), ("vrf_acme_prod", "vrfbr_acmeprod"), ("vrf_beta_x", "vrfbr_beta_x"))]


def test_a_dual_stack_fabric_without_the_role_s_ipv6_filters_ipv4_only():
    result = plan({"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                   "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]})
    assert result["frr_stanzas"][1:] == [
        {"header": "router bgp 45689",
         "children": [{"header": "address-family ipv4 unicast", "lines": ["neighbor bgpv6 route-map DEEVNET-TO-CORE out"]}]},
        *CORE_FILTERS]


def test_the_core_filters_pass_frr_local_stanza_s_lint_and_vtysh(ansible_env, tmp_path):
    # What the role writes for an IPv6-only all-exit node with IPv6 on: frr_local_stanza lints it
    # (Proxmox's merge rules) and FRR's own parser accepts the file (vtysh -C, a dry run).
    vtysh = shutil.which("vtysh")
    if vtysh is None:
        pytest.skip("vtysh is not installed here (Debian's frr package)")
    stanzas = plan({"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                    "fabric_ipv6_only": True, "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]},
                   ipv6=True)["frr_stanzas"]
    conf = tmp_path / "frr.conf.local"
    args = json.dumps({"path": str(conf), "asn": 45689, "stanzas": stanzas, "validate": f"{vtysh} -C -f %s"})
    proc = subprocess.run([VENV_BIN / "ansible", "localhost", "-o", "-m", "deevnet.net.frr_local_stanza", "-a", args],
                          env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0 and "CHANGED" in proc.stdout, proc.stdout + proc.stderr
    written = conf.read_text()
    for line in ("ipv6 prefix-list LEAK-SUBNET-ONLY-V6 seq 10 permit ::/0 le 127",
                 "  neighbor bgpv6 route-map DEEVNET-TO-CORE-V6 out", " match ipv6 address prefix-list LEAK-SUBNET-ONLY-V6"):
        assert line in written.splitlines(), written
    check = subprocess.run([vtysh, "-C", "-f", str(conf)], capture_output=True, text=True)
    assert check.returncode == 0 and "Unknown command" not in check.stdout + check.stderr, check.stdout + check.stderr


def test_the_control_plane_with_ipv6_the_core_s_as_and_a_static_tenant():
    core = {"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6", "core_asn": 65001,
            "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}
    assert plan(core, ipv6=True)["control_plane"] == {
        "peers": [{"peer": "bgpv6", "vrf": "default", "address_families": ["ipv4_unicast", "ipv6_unicast"],
                   "receives_default": ["ipv4", "ipv6"], "advertises": "aggregates_only", "remote_as": 65001}],
        "vnis": [], "fabric_ipv6_only": False}
    # A dual-stack fabric without the role's IPv6: IPv4 only.
    assert plan(core)["control_plane"]["peers"][0]["address_families"] == ["ipv4_unicast"]
    # The static design's default is the transit gateway's, not the core's: none required from it.
    static = plan({**core, "leak": "static", "transit_gateway": "10.20.50.1"})["control_plane"]
    assert static["peers"][0]["receives_default"] == [] and static["peers"][0]["advertises"] == "aggregates_only"
    # No core_peer, or a member node: nothing to assert (the role's task skips).
    assert plan({**core, "core_peer": None})["control_plane"] == {}
    assert plan({"core_peer": "bgpv6", "tenants": [{"name": "tdemo"}]})["control_plane"] == {}


def test_the_control_plane_s_vnis_come_from_the_sdn():
    tdemo, acme = zone("tdemo", exit_node=True), zone("acme")
    tdemo.update(l3vni=10000, vnets=[{"name": "tdemo0", "vni": 11000}, {"name": "tdemo1", "vni": 11001}])
    acme.update(l3vni=20000, vnets=[{"name": "acme0", "vni": 21000}])
    sdn = intent(tdemo, acme, zone("vl", kind="vlan"))
    settings = {"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                "fabric_ipv6_only": True, "management_interface": "vmbr0"}
    discovered = sdn_plan({**settings, "tenants": "discover"}, sdn)["control_plane"]
    # Every tenant's, the one exiting elsewhere too: its VNIs are in this node's EVPN all the same.
    assert discovered["vnis"] == [{"vni": 10000}, {"vni": 11000}, {"vni": 11001}, {"vni": 20000}, {"vni": 21000}]
    assert discovered["fabric_ipv6_only"] is True
    # Listed tenants: the VNIs of their zones; without the SDN none are known.
    listed = {**settings, "tenants": [{"name": "tdemo"}]}
    assert sdn_plan(listed, sdn, sdn_mode="warn")["control_plane"]["vnis"] == [{"vni": 10000}, {"vni": 11000}, {"vni": 11001}]
    assert plan(listed)["control_plane"]["vnis"] == []


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
         "forbidden_interfaces": ["vmbr0"], "default_dev": "vmbr0.50", "asymmetric_returns": True,
         "l3vni_bridge": "vrfbr_imp"}]
    assert result["egress_probe"]["probes"] == [
        {"name": "imp", "vrf": "vrf_imp", "address": "10.20.140.250/24",
         "targets": [{"address": "203.0.113.8"}, {"address": "10.20.99.5", "expect": "blocked"}],
         "expect_egress_interface": "vmbr0.50"}]


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
         "asymmetric_returns": True, "l3vni_bridge": "vrfbr_tdemo"},
        {"name": "vrf_st", "lookups": [], "forbidden_interfaces": ["vmbr0"], "default_via": "10.20.50.7"}]


def test_a_member_node():
    # molecule/member's member node: nothing switched on, the stanzas the role once wrote go, the
    # VRFs must not fall through; undeclared VRFs are not inspected.
    assert plan({"management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}) == {
        "exit_node": False,
        "transit_interface": None,
        "tenants": [{"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "", "gateway6": "", "management_probes": [],
                     "isolation_exempt": [], "probe": None, "leak": "static", "l3vni_bridge": "vrfbr_tdemo", "exit": False}],
        "declared_vrfs": [{"name": "vrf_tdemo", "forwarding": False}],
        "forbidden_interfaces": ["vmbr0"],
        "rp_filter": {},
        "frr_stanzas": [],
        "route_assertions": [{"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": ["vmbr0"],
                              "no_fall_through": True, "forwarding": False}],
        "undeclared_vrfs": "ignore",
        "egress_probe": {},
        "control_plane": {},
        "sdn": NO_SDN,
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
    # No transit interface to expect the probe's packets on, and no isolation target: a member's
    # tenant traffic rightly leaves toward its exit node; the management probes are leak probes.
    assert result["egress_probe"] == {
        "probes": [{"name": "tdemo", "vrf": "vrf_tdemo", "address": "10.20.129.250/24",
                    "targets": [{"address": "10.20.129.1"}, {"address": "10.20.99.5", "expect": "none"}]}],
        "count": 3, "forbidden_interfaces": ["vmbr0", "vmbr9"],
        "origins": {"tdemo": {"10.20.99.5": "a management address"}}}


def test_a_member_node_is_held_to_no_exit_rule():
    assert plan({"tenants": [{"name": "tdemo"}], "fabric_ipv6_only": True}, ipv6=True)["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [], "forbidden_interfaces": [], "no_fall_through": True, "forwarding": False}]


def test_a_qinq_only_node_plans_no_tenant_egress():
    # main.yml skips the section when the settings are empty; the plan of nothing is nothing.
    assert plan({}) == {"exit_node": False, "transit_interface": None, "tenants": [], "declared_vrfs": [],
                        "forbidden_interfaces": [], "rp_filter": {}, "frr_stanzas": [], "route_assertions": [],
                        "undeclared_vrfs": "ignore", "egress_probe": {}, "control_plane": {},
                        "sdn": NO_SDN}


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


def test_every_value_written_to_a_file_is_checked_before_the_plan_naming_it():
    # P2: neither reaches frr_stanzas (`ip route 0.0.0.0/0 not-an-ip …`, `vrf vrf_t demo`).
    assert shape_error({**EXIT, "transit_gateway": "not-an-ip", "tenants": [{"name": "t demo"}]}) == [
        "proxmox_node_network_tenant_egress.transit_gateway: 'not-an-ip' is not an IP address; set it to the transit "
        "router's IPv4 address, e.g. 10.20.50.1",
        "proxmox_node_network_tenant_egress.tenants[0] (t demo).name: 't demo' is not a tenant name: letters, digits, "
        "- and _ only (it names the VRF vrf_<name> and the probe); give the zone's name, e.g. tdemo"]
    # A member node writes no default, but its VRF names still reach the modules.
    assert shape_error({"tenants": [{"name": "t/x"}]})[0].startswith(
        "proxmox_node_network_tenant_egress.tenants[0] (t/x).name: 't/x' is not a tenant name")
    lines = shape_error({**EXIT, "transit_gateway6": "10.20.50.1", "core_peer": "bgp v6", "asn": 0,
                         "transit_interface": "vmbr0 50", "management_interfaces": ["a" * 16],
                         "management_probes": ["10.20.99.5", "mgmt"],
                         "tenants": [{"name": "tdemo", "gateway": "2001:db8::1", "gateway6": "x"},
                                     {"name": "averylongname"}, {"name": "acme", "vrf": "vrf acme"},
                                     {"name": "acme2", "vrf": "vrf_acme_prod"}]}, ipv6=True)
    assert lines == [
        "proxmox_node_network_tenant_egress.transit_gateway6: '10.20.50.1' is IPv4, not IPv6; set it to the transit "
        "router's IPv6 address, e.g. 2001:db8:50::1",
        "proxmox_node_network_tenant_egress.transit_interface: 'vmbr0 50' contains whitespace or a control "
        "character, which no interface name holds; give the name as `ip link` shows it, e.g. vmbr0.50",
        "proxmox_node_network_tenant_egress.management_interfaces[0]: 'aaaaaaaaaaaaaaaa' is longer than the 15 "
        "bytes of an interface name (UTF-8; the kernel's IFNAMSIZ); give the name as `ip link` shows it, e.g. vmbr0.50",
        "proxmox_node_network_tenant_egress.management_probes[1]: 'mgmt' is not an IP address; give an address on "
        "the management segment, e.g. 10.20.99.5",
        "proxmox_node_network_tenant_egress.core_peer: 'bgp v6' is not one word of letters, digits, '.', ':', '-' "
        "and '_'; give the peer's address, interface or peer group as FRR names it, e.g. bgpv6",
        "proxmox_node_network_tenant_egress.asn: 0 is not an AS number (a whole number from 1 to 4294967295); e.g. "
        "asn: 65020",
        "proxmox_node_network_tenant_egress.tenants[0] (tdemo).gateway: '2001:db8::1' is IPv6, not IPv4; set it to "
        "the tenant's IPv4 transit gateway, e.g. 10.20.50.1",
        "proxmox_node_network_tenant_egress.tenants[0] (tdemo).gateway6: 'x' is not an IP address; set it to the "
        "tenant's IPv6 transit gateway, e.g. 2001:db8:50::1",
        "proxmox_node_network_tenant_egress.tenants[1] (averylongname).name: 'averylongname' makes the vrf "
        "'vrf_averylongname', which is longer than the 15 bytes of an interface name (UTF-8; the kernel's IFNAMSIZ); "
        "give a shorter name, or set vrf",
        "proxmox_node_network_tenant_egress.tenants[1] (averylongname).name: 'averylongname' makes the l3vni_bridge "
        "'vrfbr_averylongname', which is longer than the 15 bytes of an interface name (UTF-8; the kernel's IFNAMSIZ); "
        "give a shorter name, or set l3vni_bridge",
        "proxmox_node_network_tenant_egress.tenants[2] (acme).vrf: 'vrf acme' contains whitespace or a control "
        "character, which no interface name holds; give the device's name as `ip link` shows it",
        "proxmox_node_network_tenant_egress.tenants[2] (acme).vrf: 'vrf acme' makes the l3vni_bridge 'vrfbr_vrf acme', "
        "which contains whitespace or a control character, which no interface name holds; fix the vrf, or set "
        "l3vni_bridge",
    ]


# 15 characters, 16 bytes in UTF-8: the kernel counts bytes (IFNAMSIZ), and so does the runtime
# (modules/runtime/src/ifname.rs).
FIFTEEN_CHARACTERS_SIXTEEN_BYTES = "vmbr\u00e9" + "x" * 10


def test_an_interface_name_is_counted_in_bytes_like_the_kernel():
    name = FIFTEEN_CHARACTERS_SIXTEEN_BYTES
    assert (len(name), len(name.encode())) == (15, 16)
    assert shape_error({**EXIT, "management_interfaces": [name]}) == [
        f"proxmox_node_network_tenant_egress.management_interfaces[0]: {name!r} is longer than the 15 bytes of an "
        f"interface name (UTF-8; the kernel's IFNAMSIZ); give the name as `ip link` shows it, e.g. vmbr0.50"]
    # 15 bytes, with the same two-byte letter, is a name.
    assert node_plan.interface_name_problem(name) and not node_plan.interface_name_problem(name[:-1])


def test_a_tenant_without_a_name_is_refused_naming_its_index():
    with pytest.raises(AnsibleFilterError, match=re.escape(
            "proxmox_node_network_tenant_egress.tenants[1]: {'vrf': 'vrf_x'} has no name; each tenant is a dict with at "
            "least its name, e.g. - name: tdemo")):
        plan({**EXIT, "tenants": [{"name": "tdemo"}, {"vrf": "vrf_x"}]})


# --- the SDN: discovered tenants, disagreements, drift (the module sdn_check's result by hand) --------

def zone(name, exit_node=False, kind="evpn"):
    """One zone of sdn_check's `zones`, as much of it as the plan reads."""
    return {"name": name, "type": kind, "vrf": f"vrf_{name}" if kind == "evpn" else None, "exit_node": exit_node,
            "l3vni_bridge": f"vrfbr_{name}" if kind == "evpn" else None}


def intent(*zones, drift=(), node="hv02"):
    """sdn_check's result (the contract's keys) for the node: its tenants are its EVPN zones."""
    return {"node": node, "version": {"running": 7, "applied": 7}, "pending": [], "zones": list(zones),
            "tenants": [{"name": z["name"], "vrf": z["vrf"], "l3vni_bridge": z["l3vni_bridge"], "exit_node": z["exit_node"]}
                        for z in zones if z["type"] == "evpn"],
            "drift": list(drift), "kernel": True, "skipped": []}


def sdn_plan(settings, sdn, sdn_mode="fail", **options):
    return node_plan.tenant_egress_plan(settings, DEFAULTS, sdn=sdn, sdn_mode=sdn_mode, **options)


def sdn_error(settings, sdn, sdn_mode="fail") -> str:
    with pytest.raises(AnsibleFilterError) as raised:
        sdn_plan(settings, sdn, sdn_mode)
    return str(raised.value)


EXIT_DISCOVER = {"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "management_interface": "vmbr0",
                 "management_probes": ["10.20.99.5"], "asn": 65020, "tenants": "discover"}


def test_discover_builds_the_tenants_from_the_sdn_with_each_zone_s_exit_role():
    # tdemo exits here, acme exits elsewhere: one stanza, one default asserted, acme held to no
    # fall-through like on a member node; zones.<zone> carries the inventory's per-zone settings.
    result = sdn_plan({**EXIT_DISCOVER, "zones": {
        "tdemo": {"gateway": "10.20.50.9", "probe": {"address": "10.20.129.250/24", "targets": [{"address": "203.0.113.8"}]}},
        "acme": {"management_probes": ["10.20.99.7"]}}},
        intent(zone("tdemo", exit_node=True), zone("acme"), zone("vl", kind="vlan")))
    assert result["exit_node"] is True
    assert result["tenants"] == [
        {"name": "tdemo", "vrf": "vrf_tdemo", "gateway": "10.20.50.9", "gateway6": "", "management_probes": ["10.20.99.5"],
         "isolation_exempt": [], "probe": {"count": 3, "address": "10.20.129.250/24", "targets": [{"address": "203.0.113.8"}]},
         "leak": "static", "l3vni_bridge": "vrfbr_tdemo", "exit": True},
        {"name": "acme", "vrf": "vrf_acme", "gateway": "10.20.50.1", "gateway6": "",
         "management_probes": ["10.20.99.5", "10.20.99.7"], "isolation_exempt": [], "probe": None, "leak": "static",
         "l3vni_bridge": "vrfbr_acme", "exit": False}]
    assert result["frr_stanzas"] == [
        {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.9 nexthop-vrf default"], "mode": "exact"}]
    assert result["route_assertions"] == [
        {"name": "vrf_tdemo", "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "via": "10.20.50.9", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0"], "default_via": "10.20.50.9"},
        {"name": "vrf_acme", "lookups": [{"dst": "10.20.99.5", "not_dev": "vmbr0"}, {"dst": "10.20.99.7", "not_dev": "vmbr0"}],
         "forbidden_interfaces": ["vmbr0"], "no_fall_through": True, "forwarding": False}]
    assert result["declared_vrfs"] == [{"name": "vrf_tdemo", "forwarding": False}, {"name": "vrf_acme", "forwarding": False}]
    assert result["egress_probe"]["probes"][0]["expect_egress_interface"] == "vmbr0.50"
    assert result["sdn"] == {"mode": "fail", "tenants_from": "sdn", "disagreements": [], "drift": [], "failure": "",
                             "warnings": []}


def test_discover_plans_what_the_same_declared_tenants_plan_when_they_agree():
    settings = {"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6",
                "fabric_ipv6_only": True, "management_interface": "vmbr0"}
    sdn = intent(zone("tdemo", exit_node=True), zone("acme", exit_node=True))
    discovered = sdn_plan({**settings, "tenants": "discover"}, sdn)
    declared = sdn_plan({**settings, "tenants": [{"name": "tdemo"}, {"name": "acme"}]}, sdn)
    assert discovered.pop("sdn")["tenants_from"] == "sdn"
    assert declared.pop("sdn") == {**NO_SDN, "mode": "fail"}
    assert discovered == declared
    assert discovered["rp_filter"] == {"all": 0, "default": 0, "nic5": 0, "vrfbr_tdemo": 0, "vrfbr_acme": 0}


def test_discover_on_a_member_node_and_the_sdn_s_own_l3vni_bridge():
    sdn = intent(zone("tdemo"))
    sdn["tenants"][0]["l3vni_bridge"] = "vrfbr_x"
    result = sdn_plan({"management_interface": "vmbr0", "tenants": "discover"}, sdn)
    assert result["exit_node"] is False and result["frr_stanzas"] == [] and result["undeclared_vrfs"] == "ignore"
    assert [(t["vrf"], t["l3vni_bridge"], t["exit"]) for t in result["tenants"]] == [("vrf_tdemo", "vrfbr_x", False)]
    assert result["sdn"]["disagreements"] == []


def test_discover_with_no_evpn_zone_plans_nothing():
    result = sdn_plan({"management_interface": "vmbr0", "tenants": "discover"}, intent(zone("s", kind="simple")))
    assert result["tenants"] == [] and result["route_assertions"] == []


def test_an_sdn_exit_zone_on_a_node_without_a_transit_interface_is_a_disagreement():
    # The SDN makes hv02 the zone's exit; without a transit interface the role cannot give the VRF
    # its default. With warn the tenant is planned as a member (the assertion then shows what fails).
    settings = {"management_interface": "vmbr0", "tenants": "discover"}
    sdn = intent(zone("tdemo", exit_node=True))
    message = ("zone tdemo: the SDN lists node hv02 in its exit nodes; the inventory makes hv02 a member node (no "
               "transit_interface), so the VRF vrf_tdemo gets no default here; fix: set transit_interface (and "
               "transit_gateway, or zones.tdemo.gateway) for hv02, or remove hv02 from the zone's exit nodes and "
               "apply the SDN")
    failed = sdn_plan(settings, sdn)["sdn"]
    assert failed["disagreements"] == [message]
    assert failed["failure"].splitlines() == [
        "node hv02: 1 disagreement(s) between the inventory and the cluster's SDN, 0 drift finding(s) of the node from "
        "the SDN (proxmox_node_network_sdn: warn reports them without failing, ignore skips the SDN):",
        "disagreement: " + message]
    warned = sdn_plan(settings, sdn, sdn_mode="warn")
    assert warned["sdn"]["failure"] == "" and warned["sdn"]["warnings"] == ["SDN disagreement: " + message]
    assert warned["exit_node"] is False
    assert warned["route_assertions"][0]["no_fall_through"] is True


def test_discover_on_an_exit_node_that_no_zone_exits_by_is_a_disagreement():
    result = sdn_plan(EXIT_DISCOVER, intent(zone("tdemo")))
    assert result["sdn"]["disagreements"] == [
        "node hv02: the inventory makes it an exit node (transit_interface vmbr0.50); the SDN lists it in the exit "
        "nodes of no EVPN zone that applies to it (EVPN zones here: tdemo); fix: add hv02 to the exit nodes of its "
        "zones and apply the SDN, or remove transit_interface"]
    # Planned as the member of tdemo it is: no forwarding, no stanza.
    assert result["exit_node"] is False and result["frr_stanzas"] == [] and result["transit_interface"] is None


def test_zone_settings_for_a_zone_that_is_not_here_are_a_disagreement():
    result = sdn_plan({**EXIT_DISCOVER, "zones": {"tdemo": {}, "gone": {"gateway": "10.20.50.9"}}},
                      intent(zone("tdemo", exit_node=True)))
    assert result["sdn"]["disagreements"] == [
        "zones.gone: the inventory has settings for zone gone; the SDN has no EVPN zone gone that applies to node hv02 "
        "(EVPN zones here: tdemo); fix: remove zones.gone or name one of those zones"]


def test_discover_needs_the_sdn():
    assert sdn_error(EXIT_DISCOVER, None, sdn_mode="ignore") == (
        "proxmox_node_network_tenant_egress.tenants is discover but proxmox_node_network_sdn is ignore: the tenants "
        "come from the node's SDN intent, which ignore does not read; set proxmox_node_network_sdn to fail or warn, "
        "or list the tenants")
    assert sdn_error(EXIT_DISCOVER, {}).startswith(
        "proxmox_node_network_sdn is fail but the node's SDN intent (the result of deevnet.net.sdn_check) lacks node, "
        "zones, tenants, drift")
    # A skipped task's result is no intent either.
    assert "lacks node, zones, tenants, drift" in sdn_error(EXIT_DISCOVER, {"skipped": True, "changed": False}, "warn")


# sdn_check's result as the role registers it on a node without /etc/pve/sdn (failed_when: false
# replaces `failed`): its refusal, with sdn_applied false.
NO_SDN_APPLIED = {"failed": False, "failed_when_result": False, "changed": False, "sdn_applied": False,
                  "msg": "running_config=/etc/pve/sdn/.running-config does not exist: nor does /etc/pve/sdn: ..."}
SDN_ABSENT = ("proxmox_node_network_sdn is fail, but the cluster's SDN is not applied on this node "
              "(/etc/pve/sdn/.running-config does not exist: no SDN was ever applied, or this is not a Proxmox VE "
              "node), so the plan comes from the inventory alone, not compared with the SDN; apply the SDN in "
              "Proxmox (Datacenter > SDN > Apply, or pvesh set /cluster/sdn) to have the inventory compared with "
              "it, or, on a node without Proxmox's SDN (Debian with FRR and VRFs), set proxmox_node_network_sdn: "
              "ignore")


def test_without_an_applied_sdn_the_default_plans_from_the_inventory_with_one_warning():
    settings = {**EXIT_DISCOVER, "tenants": [{"name": "tdemo"}]}
    for mode in ("fail", "warn"):
        result = sdn_plan(settings, NO_SDN_APPLIED, sdn_mode=mode)
        expected = SDN_ABSENT.replace("is fail,", f"is {mode},")
        assert result["sdn"] == {"mode": mode, "tenants_from": "inventory", "disagreements": [], "drift": [],
                                 "failure": "", "warnings": [expected], "absent": (
                                     "not applied on this node (/etc/pve/sdn/.running-config does not exist); apply "
                                     "it in Proxmox, or, on a node without Proxmox's SDN, set "
                                     "proxmox_node_network_sdn: ignore")}
        # The same plan as without the SDN, its report aside.
        ignored = sdn_plan(settings, None, sdn_mode="ignore")
        assert {**result, "sdn": None} == {**ignored, "sdn": None}
    assert "create it" not in SDN_ABSENT and "running_config" not in SDN_ABSENT


def test_without_an_applied_sdn_discover_is_refused_naming_the_choices():
    assert sdn_error(EXIT_DISCOVER, NO_SDN_APPLIED) == (
        "proxmox_node_network_tenant_egress.tenants is discover, which takes the tenants from the cluster's SDN, but "
        "the SDN is not applied on this node (/etc/pve/sdn/.running-config does not exist: no SDN was ever applied, "
        "or this is not a Proxmox VE node); apply the SDN in Proxmox (Datacenter > SDN > Apply, or pvesh set "
        "/cluster/sdn), or list the tenants (and, on a node without Proxmox's SDN, set proxmox_node_network_sdn: "
        "ignore)")


def test_any_other_failure_of_sdn_check_fails_the_plan_with_its_message():
    unreadable = {"failed": False, "changed": False,
                  "msg": "running_config=/etc/pve/sdn/.running-config is not JSON (EOF while parsing)"}
    assert sdn_error({**EXIT_DISCOVER, "tenants": [{"name": "tdemo"}]}, unreadable, "warn") == (
        "the cluster's SDN could not be read (deevnet.net.sdn_check, proxmox_node_network_sdn: warn): "
        "running_config=/etc/pve/sdn/.running-config is not JSON (EOF while parsing)")


def test_tenants_is_a_list_or_discover_and_zones_is_checked():
    assert sdn_error({**EXIT, "tenants": "discovr"}, intent()) == (
        "proxmox_node_network_tenant_egress.tenants: 'discovr' is neither a list of tenants nor 'discover'; e.g. "
        "tenants: [{name: tdemo}], or tenants: discover")
    assert sdn_error({**EXIT, "zones": {"tdemo": {"gateway": "10.20.50.9"}}}, intent(zone("tdemo", True))).startswith(
        "proxmox_node_network_tenant_egress.zones is set but tenants is a list: zones holds the settings of "
        "discovered tenants (tenants: discover); with a tenant list, put gateway, gateway6, leak, management_probes, "
        "probe, isolation_exempt on each tenant instead")
    sdn = intent(zone("tdemo", True))
    assert sdn_error({**EXIT_DISCOVER, "zones": {"tdemo": {"vrf": "vrf_x"}}}, sdn) == (
        "proxmox_node_network_tenant_egress.zones.tdemo: {'vrf': 'vrf_x'} is not a dict of gateway, gateway6, leak, "
        "management_probes, probe, isolation_exempt (unknown: vrf; the zone's name, VRF, L3VNI bridge and exit role are the SDN's)")
    assert sdn_error({**EXIT_DISCOVER, "zones": {"tdemo": {"leak": "imported"}}}, sdn) == (
        "proxmox_node_network_tenant_egress.zones.tdemo.leak: 'imported' is neither static nor import")
    assert "needs address and targets" in sdn_error({**EXIT_DISCOVER, "zones": {"tdemo": {"probe": {"address": "x"}}}}, sdn)
    assert "is not one of fail, warn, ignore" in sdn_error(EXIT, intent(), sdn_mode="warning")


def test_a_declared_tenant_whose_zone_is_not_here_is_named_each_way():
    sdn = intent(zone("tdemo", exit_node=True), zone("acme", kind="simple"))
    result = sdn_plan({**EXIT, "tenants": [{"name": "tdemo"}, {"name": "acme"}, {"name": "beta", "vrf": "vrf_b"}]}, sdn)
    assert result["sdn"]["disagreements"] == [
        "tenant acme: the inventory declares it on node hv02 (VRF vrf_acme); the SDN has no EVPN zone with that VRF "
        "that applies to hv02 (EVPN zones here: tdemo); zone acme applies here but is a simple zone, which has no VRF; "
        "fix: create the EVPN zone acme (or add hv02 to its nodes) and apply the SDN, or remove the tenant from "
        "proxmox_node_network_tenant_egress.tenants",
        "tenant beta: the inventory declares it on node hv02 (VRF vrf_b); the SDN has no EVPN zone with that VRF that "
        "applies to hv02 (EVPN zones here: tdemo); fix: create the EVPN zone b (or add hv02 to its nodes) and apply "
        "the SDN, or remove the tenant from proxmox_node_network_tenant_egress.tenants"]
    # Declared tenants are planned as declared, whatever the SDN says.
    assert [t["vrf"] for t in result["tenants"]] == ["vrf_tdemo", "vrf_acme", "vrf_b"]
    # A VRF Proxmox would never name.
    assert sdn_plan({**EXIT, "tenants": [{"name": "tdemo"}, {"name": "acme", "vrf": "acme_vrf"}]}, sdn)["sdn"][
        "disagreements"] == [
        "tenant acme: the inventory declares it on node hv02 (VRF acme_vrf); the SDN has no EVPN zone with that VRF "
        "that applies to hv02 (EVPN zones here: tdemo); Proxmox names a zone's VRF vrf_<zone>, so acme_vrf is no "
        "zone's; fix: create the EVPN zone acme (or add hv02 to its nodes) and apply the SDN, or remove the tenant "
        "from proxmox_node_network_tenant_egress.tenants"]


def test_an_exit_zone_the_inventory_does_not_declare_is_named():
    sdn = intent(zone("tdemo", exit_node=True), zone("tnew", exit_node=True), zone("member_only"))
    assert sdn_plan(EXIT, sdn)["sdn"]["disagreements"] == [
        "zone tnew: the SDN lists node hv02 in its exit nodes (VRF vrf_tnew); the inventory declares no tenant with "
        "that VRF; fix: add - name: tnew to proxmox_node_network_tenant_egress.tenants (or set tenants: discover), or "
        "remove hv02 from the zone's exit nodes and apply the SDN"]


def test_an_inventory_exit_node_for_a_zone_that_does_not_list_it_is_named():
    # The example: transit_interface on a node the zone treats as a member.
    assert sdn_plan(EXIT, intent(zone("tdemo")))["sdn"]["disagreements"] == [
        "tenant tdemo: the inventory makes node hv02 its exit node (transit_interface vmbr0.50); the SDN's zone tdemo "
        "does not list hv02 in its exit nodes, so Proxmox treats hv02 as a member there; fix: add hv02 to the exit "
        "nodes of zone tdemo and apply the SDN, or make hv02 a member node (no transit_interface), or set tenants: "
        "discover, which follows each zone's exit nodes"]


def test_a_zone_that_lists_the_node_as_exit_while_the_inventory_makes_it_a_member_is_named():
    assert sdn_plan({"management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]},
                    intent(zone("tdemo", exit_node=True)))["sdn"]["disagreements"] == [
        "tenant tdemo: the SDN's zone tdemo lists node hv02 in its exit nodes; the inventory makes hv02 a member node "
        "(no transit_interface), so the VRF vrf_tdemo gets no default here; fix: set transit_interface (and "
        "transit_gateway) for hv02, or remove hv02 from the exit nodes of zone tdemo and apply the SDN"]


def test_an_inventory_that_agrees_with_the_sdn_has_nothing_to_report():
    for settings, sdn in ((EXIT, intent(zone("tdemo", exit_node=True), zone("other"))),
                          ({"management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}, intent(zone("tdemo")))):
        result = sdn_plan(settings, sdn)
        assert result.pop("sdn") == {**NO_SDN, "mode": "fail"}
        assert result == {key: value for key, value in plan(settings).items() if key != "sdn"}


def test_each_mode_decides_what_a_disagreement_does():
    sdn = intent(zone("tdemo"))
    failed, warned, ignored = (sdn_plan(EXIT, sdn, mode)["sdn"] for mode in ("fail", "warn", "ignore"))
    assert len(failed["disagreements"]) == 1 and failed["failure"] and failed["warnings"] == []
    assert warned["disagreements"] == failed["disagreements"] and warned["failure"] == ""
    assert warned["warnings"] == ["SDN disagreement: " + line for line in failed["disagreements"]]
    # ignore: the SDN is not read at all (whatever is passed).
    assert ignored == NO_SDN


# What sdn_check gives as the fix of a device to re-create: the collection's one reload advice.
RELOAD = plugin_utils("reload_advice").reload_interfaces("this node")
DRIFT = [{"object": "vrfvx_tdemo", "declared": "local 2001:db8:51::22 (IPv6)", "found": "local 10.20.51.22 (IPv4)",
          "fix": f"re-create it: {RELOAD}"},
         {"object": "zone tdemo2", "declared": "added (not applied)", "found": "running config version 7",
          "fix": "apply the SDN: `pvesh set /cluster/sdn`"}]


def test_drift_fails_naming_each_finding_and_its_fix_unless_warn():
    sdn = intent(zone("tdemo", exit_node=True), drift=DRIFT)
    failed = sdn_plan(EXIT, sdn)["sdn"]
    assert failed["failure"].splitlines() == [
        "node hv02: 0 disagreement(s) between the inventory and the cluster's SDN, 2 drift finding(s) of the node from "
        "the SDN (proxmox_node_network_sdn: warn reports them without failing, ignore skips the SDN):",
        "drift: vrfvx_tdemo: the SDN declares local 2001:db8:51::22 (IPv6), the node has local 10.20.51.22 (IPv4); "
        f"fix: re-create it: {RELOAD}",
        "drift: zone tdemo2: the SDN declares added (not applied), the node has running config version 7; fix: apply "
        "the SDN: `pvesh set /cluster/sdn`"]
    # warn: the module itself warned of each finding (drift: warn); the plan adds no duplicate.
    warned = sdn_plan(EXIT, sdn, "warn")["sdn"]
    assert warned["failure"] == "" and warned["warnings"] == [] and len(warned["drift"]) == 2


def test_a_disagreement_and_drift_in_one_failure_and_with_a_broken_shape():
    sdn = intent(zone("tdemo"), drift=DRIFT[:1])
    lines = sdn_plan(EXIT, sdn)["sdn"]["failure"].splitlines()
    assert [line.split(":", 1)[0] for line in lines] == ["node hv02", "disagreement", "drift"]
    # The shape's error carries the SDN's failure too, so nothing is lost by failing in the filter.
    message = sdn_error({**EXIT, "transit_gateway": None}, sdn)
    assert message.splitlines()[0].startswith("proxmox_node_network_tenant_egress.transit_gateway is unset")
    assert message.splitlines()[1:] == lines


# --- FRR applied again: the decision, on vrf_route_assert's results -------------------------------

def default_check(vrf, ok, msg, family="IPv4", via="10.20.50.1"):
    return {"vrf": vrf, "check": "default_route", "ok": ok, "expected": {"family": family, "via": via, "dev": None},
            "actual": [] if not ok else [{"family": family, "type": "unicast", "gateway": via, "dev": "vmbr0.50",
                                          "metric": None, "protocol": "static"}], "msg": msg}


# vrf_route_assert's result when FRR's running configuration lost the leaked default while
# frr.conf.local has it (the table keeps only what Proxmox put there).
LOST_DEFAULT = {
    "failed": True, "changed": False,
    "vrfs": [{"name": "vrf_tdemo", "ifindex": 12, "table": 1001, "defaults": [], "unreachable_catch_all": False,
              "unreachable_catch_all_ipv6": False}],
    "checks": [
        {"vrf": "vrf_tdemo", "check": "vrf", "ok": True, "expected": {}, "actual": {"table": 1001},
         "msg": "vrf_tdemo: VRF device with table 1001"},
        default_check("vrf_tdemo", False, "vrf_tdemo: table 1001 has no IPv4 default route and no unreachable "
                                          "catch-all, so lookups fall through to the main table; expected default via "
                                          "10.20.50.1"),
        {"vrf": "vrf_tdemo", "check": "lookup 10.20.99.5", "ok": False,
         "expected": {"dev": "vmbr0.50", "not_dev": "vmbr0", "table": 1001},
         "actual": {"type": "unicast", "via": None, "dev": "vmbr0", "table": 254, "fall_through": True},
         "msg": "vrf_tdemo: 10.20.99.5 resolves via dev vmbr0 (table main: fall-through), expected dev vmbr0.50, not dev vmbr0"}],
    "leaking_vrfs": [], "settled_after": 0.01, "attempts": 1,
    "msg": "vrf_tdemo: table 1001 has no IPv4 default route ...",
}


def test_a_lost_default_the_unchanged_file_implies_calls_for_frr_again():
    exit_plan = plan({**EXIT, "asn": 65020})
    assert node_plan.frr_reapply(LOST_DEFAULT, exit_plan, frr_changed=False) is True
    # IPv6's default alone, too.
    v6 = {**LOST_DEFAULT, "checks": [default_check("vrf_tdemo", False, "no IPv6 default", family="IPv6", via="2001:db8::1")]}
    assert node_plan.frr_reapply(v6, exit_plan, frr_changed=False) is True


def test_no_second_apply_when_it_cannot_help():
    exit_plan = plan({**EXIT, "asn": 65020})
    # The file changed this run: FRR was just applied (and the assertion already waited).
    assert node_plan.frr_reapply(LOST_DEFAULT, exit_plan, frr_changed=True) is False
    # Passed.
    passed = {**LOST_DEFAULT, "failed": False, "checks": [default_check("vrf_tdemo", True, "ok")]}
    assert node_plan.frr_reapply(passed, exit_plan) is False
    # Only a leak by the management side, or a missing VRF: not FRR's.
    leak_only = {**LOST_DEFAULT, "checks": [LOST_DEFAULT["checks"][0], default_check("vrf_tdemo", True, "ok"),
                                            LOST_DEFAULT["checks"][2]]}
    assert node_plan.frr_reapply(leak_only, exit_plan) is False
    no_vrf = {**LOST_DEFAULT, "checks": [{"vrf": "vrf_tdemo", "check": "vrf", "ok": False, "expected": {}, "actual": {},
                                          "msg": "vrf_tdemo: no such VRF device"}]}
    assert node_plan.frr_reapply(no_vrf, exit_plan) is False
    # A member node: the file implies no default there.
    member_plan = plan({"management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]})
    assert node_plan.frr_reapply(LOST_DEFAULT, member_plan) is False
    # A discovered zone that exits elsewhere: its default is not the file's.
    mixed = sdn_plan(EXIT_DISCOVER, intent(zone("tdemo"), zone("acme", exit_node=True)))
    assert node_plan.frr_reapply(LOST_DEFAULT, mixed) is False
    # A check-mode or skipped result has no checks to go by.
    assert node_plan.frr_reapply({"skipped": True}, exit_plan) is False


# --- through Ansible --------------------------------------------------------------------------------

def test_ansible_doc_documents_the_filter_and_every_part_of_the_plan(ansible_env):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "filter", "-j", "deevnet.net.tenant_egress_plan"],
                          env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["deevnet.net.tenant_egress_plan"]
    assert doc["doc"]["name"] == "tenant_egress_plan"
    assert set(doc["doc"]["options"]) == {"_input", "defaults", "ipv6", "frr_mode", "undeclared_vrfs", "sdn", "sdn_mode"}
    assert "deevnet.net.tenant_egress_plan(" in doc["examples"]
    planned = plan({**EXIT, "asn": 65020})
    assert set(doc["return"]["_value"]["contains"]) == set(planned)
    # `absent` only on a node without an applied SDN.
    assert set(doc["return"]["_value"]["contains"]["sdn"]["contains"]) == set(planned["sdn"]) | {"absent"}
    assert set(doc["return"]["_value"]["contains"]["tenants"]["contains"]) == set(planned["tenants"][0])


def test_ansible_doc_documents_the_reapply_decision(ansible_env):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "filter", "-j", "deevnet.net.frr_reapply"],
                          env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["deevnet.net.frr_reapply"]
    assert set(doc["doc"]["options"]) == {"_input", "plan", "frr_changed", "check_mode", "apply_command"}
    assert "deevnet.net.frr_reapply(" in doc["examples"]


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


def test_the_installed_filter_warns_of_each_disagreement_with_warn(ansible_env):
    # Real Ansible warnings (stderr's [WARNING]), not a debug task's output.
    sdn = intent(zone("tdemo"), zone("tnew", exit_node=True))
    expression = "{{ %s | deevnet.net.tenant_egress_plan(%s, sdn=%s, sdn_mode='%s') | to_json }}"
    warned = _debug(ansible_env, expression % (json.dumps(EXIT), json.dumps(DEFAULTS), json.dumps(sdn), "warn"))
    assert warned.returncode == 0, warned.stdout + warned.stderr
    output = " ".join((warned.stdout + warned.stderr).split())
    assert "[WARNING]: SDN disagreement: tenant tdemo: the inventory makes node hv02 its exit node" in output, output
    assert "[WARNING]: SDN disagreement: zone tnew: the SDN lists node hv02 in its exit nodes" in output, output
    failed = _debug(ansible_env, expression % (json.dumps(EXIT), json.dumps(DEFAULTS), json.dumps(sdn), "fail"))
    assert failed.returncode == 0 and "[WARNING]" not in failed.stdout + failed.stderr
    assert "2 disagreement(s) between the inventory and the cluster" in failed.stdout


def test_the_installed_reapply_decision(ansible_env):
    expression = "{{ %s | deevnet.net.frr_reapply(%s, frr_changed=%s) }}"
    exit_plan = json.dumps(plan({**EXIT, "asn": 65020}))
    for changed, expected in (("false", "true"), ("true", "false")):
        proc = _debug(ansible_env, expression % (json.dumps(LOST_DEFAULT), exit_plan, changed))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f'"msg": {expected}' in proc.stdout.replace("True", "true").replace("False", "false"), proc.stdout


def test_in_check_mode_the_installed_reapply_decision_says_so_as_a_warning(ansible_env):
    # A check run applies nothing: a real [WARNING] says what a real run would do, once.
    expression = "{{ %s | deevnet.net.frr_reapply(%s, check_mode=%s, apply_command=['frr-apply', 'now']) }}"
    exit_plan = json.dumps(plan({**EXIT, "asn": 65020}))
    checked = _debug(ansible_env, expression % (json.dumps(LOST_DEFAULT), exit_plan, "true"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    output = " ".join(checked.stderr.split())
    assert "[WARNING]: a real run would apply FRR again (frr-apply now)" in output, output
    assert "[WARNING]" not in checked.stdout
    # Not in a real run (the role applies it), nor when nothing calls for it.
    real = _debug(ansible_env, expression % (json.dumps(LOST_DEFAULT), exit_plan, "false"))
    assert real.returncode == 0 and "[WARNING]" not in real.stdout + real.stderr
    passed = {**LOST_DEFAULT, "failed": False, "checks": []}
    quiet = _debug(ansible_env, expression % (json.dumps(passed), exit_plan, "true"))
    assert quiet.returncode == 0 and "[WARNING]" not in quiet.stdout + quiet.stderr


# --- the egress probes: one run, isolation derived ------------------------------------------------

def probed(name, address, targets=None, **extra):
    return {"name": name, "probe": {"address": address, "targets": targets or [{"address": "203.0.113.8"}],
                                    **extra.pop("probe", {})}, **extra}


EXIT_FOUR = {"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "management_interface": "vmbr0",
             "management_probes": ["10.20.99.5"]}


def blocked(run, name):
    probe = next(probe for probe in run["probes"] if probe["name"] == name)
    return [target["address"] for target in probe["targets"] if target.get("expect") == "blocked"]


def test_each_tenant_must_not_reach_the_next_ones_round_the_ring():
    tenants = [probed(f"t{i}", f"10.20.{130 + i}.250/24") for i in range(5)]
    run = plan({**EXIT_FOUR, "tenants": tenants, "isolation_peers": 2})["egress_probe"]
    assert [probe["name"] for probe in run["probes"]] == ["t0", "t1", "t2", "t3", "t4"]
    # Every tenant probes the next two and is probed by the two before it.
    assert blocked(run, "t0") == ["10.20.131.250", "10.20.132.250", "10.20.99.5"]
    assert blocked(run, "t3") == ["10.20.134.250", "10.20.130.250", "10.20.99.5"]
    assert blocked(run, "t4") == ["10.20.130.250", "10.20.131.250", "10.20.99.5"]
    assert run["origins"]["t4"] == {"10.20.130.250": "tenant t0's workload", "10.20.131.250": "tenant t1's workload",
                                    "10.20.99.5": "a management address"}
    # The default is 3, never more peers than there are other tenants, and 0 probes none.
    assert len(blocked(plan({**EXIT_FOUR, "tenants": tenants})["egress_probe"], "t0")) == 3 + 1
    assert blocked(plan({**EXIT_FOUR, "tenants": tenants[:2]})["egress_probe"], "t0") == ["10.20.131.250", "10.20.99.5"]
    assert blocked(plan({**EXIT_FOUR, "tenants": tenants, "isolation_peers": 0})["egress_probe"], "t0") == ["10.20.99.5"]
    # A lone tenant has no peer: only the management side.
    assert blocked(plan({**EXIT_FOUR, "tenants": tenants[:1]})["egress_probe"], "t0") == ["10.20.99.5"]


def test_isolation_targets_ranges_and_exemptions():
    tenants = [probed("ta", "10.20.130.250/24", isolation_exempt=["tb", "10.0.0.1"]),
               probed("tb", "10.20.131.250/24", isolation_exempt=["10.20.99.5"]),
               {"name": "tc"}]
    run = plan({**EXIT_FOUR, "tenants": tenants,
                "isolation_targets": ["10.0.0.0/8", "172.16.0.0/12", "192.168.7.9", "192.168.8.0/31"]})["egress_probe"]
    # ta: tb's workload exempt by name, 10.0.0.1 by address; an unprobed tenant has no workload to reach.
    assert blocked(run, "ta") == ["10.20.99.5", "172.16.0.1", "192.168.7.9", "192.168.8.0"]
    # tb: the exempt management probe stays a leak probe, judged by its path.
    tb = run["probes"][1]
    assert {"address": "10.20.99.5", "expect": "none"} in tb["targets"]
    assert blocked(run, "tb") == ["10.20.130.250", "10.0.0.1", "172.16.0.1", "192.168.7.9", "192.168.8.0"]
    assert run["origins"]["tb"]["172.16.0.1"] == "the private range 172.16.0.0/12"
    with pytest.raises(AnsibleFilterError) as raised:
        plan({**EXIT_FOUR, "tenants": tenants, "isolation_targets": ["10.0.0.0/33"]})
    assert str(raised.value) == ("proxmox_node_network_tenant_egress.isolation_targets[0]: '10.0.0.0/33' is neither an "
                                 "address nor a range; give one such as 10.0.0.0/8 or 172.16.0.1")
    for peers in (-1, "3", True):
        with pytest.raises(AnsibleFilterError, match=r"^proxmox_node_network_tenant_egress.isolation_peers: "):
            plan({**EXIT_FOUR, "tenants": tenants, "isolation_peers": peers})


def test_tenants_numbered_alike_never_get_their_own_address_or_subnet_as_an_isolation_target():
    # P1: ta and tb are numbered alike (each in a VRF of its own), tb even at ta's address; tc apart.
    tenants = [probed("ta", "10.20.130.250/24"), probed("tb", "10.20.130.251/24"),
               probed("tc", "10.20.131.250/24"), probed("td", "10.20.130.250/24")]
    run = plan({**EXIT_FOUR, "tenants": tenants, "isolation_peers": 1,
                "isolation_targets": ["10.20.130.0/23", "10.20.130.9", "10.20.130.128/25"]})["egress_probe"]
    for probe in run["probes"]:
        own = ipaddress.ip_interface(probe["address"]).network
        inside = [address for address in blocked(run, probe["name"]) if ipaddress.ip_address(address) in own]
        assert inside == [], f"{probe['name']}: {inside} lie in its own subnet {own}"
    # A peer inside the subnet is passed over for the next one round the ring; a range is probed at
    # its first host after the subnet (10.20.130.0/23 at 10.20.131.0), or not when it lies inside.
    assert blocked(run, "ta") == ["10.20.131.250", "10.20.99.5", "10.20.131.0"]
    assert run["origins"]["ta"]["10.20.131.0"] == "the private range 10.20.130.0/23"
    assert blocked(run, "tc") == ["10.20.130.250", "10.20.99.5", "10.20.130.1", "10.20.130.9", "10.20.130.129"]
    assert blocked(run, "td") == ["10.20.131.250", "10.20.99.5", "10.20.131.0"]


def test_the_run_takes_the_largest_count_and_one_run_holds_every_tenant():
    tenants = [probed("ta", "10.20.130.250/24", probe={"count": 2}), probed("tb", "10.20.131.250/24", probe={"count": 5})]
    run = plan({**EXIT_FOUR, "tenants": tenants})["egress_probe"]
    assert run["count"] == 5
    assert len(run["probes"]) == 2
    assert plan({**EXIT_FOUR, "tenants": [{"name": "ta"}]})["egress_probe"] == {}


def test_both_families_with_address6_each_probe_isolated_within_its_family():
    tenants = [probed("ta", "10.20.130.250/24", [{"address": "203.0.113.8"}, {"address": "2001:db8:113::8"}],
                      probe={"address6": "fd00:130::250/64"}),
               probed("tb", "10.20.131.250/24", [{"address": "203.0.113.8"}, {"address": "2001:db8:113::8", "proto": "tcp",
                                                                               "port": 443}],
                      probe={"address6": "fd00:131::250/64"}),
               probed("tc", "10.20.132.250/24")]
    run = plan({**EXIT_FOUR, "transit_gateway6": "2001:db8:50::1", "management_probes": ["10.20.99.5", "fd00:99::5"],
                "tenants": tenants}, ipv6=True)["egress_probe"]
    assert [probe["name"] for probe in run["probes"]] == ["ta", "ta/ipv6", "tb", "tb/ipv6", "tc"]
    ta6 = run["probes"][1]
    assert ta6 == {"name": "ta/ipv6", "vrf": "vrf_ta", "address": "fd00:130::250/64",
                   "targets": [{"address": "2001:db8:113::8"}, {"address": "fd00:131::250", "expect": "blocked"},
                               {"address": "fd00:99::5", "expect": "blocked"}],
                   "expect_egress_interface": "vmbr0.50"}
    assert blocked(run, "ta") == ["10.20.131.250", "10.20.132.250", "10.20.99.5"]
    assert run["origins"]["tb/ipv6"] == {"fd00:130::250": "tenant ta's workload", "fd00:99::5": "a management address"}


@pytest.mark.parametrize("tenant, ipv6, message", [
    (probed("ta", "10.20.130.250/24", [{"address": "2001:db8:113::8"}]), True,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.targets: 2001:db8:113::8 is IPv6 but the probe has no "
     "address6; set address6 to an unused IPv6 address of the tenant's subnet (with proxmox_node_network_ipv6: true)"),
    (probed("ta", "10.20.130.250/24", probe={"address6": "fd00:130::250/64"}), False,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.address6: 'fd00:130::250/64' is set but "
     "proxmox_node_network_ipv6 is false; set proxmox_node_network_ipv6: true to probe both families, or remove address6"),
    (probed("ta", "10.20.130.250/24", probe={"address6": "10.20.130.251/24"}), True,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.address6: '10.20.130.251/24' is not IPv6; give one "
     "such as fd00:129::250/64"),
    (probed("ta", "10.20.130.250/24", probe={"address6": "fd00:130::250/64"}), True,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.targets: no IPv6 target for address6 fd00:130::250/64; "
     "add one, such as {address: '2001:db8:113::8'}"),
    (probed("ta", "fd00:130::250/64"), True,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.address: 'fd00:130::250/64' is IPv6; address is the "
     "IPv4 workload, address6 the IPv6 one"),
    (probed("ta", "10.20.130.250/24", [{"address": "example.org"}]), False,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.targets[0].address: 'example.org' is not an IP "
     "address; give one such as 10.20.129.250/24 or fd00:129::250/64"),
    (probed("ta", "10.20.130.250/24", [{"address": "2001:db8:113::8"}], probe={"address6": "fd00:130::250/64"}), True,
     "proxmox_node_network_tenant_egress.tenants[0] (ta).probe.targets: no IPv4 target for address 10.20.130.250/24; "
     "add one, such as {address: 203.0.113.8}"),
])
def test_a_probe_s_families_are_checked_naming_the_tenant_and_key(tenant, ipv6, message):
    with pytest.raises(AnsibleFilterError) as raised:
        plan({**EXIT_FOUR, "transit_gateway6": "2001:db8:50::1", "tenants": [tenant]}, ipv6=ipv6)
    assert str(raised.value) == message


RUN = {"origins": {"tdemo": {"10.20.130.250": "tenant tacme's workload", "10.20.99.5": "a management address"}}}


def probe_result(verdict, answered_by=None):
    return {"name": "tdemo", "verdict": verdict, "targets": [
        {"address": "203.0.113.8", "expect": "reply", "passed": True},
        {"address": "10.20.130.250", "expect": "blocked", "passed": answered_by is None,
         "blocked_by": None if answered_by else "dropped beyond the node", "answered_by": answered_by},
        {"address": "10.20.99.5", "expect": "blocked", "passed": True, "blocked_by": "icmp net-unreachable"}]}


def test_the_summary_says_per_tenant_how_each_isolation_target_was_blocked():
    result = {"verdict": "passed", "failed": False, "msg": "2 probes passed", "probes": [probe_result("passed")]}
    assert node_plan.egress_probe_summary(result, RUN) == {
        "lines": ["tdemo: passed; egress 1/1 targets answered; isolation: 10.20.130.250 (tenant tacme's workload) "
                  "blocked: dropped beyond the node; 10.20.99.5 (a management address) blocked: icmp net-unreachable"],
        "failed": False, "msg": "2 probes passed"}


def test_the_summary_names_whose_address_answered_and_fails_but_in_check_mode():
    msg = "tdemo: 10.20.130.250 icmp: answered by 10.20.130.250 (3/3 probes) though it must be blocked"
    # failed_when replaces `failed`: the verdict decides.
    result = {"verdict": "failed", "failed": False, "msg": msg, "probes": [probe_result("failed", "10.20.130.250")]}
    summary = node_plan.egress_probe_summary(result, RUN)
    assert summary["failed"] is True
    assert summary["msg"] == msg + "\ntdemo: 10.20.130.250 is tenant tacme's workload"
    assert "10.20.130.250 (tenant tacme's workload) NOT blocked: answered by 10.20.130.250" in summary["lines"][0]
    assert node_plan.egress_probe_summary(result, RUN, check_mode=True)["failed"] is False
    # A refusal has no verdict: it fails in check mode too.
    refused = {"failed": False, "msg": "probes[0] (tdemo): address: 10.20.129.10 is in use on tdemo0"}
    assert node_plan.egress_probe_summary(refused, RUN, check_mode=True) == {
        "lines": [refused["msg"]], "failed": True, "msg": refused["msg"]}
    with pytest.raises(AnsibleFilterError):
        node_plan.egress_probe_summary("not a result", RUN)


def test_a_misspelt_setting_is_named_with_the_closest_valid_key():
    with pytest.raises(AnsibleFilterError) as raised:
        plan({**{key: value for key, value in EXIT.items() if key != "transit_gateway"},
              "transit_gatway": "10.20.50.1", "tenants": [{"name": "tdemo"}]})
    assert str(raised.value) == (
        "proxmox_node_network_tenant_egress.transit_gatway is not a setting of the role (ansible-doc -t role "
        "deevnet.net.proxmox_node_network); did you mean transit_gateway? rename it")


def test_without_defaults_the_plan_takes_the_role_s_own():
    settings = {**EXIT, "tenants": [{"name": "tdemo", "probe": {"address": "10.20.129.250/24",
                                                               "targets": [{"address": "203.0.113.8"}]}}]}
    assert node_plan.tenant_egress_plan(settings) == node_plan.tenant_egress_plan(settings, DEFAULTS)
    assert node_plan.role_defaults() == DEFAULTS
