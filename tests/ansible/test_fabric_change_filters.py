"""The guarded fleet change's pure logic (collection/plugins/filter/fabric_change.py), without a
host: the settings refused naming the setting, the value and the fix; the waves from the canary
and the counts or percentages; the proof held against the baseline; the interfaces an interface
reload would touch outside the change, on `ifreload -a --no-act` output in ifupdown2's log format
(tests/ansible/data); the report of the whole change."""
from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from conftest import ROOT, filter_docs_from_source, filter_plugin

fabric_change = filter_plugin("fabric_change")
HOSTS = ["hv01", "hv02", "hv03", "hv04", "hv05", "hv06", "hv07", "hv08", "hv09", "hv10"]
DATA = ROOT / "tests" / "ansible" / "data"

GOOD = {
    "fabric_change_hosts": "proxmox_nodes", "fabric_change_kind": "file", "fabric_change_canary": None,
    "fabric_change_waves": [1, "100%"], "fabric_change_timeout": 300, "fabric_change_reconnect_margin": 30,
    "fabric_change_baseline_max_age": 0, "fabric_change_dir": "fabric-change",
    "fabric_change_sdn_lock": "/etc/pve/sdn/.lock", "fabric_change_file_path": "/etc/network/interfaces.d/x",
    "fabric_change_file_content": "auto x\n",
}
CONTEXT = {"hosts": HOSTS[:3], "tasks_file_exists": False}


def refusal(context=None, **changes):
    return fabric_change.fabric_change_refusal({**GOOD, **{f"fabric_change_{k}": v for k, v in changes.items()}},
                                               CONTEXT if context is None else context)


# --- refusals ------------------------------------------------------------------------------------

def test_good_settings_are_not_refused():
    assert refusal() == []
    assert refusal(context={**CONTEXT, "proof_seconds": 42.4}) == []


@pytest.mark.parametrize("changes, words", [
    ({"waves": []}, ["fabric_change_waves is []", "[1, '50%', '100%']"]),
    ({"waves": None}, ["fabric_change_waves is None"]),
    ({"waves": [0]}, ["fabric_change_waves[0] is 0", "a count of nodes"]),
    ({"waves": ["0%"]}, ["fabric_change_waves[0] is '0%'"]),
    ({"waves": ["150%"]}, ["fabric_change_waves[0] is '150%'", "at most '100%'"]),
    ({"waves": [True]}, ["fabric_change_waves[0] is True"]),
    ({"kind": "reboot"}, ["fabric_change_kind is 'reboot'", "tasks, node_network, sdn_apply, file"]),
    ({"kind": "tasks"}, ["fabric_change_tasks_file is unset", "give its path"]),
    ({"kind": "tasks", "tasks_file": "/nowhere.yml"}, ["fabric_change_tasks_file is '/nowhere.yml'", "no such file"]),
    ({"kind": "sdn_apply", "sdn_commit": ["pvesh", "set"], "sdn_reload": []},
     ["fabric_change_sdn_commit is ['pvesh', 'set']", "not an absolute path", "fabric_change_sdn_reload is []"]),
    ({"timeout": 5}, ["fabric_change_timeout is 5", "10 to 86400"]),
    ({"timeout": 39}, ["fabric_change_timeout is 39", "the reconnect margin (30 s) + 10 s", "give 40 or more"]),
    ({"timeout": "x"}, ["fabric_change_timeout is 'x'"]),
    ({"canary": "hv09"}, ["fabric_change_canary is 'hv09'", "hv01, hv02, hv03"]),
    ({"paths": ["etc/network"]}, ["fabric_change_paths holds ['etc/network']", "absolute"]),
    ({"reload": [{"paths": ["/etc/frr"], "argv": ["systemctl", "reload", "frr"]}]},
     ["fabric_change_reload[0].argv", "not an absolute path"]),
    ({"reload": [{"argv": ["/usr/bin/true"]}]}, ["fabric_change_reload[0].paths is None"]),
    ({"baseline_max_age": -1}, ["fabric_change_baseline_max_age is -1"]),
    ({"sdn_lock": "sdn/.lock"}, ["fabric_change_sdn_lock is 'sdn/.lock'"]),
    ({"sdn_files": {"running-config": "/x"}}, ["fabric_change_sdn_files.running-config is '/x': give one of"]),
    ({"sdn_files": {"interfaces": "x"}}, ["fabric_change_sdn_files.interfaces is 'x': give an absolute path"]),
    ({"sdn_files": "/etc/pve"}, ["fabric_change_sdn_files is '/etc/pve': give a dict"]),
    ({"file_path": "relative"}, ["fabric_change_file_path is 'relative'", "absolute"]),
    ({"run_id": "../x"}, ["fabric_change_run_id is '../x'"]),
])
def test_bad_settings_are_refused_naming_the_setting_the_value_and_the_fix(changes, words):
    said = "\n".join(refusal(**changes))
    for word in words:
        assert word in said, (word, said)


