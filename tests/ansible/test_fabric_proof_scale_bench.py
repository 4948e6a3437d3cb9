"""bench/fabric_proof_scale.py's simulator: the node results it records are in the modules'
documented output shape, they answer every lookup and probe of the proof's plan, and its faults
are the only cells that fail (so the bench measures the reconcile of a real proof)."""
from __future__ import annotations

import ast
import json
import sys

import yaml

from conftest import ROOT, plugin_utils

sys.path.insert(0, str(ROOT / "bench"))
import fabric_proof_scale as bench  # noqa: E402  (bench/ is no package)

ProofCells = plugin_utils("fabric_proof_cells").ProofCells


def documented(module: str) -> dict:
    """The RETURN of a module's documentation, parsed."""
    source = (ROOT / "collection" / "plugins" / "modules" / f"{module}.py").read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "RETURN":
            return yaml.safe_load(node.value.value)
    raise AssertionError(f"no RETURN in {module}")


def recorded(tmp_path, tenants: int = 6, nodes: int = 4):
    fleet_proof, fleet_report = bench.filters(ROOT)
    bench.record(tenants, nodes, fleet_proof, tmp_path)
    names = json.loads((tmp_path / "nodes.json").read_text())
    return fleet_proof, fleet_report, names, {node: json.loads((tmp_path / f"{node}.json").read_text()) for node in names}


def test_the_recorded_results_have_the_modules_documented_keys(tmp_path):
    _proof, _report, names, hostvars = recorded(tmp_path)
    probe_doc = documented("egress_probe")
    target_keys = set(probe_doc["probes"]["sample"][0]["targets"][0])
    probe_keys = set(probe_doc["probes"]["sample"][0])
    check_keys = set(documented("vrf_route_assert")["checks"]["sample"][0])
    vni_keys = set(documented("bgp_evpn_assert")["vnis"]["contains"])
    for node in names:
        probe = hostvars[node]["fabric_proof_probe"]
        assert {"verdict", "capture", "problems", "probes", "start_at", "start_late_secs", "msg"} <= set(probe)
        for entry in probe["probes"]:
            assert set(entry) == probe_keys
            assert all(set(target) == target_keys for target in entry["targets"])
        assert all(set(check) == check_keys for check in hostvars[node]["fabric_proof_lookups"]["checks"])
        assert all(set(vni) == vni_keys for vni in hostvars[node]["fabric_proof_evpn"]["vnis"])


def test_the_recorded_results_answer_the_plan_and_only_the_faults_fail(tmp_path):
    fleet_proof, _report, names, hostvars = recorded(tmp_path, tenants=51)
    facts = fleet_proof.fleet_proof_facts(hostvars, names)
    healthy = fleet_proof.fleet_proof_reconcile(facts, names, bench.SETTINGS)
    cells = ProofCells(healthy)
    # Every cell decided but the returns, predicted as expected and by design not observed.
    assert healthy["cells"] == [] and healthy["findings"] == []
    assert cells.verdicts()["unknown"] == len(list(cells.summarised_keys("unknown"))) == 51 * 4 * 3
    assert all(check["ok"] for check in healthy["checks"])
    bench.faulted(hostvars, names, 0)
    faulted = fleet_proof.fleet_proof_reconcile(fleet_proof.fleet_proof_facts(hostvars, names), names, bench.SETTINGS)
    assert sorted({(cell["node"], cell["column"]) for cell in faulted["cells"]}) == [
        ("hv02", "internet"), ("hv03", "peer-df:hv04")]
    assert sorted(cell["tenant"] for cell in faulted["cells"] if cell["column"] == "internet") == [
        "t0000", "t0025", "t0050"]
    assert all(cell["verdict"] == "fail" and cell["findings"] for cell in faulted["cells"])
