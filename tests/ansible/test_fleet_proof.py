"""The fabric proof's plan and reconciliation (collection/plugins/filter/fleet_proof.py), without a
host: a fleet of three nodes and two tenants is made healthy from the modules' documented
results (sdn_check, bgp_evpn_assert, vrf_route_assert with its source NAT answers, egress_probe), then
each fault of the field is planted alone, and the report must name it and nothing else."""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from ansible.errors import AnsibleFilterError

from conftest import ROOT, filter_plugin, plugin_utils

fleet_proof = filter_plugin("fleet_proof")
# The collection's one advice for reloading a node's interfaces (plugin_utils/reload_advice.txt).
reload_advice = plugin_utils("reload_advice").reload_interfaces
plan = fleet_proof.fleet_proof_plan
reconcile = fleet_proof.fleet_proof_reconcile
# How the document keeps its cells: the passing ones summarised (plugin_utils/fabric_proof_cells.py).
ProofCells = plugin_utils("fabric_proof_cells").ProofCells

NODES = ["hv01", "hv02", "hv03"]
VTEP = {"hv01": "198.51.100.131", "hv02": "198.51.100.132", "hv03": "198.51.100.133"}
INTERNET = "203.0.113.8"
TENANTS = {
    "tdemo": {"vrf": "vrf_tdemo", "l3vni": 10001, "vnet": "tdemo0", "vni": 11001, "cidr": "192.0.2.0/24",
              "gateway": "192.0.2.1"},
    "tother": {"vrf": "vrf_tother", "l3vni": 10002, "vnet": "tother0", "vni": 11002, "cidr": "10.30.1.0/24",
               "gateway": "10.30.1.1"},
}
# The workloads the plan derives: the subnet's last hosts, one per node in the play's order.
WORKLOAD = {("tdemo", "hv01"): "192.0.2.254", ("tdemo", "hv02"): "192.0.2.253", ("tdemo", "hv03"): "192.0.2.252",
            ("tother", "hv01"): "10.30.1.254", ("tother", "hv02"): "10.30.1.253", ("tother", "hv03"): "10.30.1.252"}
SETTINGS = {"internet": [INTERNET], "dns": [], "ntp": [], "management": ["198.51.100.5"], "private": [],
            "full_size": True}
# Where the lab's core makes each pair's returns land: one workload per (tenant, node, landing).
def landing_of(tenants: dict) -> dict:
    """Per tenant k: .2YX (.1YX for the second) of hv0Y, landing on hv0X."""
    return {tenant: {node: {other: f"{tenants[tenant]['cidr'].rsplit('.', 1)[0]}.{200 - 100 * k + 10 * i + j}"
                            for j, other in enumerate(NODES) if other != node}
                     for i, node in enumerate(NODES)} for k, tenant in enumerate(tenants)}


LANDING = landing_of(TENANTS)


def zone(name: str, node: str, tenants=None) -> dict:
    tenant = (tenants or TENANTS)[name]
    return {"name": name, "type": "evpn", "vrf": tenant["vrf"], "l3vni": tenant["l3vni"],
            "l3vni_vxlan": f"vrfvx_{name}", "l3vni_bridge": f"vrfbr_{name}", "exit_node": True,
            "primary_exit_node": None, "local_routing": False, "vtep": VTEP.get(node, "198.51.100.200"),
            "vxlan_port": None, "mtu": 1450,
            "generated": True,
            "vnets": [{"name": tenant["vnet"], "vni": tenant["vni"], "vlan": None, "vlan_aware": False,
                       "vxlan_device": f"vxlan_{tenant['vnet']}", "mtu": 1450,
                       "subnets": [{"cidr": tenant["cidr"], "gateway": tenant["gateway"], "snat": False}]}]}


def route(dev: str, table: int = 1001, via=None, kind: str = "unicast", fall_through: bool = False) -> dict:
    return {"type": kind, "via": via, "dev": dev, "table": table, "fall_through": fall_through}


def check(vrf: str, dst: str, actual: dict, iif=None, snat_src=None) -> dict:
    actual = dict(actual, iif=iif) if iif else actual
    if snat_src:
        actual = dict(actual, snat={"src": snat_src, "translated": False, "why": "no source NAT rule matches"})
    return {"vrf": vrf, "check": f"lookup {dst}", "ok": True, "expected": {}, "actual": actual,
            "msg": f"{vrf}: {dst} {actual}"}


def target(address: str, expect: str, passed: bool = True, size=None, proto: str = "icmp") -> dict:
    received = 3 if (expect == "reply") == passed else 0
    return {"address": address, "proto": proto, "port": None, "expect": expect, "size": 1450 if size else None,
            "verdict": "passed" if passed else "failed", "sent": 3, "received": received, "replies": received,
            "error": None if received else "no reply", "left_by": ["nic5"], "passed": passed}


def healthy_node(node: str) -> dict:
    """One node of the healthy fleet, gathered as the playbook gathers it."""
    checks, probes = [], []
    for name, tenant in TENANTS.items():
        workload = WORKLOAD[(name, node)]
        checks.append(check(tenant["vrf"], INTERNET, route("nic5", via="fe80::1"), snat_src=workload))
        checks.append(check(tenant["vrf"], "198.51.100.5", route("nic5", via="fe80::1"), snat_src=workload))
        for other in TENANTS:
            if other != name:
                checks.append(check(tenant["vrf"], WORKLOAD[(other, node)], route("nic5", via="fe80::1"),
                                    snat_src=workload))
        checks.append(check(tenant["vrf"], workload, route(tenant["vnet"]), iif=f"vrfbr_{name}"))
        for other_node in NODES:
            landing = route(tenant["vnet"], table=1001) if other_node == node else route(
                f"vrfbr_{name}", table=254, via=VTEP[other_node])
            checks.append(check("default", WORKLOAD[(name, other_node)], landing, iif="nic5"))
        targets = [target(INTERNET, "reply"), target("198.51.100.5", "blocked")]
        targets += [target(WORKLOAD[(other, node)], "blocked") for other in TENANTS if other != name]
        for other_node in NODES:
            if other_node != node:
                targets += [target(WORKLOAD[(name, other_node)], "reply"),
                            target(WORKLOAD[(name, other_node)], "reply", size="mtu")]
        probes.append({"name": name, "verdict": "passed", "msg": "", "targets": targets})
        for landing in LANDING[name][node]:
            probes.append({"name": f"{name}-via-{landing}", "verdict": "passed", "msg": "",
                           "targets": [target(INTERNET, "reply")]})
    evpn = {"vnis": [{"vni": vni, "type": kind, "vrf": tenant["vrf"],
                      "remote_vteps": [VTEP[other] for other in NODES if other != node]}
                     for tenant in TENANTS.values() for vni, kind in ((tenant["l3vni"], "L3"), (tenant["vni"], "L2"))]}
    return {"reached": True, "uplinks": ["nic5"], "management": "vmbr0", "exit": True,
            "sdn": {"node": node, "version": {"running": 7, "applied": 7}, "drift": [],
                    "zones": [zone(name, node) for name in TENANTS]},
            "evpn": evpn, "lookups": {"checks": checks}, "probe": {"probes": probes}}