def test_a_node_s_sdn_files_are_proxmox_s_places_unless_it_gives_others():
    files = fabric_change.fabric_change_sdn_files
    assert files(None) == files({}) == {
        "running_config": "/etc/pve/sdn/.running-config", "config_dir": "/etc/pve/sdn",
        "interfaces_sdn": "/etc/network/interfaces.d/sdn", "interfaces": "/etc/network/interfaces",
        "frr_conf": "/etc/frr/frr.conf"}
    assert files({"frr_conf": "/srv/frr.conf"})["frr_conf"] == "/srv/frr.conf"
    with pytest.raises(AnsibleFilterError) as error:
        files({"frr": "/srv/frr.conf"})
    assert "fabric_change_sdn_files: fabric_change_sdn_files.frr is '/srv/frr.conf': give one of running_config" \
        in str(error.value)


def test_a_group_without_hosts_is_refused():
    said = refusal(context={"hosts": []})
    assert said and "fabric_change_hosts is 'proxmox_nodes'" in said[0] and "-e fabric_change_hosts=GROUP" in said[0]


def test_a_tasks_file_that_exists_is_taken():
    assert refusal(context={**CONTEXT, "tasks_file_exists": True}, kind="tasks", tasks_file="/x.yml") == []


def test_a_timeout_shorter_than_the_measured_proof_and_margin_is_refused():
    context = {**CONTEXT, "proof_seconds": 95.2, "proof_measured": "the baseline's run"}
    said = refusal(context=context, timeout=120)
    assert len(said) == 1
    assert "fabric_change_timeout is 120" in said[0] and "one proof (95.2 s, the baseline's run)" in said[0]
    assert "give 126 or more" in said[0]
    assert refusal(context=context, timeout=126) == []


# --- waves ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("hosts, canary, waves, plan", [
    (HOSTS[:3], None, [1], [["hv01"], ["hv02"], ["hv03"]]),
    (HOSTS[:3], "hv02", ["100%"], [["hv02"], ["hv01", "hv03"]]),
    (HOSTS[:3], None, [5], [["hv01"], ["hv02", "hv03"]]),
    # 25% of ten nodes is 2.5: rounded down as Ansible's serial does.
    (HOSTS, None, ["25%"], [["hv01"], ["hv02", "hv03"], ["hv04", "hv05"], ["hv06", "hv07"], ["hv08", "hv09"], ["hv10"]]),
    # Never below one node: 5% of ten is 0.5.
    (HOSTS[:4], None, ["5%", "100%"], [["hv01"], ["hv02"], ["hv03", "hv04"]]),
    (HOSTS, "hv05", [2, "50%"], [["hv05"], ["hv01", "hv02"], ["hv03", "hv04", "hv06", "hv07", "hv08"],
                                ["hv09", "hv10"]]),
    (["hv01"], None, ["100%"], [["hv01"]]),
    (["hv01", "hv01", "hv02"], None, ["33.4%"], [["hv01"], ["hv02"]]),
])
def test_waves_are_the_canary_then_counts_or_percentages_of_every_node(hosts, canary, waves, plan):
    assert fabric_change.fabric_change_waves(hosts, canary, waves) == plan


