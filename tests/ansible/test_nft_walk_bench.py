"""bench/nft_walk.py: the rulesets it loads (the sizes and depth the section claims) and its
section of BENCHMARKS.md, the goal marked met or not by the figures themselves."""
from __future__ import annotations

import re
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import nft_walk  # noqa: E402  (bench/ is no package)


def _rules(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if line.startswith("    ") and not line.strip().startswith("type ")]


def _depth(text: str) -> int:
    """The longest chain of jumps below `forward`."""
    jumps: dict[str, set[str]] = {}
    chain = ""
    for line in text.splitlines():
        if m := re.match(r"\s*chain (\S+) \{", line):
            chain = m.group(1)
            jumps[chain] = set()
        elif m := re.match(r"\s*jump (\S+)", line):
            jumps[chain].add(m.group(1))

    depth: dict[str, int] = {}

    def below(name: str) -> int:  # once per chain: the paths number 4^15
        if name not in depth:
            depth[name] = max((1 + below(t) for t in jumps[name]), default=0)
        return depth[name]
    return below("forward")


def test_the_rulesets_have_the_sizes_and_depth_the_section_names():
    big = nft_walk.thousand()
    assert len(_rules(big)) == 1000
    assert _depth(big) == 15  # the deepest the kernel loads
    tr8 = nft_walk.tr8()
    assert len([r for r in _rules(tr8) if r.startswith("jump")]) == 72
    assert _depth(tr8) == 12


def _result(rules: int, walk: float, parse: float) -> dict:
    return {"rules": rules, "chains": 61, "rules_read": rules, "outcome": "end (policy)",
            "rereading_walk_reads": 2.29e10, "parse_ms": [parse] * 3, "walk_ms": [walk, walk + 1, walk - 0.5]}


def test_the_goal_is_met_under_100_ms_and_not_above():
    met = nft_walk.section({"tr8": _result(73, 0.04, 0.1), "1000": _result(1000, 2.0, 18.0)}, "make bench")
    assert met.startswith(nft_walk.TITLE)
    assert "| 1000 | 1000 | 61 | 18.00 | 2.00 | 1.50-3.00 | 1000 | 2.29e+10 | 0.200x |" in met
    assert "**20.00 ms** (met)" in met
    missed = nft_walk.section({"tr8": _result(73, 0.04, 0.1), "1000": _result(1000, 90.0, 18.0)}, "make bench")
    assert "**108.00 ms** (NOT met)" in missed
