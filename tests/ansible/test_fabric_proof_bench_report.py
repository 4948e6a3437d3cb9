"""bench/fabric_proof.py's section, from saved figures (no lab): the goals marked met or not, the
runs per node compared, each task's median."""
from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import fabric_proof  # noqa: E402  (bench/ is not a package)


def run(seconds: float, probe: float, runs: float, tenants: int = 2) -> dict:
    tasks = [{"action": "deevnet.net.sdn_check", "name": "Intent, the node's Proxmox SDN", "results": 3, "skipped": 0,
              "seconds": 2.0},
             {"action": "deevnet.net.egress_probe", "name": "Observation", "results": 3, "skipped": 0,
              "seconds": probe}]
    return {"seconds": seconds, "tasks": tasks, "runs_per_node": runs, "probe_seconds": probe, "tenants": tenants,
            "summary": {"passed": 10, "cells": 10}}


def test_the_section_marks_each_goal_from_the_figures():
    text = fabric_proof.section({"rounds": [run(30.0, 12.0, 5), run(40.0, 13.0, 5), run(35.0, 12.5, 5)],
                                 "large": run(60.0, 30.0, 5, tenants=100)}, "bench/fabric_proof.py --rounds 3")
    assert "the whole proof at most 2x the floor: **NOT met** (3.89x: 35.0 s against 9 s, median of 3)" in text
    assert "its egress_probe task alone 12.5 s (1.39x)" in text
    assert "the same module runs per node at 2 and 100 tenants: **met** (5 and 5)" in text
    assert "| Observation | 12.5 |" in text
    assert "| synthetic | 100 | 60.0 s | 30.0 s | 10/10 | 5 |" in text


def test_a_count_that_grows_with_the_tenants_is_not_met():
    text = fabric_proof.section({"rounds": [run(15.0, 10.0, 5)], "large": run(20.0, 10.0, 7, tenants=100)}, "x")
    assert "the whole proof at most 2x the floor: **met** (1.67x" in text
    assert "**NOT met** (5 and 7)" in text