@pytest.mark.parametrize("hosts, canary, waves, words", [
    ([], None, [1], "_input is []"),
    (HOSTS[:3], "hv09", [1], "canary is 'hv09'"),
    (HOSTS[:3], None, [], "fabric_change_waves is []"),
    (HOSTS[:3], None, ["x%"], "fabric_change_waves[0] is 'x%'"),
])
def test_waves_refuse_what_they_cannot_plan(hosts, canary, waves, words):
    with pytest.raises(AnsibleFilterError, match=None) as error:
        fabric_change.fabric_change_waves(hosts, canary, waves)
    assert words in str(error.value)


# --- the proof against the baseline ----------------------------------------------------------------

def proof(verdicts: dict, checks: dict | None = None, findings=None) -> dict:
    """A proof report: cells by (tenant, node, column) -> verdict (or (verdict, [finding ids]))."""
    cells = []
    for (tenant, node, column), verdict in verdicts.items():
        verdict, ids = verdict if isinstance(verdict, tuple) else (verdict, [])
        cells.append({"tenant": tenant, "node": node, "column": column, "verdict": verdict, "findings": ids})
    columns = sorted({column for _t, _n, column in verdicts})
    return {"format": "deevnet.net.fabric_proof/1", "generated": "2026-12-07T14:00:00Z",
            "columns": [{"id": c, "label": c.replace("peer:", ""), "kind": "x", "node": None} for c in columns],
            "cells": cells, "findings": findings or [],
            "checks": [{"id": i, "label": i.replace("_", " "), "ok": ok, "text": "", "findings": []}
                       for i, ok in (checks or {"reached": True, "one_version": True}).items()]}


BASE = {("tdemo", "hv01", "internet"): "pass", ("tdemo", "hv02", "internet"): "pass",
        ("tdemo", "hv03", "peer:hv01"): "pass", ("tdemo", "hv03", "return:hv02"): "unknown",
        ("tdemo", "hv02", "private"): "fail"}


def compare(now, before=None):
    return fabric_change.fabric_change_compare(now, before or proof(BASE))


def test_the_same_proof_equals_the_baseline():
    result = compare(proof(BASE))
    assert result["equal"] and result["regressions"] == [] and result["newly_failing"] == []


@pytest.mark.parametrize("verdict", ["fail", "unknown", "not_run"])
def test_a_cell_that_passed_and_does_not_pass_now_is_a_regression(verdict):
    now = dict(BASE)
    now[("tdemo", "hv03", "peer:hv01")] = (verdict, ["F1"]) if verdict == "fail" else verdict
    findings = [{"id": "F1", "node": "hv03", "subject": "vxlan_tdemo0", "text": "no reply from 192.0.2.254",
                 "fix": "x"}]
    result = compare(proof(now, findings=findings))
    assert not result["equal"]
    assert [(r["where"], r["before"], r["now"]) for r in result["regressions"]] == [
        ("tdemo@hv03 hv01", "pass", verdict)]
    assert result["nodes"] == ["hv03"]
    if verdict == "fail":
        assert result["lines"] == ["tdemo@hv03 hv01: pass -> fail (hv03 vxlan_tdemo0: no reply from 192.0.2.254)"]


def test_a_cell_gone_from_the_proof_is_a_regression():
    now = {key: value for key, value in BASE.items() if key[1] != "hv02"}
    result = compare(proof(now))
    assert [(r["where"], r["now"]) for r in result["regressions"]] == [("tdemo@hv02 internet", "absent")]


def test_a_failed_fleet_check_that_held_is_a_regression():
    result = compare(proof(BASE, checks={"reached": False, "one_version": True}))
    assert [(r["where"], r["before"], r["now"]) for r in result["regressions"]] == [("check reached", "ok", "failed")]
    gone = compare(proof(BASE, checks={"reached": True}))
    assert [(r["where"], r["now"]) for r in gone["regressions"]] == [("check one version", "absent")]


