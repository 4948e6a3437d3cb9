"""The fabric proof's document with its cells summarised (plugin_utils/fabric_proof_cells.py):
every renderer, the diff against a kept report and the guarded change's comparison read the
summarised document exactly as the same document with every cell listed."""
from __future__ import annotations

import copy
import re

import pytest
from ansible.errors import AnsibleFilterError

from conftest import filter_plugin, plugin_utils
from test_fleet_proof import NODES, WORKLOAD, fleet, lookup_of, probe_target, settings, tenant_zone_rolled_out

cells_module = plugin_utils("fabric_proof_cells")
fleet_proof = filter_plugin("fleet_proof")
fleet_report = filter_plugin("fleet_report")
fabric_change = filter_plugin("fabric_change")
INTERNET = "203.0.113.8"


def listed_whole(report: dict) -> dict:
    """The same document with every cell in `cells` and no summary."""
    cells = cells_module.ProofCells(report)
    whole = {key: value for key, value in report.items() if key not in ("passed", "unobserved")}
    whole["cells"] = [cells.get(key) for key in cells.keys()]
    return whole


def proven(fault=None, **given) -> dict:
    facts = fleet()
    if fault:
        fault(facts)
    return fleet_proof.fleet_proof_reconcile(facts, NODES, settings(**given), "2026-12-07T10:00:00Z")


def forwarding_off_on_hv02(facts: dict) -> None:
    lookup_of(facts, "hv02", "default", WORKLOAD[("tdemo", "hv01")], "nic5")["actual"].update(
        type="refused", reason="not_forwarded")
    probe_target(facts, "hv01", "tdemo-via-hv02", INTERNET).update(passed=False, received=0)


def peer_lost(facts: dict) -> None:
    probe_target(facts, "hv03", "tother", WORKLOAD[("tother", "hv01")]).update(passed=False, received=0)


@pytest.mark.parametrize("text, indexes", [("", []), ("0", [0]), ("0-2,5", [0, 1, 2, 5]), ("3-4,7-9", [3, 4, 7, 8, 9])])
def test_indexes_are_kept_as_ranges_and_read_back(text, indexes):
    assert cells_module.pass_ranges(indexes) == text
    assert cells_module.range_indexes(text, 10) == indexes


@pytest.mark.parametrize("text", ["a", "3-1", "0-10", "1,", "-2", 5])
def test_ranges_that_are_not_the_tenants_indexes_are_refused(text):
    with pytest.raises(ValueError):
        cells_module.range_indexes(text, 10)


def test_passing_cells_are_summarised_and_failing_ones_kept_whole():
    report = proven(forwarding_off_on_hv02)
    assert report["passed"]["hv01"]["internet"] == "0-1"
    assert all(cell["verdict"] != "pass" for cell in report["cells"])
    cells = cells_module.ProofCells(report)
    assert len(cells) == report["summary"]["cells"] == 54
    assert cells.verdicts()["pass"] == report["summary"]["passed"]
    failed = cells.get(("tdemo", "hv01", "return:hv02"))
    assert failed["verdict"] == "fail" and failed["prediction"]["text"] and failed["observation"]["text"]


@pytest.mark.parametrize("fault", [None, forwarding_off_on_hv02, peer_lost])
def test_every_renderer_reads_the_summary_as_the_whole_list(fault):
    report = proven(fault, return_landing={})
    assert report["unobserved"], "the returns not made to land are summarised"
    whole = listed_whole(report)
    for render in (fleet_report.fleet_report_matrix, fleet_report.fleet_report_junit):
        assert render(report) == render(whole)
    earlier = proven(peer_lost if fault is not peer_lost else None, return_landing={})
    assert fleet_report.fleet_report_diff(report, earlier) == fleet_report.fleet_report_diff(whole, listed_whole(earlier))
    assert fleet_report.fleet_report_diff(report, listed_whole(earlier)) == fleet_report.fleet_report_diff(whole, earlier)