def fleet() -> dict:
    return {node: healthy_node(node) for node in NODES}


def settings(**given) -> dict:
    return dict(SETTINGS, **dict({"return_landing": LANDING}, **given))


def failing(report: dict) -> list:
    return sorted((cell["tenant"], cell["node"], cell["column"]) for cell in report["cells"] if cell["verdict"] != "pass")


def every_cell(report: dict) -> list:
    """Every cell of the report, the passing ones of its summary too (those with their key only)."""
    cells = ProofCells(report)
    return [cells.get(key) for key in cells.keys()]


def findings_text(report: dict) -> list:
    return [(finding["node"], finding["subject"], finding["text"]) for finding in report["findings"]]


def lookup_of(facts: dict, node: str, vrf: str, dst: str, iif=None) -> dict:
    for entry in facts[node]["lookups"]["checks"]:
        if entry["vrf"] == vrf and entry["check"] == f"lookup {dst}" and entry["actual"].get("iif") == iif:
            return entry
    raise AssertionError(f"no lookup {vrf} {dst} {iif} on {node}")


def probe_target(facts: dict, node: str, probe: str, address: str, size=None) -> dict:
    for entry in facts[node]["probe"]["probes"]:
        if entry["name"] == probe:
            for found in entry["targets"]:
                if found["address"] == address and (found["size"] is not None) == (size is not None):
                    return found
    raise AssertionError(f"no target {address} in {probe} on {node}")


def test_a_healthy_fleet_passes_every_cell_and_check():
    report = reconcile(fleet(), NODES, settings(), "2026-12-06T10:00:00Z")
    assert report["format"] == "deevnet.net.fabric_proof/1"
    assert failing(report) == []
    assert [check["ok"] for check in report["checks"]] == [True] * 6
    assert report["findings"] == []
    # 2 tenants x 3 nodes; per row: internet, management, the other tenant, 2 peers small and DF, 2 returns.
    assert report["summary"] == {"cells": 6 * 9, "passed": 54, "failed": 0, "unknown": 0, "not_run": 0,
                                 "checks_failed": 0, "findings": 0}
    assert [column["id"] for column in report["columns"]][:6] == [
        "internet", "dns", "ntp", "management", "private", "tenant:tdemo"]


def test_returns_not_forced_to_a_node_are_predicted_only_never_passed():
    report = reconcile(fleet(), NODES, dict(SETTINGS), None)
    returns = [cell for cell in every_cell(report) if cell["column"].startswith("return:")]
    assert len(returns) == 12
    assert {cell["verdict"] for cell in returns} == {"unknown"}
    assert all(cell["prediction"]["verdict"] == "reply" for cell in returns)
    assert all(cell["observation"]["text"].startswith("not observed") for cell in returns)
    # Summarised per node and column with the text they share, counted as undecided.
    assert report["unobserved"]["hv01"]["return:hv02"] == {
        "tenants": "0-1", "predicted": "reply",
        "text": "not observed: returns land where the core sends them (no return_landing for hv02)"}
    assert not [cell for cell in report["cells"] if cell["column"].startswith("return:")]
    assert report["summary"]["unknown"] == 12 and report["summary"]["passed"] == 42


def test_a_return_predicted_to_fail_and_not_observed_is_kept_whole_with_its_finding():
    facts = fleet()
    lookup_of(facts, "hv02", "default", WORKLOAD[("tdemo", "hv01")], "nic5")["actual"].update(
        type="refused", reason="not_forwarded")
    report = reconcile(facts, NODES, dict(SETTINGS), None)
    cell = next(cell for cell in report["cells"] if (cell["tenant"], cell["node"], cell["column"]) == (
        "tdemo", "hv01", "return:hv02"))
    assert cell["verdict"] == "fail" and cell["findings"]
    assert "tdemo" not in ProofCells(report).unobserved[("hv01", "return:hv02")][0]


def test_forwarding_off_on_one_uplink_names_that_node_s_returns_only():
    facts = fleet()
    for entry in facts["hv02"]["lookups"]["checks"]:
        if entry["actual"].get("iif") == "nic5":
            entry["actual"] = {"type": "refused", "reason": "not_forwarded", "iif": "nic5"}
            entry["msg"] = "default: returns arriving on nic5 are not forwarded: net.ipv4.conf.nic5.forwarding is 0"
    for tenant in TENANTS:
        for node in ("hv01", "hv03"):
            probe_target(facts, node, f"{tenant}-via-hv02", INTERNET).update(passed=False, received=0)
        # hv02's own workloads' answers land on hv02's nic5 too.
        probe_target(facts, "hv02", tenant, INTERNET).update(passed=False, received=0)
    report = reconcile(facts, NODES, settings(), None)
    assert failing(report) == sorted([(tenant, node, "return:hv02") for tenant in TENANTS for node in ("hv01", "hv03")]
                                     + [(tenant, "hv02", "internet") for tenant in TENANTS])
    assert {(node, subject) for node, subject, _ in findings_text(report)} == {("hv02", "net.ipv4.conf.nic5.forwarding")}
    assert "net.ipv4.conf.nic5.forwarding=1 on hv02" in report["findings"][0]["fix"]