def test_what_failed_before_and_still_fails_is_no_regression_but_unknown_turning_fail_is_newly_failing():
    now = dict(BASE)
    now[("tdemo", "hv03", "return:hv02")] = "fail"
    now[("tdemo", "hv09", "internet")] = "fail"
    result = compare(proof(now))
    assert result["regressions"] == []
    assert [(r["where"], r["before"], r["now"]) for r in result["newly_failing"]] == [
        ("tdemo@hv03 return:hv02", "unknown", "fail"), ("tdemo@hv09 internet", "absent", "fail")]
    assert not result["equal"]
    assert result["lines"][0].startswith("newly failing: tdemo@hv03 return:hv02: unknown -> fail")


def test_a_cell_that_passes_now_and_did_not_before_is_no_regression():
    now = dict(BASE)
    now[("tdemo", "hv02", "private")] = "pass"
    assert compare(proof(now))["equal"]


# An SDN apply between its waves: hv01 reloaded (the canary), hv02 and hv03 wait for their wave.
ROLLOUT_BASE = {("tdemo", "hv01", "internet"): "pass", ("tdemo", "hv02", "internet"): "pass",
                ("tdemo", "hv01", "peer:hv02"): "pass"}


def rollout_proof(check_nodes, cells=None, check="sdn_version", awaits_reload=True):
    """The proof after the canary's reload: `check` fails with a finding per node in check_nodes
    (sdn_drift's each marked as awaiting the node's reload unless `awaits_reload` is false)."""
    findings = [{"id": f"F{i}", "node": node, "subject": "/etc/network/interfaces.d/sdn",
                 "text": f"{node} applied SDN version 4, the cluster runs 5", "fix": "x"}
                for i, node in enumerate(check_nodes)]
    for finding in findings:
        if check == "sdn_drift" and awaits_reload:
            finding["awaits_reload"] = True
    checks = {"reached": True, "sdn_version": True, "sdn_drift": True, check: False}
    doc = proof({**ROLLOUT_BASE, **(cells or {})}, checks=checks, findings=findings)
    next(c for c in doc["checks"] if c["id"] == check)["findings"] = [f["id"] for f in findings]
    return doc


def rollout_compare(now, pending=("hv02", "hv03")):
    base = proof(ROLLOUT_BASE, checks={"reached": True, "sdn_version": True, "sdn_drift": True})
    return fabric_change.fabric_change_compare(now, base, list(pending))


@pytest.mark.parametrize("check", ["sdn_version", "sdn_drift"])
def test_an_sdn_check_failing_only_on_the_later_waves_nodes_is_expected(check):
    result = rollout_compare(rollout_proof(["hv02", "hv03"], check=check))
    assert result["equal"] and result["regressions"] == []
    assert [entry["check"] for entry in result["expected"]] == [check]
    assert result["expected_lines"][0].startswith(
        "expected while hv02, hv03 run the SDN version from before the commit: check ")


@pytest.mark.parametrize("nodes", [["hv02", "hv01"], ["hv02", None], []])
def test_an_sdn_check_failing_on_a_reloaded_node_or_the_fleet_is_a_regression(nodes):
    result = rollout_compare(rollout_proof(nodes))
    assert [entry["check"] for entry in result["regressions"]] == ["sdn_version"] and result["expected"] == []


def test_drift_on_a_waiting_node_that_its_reload_does_not_explain_is_a_regression():
    # A device the node's own applied version declares, lost from its kernel: drift from before
    # the new version, whichever wave the node is in.
    result = rollout_compare(rollout_proof(["hv02", "hv03"], check="sdn_drift", awaits_reload=False))
    assert [entry["check"] for entry in result["regressions"]] == ["sdn_drift"] and result["expected"] == []


def test_another_check_failing_on_the_later_waves_nodes_is_a_regression():
    result = rollout_compare(rollout_proof(["hv02"], check="reached"))
    assert [entry["check"] for entry in result["regressions"]] == ["reached"]


