"""bench/probe_namespaces.py's section of BENCHMARKS.md, from given times: the ratios, the floor
beside them, and the goal marked met or not by the figures themselves."""
from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import probe_namespaces  # noqa: E402  (bench/ is no package)


def _times(one: float, hundred: float, full: float) -> dict[str, list[float]]:
    return {"one": [one, one + 0.2, one - 0.1], "hundred": [hundred] * 3, "full": [full] * 3}


def test_the_goal_is_met_within_1_2x_of_one_probe():
    text = probe_namespaces.section(_times(9.3, 9.9, 10.0), "make bench")
    assert text.startswith(probe_namespaces.TITLE)
    assert "**9.0 s**" in text  # 3 s address check + 3 x 2 s
    assert "| 100 probes: 1 answering + 4 blocked each | 9.90 s (9.90-9.90) | 1.06x | 1.10x |" in text
    assert "**1.06x, met**" in text


def test_the_goal_is_not_met_when_targets_wait_one_after_another():
    text = probe_namespaces.section(_times(9.3, 27.7, 190.0), "make bench")
    assert "**2.98x, not met**" in text