def rp_filter_on_hv03s_bridge() -> dict:
    """The fleet with rp_filter on hv03's vrfbr_tdemo: tdemo's returns through hv01 and hv02 lost."""
    facts = fleet()
    lookup_of(facts, "hv03", "vrf_tdemo", WORKLOAD[("tdemo", "hv03")], "vrfbr_tdemo")["actual"] = {
        "type": "refused", "reason": "reverse_path", "iif": "vrfbr_tdemo"}
    for landing in ("hv01", "hv02"):
        probe_target(facts, "hv03", f"tdemo-via-{landing}", INTERNET).update(passed=False, received=0)
    return facts


def test_rp_filter_on_one_l3vni_bridge_names_only_the_returns_landing_there():
    report = reconcile(rp_filter_on_hv03s_bridge(), NODES, settings(), None)
    assert failing(report) == [("tdemo", "hv03", "return:hv01"), ("tdemo", "hv03", "return:hv02")]
    assert {(node, subject) for node, subject, _ in findings_text(report)} == {
        ("hv03", "net.ipv4.conf.vrfbr_tdemo.rp_filter")}


def test_a_route_leaked_between_tenants_is_named_with_the_route():
    facts = fleet()
    leaked = WORKLOAD[("tother", "hv01")]
    lookup_of(facts, "hv01", "vrf_tdemo", leaked)["actual"] = route("tother0")
    probe_target(facts, "hv01", "tdemo", leaked).update(passed=False, received=3, answered_by=leaked)
    report = reconcile(facts, NODES, settings(), None)
    assert failing(report) == [("tdemo", "hv01", "tenant:tother")]
    (node, subject, text), = findings_text(report)
    assert (node, subject) == ("hv01", f"route {leaked} in vrf_tdemo")
    assert "a route leaked between tenants" in text and "tother0" in text


def test_a_vrf_without_its_default_leaves_untranslated_by_the_management_side():
    facts = fleet()
    for dst in (INTERNET, "198.51.100.5"):
        fell = route("vmbr0", table=254, via="198.51.100.5", fall_through=True)
        lookup_of(facts, "hv03", "vrf_tdemo", dst)["actual"] = fell
    for probe in ("tdemo", "tdemo-via-hv01", "tdemo-via-hv02"):
        probe_target(facts, "hv03", probe, INTERNET).update(passed=False, received=0, left_by=["vmbr0"])
    report = reconcile(facts, NODES, settings(), None)
    # The pair workloads' requests leave the same way: their returns never come.
    assert failing(report) == [("tdemo", "hv03", column) for column in ("internet", "management", "return:hv01",
                                                                        "return:hv02")]
    texts = {text for _, _, text in findings_text(report)}
    assert any("falls through to the main table" in text and "vmbr0 untranslated" in text for text in texts)
    assert any("on the management side by vmbr0" in text for text in texts)
    assert {node for node, _, _ in findings_text(report)} == {"hv03"}


def test_a_small_underlay_mtu_fails_only_the_full_size_cells_of_that_direction():
    facts = fleet()
    dropped = probe_target(facts, "hv01", "tdemo", WORKLOAD[("tdemo", "hv02")], size="mtu")
    dropped.update(passed=False, received=0)
    facts["hv01"]["probe"]["probes"][0]["msg"] = (
        f"tdemo: {WORKLOAD[('tdemo', 'hv02')]} icmp 1450 bytes: a DF probe of 1450 bytes got 0/3 replies and no "
        "fragmentation-needed came back: silently dropped")
    report = reconcile(facts, NODES, settings(), None)
    assert failing(report) == [("tdemo", "hv01", "peer-df:hv02")]
    (node, _, text), = findings_text(report)
    assert node == "hv01" and "silently dropped" in text
    assert "MTU" in report["findings"][0]["fix"]


def test_a_node_not_reloaded_is_named_by_the_version_and_its_drift():
    facts = fleet()
    facts["hv01"]["sdn"]["version"] = {"running": 7, "applied": 6}
    facts["hv01"]["sdn"]["drift"] = [{"object": "tother0", "declared": "bridge in vrf_tother", "found": "absent",
                                      "fix": f"re-create it: {reload_advice('this node')}"}]
    report = reconcile(facts, NODES, settings(), None)
    assert failing(report) == []
    failed = {check["id"]: check for check in report["checks"] if not check["ok"]}
    assert sorted(failed) == ["sdn_drift", "sdn_version"]
    assert failed["sdn_version"]["text"] == "hv01 applied SDN version 6, the cluster runs 7"
    # The fix names the node and gives the one advice: the preview, then the guarded change.
    (version,) = [report["findings"][int(ident[1:]) - 1] for ident in failed["sdn_version"]["findings"]]
    assert version["fix"] == f"apply the SDN on hv01: {reload_advice('hv01')}"
    assert "first see what a reload of hv01's network would change" in version["fix"]
    assert "declared bridge in vrf_tother, found absent" in failed["sdn_drift"]["text"]


def test_a_vni_missing_on_one_node_fails_the_vtep_cross_check_where_it_is_seen():
    facts = fleet()
    facts["hv02"]["evpn"]["vnis"] = [vni for vni in facts["hv02"]["evpn"]["vnis"] if vni["vni"] != 11001] + [
        {"vni": 11001, "type": None, "vrf": None, "remote_vteps": []}]
    for node in ("hv01", "hv03"):
        for vni in facts[node]["evpn"]["vnis"]:
            if vni["vni"] == 11001:
                vni["remote_vteps"].remove(VTEP["hv02"])
    report = reconcile(facts, NODES, settings(), None)
    mesh = next(check for check in report["checks"] if check["id"] == "vtep_mesh")
    assert not mesh["ok"]
    texts = [report["findings"][int(ident[1:]) - 1]["text"] for ident in mesh["findings"]]
    assert texts == ["hv01's VNI 11001 does not know hv02's VTEP 198.51.100.132",
                     "VNI 11001 of tdemo is missing on hv02",
                     "hv03's VNI 11001 does not know hv02's VTEP 198.51.100.132"]
    missing = [finding["fix"] for finding in report["findings"] if finding["text"] == "VNI 11001 of tdemo is missing on hv02"]
    assert missing == [f"re-create its devices: {reload_advice('hv02')}"]
    # The peers toward hv02 are predicted lost: the observation (still passing here) disagrees.
    assert ("tdemo", "hv01", "peer:hv02") in failing(report)
    # No other node learns where hv02's workloads are: their returns through hv01 and hv03 are lost.
    assert {("tdemo", "hv02", "return:hv01"), ("tdemo", "hv02", "return:hv03")} <= set(failing(report))
    assert not {("tdemo", "hv01", "return:hv02"), ("tdemo", "hv03", "return:hv02")} & set(failing(report))