def test_the_diff_names_a_summarised_pass_that_fails_now_and_a_failure_that_passes_now():
    healthy, broken = proven(), proven(peer_lost)
    assert fleet_report.fleet_report_diff(broken, healthy) == [
        "tother@hv03 hv01: pass -> fail (F1 hv03 tother hv03 -> hv01: tother hv03 -> hv01: 0/3 replies, left by nic5)"]
    assert fleet_report.fleet_report_diff(healthy, broken) == [
        "tother@hv03 hv01: fail -> pass (was: hv03 tother hv03 -> hv01: tother hv03 -> hv01: 0/3 replies, left by nic5)"]


def test_the_diff_names_summarised_cells_added_and_removed():
    now, earlier = proven(), proven()
    del now["passed"]["hv02"]["internet"]
    earlier["passed"]["hv03"]["management"] = "1"
    now["summary"] = earlier["summary"] = {}
    assert fleet_report.fleet_report_diff(now, earlier) == [
        "tdemo@hv03 mgmt: added, pass", "tdemo@hv02 internet: removed (was pass)",
        "tother@hv02 internet: removed (was pass)"]


def test_a_summarised_pass_that_fails_now_is_a_regression_of_the_guarded_change():
    healthy, broken = proven(), proven(peer_lost)
    result = fabric_change.fabric_change_compare(broken, healthy)
    assert [(entry["where"], entry["before"], entry["now"]) for entry in result["regressions"]] == [
        ("tother@hv03 hv01", "pass", "fail")]
    assert result["nodes"] == ["hv03"]
    assert fabric_change.fabric_change_compare(healthy, broken)["equal"]
    assert fabric_change.fabric_change_compare(broken, listed_whole(healthy)) == result
    gone = copy.deepcopy(healthy)
    del gone["passed"]["hv02"]
    assert {(entry["node"], entry["now"]) for entry in fabric_change.fabric_change_compare(gone, healthy)[
        "regressions"]} == {("hv02", "absent")}


def failed_from_the_summary(report: dict, tenant: str, node: str, column: str) -> None:
    """Turns a summarised pass into a listed failing cell."""
    index = [entry["name"] for entry in report["tenants"]].index(tenant)
    passed = report["passed"][node]
    indexes = cells_module.range_indexes(passed[column], len(report["tenants"]))
    passed[column] = cells_module.pass_ranges(i for i in indexes if i != index)
    report["cells"].append({"tenant": tenant, "node": node, "column": column, "verdict": "fail", "findings": []})


def test_a_rollout_compare_on_the_summarised_proof_is_the_compare_on_the_whole_one(monkeypatch):
    """Between an SDN apply's waves (hv02 and hv03 pending) the summarised proof, its passes in
    ranges and only the new tenant's failing cells listed, is held against the summarised baseline
    exactly as the same documents with every cell listed: the same expected and regressions."""
    baseline, _rolled_out, canary = tenant_zone_rolled_out(monkeypatch)
    canary_doc = fleet_proof.fleet_proof_reconcile(canary, NODES, settings(), "2026-12-07T10:00:00Z")
    assert {(cell["tenant"], cell["node"], cell["column"]) for cell in canary_doc["cells"]} == {
        ("tnew", "hv01", "return:hv02"), ("tnew", "hv01", "return:hv03")}
    assert baseline["passed"]["hv02"]["internet"] == "0-1" and not baseline["cells"]
    # Besides: tnew failing on hv02 itself (new, on a pending node: expected) and tdemo's
    # summarised pass on hv02 failing (a known tenant: a regression though hv02 waits).
    lagging = copy.deepcopy(canary_doc)
    failed_from_the_summary(lagging, "tdemo", "hv02", "internet")
    lagging["cells"].append({"tenant": "tnew", "node": "hv02", "column": "internet", "verdict": "fail",
                             "findings": []})
    pending = ["hv02", "hv03"]
    compared = {}
    for name, now in (("canary", canary_doc), ("lagging", lagging)):
        compared[name] = fabric_change.fabric_change_compare(now, baseline, pending)
        assert fabric_change.fabric_change_compare(listed_whole(now), listed_whole(baseline), pending) == compared[name]
        assert fabric_change.fabric_change_compare(now, listed_whole(baseline), pending) == compared[name]
    assert compared["canary"]["equal"] and compared["canary"]["regressions"] == []
    assert sorted(entry.get("check") or entry["where"] for entry in compared["canary"]["expected"]) == [
        "sdn_drift", "sdn_version", "tnew@hv01 via hv02", "tnew@hv01 via hv03"]
    assert [entry["where"] for entry in compared["lagging"]["regressions"]] == ["tdemo@hv02 internet"]
    assert "tnew@hv02 internet" in [entry["where"] for entry in compared["lagging"]["expected"]]
    assert len(compared["lagging"]["expected"]) == 5 and compared["lagging"]["newly_failing"] == []