def test_without_pending_nodes_the_sdn_check_is_a_regression():
    result = rollout_compare(rollout_proof(["hv02", "hv03"]), pending=())
    assert [entry["check"] for entry in result["regressions"]] == ["sdn_version"] and not result["equal"]


def test_a_new_tenants_cells_failing_on_or_toward_a_waiting_node_are_expected_and_nowhere_else():
    cells = {("tnew", "hv02", "internet"): "fail", ("tnew", "hv01", "peer:hv03"): "fail",
             ("tnew", "hv01", "internet"): "fail"}
    result = rollout_compare(rollout_proof(["hv02"], cells))
    assert sorted(entry["where"] for entry in result["expected"] if entry["what"] == "cell") == [
        "tnew@hv01 hv03", "tnew@hv02 internet"]
    assert [entry["where"] for entry in result["newly_failing"]] == ["tnew@hv01 internet"]


def test_a_known_tenants_cell_on_a_waiting_node_is_never_excused():
    result = rollout_compare(rollout_proof(["hv02"], {("tdemo", "hv02", "internet"): "fail"}))
    assert [entry["where"] for entry in result["regressions"]] == ["tdemo@hv02 internet"]


@pytest.mark.parametrize("pending", ["hv02", [""], [1]])
def test_pending_that_is_not_a_list_of_names_is_refused(pending):
    with pytest.raises(AnsibleFilterError) as error:
        fabric_change.fabric_change_compare(proof(BASE), proof(BASE), pending)
    assert "fabric_change_compare: pending is" in str(error.value)


@pytest.mark.parametrize("doc, where", [(None, "_input"), ({"format": "x"}, "_input"),
                                        ({"format": "deevnet.net.fabric_proof/1", "cells": []}, "_input.checks")])
def test_a_document_that_is_not_the_proof_is_refused(doc, where):
    with pytest.raises(AnsibleFilterError) as error:
        fabric_change.fabric_change_compare(doc, proof(BASE))
    assert f"fabric_change_compare: {where} is" in str(error.value)


# --- the interface reload's preview ----------------------------------------------------------------

INTERFACES_BEFORE = """\
auto lo
iface lo inet loopback

iface nic5 inet manual

auto vmbr0
iface vmbr0 inet static
    address 198.51.100.11/24
    bridge-ports nic4
"""
INTERFACES_AFTER = INTERFACES_BEFORE + """
auto vmbr1
iface vmbr1 inet manual
    bridge-ports nic5  # the new tenant bridge
"""


def test_the_change_s_stanzas_are_those_added_removed_or_changed_and_what_they_name():
    assert fabric_change.fabric_change_stanzas(INTERFACES_BEFORE, INTERFACES_AFTER) == ["nic5", "vmbr1"]
    moved = INTERFACES_BEFORE.replace("198.51.100.11/24", "198.51.100.12/24")
    assert fabric_change.fabric_change_stanzas(INTERFACES_BEFORE, moved) == ["nic4", "vmbr0"]
    assert fabric_change.fabric_change_stanzas(INTERFACES_BEFORE, INTERFACES_BEFORE + "\n# a comment\n") == []
    assert fabric_change.fabric_change_stanzas(INTERFACES_AFTER, INTERFACES_BEFORE) == ["nic5", "vmbr1"]


def test_a_reload_touching_stale_interfaces_is_refused_naming_them():
    preview = (DATA / "ifreload_no_act_stale.txt").read_text()
    changed = fabric_change.fabric_change_stanzas(INTERFACES_BEFORE, INTERFACES_AFTER)
    result = fabric_change.fabric_change_stale_interfaces(preview, changed, "hv02")
    assert [entry["interface"] for entry in result["outside"]] == ["vmbr9", "vxlan_old"]
    assert result["touched"] == ["lo", "nic5", "vmbr1", "vmbr9", "vxlan_old"]
    assert "on hv02 would touch interfaces outside the change: vmbr9 (info: reload: scheduling down" in result["refusal"]
    assert "vxlan_old (info: reload: scheduling down on interfaces: ['vxlan_old', 'vmbr9'])" in result["refusal"]
    assert "ifquery --check -a" in result["refusal"]