def test_a_return_landing_without_the_workload_s_vni_asks_for_the_one_advice():
    tenant = {"name": "tdemo", "vni": 11001}
    evpn = {"vnis": [{"vni": 11001, "type": None}]}
    node = fleet_proof._node_context("hv02", {"evpn": evpn})
    ((where, verdict, text, problem),) = fleet_proof._advertised(tenant, node)
    assert (where, verdict, text) == ("hv02", "blocked", "VNI 11001 of tdemo is missing on hv02")
    assert problem == ("VNI 11001", text, f"re-create its devices: {reload_advice('hv02')}")
    evpn["vnis"][0]["type"] = "L2"
    assert fleet_proof._advertised(tenant, fleet_proof._node_context("hv02", {"evpn": evpn}))[0][3] is None


def test_prediction_and_observation_disagreeing_is_a_finding():
    facts = fleet()
    lookup_of(facts, "hv02", "vrf_tother", INTERNET)["actual"] = {"type": "refused", "reason": "unreachable"}
    report = reconcile(facts, NODES, settings(), None)
    assert failing(report) == [("tother", "hv02", column) for column in ("internet", "return:hv01", "return:hv03")]
    texts = [text for _, _, text in findings_text(report)]
    assert any("prediction and observation disagree" in text for text in texts)


def test_a_node_not_reached_fails_its_check_and_has_no_cells():
    facts = fleet()
    facts["hv03"] = {"reached": False}
    report = reconcile(facts, NODES, settings(), None)
    reached = next(check for check in report["checks"] if check["id"] == "nodes_reached")
    assert not reached["ok"] and "hv03 was not reached" in reached["text"]
    assert {cell["node"] for cell in every_cell(report)} == {"hv01", "hv02"}
    assert [node["reached"] for node in report["nodes"]] == [True, True, False]


# The plan each node gets.

def test_the_plan_gives_each_node_its_lookups_and_probes_for_every_class_and_peer():
    facts = {node: {"sdn": healthy_node(node)["sdn"], "uplinks": ["nic5"], "management": "vmbr0"} for node in NODES}
    made = plan(facts, NODES, "hv02", settings())
    assert [tenant["workload"] for tenant in made["tenants"]] == ["192.0.2.253", "10.30.1.253"]
    assert made["vnis"] == [{"vni": 10001}, {"vni": 10002}, {"vni": 11001}, {"vni": 11002}]
    tdemo = made["vrfs"][0]
    assert tdemo["name"] == "vrf_tdemo"
    assert {"dst": "192.0.2.253", "src": INTERNET, "iif": "vrfbr_tdemo", "table": "any"} in tdemo["lookups"]
    default = made["vrfs"][-1]
    assert default["name"] == "default"
    assert {"dst": "192.0.2.254", "src": INTERNET, "iif": "nic5", "table": "any"} in default["lookups"]
    probe = made["probes"][0]
    assert probe["address"] == "192.0.2.253/24" and probe["forbidden_interfaces"] == ["vmbr0"]
    assert {"address": "192.0.2.254", "proto": "icmp", "expect": "reply", "peer": True, "via": "vxlan_tdemo0",
            "size": "mtu"} in probe["targets"]
    assert {"address": "10.30.1.253", "proto": "icmp", "expect": "blocked"} in probe["targets"]
    assert [p["name"] for p in made["probes"]] == ["tdemo", "tdemo-via-hv01", "tdemo-via-hv03",
                                                   "tother", "tother-via-hv01", "tother-via-hv03"]


def sdn_only(nodes: list, tenants: dict) -> dict:
    """What the plan reads of each node: its SDN with `tenants` (each on every node), its uplink."""
    return {node: {"sdn": {"zones": [zone(name, node, tenants) for name in tenants]}, "uplinks": ["nic5"],
                   "reached": True} for node in nodes}


# Two tenants numbered alike: each its own VRF and VNet, one subnet and gateway.
ALIKE = {"tdemo": TENANTS["tdemo"], "tother": dict(TENANTS["tother"], cidr="192.0.2.0/24", gateway="192.0.2.1")}


def test_tenants_numbered_alike_get_workloads_of_their_own_and_never_probe_their_own_address():
    facts, held = sdn_only(NODES, ALIKE), {}
    for node in NODES:
        made = plan(facts, NODES, node, settings(return_landing=landing_of(ALIKE)))
        for tenant in made["tenants"]:
            held.setdefault(tenant["name"], set()).add(tenant["workload"])
        addresses = [probe["address"].split("/")[0] for probe in made["probes"]]
        # egress_probe refuses a run where two workloads share an address.
        assert len(set(addresses)) == len(addresses), (node, addresses)
    mine = {name: addresses | {address for by_node in landing_of(ALIKE)[name].values() for address in by_node.values()}
            for name, addresses in held.items()}
    assert not mine["tdemo"] & mine["tother"]
    assert held == {"tdemo": {"192.0.2.254", "192.0.2.253", "192.0.2.252"},
                    "tother": {"192.0.2.251", "192.0.2.250", "192.0.2.249"}}
    for node in NODES:
        for probe in plan(facts, NODES, node, settings(return_landing=landing_of(ALIKE)))["probes"]:
            tenant = probe["name"].split("-via-")[0]
            blocked = {target["address"] for target in probe["targets"] if target["expect"] == "blocked"}
            # A blocked target one of the tenant's own workloads holds would answer it.
            assert not blocked & mine[tenant], (node, probe["name"])
            assert probe["address"].split("/")[0] not in {target["address"] for target in probe["targets"]}


