"""bench/nat_prediction.py's section of BENCHMARKS.md, from given times: the ratios against the
1-tenant run and against the lookups alone, and the goal marked met or not by the figures."""
from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import nat_prediction  # noqa: E402  (bench/ is no package)


def _times(one: float, hundred: float, lookups: float) -> dict[str, list[float]]:
    return {"one": [one, one + 0.002, one - 0.001], "hundred": [hundred] * 3, "lookups": [lookups] * 3}


def test_the_goal_is_met_within_2x_of_one_tenant():
    text = nat_prediction.section(_times(0.010, 0.013, 0.012), "make bench")
    assert text.startswith(nat_prediction.TITLE)
    assert "| 100 tenants: 100 lookups, 100 NAT predictions | 13.0 ms (13.0-13.0) | 1.30x | 1.08x |" in text
    assert "**1.30x, met**" in text


def test_the_goal_is_not_met_when_each_prediction_walks_every_path():
    text = nat_prediction.section(_times(0.010, 9.5, 0.012), "make bench")
    assert "**950.00x, not met**" in text


def test_every_tenant_is_a_lookup_of_its_own_with_its_workload_as_snat_src():
    lookups = nat_prediction.VARIANTS["hundred"][1]["vrfs"][0]["lookups"]
    assert len(lookups) == 100 and len({lookup["dst"] for lookup in lookups}) == 100
    assert [lookup["snat_src"] for lookup in lookups[:2]] == ["10.64.0.250", "10.64.1.250"]
    assert all("snat_src" not in lookup for lookup in nat_prediction.VARIANTS["lookups"][1]["vrfs"][0]["lookups"])
    assert nat_prediction.RULESET.exists()
