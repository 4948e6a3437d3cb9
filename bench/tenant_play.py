#!/usr/bin/env python3
"""Benchmark 2 of issue 8: the whole `--tags tenant-egress` play at 1, 100 and 1,000 tenants.

deevnet.net's role (bench/baseline/deevnet.yml: roles/proxmox_node_network, five tasks) against
a baseline role that does the same job with stock modules, one task per tenant
(bench/baseline/baseline.yml: ansible.posix.sysctl, blockinfile on frr.conf.local,
`command: ip route get ... vrf ...` with assert), both over SSH against the lab VM
(tests/lab, a Proxmox-like exit node under QEMU) in its own run folder.

For each tenant count N:
  * the node gets N tenant VRFs (vrf_t0001 ..., each with its own table, created once with one
    `ip -batch`), and an inventory lists them with one management probe each;
  * converge: from the incident's state (lab-reset-faults: no frr.conf.local, no sysctl.d file,
    transit forwarding 0), each play fixes the node, FRR loads the N stanzas (lab-sdn-apply) and
    the play proves the routing outcome. Timed once per play;
  * steady state: the play run again on the converged node (what a scheduled run costs), which
    must change nothing. Timed in `rounds` interleaved rounds. Each play keeps its converged
    frr.conf.local under its own name for these runs, so they do not undo each other, and the
    FRR apply command becomes `false`: a run that wanted to reload FRR would fail loudly.
Every run counts its module executions (a loop item is one, a handler is one) with the
callback bench/baseline/callback_plugins/task_results.py.

Standalone:  bench/tenant_play.py [--sizes 1,100,1000] [--rounds 3] [--baseline-max-tenants 100]
             [--update BENCHMARKS.md]   (replaces this benchmark's section in that file)
From make bench: bench/run.py --tenant-play (appends the section to BENCHMARKS.md).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
BASELINE_DIR = ROOT / "bench" / "baseline"
LAB = ROOT / "tests" / "lab" / "lab"
WORK = ROOT / "build" / "bench" / "tenant-play"
DEFAULT_LAB_RUN_DIR = ROOT / "build" / "lab-bench"

SECTION_TITLE = "## 4. The whole `--tags tenant-egress` play, 1 to 1,000 tenants (lab VM)"

# The lab's exit node (tests/lab/README.md). One management probe per tenant keeps the baseline
# at one `ip route get` per tenant; the deevnet role checks the same lookup plus the default.
TRANSIT_INTERFACE = "vmbr0.50"
TRANSIT_GATEWAY = "10.20.50.1"
MANAGEMENT_INTERFACE = "vmbr0"
MANAGEMENT_PROBE = "10.20.99.5"
FIRST_TENANT_TABLE = 20001

GUEST_FRR_LOCAL = "/etc/frr/frr.conf.local"
DEEVNET_SYSCTL_FILE = "/etc/sysctl.d/90-deevnet-tenant-fabric.conf"
BASELINE_SYSCTL_FILE = "/etc/sysctl.d/90-baseline-tenant-fabric.conf"

# name: (playbook, frr.conf.local kept for the steady-state runs, variables naming the files)
PLAYS = {
    "deevnet.net role": ("deevnet.yml", "/etc/frr/bench-deevnet.conf.local",
                         "proxmox_node_network_frr_local_path", "proxmox_node_network_frr_apply_command"),
    "baseline (stock modules)": ("baseline.yml", "/etc/frr/bench-baseline.conf.local",
                                 "tenant_egress_baseline_frr_local_path",
                                 "tenant_egress_baseline_frr_apply_command"),
}
DEEVNET, BASELINE = PLAYS


def log(msg: str) -> None:
    print(f"[tenant-play {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def tenant_vrf(index: int) -> str:
    return f"vrf_t{index:04d}"


# --- the lab VM ----------------------------------------------------------------------------------

class LabVM:
    """tests/lab/lab in a run folder of its own, so no other engineer's VM is touched."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.env = dict(os.environ, LAB_RUN_DIR=str(run_dir))
        self.lab_env_file = run_dir / "lab.env"

    def lab(self, *args: str, stdin: str | None = None) -> str:
        proc = subprocess.run([str(LAB), *args], env=self.env, input=stdin, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise RuntimeError(f"tests/lab/lab {' '.join(args)} failed ({proc.returncode}):\n"
                               f"{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def script(self, text: str) -> str:
        """One bash script in the guest: one SSH round trip however much it does."""
        return self.lab("run", "bash", "-s", stdin="set -euo pipefail\n" + text)

    def start(self) -> None:
        log(f"booting the lab VM in {self.run_dir} and provisioning it")
        self.lab("up")
        self.lab("provision")

    def stop(self) -> None:
        log("stopping the lab VM")
        self.lab("down")


def add_tenant_vrfs(vm: LabVM, count: int) -> None:
    """vrf_t0001 ... with their own tables, up, no ports: what the VRF check and a lookup need."""
    commands = []
    for index in range(1, count + 1):
        vrf = tenant_vrf(index)
        commands += [f"link add {vrf} type vrf table {FIRST_TENANT_TABLE + index - 1}", f"link set {vrf} up"]
    out = vm.script(
        "ip -batch - <<'BATCH'\n" + "\n".join(commands) + "\nBATCH\n"
        "echo tenant_vrfs=$(ip -brief link show type vrf | grep -c '^vrf_t[0-9]')\n")
    made = int(out.split("tenant_vrfs=")[1].split()[0])
    if made != count:
        raise RuntimeError(f"expected {count} tenant VRFs in the VM, found {made}:\n{out}")


def reset_node(vm: LabVM) -> None:
    """The incident's state again: neither play's files, transit forwarding 0, FRR re-applied."""
    vm.script(f"rm -f {BASELINE_SYSCTL_FILE} /etc/frr/bench-*.conf.local\n"
              "lab-reset-faults >/dev/null\n")


def keep_converged_frr_local(vm: LabVM, kept_as: str) -> None:
    vm.script(f"cp {GUEST_FRR_LOCAL} {kept_as}\n")


# --- the plays -----------------------------------------------------------------------------------

@dataclass
class PlayRun:
    seconds: float
    task_results: int  # module executions: a loop item is one, a handler is one
    tasks: int  # tasks that produced them
    changed: int


@dataclass
class SizeResult:
    tenants: int
    converge: dict[str, PlayRun] = field(default_factory=dict)
    steady: dict[str, list[PlayRun]] = field(default_factory=dict)


def write_inventory(path: Path, vm: LabVM, tenants: int) -> Path:
    """The molecule inventory's host (tests/lab's SSH port and key) with N tenants, as JSON."""
    host = {
        "ansible_host": "127.0.0.1",
        "ansible_user": "root",
        "ansible_port": "{{ lookup('ansible.builtin.ini', 'LAB_SSH_PORT', type='properties', file='%s') }}"
                        % vm.lab_env_file,
        "ansible_ssh_private_key_file": "{{ lookup('ansible.builtin.ini', 'LAB_SSH_KEY', type='properties', "
                                        "file='%s') }}" % vm.lab_env_file,
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        "ansible_python_interpreter": "/usr/bin/python3",
        "proxmox_tenant_egress": {
            "transit_interface": TRANSIT_INTERFACE,
            "transit_gateway": TRANSIT_GATEWAY,
            "management_interface": MANAGEMENT_INTERFACE,
            "management_probes": [MANAGEMENT_PROBE],
            "asn": 65020,
            "tenants": [{"name": f"t{i:04d}"} for i in range(1, tenants + 1)],
        },
        # The lab has no Proxmox: its own command merges frr.conf.local as Proxmox does.
        "proxmox_node_network_frr_apply_command": ["/usr/local/sbin/lab-sdn-apply"],
    }
    path.write_text(json.dumps({"all": {"hosts": {"hv02": host}}}, indent=1))
    return path


def run_play(name: str, inventory: Path, env: dict, extra_vars: dict, expect_changes: bool) -> PlayRun:
    playbook = PLAYS[name][0]
    with tempfile.NamedTemporaryFile(prefix="task-results-", suffix=".json", dir=WORK) as counts:
        play_env = dict(env, DEEVNET_BENCH_TASK_RESULTS=counts.name)
        cmd = [str(VENV / "ansible-playbook"), "-i", str(inventory), str(BASELINE_DIR / playbook),
               "--tags", "tenant-egress", "-e", json.dumps(extra_vars)]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=play_env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        output_log = WORK / f"last-{playbook}.log"
        output_log.write_text(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            raise RuntimeError(f"{name} failed ({proc.returncode}), output in {output_log}:\n"
                               f"{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
        counted = json.loads(Path(counts.name).read_text() or "{}")
    if not counted:
        raise RuntimeError(f"{name}: the task_results callback wrote nothing (is it enabled?)")
    if counted["failed"]:
        raise RuntimeError(f"{name}: {counted['failed']} task results failed, output in {output_log}")
    if not expect_changes and counted["changed"]:
        raise RuntimeError(f"{name}: the steady-state run changed {counted['changed']} things, "
                           f"output in {output_log}")
    return PlayRun(seconds, counted["task_results"], counted["tasks"], counted["changed"])


def ansible_env(base_env: dict) -> dict:
    """Pipelining on for both plays: the stock modules' best case. The default stdout callback."""
    callbacks = ",".join(filter(None, [base_env.get("ANSIBLE_CALLBACKS_ENABLED", ""), "task_results"]))
    return dict(base_env, ANSIBLE_PIPELINING="True", ANSIBLE_CALLBACKS_ENABLED=callbacks,
                ANSIBLE_CALLBACK_PLUGINS=str(BASELINE_DIR / "callback_plugins"),
                ANSIBLE_ROLES_PATH=str(BASELINE_DIR / "roles"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_HOST_KEY_CHECKING="False")


def bench_size(vm: LabVM, env: dict, tenants: int, rounds: int, plays: list[str]) -> SizeResult:
    inventory = write_inventory(WORK / f"inventory-{tenants}.json", vm, tenants)
    result = SizeResult(tenants)
    for name in plays:
        _, kept_as, frr_local_var, _ = PLAYS[name]
        log(f"{tenants} tenants, {name}: converge from the incident's state")
        reset_node(vm)
        run = run_play(name, inventory, env, {frr_local_var: GUEST_FRR_LOCAL}, expect_changes=True)
        keep_converged_frr_local(vm, kept_as)
        result.converge[name] = run
        log(f"  {run.seconds:.1f} s, {run.task_results} task results ({run.tasks} tasks), {run.changed} changed")
    for round_index in range(rounds):
        for name in plays:
            _, kept_as, frr_local_var, apply_var = PLAYS[name]
            run = run_play(name, inventory, env, {frr_local_var: kept_as, apply_var: ["false"]},
                           expect_changes=False)
            result.steady.setdefault(name, []).append(run)
        log(f"{tenants} tenants, steady-state round {round_index + 1}/{rounds}: " + ", ".join(
            f"{name} {runs[-1].seconds:.1f} s ({runs[-1].task_results} results)"
            for name, runs in result.steady.items()))
    return result


def bench_tenant_play(env: dict, sizes: list[int], rounds: int, baseline_max_tenants: int,
                      lab_run_dir: Path) -> list[SizeResult]:
    """Boots the lab in its own run folder, measures every size, always stops the VM."""
    WORK.mkdir(parents=True, exist_ok=True)
    env = ansible_env(env)
    vm = LabVM(lab_run_dir)
    vm.start()
    try:
        add_tenant_vrfs(vm, max(sizes))
        # Warm-up, not timed: the fast path's one-time binary upload, SSH, the guest's page cache.
        log("warm-up (not reported): both plays at 1 tenant")
        bench_size(vm, env, 1, 1, list(PLAYS))
        results = []
        for tenants in sizes:
            plays = [DEEVNET] + ([BASELINE] if tenants <= baseline_max_tenants else [])
            results.append(bench_size(vm, env, tenants, rounds, plays))
        return results
    finally:
        vm.stop()


# --- report --------------------------------------------------------------------------------------

def seconds_summary(runs: list[PlayRun]) -> str:
    times = [run.seconds for run in runs]
    return f"{statistics.median(times):.1f} s ({min(times):.1f}-{max(times):.1f})"


def task_results_of(runs: list[PlayRun]) -> str:
    counts = sorted({run.task_results for run in runs})
    return "/".join(str(count) for count in counts)


def report_section(results: list[SizeResult], command: str, rounds: int, baseline_max_tenants: int) -> str:
    lines = [SECTION_TITLE, "",
             f"Reproduce: `{command}` ({time.strftime('%Y-%m-%d')}; the lab VM under "
             f"{lab_accel_note()}, 2 cores shared with other work). Both plays over SSH with pipelining, "
             "against the lab's exit node with N tenant VRFs (vrf_t0001 ..., one management probe each). "
             "*Converge*: from the incident's state (no frr.conf.local, no sysctl.d file, transit "
             "forwarding 0) to fixed, FRR reloaded with N stanzas, outcome asserted; one run per play. "
             f"*Steady state*: the same play again on the converged node, nothing changed; median "
             f"(min-max) of {rounds} interleaved rounds. *Task results*: module executions counted "
             "by a callback (each loop item and the FRR handler count one).", "",
             "| tenants | play | task results (converge / steady) | converge | steady state | "
             "baseline / deevnet (steady, converge) |",
             "|---|---|---|---|---|---|"]
    for size in results:
        for name in PLAYS:
            if name not in size.converge:
                lines.append(f"| {size.tenants:,} | {name} | not measured | | | |")
                continue
            steady = size.steady.get(name, [])
            ratio = ""
            if name == BASELINE:
                steady_ratio = (statistics.median(r.seconds for r in steady)
                                / statistics.median(r.seconds for r in size.steady[DEEVNET]))
                converge_ratio = size.converge[BASELINE].seconds / size.converge[DEEVNET].seconds
                ratio = f"**{steady_ratio:.1f}x**, {converge_ratio:.1f}x"
            lines.append(f"| {size.tenants:,} | {name} | {size.converge[name].task_results} / "
                         f"{task_results_of(steady)} | {size.converge[name].seconds:.1f} s | "
                         f"{seconds_summary(steady) if steady else 'not run'} | {ratio} |")
    lines += [""] + goal_lines(results, baseline_max_tenants)
    return "\n".join(lines) + "\n"


def goal_lines(results: list[SizeResult], baseline_max_tenants: int) -> list[str]:
    deevnet_counts = {size.tenants: {run.task_results for run in size.steady.get(DEEVNET, [])}
                      | {size.converge[DEEVNET].task_results} for size in results}
    steady_counts = {size.tenants: {run.task_results for run in size.steady.get(DEEVNET, [])} for size in results}
    all_steady = set().union(*steady_counts.values())
    converge_counts = {size.converge[DEEVNET].task_results for size in results}
    independent = len(all_steady) <= 1 and len(converge_counts) == 1
    lines = [f"Goal 1, deevnet's task count independent of the tenant count: "
             f"{'**met**' if independent else '**NOT met**'} "
             f"(task results by tenant count: "
             + ", ".join(f"{n:,}: {'/'.join(map(str, sorted(c)))}" for n, c in deevnet_counts.items())
             + "; converge runs include the FRR handler)."]
    at_100 = next((size for size in results if size.tenants == 100 and BASELINE in size.steady), None)
    if at_100:
        ratio = (statistics.median(r.seconds for r in at_100.steady[BASELINE])
                 / statistics.median(r.seconds for r in at_100.steady[DEEVNET]))
        converge_ratio = at_100.converge[BASELINE].seconds / at_100.converge[DEEVNET].seconds
        met = ratio >= 10 and converge_ratio >= 10
        lines.append(f"Goal 2, at least 10x faster than the baseline at 100 tenants: "
                     f"{'**met**' if met else '**NOT met**'} ({ratio:.1f}x steady state, "
                     f"{converge_ratio:.1f}x converge).")
    else:
        lines.append("Goal 2, at least 10x faster than the baseline at 100 tenants: not measured in this run.")
    skipped = [size.tenants for size in results if BASELINE not in size.converge]
    if skipped:
        lines.append("")
        lines.append(f"The baseline is not run above {baseline_max_tenants:,} tenants "
                     f"(`--baseline-max-tenants`): it runs one module per tenant and step, about four "
                     "per tenant, and each costs seconds of Python in the emulated VM, so 1,000 tenants "
                     "would take hours here. Its task results grow linearly with the tenant count "
                     "(table above); no time is given for what was not measured.")
    return lines


def lab_accel_note() -> str:
    return "QEMU (TCG emulation where the host has no usable KVM: the guest's Python is slow)"


def update_section(path: Path, section: str) -> None:
    """Replaces this benchmark's section in an existing BENCHMARKS.md, or appends it."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start = text.find(SECTION_TITLE)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(SECTION_TITLE))
        text = text[:start] + section + ("" if end == -1 else "\n" + text[end + 1:])
    path.write_text(text)


# --- standalone ----------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared with bench/run.py --tenant-play."""
    parser.add_argument("--tenant-sizes", default="1,100,1000",
                        help="tenant counts, comma-separated (default 1,100,1000)")
    parser.add_argument("--tenant-rounds", type=int, default=3,
                        help="interleaved steady-state rounds per tenant count (default 3)")
    parser.add_argument("--baseline-max-tenants", type=int, default=100,
                        help="run the baseline only up to this many tenants (default 100)")
    parser.add_argument("--lab-run-dir", default=str(DEFAULT_LAB_RUN_DIR),
                        help="the lab VM's run folder (its own, so no other VM is touched)")


def sizes_of(args) -> list[int]:
    sizes = [int(part) for part in args.tenant_sizes.split(",")]
    if not sizes or min(sizes) < 1 or max(sizes) > 9999:
        raise SystemExit("--tenant-sizes: between 1 and 9999 tenants (VRF names are vrf_tNNNN)")
    return sizes


def run_from_args(env: dict, args, command: str) -> str:
    results = bench_tenant_play(env, sizes_of(args), args.tenant_rounds, args.baseline_max_tenants,
                                Path(args.lab_run_dir))
    return report_section(results, command, args.tenant_rounds, args.baseline_max_tenants)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--update", metavar="BENCHMARKS_MD",
                        help="replace (or append) this benchmark's section in that file")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run as bench_run  # bench/run.py: ansible.posix from PyPI, the collection installed

    collections = bench_run.ensure_ansible_posix()
    installed = WORK / "installed"
    shutil.rmtree(installed, ignore_errors=True)
    tarball = sorted(ROOT.glob("dist/deevnet-net-*.tar.gz"))
    if not tarball:
        raise SystemExit("no dist/deevnet-net-*.tar.gz: run `make collection` first")
    bench_run.run([VENV / "ansible-galaxy", "collection", "install", "--force", "-p", installed, tarball[-1]],
                  stdout=subprocess.DEVNULL)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{installed}:{collections}",
               ANSIBLE_HOME=str(WORK / "ansible-home"))
    command = "bench/tenant_play.py " + " ".join(sys.argv[1:])
    section = run_from_args(env, args, command.strip())
    print(section)
    if args.update:
        update_section(Path(args.update), section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