def test_egress_probe_takes_each_node_s_run_of_tenants_numbered_alike(node, tmp_path):
    """egress_probe's own refusal rules on the plan: each node's run gets past its arguments and
    stops only where the namespace has no VRF (nothing is probed)."""
    facts = sdn_only(NODES, ALIKE)
    for name in NODES:
        made = plan(facts, NODES, name, settings(return_landing=landing_of(ALIKE)))
        args = tmp_path / f"{name}.json"
        args.write_text(json.dumps({"probes": made["probes"], "count": made["count"], "timeout": made["timeout"],
                                    "start_at": time.time()}))
        done = subprocess.run(["ip", "netns", "exec", node.netns, str(ROOT / "target" / "release" / "egress_probe"),
                               str(args)], capture_output=True, text=True, check=False)
        result = json.loads(done.stdout)
        assert result["failed"] and result["msg"].startswith(
            "probes[0] (tdemo): vrf: vrf_tdemo does not exist on this node"), (name, result["msg"])


def test_tenants_numbered_alike_are_reconciled_each_with_its_own_workloads():
    facts = sdn_only(NODES, ALIKE)
    report = reconcile(facts, NODES, settings(return_landing=landing_of(ALIKE)), None)
    tother = {cell["target"] for cell in report["cells"] if cell["tenant"] == "tdemo" and cell["node"] == "hv01"
              and cell["column"] == "tenant:tother"}
    assert tother == {"192.0.2.251"}


@pytest.mark.parametrize("where, given, words", [
    ("workload_addresses", {"tdemo": {"hv01": "192.0.2.9"}, "tother": {"hv02": "192.0.2.9"}},
     "workload_addresses.tother.hv02 is '192.0.2.9'; it is tdemo's workload on hv01, and two holders"),
    ("workload_addresses", {"tother": {"hv01": "192.0.2.1"}}, "workload_addresses.tother.hv01 is '192.0.2.1'; "
                                                               "it is tdemo's gateway"),
    ("workload_addresses", {"tother": {"hv01": "192.0.2.255"}}, "workload_addresses.tother.hv01 is '192.0.2.255'; "
                                                                 "it is the broadcast address of 192.0.2.0/24"),
    ("workload_addresses", {"tother": {"hv01": "10.9.9.9"}}, "workload_addresses.tother.hv01 is '10.9.9.9'; give a "
                                                              "host address of tother's subnet 192.0.2.0/24"),
    ("workload_addresses", {"tother": {"hv01": "a.b"}}, "workload_addresses.tother.hv01 is 'a.b'; give one IP address"),
    ("workload_addresses", {"tother": ["192.0.2.9"]}, "workload_addresses.tother is ['192.0.2.9']; give a dict"),
    ("return_landing", {"tother": {"hv01": {"hv02": "192.0.2.201"}}, "tdemo": {"hv03": {"hv01": "192.0.2.201"}}},
     "return_landing.tdemo.hv03.hv01 is '192.0.2.201'; it is tother's workload on hv01 returning via hv02"),
])
def test_workloads_given_by_hand_that_would_collide_are_refused_naming_the_setting(where, given, words):
    bad = dict(SETTINGS, **{where: given})
    with pytest.raises(AnsibleFilterError, match=re.escape(f"fleet_proof_plan: settings.{words}")):
        plan(sdn_only(NODES, ALIKE), NODES, "hv01", bad)


def test_an_address_given_by_hand_is_skipped_by_the_workloads_counted_down():
    given = {"tother": {"hv02": "192.0.2.254"}}
    made = [plan(sdn_only(NODES, ALIKE), NODES, node, settings(workload_addresses=given, return_landing={}))["tenants"]
            for node in NODES]
    assert [[tenant["workload"] for tenant in tenants] for tenants in made] == [
        ["192.0.2.253", "192.0.2.250"], ["192.0.2.252", "192.0.2.254"], ["192.0.2.251", "192.0.2.249"]]


def small(cidr: str, gateway: str) -> dict:
    return {"tdemo": dict(TENANTS["tdemo"], cidr=cidr, gateway=gateway)}


@pytest.mark.parametrize("cidr, gateway, count, workloads", [
    ("192.0.2.0/29", "192.0.2.1", 5, ["192.0.2.6", "192.0.2.5", "192.0.2.4", "192.0.2.3", "192.0.2.2"]),
    ("192.0.2.0/29", "192.0.2.6", 5, ["192.0.2.5", "192.0.2.4", "192.0.2.3", "192.0.2.2", "192.0.2.1"]),
    ("192.0.2.0/29", "192.0.2.3", 2, ["192.0.2.6", "192.0.2.5"]),
    ("192.0.2.0/30", "192.0.2.1", 1, ["192.0.2.2"]),
    ("192.0.2.0/30", "192.0.2.2", 1, ["192.0.2.1"]),
])
def test_workloads_are_hosts_of_the_subnet_never_its_gateway_network_or_broadcast(cidr, gateway, count, workloads):
    nodes = [f"hv{i:02d}" for i in range(1, count + 1)]
    made = [plan(sdn_only(nodes, small(cidr, gateway)), nodes, node, settings(return_landing={}))["tenants"][0]
            for node in nodes]
    assert [tenant["workload"] for tenant in made] == workloads


@pytest.mark.parametrize("cidr, gateway, count, words", [
    ("192.0.2.0/29", "192.0.2.1", 7, "is '192.0.2.0/29'; it has no host left for the proof's workload on hv06: "
                                     "its 5 hosts beside the gateway hold tdemo's workload on hv01, "),
    ("192.0.2.0/29", "192.0.2.6", 6, "it has no host left for the proof's workload on hv06"),
    ("192.0.2.0/30", "192.0.2.1", 2, "is '192.0.2.0/30'; it has no host left for the proof's workload on hv02: "
                                     "its 1 host beside the gateway hold tdemo's workload on hv01;"),
    ("192.0.2.0/31", "192.0.2.0", 1, "is '192.0.2.0/31'; a workload needs a /30 or shorter"),
    ("192.0.2.1/32", "192.0.2.1", 1, "is '192.0.2.1/32'; a workload needs a /30 or shorter"),
])
def test_a_subnet_too_small_for_the_nodes_workloads_is_refused_naming_it_and_the_fix(cidr, gateway, count, words):
    nodes = [f"hv{i:02d}" for i in range(1, count + 1)]
    with pytest.raises(AnsibleFilterError, match=re.escape(words)) as refused:
        plan(sdn_only(nodes, small(cidr, gateway)), nodes, "hv01", settings(return_landing={}))
    assert "fleet_proof_plan: the subnet of tenant tdemo (VNet tdemo0)" in str(refused.value)
    assert "fabric_proof_hosts" in str(refused.value)


