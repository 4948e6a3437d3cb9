"""bench/tenant_play.py's probe step, without the lab: the phases read from `ip -ts monitor link`,
the goals marked from the figures, an older results file still reported, and the probes the
inventory gives the role (its own filter)."""
from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tenant_play  # noqa: E402  (bench/ is no package)

# A direct run of two probes as the guest script prints it: its own lines, then the monitor's
# lines of the probe veths' node ends (iproute2's -ts format).
GUEST_OUTPUT = """\
start=2026-12-03T18:30:00.000000000
end=2026-12-03T18:30:09.500000000
rc=0
failed=false
msg=2 probes passed
[2026-12-03T18:30:03.000000] 41: dvp812p0@if2: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN group default
[2026-12-03T18:30:03.100000] 41: dvp812p0@if2: <BROADCAST,MULTICAST> mtu 1450 qdisc noop master vnet_t0001 state DOWN
[2026-12-03T18:30:03.200000] 42: dvp812p1@if2: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN group default
[2026-12-03T18:30:04.000000] 42: dvp812p1@if2: <BROADCAST,MULTICAST> mtu 1450 qdisc noop master vnet_t0002 state DOWN
[2026-12-03T18:30:04.500000] 41: dvp812p0@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 master vnet_t0001 state UP
[2026-12-03T18:30:05.000000] 42: dvp812p1@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 master vnet_t0002 state UP
[2026-12-03T18:30:08.000000] Deleted 41: dvp812p0@if2: <BROADCAST,MULTICAST> mtu 1450 master vnet_t0001 state DOWN
[2026-12-03T18:30:08.600000] Deleted 42: dvp812p1@if2: <BROADCAST,MULTICAST> mtu 1450 master vnet_t0002 state DOWN
"""


def test_direct_run_phases_from_the_monitor():
    phases = tenant_play.probe_phases(GUEST_OUTPUT)
    assert phases == {"seconds": 9.5, "rc": 0, "failed": False, "msg": "2 probes passed", "workloads": 2,
                      "first_made": 3.0, "last_attached": 4.0, "last_up": 5.0, "first_deleted": 8.0,
                      "last_deleted": 8.6}


def test_direct_run_without_monitor_lines_has_no_phases():
    phases = tenant_play.probe_phases("\n".join(GUEST_OUTPUT.splitlines()[:5]))
    assert phases["workloads"] == 0 and "first_made" not in phases


def _measured(probe_seconds: dict[int, float], probe_runs: int = 1) -> tenant_play.Measured:
    def run(seconds: float) -> tenant_play.PlayRun:
        return tenant_play.PlayRun(seconds + 5, 5, 5, 0, probe_seconds=seconds, probe_runs=probe_runs)
    return tenant_play.Measured(
        probes=[tenant_play.ProbeSizeResult(n, run(s), [run(s), run(s + 1), run(s - 1)]) for n, s in probe_seconds.items()],
        probe_setup={"mtu": 1450, "gc_thresh": "128/512/1024"}, load={"start": "1, 1, 1", "end": "2, 2, 2"})


def _settings(probe_sizes) -> tenant_play.Settings:
    return tenant_play.Settings([1], 3, 100, 1, "bench/tenant_play.py --probe-sizes 1,100", list(probe_sizes))


@pytest.mark.parametrize("at_100, verdict", [(8.0, "**met** (**2.00x**"), (8.2, "**NOT met** (**2.05x**")])
def test_the_2x_goal_is_marked_from_the_medians(at_100, verdict):
    section = tenant_play.report_section(_measured({1: 4.0, 100: at_100}), _settings([1, 100]), "2026-12-03")
    assert tenant_play.PROBE_TITLE in section
    assert f"Goal: the probe step at 100 probed tenants at most 2x that at 1: {verdict}" in section
    assert "Goal: one task whatever the count: **met**" in section


def test_more_than_one_module_run_fails_the_one_task_goal():
    section = tenant_play.report_section(_measured({1: 4.0, 100: 5.0}, probe_runs=100), _settings([1, 100]),
                                         "2026-12-03")
    assert "Goal: one task whatever the count: **NOT met**" in section


def test_a_results_file_from_before_the_probe_step_is_still_reported(tmp_path):
    old = tmp_path / "results.json"
    old.write_text(json.dumps({
        "settings": {"sizes": [1], "rounds": 1, "baseline_max_tenants": 100, "baseline_steady_max_tenants": 1,
                     "command": "bench/tenant_play.py --tenant-sizes 1"},
        "date": "2026-11-30",
        "results": [{"tenants": 1, "converge": {tenant_play.DEEVNET: {"seconds": 30.8, "task_results": 6, "tasks": 6,
                                                                       "changed": 3}},
                     "steady": {tenant_play.DEEVNET: [{"seconds": 6.6, "task_results": 5, "tasks": 5, "changed": 0}]}}]}))
    measured, settings, date = tenant_play.load_results(old)
    section = tenant_play.report_section(measured, settings, date)
    assert "| 1 | deevnet.net role | 6 / 5 | 30.8 s | 6.6 s (1 run) |" in section
    assert tenant_play.PROBE_TITLE not in section
    assert "Not re-run in this run: 100, 1,000 tenants" in section


def test_the_inventory_gives_the_role_one_probe_per_tenant_with_its_isolation_targets():
    args = tenant_play.probe_plan(100)
    assert len(args["probes"]) == 100
    first = args["probes"][0]
    assert first["vrf"] == "vrf_t0001" and first["address"] == "10.64.0.250/24"
    assert [t["address"] for t in first["targets"]] == [tenant_play.PROBE_TARGET, "10.64.1.250", "10.64.2.250",
                                                         "10.64.3.250", tenant_play.MANAGEMENT_PROBE]
    assert args["probes"][99]["address"] == "10.64.99.250/24"


@pytest.mark.parametrize("probed", [1, 2, 10])
def test_the_reported_targets_per_probe_are_the_roles(probed):
    probes = tenant_play.probe_plan(probed)["probes"]
    targets = {len(probe["targets"]) for probe in probes}
    blocked = {sum(target.get("expect") == "blocked" for target in probe["targets"]) for probe in probes}
    assert (targets, blocked) == ({tenant_play.probe_targets(probed)[0]}, {tenant_play.probe_targets(probed)[1]})


def test_the_probe_step_alone_replaces_only_its_subsection(tmp_path):
    """--probe-step-only: the tenant counts' table around the probe step stays as measured."""
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(f"# Benchmarks\n\n{tenant_play.SECTION_TITLE}\n\nthe tenant counts' table\n\n"
                    f"{tenant_play.PROBE_TITLE}\n\nold figures\n\n### Where the time goes\n\nkept\n\n"
                    "## 5. Fleet scale\n\nfleet\n")
    text = tenant_play.update_probe_subsection(path, f"{tenant_play.PROBE_TITLE}\n\nnew figures\n")
    assert "old figures" not in text
    assert "new figures" in text
    for kept in ("the tenant counts' table", "### Where the time goes\n\nkept", "## 5. Fleet scale\n\nfleet"):
        assert kept in text
    assert text.count(tenant_play.PROBE_TITLE) == 1
