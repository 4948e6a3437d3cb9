#!/usr/bin/env python3
"""The fabric proof's NAT prediction in a network namespace (make bench, section 11): for 100
tenants, one vrf_route_assert run on the node, whatever the count of tenants, against a 41-rule
NAT ruleset with jumps (modules/vrf_route_assert/tests/data/fanout-41.nft: each chain jumped to
three times from the one above, 12 levels deep, so a walk that re-walks each jump reads 3^12
chains).

The namespace (made here, removed at the end; nothing of the host's is touched): the node, its
uplink (10.20.50.22/24, the default via 10.20.50.1) and the ruleset. Each tenant is a lookup of
its own internet target in the default VRF (this kernel may have no VRFs; the lookup's VRF does
not change the walk), with `snat_src` its workload 10.64.N.250, which the base chain's last rule
masquerades by the uplink.

Variants, interleaved in each round (the machine is shared and noisy: ratios, not absolutes):
- one:      1 tenant, its lookup and its NAT prediction;
- hundred:  100 tenants, 100 lookups and 100 NAT predictions (the playbook's shape, one run);
- lookups:  the same 100 lookups without snat_src (the run's floor without the ruleset).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TITLE = "## 11. The fabric proof's NAT prediction: 100 tenants in one `vrf_route_assert` run"
NETNS = "dvn-bench-nat"
RULESET = ROOT / "modules" / "vrf_route_assert" / "tests" / "data" / "fanout-41.nft"
TENANTS = 100
GOAL = 2.0  # the 100-tenant run at most this many times the 1-tenant run


def ip(args: str) -> None:
    subprocess.run(["ip", "-n", NETNS, *args.split()], check=True)


def up() -> None:
    down()
    subprocess.run(["ip", "netns", "add", NETNS], check=True)
    ip("link set lo up")
    ip("link add uplink type veth peer name core")
    ip("link set uplink up")
    ip("link set core up")
    ip("addr add 10.20.50.22/24 dev uplink")
    ip("route add default via 10.20.50.1 dev uplink")
    subprocess.run(["ip", "netns", "exec", NETNS, "nft", "-f", str(RULESET)], check=True)


def down() -> None:
    subprocess.run(["ip", "netns", "del", NETNS], stderr=subprocess.DEVNULL, check=False)


def run_args(tenants: int, nat: bool) -> dict:
    lookups = []
    for n in range(tenants):
        lookup = {"dst": f"203.0.{113 + n // 250}.{n % 250 + 1}", "table": "any"}
        if nat:
            lookup["snat_src"] = f"10.64.{n}.250"
        lookups.append(lookup)
    return {"vrfs": [{"name": "default", "lookups": lookups}]}


VARIANTS = {
    "one": ("1 tenant: 1 lookup, 1 NAT prediction", run_args(1, True), 1),
    "hundred": (f"{TENANTS} tenants: {TENANTS} lookups, {TENANTS} NAT predictions", run_args(TENANTS, True), TENANTS),
    "lookups": (f"{TENANTS} lookups without NAT prediction (the floor)", run_args(TENANTS, False), 0),
}


def run(binary: Path, args: dict) -> tuple[float, dict]:
    """One module run in the namespace; its wall time and result."""
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "args.json"
        path.write_text(json.dumps(args))
        started = time.monotonic()
        done = subprocess.run(["ip", "netns", "exec", NETNS, str(binary), str(path)],
                              capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
    try:
        return wall, json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"vrf_route_assert printed no result: {done.stdout[-2000:]} {done.stderr[-2000:]}")


def predictions(result: dict) -> list:
    """Each lookup's source NAT answer, in order."""
    return [check["actual"]["snat"] for check in result.get("checks") or []
            if str(check.get("check")).startswith("lookup ") and "snat" in check.get("actual", {})]


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "vrf_route_assert"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "vrf_route_assert"


def measure(rounds: int, log=print) -> dict:
    binary = build()
    up()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    try:
        for round_ in range(rounds):
            for name, (_, args, expected) in VARIANTS.items():
                wall, result = run(binary, args)
                answers = predictions(result)
                if result.get("failed") or len(answers) != expected or any(a["translated"] is not True
                                                                           for a in answers):
                    raise SystemExit(f"{name}: not every tenant predicted translated: {result.get('msg')} {answers[:3]}")
                times[name].append(wall)
                log(f"round {round_ + 1}/{rounds} {name}: {wall * 1000:.1f} ms")
    finally:
        down()
    return times


def section(times: dict, command: str) -> str:
    one = statistics.median(times["one"])
    floor = statistics.median(times["lookups"])
    lines = [
        TITLE, "",
        f"Measured {time.strftime('%Y-%m-%d')} by `{command}` ({len(times['one'])} interleaved rounds; load average "
        f"{os.getloadavg()[0]:.1f} at the end). No emulation: the module's release binary in a namespace "
        "`bench/nat_prediction.py` makes, with the 41-rule NAT ruleset of "
        "`modules/vrf_route_assert/tests/data/fanout-41.nft` (every chain jumped to three times from the one above, "
        "12 levels: 3^12 paths, each chain read once). One module run per node, whatever the count of tenants.",
        "",
        "| run | wall, median (min-max) | against the 1-tenant run | against the lookups alone |",
        "|---|---|---|---|",
    ]
    for name, (label, _, _) in VARIANTS.items():
        median = statistics.median(times[name])
        lines.append(f"| {label} | {median * 1000:.1f} ms ({min(times[name]) * 1000:.1f}-"
                     f"{max(times[name]) * 1000:.1f}) | {median / one:.2f}x | {median / floor:.2f}x |")
    ratio = statistics.median(times["hundred"]) / one
    verdict = "met" if ratio <= GOAL else "not met"
    lines += ["", f"Goal: the NAT prediction of {TENANTS} tenants in one run at most {GOAL}x the run of one: "
                  f"**{ratio:.2f}x, {verdict}**."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from sections import command_line
    command_line(__doc__, TITLE, measure, section, "nat_prediction.py", rounds=5)