def test_a_reload_touching_only_the_change_is_not_refused():
    preview = (DATA / "ifreload_no_act_clean.txt").read_text()
    changed = fabric_change.fabric_change_stanzas(INTERFACES_BEFORE, INTERFACES_AFTER)
    result = fabric_change.fabric_change_stale_interfaces(preview, changed)
    assert result == {"touched": ["nic5", "vmbr1"], "outside": [], "refusal": ""}
    # The same preview against a change that names no interface: what it touches is outside.
    outside = fabric_change.fabric_change_stale_interfaces(preview.splitlines(), [])
    assert [entry["interface"] for entry in outside["outside"]] == ["nic5", "vmbr1"]


def test_an_empty_preview_touches_nothing():
    assert fabric_change.fabric_change_stale_interfaces("", [])["outside"] == []
    with pytest.raises(AnsibleFilterError, match="changed is 'vmbr1'"):
        fabric_change.fabric_change_stale_interfaces("", "vmbr1")


# --- the report ------------------------------------------------------------------------------------

RUN = {"run_id": "fabric-change-20261207T140000Z-ab12", "kind": "file", "hosts": ["hv01", "hv02", "hv03"],
       "plan": [["hv01"], ["hv02", "hv03"]],
       "baseline": {"source": "proved now", "seconds": 41.26},
       "waves": [{"nodes": ["hv01"], "outcome": "confirmed", "changes": {"hv01": "changed /etc/x"},
                  "proof_diff": ["no change since the report of 2026-12-07T14:00:00Z"],
                  "times": {"arm": 2.0, "apply": 3.04, "proof": 40.0, "confirm": 1.5}}]}


def test_the_report_of_a_change_confirmed_everywhere_is_changed():
    run = copy.deepcopy(RUN)
    run["waves"].append(dict(run["waves"][0], nodes=["hv02", "hv03"]))
    report = fabric_change.fabric_change_report(run)
    assert report["format"] == "deevnet.net.fabric_change/1"
    assert report["outcome"] == "changed" and not report["failed"] and report["untouched"] == []
    assert report["waves"][0]["times"] == {"arm": 2.0, "apply": 3.0, "proof": 40.0, "confirm": 1.5, "restore": 0.0,
                                           "restore_proof": 0.0, "overhead": 43.5}
    lines = fabric_change.fabric_change_summary(report)
    assert lines[0] == "change fabric-change-20261207T140000Z-ab12 (file): changed"
    assert "wave 0 hv01: confirmed (apply 3.0 s, proof 40.0 s, overhead 43.5 s)" in lines
    assert "  hv01: changed /etc/x" in lines


def test_the_report_of_a_rollback_names_the_regression_and_the_nodes_never_touched():
    run = copy.deepcopy(RUN)
    run["waves"][0].update(outcome="rolled_back", cause="the proof regressed on the wave",
                           regressions=[{"text": "tdemo@hv01 internet: pass -> fail"}], restore="restored /etc/x")
    report = fabric_change.fabric_change_report(run)
    assert report["outcome"] == "rolled_back" and report["failed"]
    assert report["untouched"] == ["hv02", "hv03"]
    lines = fabric_change.fabric_change_summary(report)
    assert "  regression: tdemo@hv01 internet: pass -> fail" in lines
    assert "never touched: hv02, hv03" in lines


