#!/usr/bin/env python3
"""egress_probe in network namespaces (make bench, section 7): how a run's time grows with its
probes and targets, against its physical floor, without Ansible and without emulation.

The namespaces (made here, removed at the end; nothing of the host's is touched):

    vm 10.20.129.10 -- vnet0 (10.20.129.1/24) node -- uplink -- router -- internet 203.0.113.8
                                                              (blackhole 198.51.100.0/24)

Variants, interleaved in each round (the machine is shared and noisy: ratios, not absolutes):
- one:      1 probe, 1 answering + 1 blocked target;
- hundred:  100 probes, 1 answering + 4 blocked targets each;
- full:     128 probes x 32 targets (1 answering + 31 blocked), the module's largest run.

The floor of one run is the address check (arp.rs: ANSWER_WAIT, 3 s) plus one wait for a silent
target (count x timeout): a blocked target must stay silent for all of it.

The module runs in a private mount namespace with a tmpfs on /run/lock: its locks never touch
the host's.
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
TITLE = "## 7. `egress_probe` in network namespaces: probes and targets at once"
PREFIX = "dvn-bench-egp"
ADDRESS_CHECK_S = 3.0  # modules/egress_probe/src/arp.rs ANSWER_WAIT
COUNT, TIMEOUT = 3, 2
GOAL = 1.2


def ns(name: str) -> str:
    return f"{PREFIX}-{name}"


def ip(namespace: str, args: str) -> None:
    subprocess.run(["ip", "-n", ns(namespace), *args.split()], check=True)


def pair(a: str, a_end: str, b: str, b_end: str) -> None:
    ip(a, f"link add {a_end} type veth peer name {b_end} netns {ns(b)}")
    ip(a, f"link set {a_end} up")
    ip(b, f"link set {b_end} up")


def sysctl(namespace: str, key: str, value: str) -> None:
    subprocess.run(["ip", "netns", "exec", ns(namespace), "sh", "-c",
                    f"echo {value} > /proc/sys/net/ipv4/{key}"], check=True)


class Lab:
    """The namespaces above, and a reply service on the internet host (ping answers by itself)."""

    NAMES = ("node", "router", "internet", "vm")

    def __init__(self) -> None:
        self.down()
        for name in self.NAMES:
            subprocess.run(["ip", "netns", "add", ns(name)], check=True)
            ip(name, "link set lo up")
        ip("node", "link add vnet0 type bridge stp_state 0 forward_delay 0")
        ip("node", "addr add 10.20.129.1/24 dev vnet0")
        ip("node", "link set vnet0 up")
        pair("vm", "eth0", "node", "tap101i0")
        ip("node", "link set tap101i0 master vnet0")
        ip("vm", "addr add 10.20.129.10/24 dev eth0")
        pair("node", "uplink", "router", "eth0")
        ip("node", "addr add 10.20.50.22/24 dev uplink")
        ip("router", "addr add 10.20.50.1/24 dev eth0")
        pair("router", "inet0", "internet", "eth0")
        ip("router", "addr add 203.0.113.1/24 dev inet0")
        ip("internet", "addr add 203.0.113.8/24 dev eth0")
        ip("internet", "route add default via 203.0.113.1")
        ip("router", "route add 10.20.129.0/24 via 10.20.50.22")
        ip("router", "route add blackhole 198.51.100.0/24")
        ip("node", "route add default via 10.20.50.1")
        sysctl("node", "ip_forward", "1")
        sysctl("router", "ip_forward", "1")

    def down(self) -> None:
        for name in self.NAMES:
            subprocess.run(["ip", "netns", "del", ns(name)], stderr=subprocess.DEVNULL, check=False)

    def run(self, binary: Path, args: dict) -> tuple[float, dict]:
        """One module run on the node; its wall time and result."""
        with tempfile.TemporaryDirectory() as work:
            path = Path(work) / "args.json"
            path.write_text(json.dumps(args))
            script = f"mount -t tmpfs tmpfs /run/lock && exec ip netns exec {ns('node')} {binary} {path}"
            started = time.monotonic()
            done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                                  capture_output=True, text=True, check=False)
            wall = time.monotonic() - started
        try:
            return wall, json.loads(done.stdout)
        except json.JSONDecodeError:
            raise SystemExit(f"egress_probe printed no result: {done.stdout[-2000:]} {done.stderr[-2000:]}")


def targets(blocked: int) -> list[dict]:
    return [{"address": "203.0.113.8"}] + [
        {"address": f"198.51.100.{i + 1}", "expect": "blocked"} for i in range(blocked)]


def run_args(probes: int, blocked: int) -> dict:
    return {"count": COUNT, "timeout": TIMEOUT, "probes": [
        {"name": f"t{i}", "vrf": "default", "address": f"10.20.129.{i + 20}/24",
         "expect_egress_interface": "uplink", "targets": targets(blocked)} for i in range(probes)]}


VARIANTS = {
    "one": ("1 probe: 1 answering + 1 blocked target", run_args(1, 1)),
    "hundred": ("100 probes: 1 answering + 4 blocked each", run_args(100, 4)),
    "full": ("128 probes x 32 targets (1 answering + 31 blocked each)", run_args(128, 31)),
}


def build() -> Path:
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "egress_probe"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "egress_probe"


def measure(rounds: int, log=print) -> dict:
    binary = build()
    lab = Lab()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    try:
        for round_ in range(rounds):
            for name, (_, args) in VARIANTS.items():
                wall, result = lab.run(binary, args)
                if result.get("verdict") != "passed":
                    raise SystemExit(f"{name}: the run did not pass: {result.get('msg')}")
                times[name].append(wall)
                log(f"round {round_ + 1}/{rounds} {name}: {wall:.2f} s")
    finally:
        lab.down()
    return times


def section(times: dict, command: str) -> str:
    one = statistics.median(times["one"])
    floor = ADDRESS_CHECK_S + COUNT * TIMEOUT
    lines = [
        TITLE, "",
        f"Measured {time.strftime('%Y-%m-%d')} by `{command}` ({len(times['one'])} interleaved rounds, "
        f"count {COUNT}, timeout {TIMEOUT} s; load average {os.getloadavg()[0]:.1f} at the end). "
        "No emulation: the module's release binary in namespaces `bench/probe_namespaces.py` makes.",
        "",
        f"The physical floor of a run: the address check ({ADDRESS_CHECK_S:.0f} s, `arp.rs` `ANSWER_WAIT`: "
        "a loaded VM answered ARP after 1.2 s, so a shorter wait would call a used address free) "
        f"plus one wait for a silent target (count x timeout = {COUNT * TIMEOUT} s): **{floor:.1f} s**.",
        "",
        "| run | wall, median (min-max) | against the 1-probe run | against the floor |",
        "|---|---|---|---|",
    ]
    for name, (label, _) in VARIANTS.items():
        median = statistics.median(times[name])
        lines.append(f"| {label} | {median:.2f} s ({min(times[name]):.2f}-{max(times[name]):.2f}) | "
                     f"{median / one:.2f}x | {median / floor:.2f}x |")
    ratio = statistics.median(times["hundred"]) / one
    verdict = "met" if ratio <= GOAL else "not met"
    lines += ["", f"Goal: the 100-probe run at most {GOAL}x the 1-probe run: **{ratio:.2f}x, {verdict}**."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from sections import command_line
    command_line(__doc__, TITLE, measure, section, "probe_namespaces.py", rounds=3)
