#!/usr/bin/env python3
"""Section 12 of BENCHMARKS.md: the guarded change's cost, from the reports its runs kept.

Each run of the playbook deevnet.net.fabric_change keeps `fabric-change.json` in its folder, with
the baseline proof's seconds and, per wave, the seconds of each step (arm, apply, proof, confirm,
restore, restore_proof). This reads the runs under a folder (the all-exit lab's scenario keeps them
in build/fabric-change/lab after `make molecule-all-exit`) and sets, in each run, a wave's gate
(arming, its proof, the confirmation: what the guard adds beyond the change) beside that proof,
and the time from the regression found to the node restored (the restore step, its reloads
included). Nothing is run
here: the lab measured it, under whatever load the machine had (the lab's README says how much).

  bench/fabric_change.py [--runs build/fabric-change/lab] [--output BENCHMARKS.md]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

TITLE = "## 12. The guarded change: each wave's overhead and the time to a restored node"
STEPS = ("arm", "apply", "proof", "confirm", "restore", "restore_proof")


def waves(runs: Path) -> list:
    """Every wave of every kept run that ran its proof: (run id, wave)."""
    rows = []
    for report_path in sorted(runs.glob("*/fabric-change.json")):
        report = json.loads(report_path.read_text())
        for wave in report.get("waves") or []:
            if wave["times"].get("proof"):
                rows.append((report["run_id"], wave))
    return rows


def section(rows: list, command: str) -> str:
    lines = [TITLE, "", f"Reproduce: `{command}` after `make molecule-all-exit` (the all-exit lab under TCG; "
             "its scenario `verify_fabric_change.yml` keeps each run's report).", "",
             "One proof is the wave's own proof run (the fabric proof of every node by a new connection). The "
             "gate is what the guard adds to a wave beyond the change itself: arming the switches, the proof "
             "and the confirmation. A wave that regressed also pays its rollback: the restore (its reloads "
             "included) and the proof after it, which must show the baseline back.", "",
             "| run | wave | outcome | arm | apply | proof | confirm | restore | proof after restore | gate "
             "| gate / one proof |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios, restores = [], []
    for run_id, wave in rows:
        times = wave["times"]
        gate = times.get("arm", 0) + times["proof"] + times.get("confirm", 0)
        ratios.append(gate / times["proof"])
        if times.get("restore"):
            restores.append((times["restore"], times.get("restore_proof", 0)))
        cells = " | ".join(f"{times.get(step, 0):.1f} s" if times.get(step) else "-" for step in STEPS)
        lines.append(f"| {run_id} | {wave['wave']} ({', '.join(wave['nodes'])}) | {wave['outcome']} | {cells} "
                     f"| {gate:.1f} s | {ratios[-1]:.2f}x |")
    if not rows:
        lines.append("| no kept run with a wave proven | | | | | | | | | | |")
    lines.append("")
    if not any(wave["outcome"] == "confirmed" for _run, wave in rows):
        lines.append("No confirmed wave in these runs (the lab's scenario has no good change yet): the gate "
                     "of a regressed wave stands in, its arming and proof (a confirmation is one more node step).")
    if ratios:
        verdict = "met" if max(ratios) <= 2 else "**NOT met**"
        lines.append(f"Goal: each wave's gate at most 2x one proof: {verdict} (at most {max(ratios):.2f}x).")
    if restores:
        lines.append("From the regression found to the node restored (the restore step, its reloads included): "
                     + ", ".join(f"{restore:.1f} s" for restore, _ in restores)
                     + "; with the proof that shows the baseline back: "
                     + ", ".join(f"{restore + proof:.1f} s" for restore, proof in restores) + ".")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="build/fabric-change/lab", help="the folder of the kept runs")
    parser.add_argument("--output", help="BENCHMARKS.md to update in place (its other sections stay)")
    options = parser.parse_args()
    text = section(waves(Path(options.runs)), f"bench/fabric_change.py --runs {options.runs}")
    if options.output:
        from sections import update_section
        update_section(Path(options.output), TITLE, text)
    print(text)


if __name__ == "__main__":
    main()