@pytest.mark.parametrize("given, words", [
    ({"internet": []}, "settings.internet is None; give at least one internet target"),
    ({"internet": ["example.org"]}, "settings.internet[0].address is 'example.org'; give one IP address"),
    ({"internet": [{"address": INTERNET, "proto": "tcp"}]}, "settings.internet[0].port is None; a tcp target needs"),
    ({"count": 0}, "settings.count is 0; give a whole number from 1 to 10"),
    ({"management": "198.51.100.5"}, "settings.management is '198.51.100.5'; give a list of addresses"),
])
def test_bad_settings_are_refused_naming_the_key_and_the_fix(given, words):
    bad = dict(SETTINGS, **given)
    if given.get("internet") == []:
        bad["internet"] = None
    with pytest.raises(AnsibleFilterError, match="fleet_proof_plan: " + words.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        plan({"hv01": {}}, ["hv01"], "hv01", bad)


# Source NAT, as vrf_route_assert predicts it on each node for the lookups' snat_src.

def test_each_tenant_lookup_asks_whether_its_workload_leaves_source_translated():
    facts = {node: {"sdn": healthy_node(node)["sdn"], "uplinks": ["nic5"]} for node in NODES}
    made = plan(facts, NODES, "hv02", settings())
    for vrf, tenant in zip(made["vrfs"], made["tenants"]):
        output = [lookup for lookup in vrf["lookups"] if "iif" not in lookup]
        assert {lookup["dst"] for lookup in output} == {INTERNET, "198.51.100.5"} | {
            other["workload"] for other in made["tenants"] if other is not tenant}
        assert {lookup["snat_src"] for lookup in output} == {tenant["workload"]}
    assert all("snat_src" not in lookup for lookup in made["vrfs"][-1]["lookups"])


def snat_answers(facts: dict, node: str, vrf: str, translated, why: str) -> None:
    for entry in facts[node]["lookups"]["checks"]:
        if entry["vrf"] == vrf and "snat" in entry["actual"]:
            entry["actual"]["snat"].update(translated=translated, why=why)


def test_a_tenant_whose_snat_the_ruleset_does_not_apply_is_named():
    facts = fleet()
    for node in NODES:
        for zone_entry in facts[node]["sdn"]["zones"]:
            zone_entry["vnets"][0]["subnets"][0]["snat"] = zone_entry["name"] == "tdemo"
    for node in ("hv01", "hv02"):
        snat_answers(facts, node, "vrf_tdemo", True, "a source NAT rule of ip nat POSTROUTING matches")
    for probe in ("tdemo", "tdemo-via-hv01", "tdemo-via-hv02"):
        probe_target(facts, "hv03", probe, INTERNET).update(passed=False, received=0)
    report = reconcile(facts, NODES, settings(), None)
    assert failing(report) == [("tdemo", "hv03", column) for column in ("internet", "return:hv01", "return:hv02")]
    (node, subject, text), = findings_text(report)
    assert (node, subject) == ("hv03", "nat nic5")
    assert "does not source-translate 192.0.2.0/24 leaving by nic5" in text
    assert report["findings"][0]["fix"] == (
        f"apply the SDN again so that Proxmox's SNAT rule for 192.0.2.0/24 matches: {reload_advice('hv03')}")
    # The prediction that the ruleset translates tdemo's workload agrees with its snat: a pass, kept
    # in the summary of passing cells by its key alone.
    assert ProofCells(report).get(("tdemo", "hv01", "internet"))["verdict"] == "pass"
    assert not any(cell["verdict"] == "pass" for cell in report["cells"])


@pytest.mark.parametrize("snat", [
    {"translated": None, "why": "not evaluated: chain ip nat POSTROUTING: rule handle 4: a match on ct mark"},
    None,
])
def test_a_source_nat_the_node_could_not_predict_is_unknown_never_no_nat(snat):
    facts = fleet()
    for node in NODES:
        for zone_entry in facts[node]["sdn"]["zones"]:
            zone_entry["vnets"][0]["subnets"][0]["snat"] = True
    for entry in facts["hv01"]["lookups"]["checks"]:
        if "snat" in entry["actual"]:
            if snat is None:
                del entry["actual"]["snat"]
            else:
                entry["actual"]["snat"].update(snat)
    report = reconcile(facts, NODES, settings(), None)
    # Not predicted is no claim either way: the observation decides, and it passed (a passing cell
    # is kept in the summary by its key alone).
    assert ProofCells(report).get(("tdemo", "hv01", "internet"))["verdict"] == "pass"
    # hv02's answers say no NAT while the subnet's snat is on: named; hv01's unknown is not.
    assert {node for node, subject, _ in findings_text(report) if subject == "nat nic5"} == {"hv02", "hv03"}


def test_the_gathered_facts_come_from_the_registered_results_and_unreached_nodes_are_marked():
    hostvars = {
        "hv01": {"fabric_proof_sdn": {"zones": [], "version": {"running": 7, "applied": 7}},
                 "fabric_proof_evpn": {"skipped": True, "changed": False},
                 "fabric_proof_uplinks": ["nic5"], "fabric_proof_exit": True},
        "hv02": {"fabric_proof_sdn": {"failed": True, "msg": "no /etc/pve/sdn"}},
    }
    facts = fleet_proof.fleet_proof_facts(hostvars, ["hv01", "hv02", "hv03"])
    assert facts["hv01"]["reached"] and facts["hv01"]["evpn"] is None
    assert "nft" not in facts["hv01"]
    assert (facts["hv01"]["uplinks"], facts["hv01"]["management"], facts["hv01"]["exit"]) == (["nic5"], "vmbr0", True)
    assert [facts[node]["reached"] for node in ("hv02", "hv03")] == [False, False]


def test_a_report_is_held_against_what_a_known_fault_may_fail():
    report = reconcile(rp_filter_on_hv03s_bridge(), NODES, settings(), None)
    expected = {"cells": {"hv03": "^return:hv0[12]$"}, "findings": {"hv03": r"\.rp_filter$"}, "checks": []}
    assert fleet_proof.fleet_report_unexpected(report, expected) == []
    assert fleet_proof.fleet_report_unexpected(report, dict(expected, cells={"hv03": "^return:hv01$"})) == [
        "cell tdemo@hv03 return:hv02: fail"]
    stray, missing = fleet_proof.fleet_report_unexpected(report, dict(expected, findings={"hv02": "."}))
    assert stray.startswith("finding hv03 net.ipv4.conf.vrfbr_tdemo.rp_filter: ")
    assert missing == "no finding on hv02"
    healthy = reconcile(fleet(), NODES, settings(), None)
    assert fleet_proof.fleet_report_unexpected(healthy, expected) == ["no failing cell on hv03", "no finding on hv03"]
    assert fleet_proof.fleet_report_unexpected(healthy, {"checks": ["sdn_version"]}) == [
        "fleet checks failed [], expected ['sdn_version']"]


def test_every_renderer_reads_the_reconciled_report():
    report_filters = filter_plugin("fleet_report")
    report = reconcile(rp_filter_on_hv03s_bridge(), NODES, settings(), "2026-12-06T10:00:00Z")
    matrix = report_filters.fleet_report_matrix(report)
    assert "internet" in matrix[0] and "via hv03" in matrix[0]
    assert any(line.startswith("tdemo@hv03") and "FAIL F1" in line for line in matrix)
    assert any(line.startswith("F1 hv03 net.ipv4.conf.vrfbr_tdemo.rp_filter") for line in matrix)
    diff = report_filters.fleet_report_diff(report, reconcile(fleet(), NODES, settings(), "2026-12-05T10:00:00Z"))
    assert len(diff) == 2 and all(line.startswith("tdemo@hv03 via hv0") for line in diff)
    assert "<failure" in report_filters.fleet_report_junit(report)
    assert 'id="F1"' in report_filters.fleet_report_html(report)


def test_each_tenant_probes_the_next_tenants_around_the_ring_within_the_run_s_limits():
    tenants = {name: {"name": name, "workload": f"10.0.{i}.9"} for i, name in enumerate(["a", "b", "c", "d"])}
    assert [t["name"] for t in fleet_proof.isolation_peers(tenants["c"], tenants, 2)] == ["d", "a"]
    assert fleet_proof.isolation_peers(tenants["a"], tenants, 0) == []
    facts = {node: {"sdn": healthy_node(node)["sdn"], "uplinks": ["nic5"]} for node in NODES}
    with pytest.raises(AnsibleFilterError, match="probe tdemo would have 34 targets, more than the 32 of one probe"):
        plan(facts, NODES, "hv01", dict(SETTINGS, internet=[f"203.0.113.{i}" for i in range(1, 29)]))


def test_a_node_that_began_probing_after_the_window_is_a_fleet_finding():
    facts = fleet()
    facts["hv02"]["probe"]["start_late_secs"] = 4.5
    facts["hv01"]["probe"]["start_late_secs"] = 1.0
    report = reconcile(facts, NODES, settings(), None)
    window = next(check for check in report["checks"] if check["id"] == "start_window")
    assert not window["ok"]
    assert window["text"] == "hv02 began probing 4.5 s after the shared start, later than the 4 s its peers wait"
    assert "forks at least the node count" in report["findings"][0]["fix"]


def test_a_module_that_gave_no_result_on_a_node_is_named_with_its_message():
    facts = fleet()
    facts["hv02"]["probe"] = {"failed": True, "msg": "probes[0].vrf: missing; give the tenant's VRF"}
    report = reconcile(facts, NODES, settings(), None)
    reached = next(check for check in report["checks"] if check["id"] == "nodes_reached")
    assert reached["text"] == "hv02: egress_probe gave no result: probes[0].vrf: missing; give the tenant's VRF"
    assert {cell["verdict"] for cell in report["cells"] if cell["node"] == "hv02"} == {"not_run"}


def test_an_l3_vni_without_next_hops_is_not_a_missing_vtep():
    facts = fleet()
    for node in NODES:
        for vni in facts[node]["evpn"]["vnis"]:
            if vni["type"] == "L3":
                vni["remote_vteps"] = []
    report = reconcile(facts, NODES, settings(), None)
    assert next(check for check in report["checks"] if check["id"] == "vtep_mesh")["ok"]


def test_a_zone_a_node_has_not_reloaded_yet_is_not_proven_there_the_version_and_drift_name_it():
    """Between an SDN apply's waves: the cluster runs version 8 with a third tenant; hv01 reloaded
    it, hv02 and hv03 still run version 7 and have no VRF of it. They are proven as they run (no
    probe for a VRF they lack, which would fail their whole probe run), hv01's tenant has no peers
    there yet, and the fleet checks name hv02 and hv03."""
    third = {"vrf": "vrf_tnew", "l3vni": 10003, "vnet": "tnew0", "vni": 11003, "cidr": "10.30.2.0/24",
             "gateway": "10.30.2.1"}
    tenants = dict(TENANTS, tnew=third)
    facts = fleet()
    for node in NODES:
        facts[node]["sdn"]["zones"].append(zone("tnew", node, tenants))
        facts[node]["sdn"]["version"] = {"running": 8, "applied": 8 if node == "hv01" else 7}
    # hv01's EVPN has the new VNIs, with no remote VTEP yet: no other node has them.
    facts["hv01"]["evpn"]["vnis"] += [{"vni": vni, "type": kind, "vrf": "vrf_tnew", "remote_vteps": []}
                                      for vni, kind in ((10003, "L3"), (11003, "L2"))]
    for node in ("hv02", "hv03"):
        facts[node]["sdn"]["drift"] = [
            {"object": device, "declared": f"a {kind} device: {role}", "found": "no such device", "fix": "reload"}
            for device, kind, role in (("vrf_tnew", "vrf", "the VRF of zone tnew"),
                                       ("tnew0", "bridge", "the bridge of VNet tnew0 (zone tnew)"))]
    # A node that reloaded but lost the VRF is not excused: only a node behind the cluster's version is.
    facts_lost = json.loads(json.dumps(facts))
    facts_lost["hv03"]["sdn"]["version"] = {"running": 8, "applied": 8}
    for node in ("hv02", "hv03"):
        assert [t["name"] for t in plan(facts, NODES, node, settings())["tenants"]] == ["tdemo", "tother"]
        assert all(probe["vrf"] != "vrf_tnew" for probe in plan(facts, NODES, node, settings())["probes"])
    mine = plan(facts, NODES, "hv01", settings())
    assert [t["name"] for t in mine["tenants"]] == ["tdemo", "tother", "tnew"]
    (tnew,) = [probe for probe in mine["probes"] if probe["name"] == "tnew"]
    assert not [t for t in tnew["targets"] if t.get("peer")]
    # The other tenants of hv01 must not reach tnew's workload there.
    (tdemo,) = [probe for probe in mine["probes"] if probe["name"] == "tdemo"]
    assert {"address": "10.30.2.254", "proto": "icmp", "expect": "blocked"} in tdemo["targets"]
    assert [t["name"] for t in plan(facts_lost, NODES, "hv03", settings())["tenants"]] == ["tdemo", "tother", "tnew"]
    report = reconcile(facts, NODES, settings(), None)
    assert sorted({(cell["tenant"], cell["node"]) for cell in report["cells"] if cell["tenant"] == "tnew"}) == [
        ("tnew", "hv01")]
    assert not [cell for cell in report["cells"] if cell["tenant"] == "tnew" and cell["column"].startswith("peer")]
    failed = {check["id"]: check for check in report["checks"] if not check["ok"]}
    assert sorted(failed) == ["sdn_drift", "sdn_version"]
    named = {report["findings"][int(ident[1:]) - 1]["node"] for check in failed.values() for ident in check["findings"]}
    assert named == {"hv02", "hv03"}


def tenant_zone_rolled_out(monkeypatch) -> tuple:
    """An SDN apply that adds the tenant zone tnew: (baseline, after, canary) - the proof from
    before the apply, and the fleet as its nodes report it after the last wave and after the
    canary's wave (hv01 reloaded, hv02 and hv03 waiting: their version and drift lag, and hv01's
    returns of tnew through them fail)."""
    baseline = reconcile(fleet(), NODES, settings(), None)
    monkeypatch.setitem(TENANTS, "tnew", {"vrf": "vrf_tnew", "l3vni": 10003, "vnet": "tnew0", "vni": 11003,
                                          "cidr": "10.30.2.0/24", "gateway": "10.30.2.1"})
    for index, node in enumerate(NODES):
        monkeypatch.setitem(WORKLOAD, ("tnew", node), f"10.30.2.{254 - index}")
    monkeypatch.setitem(LANDING, "tnew", {node: {other: f"10.30.2.2{i + 1}{j + 1}" for j, other in enumerate(NODES)
                                                 if other != node} for i, node in enumerate(NODES)})
    rolled_out = fleet()
    canary = json.loads(json.dumps(rolled_out))
    for node in ("hv02", "hv03"):
        canary[node]["sdn"]["version"] = {"running": 8, "applied": 7}
        # sdn_check's word: hv02's and hv03's generated files from version 7 lack vrf_tnew.
        canary[node]["sdn"]["drift"] = [{"object": "vrf_tnew", "declared": "a vrf device: the VRF of zone tnew",
                                         "found": "no such device", "fix": "reload", "awaits_reload": True}]
        canary[node]["probe"]["probes"] = [p for p in canary[node]["probe"]["probes"] if not p["name"].startswith("tnew")]
        canary[node]["evpn"]["vnis"] = [vni for vni in canary[node]["evpn"]["vnis"] if vni["vrf"] != "vrf_tnew"]
    canary["hv01"]["sdn"]["version"] = {"running": 8, "applied": 8}
    for vni in canary["hv01"]["evpn"]["vnis"]:
        if vni["vrf"] == "vrf_tnew":
            vni["remote_vteps"] = []
    for probe in canary["hv01"]["probe"]["probes"]:
        if probe["name"] in ("tnew-via-hv02", "tnew-via-hv03"):
            probe["verdict"] = "failed"
            probe["targets"] = [target(INTERNET, "reply", passed=False)]
    return baseline, rolled_out, canary


def test_a_tenant_zone_rolled_out_in_waves_is_held_against_the_baseline_with_only_the_later_waves_lag(monkeypatch):
    """The proofs of an SDN apply that adds a tenant zone, held against the proof from before
    (fabric_change_compare, as the guarded change holds each wave's): after the canary's wave
    nothing regresses, only the later waves' lag (SDN version and drift on hv02 and hv03) and the
    new tenant's returns through them are expected; after the last wave the proof holds."""
    compare = filter_plugin("fabric_change").fabric_change_compare
    baseline, rolled_out, canary = tenant_zone_rolled_out(monkeypatch)
    final = compare(reconcile(rolled_out, NODES, settings(), None), baseline, [])
    assert final["equal"] and final["expected"] == []
    doc = reconcile(canary, NODES, settings(), None)
    assert failing(doc) == [("tnew", "hv01", "return:hv02"), ("tnew", "hv01", "return:hv03")]
    compared = compare(doc, baseline, ["hv02", "hv03"])
    assert compared["regressions"] == [] and compared["newly_failing"] == [] and compared["equal"]
    assert len(compared["expected_lines"]) == 4
    assert all(line.startswith("expected while hv02, hv03 run the SDN version from before the commit: ")
               for line in compared["expected_lines"])
    # hv03 lost a VRF its own applied version has (vrf_tdemo): drift from before the new version,
    # a regression though hv03 waits for its wave.
    canary["hv03"]["sdn"]["drift"].append({"object": "vrf_tdemo", "declared": "a vrf device: the VRF of zone tdemo",
                                           "found": "no such device", "fix": "reload", "awaits_reload": False})
    lost = compare(reconcile(canary, NODES, settings(), None), baseline, ["hv02", "hv03"])
    assert [entry["check"] for entry in lost["regressions"] if entry["what"] == "check"] == ["sdn_drift"]