@pytest.mark.parametrize("run, outcome", [
    ({"refusals": ["fabric_change_waves is []: ..."], "plan": []}, "refused"),
    ({"plan": [["hv01"]], "waves": [{"nodes": ["hv01"], "outcome": "cut_off", "cut_off": {"hv01": "expired"}}]},
     "cut_off"),
    ({"plan": [["hv01"]], "waves": []}, "failed"),
    ({"plan": [["hv01"]], "waves": [{"nodes": ["hv01"], "outcome": "confirmed"}], "failure": "unlock failed"}, "failed"),
])
def test_every_outcome_but_a_change_confirmed_everywhere_fails(run, outcome):
    report = fabric_change.fabric_change_report(run)
    assert report["outcome"] == outcome and report["failed"]
    assert fabric_change.fabric_change_summary(report)[0].endswith(f": {outcome}")


def test_the_summary_reads_only_the_report():
    with pytest.raises(AnsibleFilterError, match="fabric_change_summary: _input is"):
        fabric_change.fabric_change_summary({"format": "deevnet.net.fabric_proof/1"})


# --- a step's results, the wave's changes, a switch read after its timeout ---------------------------

def test_each_node_of_a_step_is_ok_failed_or_not_reached():
    texts = {"hv01": '{"node": "hv01", "step": "lock", "failed": false, "msg": "", "result": {"lock": {"run_id": "r"}}}',
             "hv02": '{"node": "hv02", "step": "lock", "failed": true, "msg": "held by run other (ops@ctl, since 14:00)"}',
             "hv04": "not json"}
    step = fabric_change.fabric_change_step_results(texts, ["hv01", "hv02", "hv03", "hv04"], "lock")
    results = step["results"]
    assert results["hv01"] == {"ok": True, "unreachable": False, "result": {"lock": {"run_id": "r"}}, "msg": ""}
    assert not results["hv02"]["ok"] and not results["hv02"]["unreachable"]
    assert results["hv03"]["unreachable"] and not results["hv03"]["ok"]
    assert step["problems"] == ["hv02: held by run other (ops@ctl, since 14:00)",
                                "hv03 wrote no result of the step lock: not reached (cut off, or down)",
                                "hv04: the result of lock is unreadable"]
    with pytest.raises(AnsibleFilterError, match="nodes is 'hv01'"):
        fabric_change.fabric_change_step_results({}, "hv01")


def test_the_wave_s_changes_come_from_each_node_s_dry_run():
    preview = {"hv01": {"ok": True, "result": {"changes": "/etc/x would change"}}, "hv02": {"ok": False, "result": None}}
    assert fabric_change.fabric_change_changes(preview, ["hv01", "hv02", "hv03"]) == {
        "hv01": "/etc/x would change", "hv02": "no dry run of this node", "hv03": "no dry run of this node"}


@pytest.mark.parametrize("step, said", [
    ({"ok": True, "unreachable": False,
      "result": {"switch": {"state": "expired"}, "restored": ["/etc/network/interfaces"]}},
     "expired: its own switch restored it (/etc/network/interfaces)"),
    ({"ok": True, "unreachable": False, "result": {"switch": {"state": "booted"}, "restored": []}},
     "booted: restored at boot (nothing)"),
    ({"ok": True, "unreachable": False, "result": {"switch": {"state": "armed", "remaining": 12}}},
     "still armed (12 s left): reached again before its switch fired"),
    ({"ok": False, "unreachable": True}, "not reached after the switch's timeout and 10 s"),
    ({"ok": False, "unreachable": False, "msg": "hv01: state_dir=/x: refused"}, "its switch could not be read: hv01"),
])
def test_a_switch_read_after_its_timeout_says_who_restored_the_node(step, said):
    assert fabric_change.fabric_change_switch_state(step).startswith(said)


def test_ansible_doc_reads_each_filter_s_sidecar_and_the_sidecars_match_the_filters(tmp_path):
    names = sorted(fabric_change.FilterModule().filters())
    sidecars = sorted(path.stem for path in (ROOT / "collection" / "plugins" / "filter").glob("fabric_change_*.yml"))
    assert names == sidecars
    docs = filter_docs_from_source(names, tmp_path)
    for name in names:
        assert docs[f"deevnet.net.{name}"]["doc"]["name"] == name and docs[f"deevnet.net.{name}"]["return"]["_value"]