@pytest.mark.parametrize("key, value, words", [
    ("passed", {"hv01": {"internet": "0-7"}}, "doc.passed.hv01.internet is '0-7', '0-7' is not a range of the 2"),
    ("passed", {"hv01": {"internet": "1"}, "hv02": []}, "doc.passed.hv02 is [], not a dict"),
    ("passed", {"hv09": {"internet": "1"}}, "doc.passed.hv09 is 'internet', a node or column which"),
    ("unobserved", {"hv01": {"return:hv02": "0"}}, "doc.unobserved.hv01.return:hv02 is '0', not a dict of tenants"),
])
def test_a_summary_that_does_not_fit_the_document_is_refused_naming_it(key, value, words):
    report = proven(peer_lost)
    report[key] = value
    with pytest.raises(AnsibleFilterError, match=re.escape("fleet_report_matrix: " + words)):
        fleet_report.fleet_report_matrix(report)


def test_a_cell_both_listed_and_summarised_is_refused():
    report = proven(peer_lost)
    report["passed"]["hv03"]["peer:hv01"] = "0-1"
    with pytest.raises(AnsibleFilterError, match=r"doc\.passed\.hv03\.peer:hv01 is '0-1', cells already held"):
        fleet_report.fleet_report_html(report)
    with pytest.raises(AnsibleFilterError, match=r"baseline\.passed\.hv03\.peer:hv01 is '0-1'; cells already held"):
        fabric_change.fabric_change_compare(proven(), report)


def test_a_summarised_undecided_cell_is_unexpected_outside_what_a_fault_may_fail():
    report = proven(return_landing={})
    unexpected = fleet_proof.fleet_report_unexpected(report, {"cells": {}, "findings": {}, "checks": []})
    assert "cell tdemo@hv01 return:hv02: unknown" in unexpected and len(unexpected) == 12
    allowed = {"cells": {node: "^return:" for node in NODES}, "findings": {}, "checks": []}
    assert fleet_proof.fleet_report_unexpected(report, allowed) == []


def test_the_fleet_by_node_colours_a_pair_by_what_was_observed_and_outlines_returns_only_predicted():
    page = fleet_report.fleet_report_html(proven(peer_lost, return_landing={}))
    grid = page[page.index('<table class="grid">'):page.index("</table>", page.index('<table class="grid">'))]
    # hv01 -> hv02: peers passed, returns predicted only; hv03 -> hv01: tother's peer failed.
    assert '<td class="v-pass predicted" title="hv01 -&gt; hv02: peer, full-size peer, returns, all tenants: ' \
           '4 pass, 2 unknown">' in grid
    assert '<td class="v-fail predicted" title="hv03 -&gt; hv01: peer, full-size peer, returns, all tenants: ' \
           '3 pass, 1 fail, 2 unknown' in grid
    observed = fleet_report.fleet_report_html(proven())
    assert "predicted" not in observed[observed.index('<table class="grid">'):observed.index('<h2 id="picture">')
                                       ].replace("predicted and by design", "")
