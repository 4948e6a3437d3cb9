#!/usr/bin/env python3
"""The fabric proof in the all-exit lab (make bench, section 9): the whole playbook's wall time
against the physical floor of one egress_probe run, and the module runs per node at the lab's two
tenants and at 100.

The lab is the all-exit fabric of molecule/all-exit (tests/lab/all-exit/README.md): molecule's
create, prepare and converge make it (the VM in build/lab-all-exit), the proof then runs as an
operator runs it, from the staged collection, with the callback bench/baseline/callback_plugins/
task_results.py timing each task and counting its results. For 100 tenants,
`all-exit-bench-tenants add 98` adds synthetic tenants (a VRF and a VNet each, and their zones in
the SDN files) on every node; their cells fail (no FRR, no VXLAN), the figure is the count.

The floor: egress_probe's address check (3 s) plus one wait for a target that must stay silent
(count x timeout, 3 x 2 s), 9 s, whatever the tenants and nodes: every node's workloads probe at
once in one window.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sections import update_section

ROOT = Path(__file__).resolve().parent.parent
TITLE = "## 9. The fabric proof in the all-exit lab: its wall time and module runs per node"
STAGE = ROOT / "build/lint/ansible_collections/deevnet/net"
RUN_DIR = ROOT / "build/lab-all-exit"
WORK = ROOT / "build/bench/fabric-proof"
VENV = ROOT / ".venv/bin"
FLOOR_S = 3.0 + 3 * 2.0  # arp.rs ANSWER_WAIT + count x timeout (the playbook's defaults)
GOAL = 2.0
START_MARGIN_S = 10.0  # the playbook's default fabric_proof_start_margin
NODES = 3
# The tasks that are a module run on each node (the others run on the controller).
NODE_ACTIONS = ("deevnet.net.sdn_check", "deevnet.net.bgp_evpn_assert", "deevnet.net.vrf_route_assert",
                "deevnet.net.egress_probe")


def log(text: str) -> None:
    print(f"[fabric-proof {time.strftime('%H:%M:%S')}] {text}", flush=True)


def env() -> dict:
    return dict(os.environ, DEEVNET_REPO_ROOT=str(ROOT), LAB_RUN_DIR=str(RUN_DIR),
                DEEVNET_LAB_ENV=str(RUN_DIR / "lab.env"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build/lint"),
                MOLECULE_GLOB="molecule/*/molecule.yml", PATH=f"{VENV}:{os.environ['PATH']}",
                ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_PIPELINING="True", ANSIBLE_FORKS="3",
                ANSIBLE_SSH_RETRIES="3", ANSIBLE_TIMEOUT="30", ANSIBLE_NOCOLOR="1",
                ANSIBLE_CALLBACKS_ENABLED="task_results",
                ANSIBLE_CALLBACK_PLUGINS=str(ROOT / "bench/baseline/callback_plugins"))


def molecule(step: str) -> None:
    log(f"molecule {step} -s all-exit")
    subprocess.run([str(VENV / "molecule"), step, "-s", "all-exit"], cwd=STAGE, env=env(), check=True,
                   stdout=subprocess.DEVNULL)


def lab(*command: str) -> None:
    subprocess.run([str(ROOT / "tests/lab/all-exit/all-exit"), "run", *command], env=env(), check=True,
                   stdout=subprocess.DEVNULL)


def proof(name: str) -> dict:
    """One run of the playbook: its wall time, the callback's task list and the report's summary."""
    reports = WORK / name
    with tempfile.NamedTemporaryFile(prefix="task-results-", suffix=".json", dir=WORK) as counts:
        cmd = [str(VENV / "ansible-playbook"), f"--inventory={STAGE}/molecule/all-exit/inventory",
               "deevnet.net.fabric_proof", "-e", "fabric_proof_hosts=exit_nodes", "-e", f"fabric_proof_dir={reports}",
               "-e", "fabric_proof_fail=false"]
        start = time.perf_counter()
        done = subprocess.run(cmd, env=dict(env(), DEEVNET_BENCH_TASK_RESULTS=counts.name), capture_output=True,
                              text=True)
        seconds = time.perf_counter() - start
        (WORK / f"{name}.log").write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            raise RuntimeError(f"the proof {name} failed ({done.returncode}): see {WORK / name}.log")
        counted = json.loads(Path(counts.name).read_text())
    report = json.loads((reports / "fabric-proof.json").read_text())
    node_runs = sum(task["results"] - task["skipped"] for task in counted["task_list"]
                    if task["action"] in NODE_ACTIONS)
    probe = [task["seconds"] for task in counted["task_list"] if task["action"] == "deevnet.net.egress_probe"]
    return {"seconds": round(seconds, 2), "tasks": counted["task_list"], "runs_per_node": node_runs / NODES,
            "probe_seconds": probe[0] if probe else None, "summary": report["summary"],
            "tenants": len(report["tenants"])}


def measure(rounds: int, large: int, reuse: bool) -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    if not reuse:
        subprocess.run(["make", "-s", "stage-with-scenarios"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        molecule("destroy")
    results = {"rounds": [], "large": None}
    try:
        for step in () if reuse else ("create", "prepare", "converge"):
            molecule(step)
        for index in range(rounds):
            results["rounds"].append(proof(f"round-{index + 1}"))
            log(f"round {index + 1}: {results['rounds'][-1]['seconds']} s, {results['rounds'][-1]['summary']}")
        lab("/usr/local/sbin/all-exit-bench-tenants", "add", str(large - 2))
        results["large"] = proof(f"tenants-{large}")
        log(f"{large} tenants: {results['large']['seconds']} s, {results['large']['runs_per_node']} runs per node")
        lab("/usr/local/sbin/all-exit-bench-tenants", "remove")
    finally:
        if not reuse:
            molecule("destroy")
    (WORK / "results.json").write_text(json.dumps(results, indent=1))
    return results


def section(results: dict, command: str) -> str:
    rounds, large = results["rounds"], results["large"]
    wall = statistics.median(run["seconds"] for run in rounds)
    probe = statistics.median(run["probe_seconds"] for run in rounds)
    ratio = wall / FLOOR_S
    lines = [TITLE, "", f"Reproduce: `{command}` ({time.strftime('%Y-%m-%d')}; the all-exit lab under TCG, "
             "three hypervisors, the converged fabric of molecule/all-exit, its two tenants).", "",
             f"The floor is one egress_probe run's wait: the address check and one count x timeout, {FLOOR_S:.0f} s.",
             "", "| run | tenants | wall | egress_probe task | cells passed | module runs per node |",
             "|---|---|---|---|---|---|"]
    for index, run in enumerate(rounds + ([large] if large else [])):
        name = f"round {index + 1}" if index < len(rounds) else "synthetic"
        lines.append(f"| {name} | {run['tenants']} | {run['seconds']:.1f} s | {run['probe_seconds']:.1f} s | "
                     f"{run['summary']['passed']}/{run['summary']['cells']} | {run['runs_per_node']:g} |")
    lines += ["", f"Goal: the whole proof at most {GOAL:g}x the floor: **{'met' if ratio <= GOAL else 'NOT met'}** "
              f"({ratio:.2f}x: {wall:.1f} s against {FLOOR_S:.0f} s, median of {len(rounds)}); its egress_probe task "
              f"alone {probe:.1f} s ({probe / FLOOR_S:.2f}x)."]
    if large:
        same = large["runs_per_node"] == rounds[0]["runs_per_node"]
        lines.append(f"Goal: the same module runs per node at {rounds[0]['tenants']} and {large['tenants']} tenants: "
                     f"**{'met' if same else 'NOT met'}** ({rounds[0]['runs_per_node']:g} and "
                     f"{large['runs_per_node']:g}).")
    lines += ["", "Where the rest goes: the egress_probe task waits for the shared start, which the controller "
              f"sets {START_MARGIN_S:g} s ahead (`fabric_proof_start_margin`, sized for nodes that start the task "
              "seconds apart) and which covers the module's own address check; the workloads then stay up for the "
              "whole window (count x timeout) so that every peer finds them. The other tasks are one round trip "
              "each; the NAT prediction is part of vrf_route_assert's run (no nftables listing of its own). At 100 tenants "
              "the module makes 100 workloads per node (no more round trips: the count holds).",
              "", "Where the time goes (median seconds per task over the rounds, from its start to its last "
              "host's result):", "", "| task | seconds |", "|---|---|"]
    names = [task["name"] for task in rounds[0]["tasks"]]
    for name in names:
        times = [task["seconds"] for run in rounds for task in run["tasks"] if task["name"] == name]
        lines.append(f"| {name} | {statistics.median(times):.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tenants", type=int, default=100, help="the large run's tenants (default 100)")
    parser.add_argument("--output", help="BENCHMARKS.md to update in place (its other sections stay)")
    parser.add_argument("--from-results", action="store_true", help="measure nothing: report the saved figures")
    parser.add_argument("--reuse", action="store_true",
                        help="the all-exit lab is up and converged (molecule converge -s all-exit): use it, keep it")
    options = parser.parse_args()
    results = (json.loads((WORK / "results.json").read_text()) if options.from_results
               else measure(options.rounds, options.tenants, options.reuse))
    text = section(results, f"bench/fabric_proof.py --rounds {options.rounds} --tenants {options.tenants}")
    if options.output:
        update_section(Path(options.output), TITLE, text)
    print(text)


if __name__ == "__main__":
    main()
