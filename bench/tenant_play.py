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

Standalone:  bench/tenant_play.py [--tenant-sizes 1,100,1000] [--tenant-rounds 3]
             [--baseline-max-tenants 100] [--baseline-steady-max-tenants 100]
             [--update BENCHMARKS.md]   (replaces this benchmark's section in that file)
             bench/tenant_play.py --from-results [--update BENCHMARKS.md]   (re-report, measure nothing)
From make bench: make bench BENCH_ARGS=--tenant-play (bench/run.py appends the section).
The baseline runs one Python module per tenant and step; under TCG that is tens of minutes per
run at 100 tenants, so the baseline is not run above --baseline-max-tenants (see bench/README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import sections  # bench/sections.py
from installed_collections import collections_env, ensure_ansible_posix, install_built_collection

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
BASELINE_DIR = ROOT / "bench" / "baseline"
LAB = ROOT / "tests" / "lab" / "lab"
WORK = ROOT / "build" / "bench" / "tenant-play"
DEFAULT_LAB_RUN_DIR = ROOT / "build" / "lab-bench"
RESULTS = WORK / "results.json"

SECTION_TITLE = "## 4. The whole `--tags tenant-egress` play, 1 to 1,000 tenants (lab VM)"

# The lab's exit node (tests/lab/README.md). One management probe per tenant keeps the baseline
# at one `ip route get` per tenant; the deevnet role checks the same lookup plus the default.
TRANSIT_INTERFACE = "vmbr0.50"
TRANSIT_GATEWAY = "10.20.50.1"
MANAGEMENT_INTERFACE = "vmbr0"
MANAGEMENT_PROBE = "10.20.99.5"
FIRST_TENANT_TABLE = 20001

GUEST_FRR_LOCAL = "/etc/frr/frr.conf.local"
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
        # FRR learning 1,000 links one by one under TCG can time out a reload later (the lab then
        # restarts FRR in a state where zebra has lost mgmtd); a restart reads them all at once.
        "udevadm settle --timeout=900\n"
        "systemctl restart frr\n"
        "echo tenant_vrfs=$(ip -brief link show type vrf | grep -c '^vrf_t[0-9]')\n")
    made = int(out.split("tenant_vrfs=")[1].split()[0])
    if made != count:
        raise RuntimeError(f"expected {count} tenant VRFs in the VM, found {made}:\n{out}")
    # Each new link is a udev event (systemd-sysctl, networkd) and work for zebra: under TCG,
    # 1,000 of them keep the guest busy for minutes, which must not land in a timed run.
    wait_until_quiet(vm)


def wait_until_quiet(vm: LabVM, load_below: float = 1.5, timeout_s: int = 900) -> None:
    """Waits for the udev queue to drain and the guest's 1-minute load to fall below `load_below`."""
    out = vm.script(f"""
udevadm settle --timeout={timeout_s}
for _ in $(seq {timeout_s // 10}); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  awk -v l="$load" 'BEGIN {{ exit !(l < {load_below}) }}' && break
  sleep 10
done
echo "load=$(cut -d' ' -f1 /proc/loadavg)"
""")
    load = float(out.split("load=")[1].split()[0])
    if load >= load_below:
        log(f"warning: the guest's load is still {load} after {timeout_s} s; timing anyway")


def reset_node(vm: LabVM, forget_kept_state: bool = False) -> None:
    """The incident's state again: no frr.conf.local and no deevnet sysctl.d file, transit
    forwarding 0, FRR re-applied. `forget_kept_state` also removes what earlier converge runs
    kept for the steady-state runs (their frr.conf.local copies, the baseline's sysctl.d file)."""
    forget = f"rm -f {BASELINE_SYSCTL_FILE} /etc/frr/bench-*.conf.local\n" if forget_kept_state else ""
    vm.script(forget + "lab-reset-faults >/dev/null\n")


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
    error: str = ""  # why this tenant count stopped short; reported, and the run exits non-zero


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
        "proxmox_node_network_tenant_egress": {
            "transit_interface": TRANSIT_INTERFACE,
            "transit_gateway": TRANSIT_GATEWAY,
            "management_interface": MANAGEMENT_INTERFACE,
            "management_probes": [MANAGEMENT_PROBE],
            "asn": 65020,
            "tenants": [{"name": f"t{i:04d}"} for i in range(1, tenants + 1)],
        },
        # The lab has no Proxmox: its own command merges frr.conf.local as Proxmox does.
        "proxmox_node_network_frr_apply_command": ["/usr/local/sbin/lab-sdn-apply"],
        # The N tenants are VRFs made for the benchmark, not zones of the lab's SDN.
        "proxmox_node_network_sdn": "ignore",
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


def bench_size(vm: LabVM, env: dict, result: SizeResult, settings: "Settings", saved) -> None:
    """Converge, then steady-state rounds, for one tenant count; `saved()` after every run."""
    tenants = result.tenants
    inventory = write_inventory(WORK / f"inventory-{tenants}.json", vm, tenants)
    baseline_converges = tenants <= settings.baseline_max_tenants
    baseline_rounds = settings.rounds if tenants <= settings.baseline_steady_max_tenants else 0
    reset_node(vm, forget_kept_state=True)
    # The baseline converges first: the reset before deevnet's converge leaves the baseline's
    # sysctl.d file (it only sets what deevnet sets) and its kept frr.conf.local in place, so
    # both plays find their converged state in the steady-state rounds.
    for name in ([BASELINE] if baseline_converges else []) + [DEEVNET]:
        _, kept_as, frr_local_var, _ = PLAYS[name]
        log(f"{tenants} tenants, {name}: converge from the incident's state")
        reset_node(vm)
        run = run_play(name, inventory, env, {frr_local_var: GUEST_FRR_LOCAL}, expect_changes=True)
        keep_converged_frr_local(vm, kept_as)
        result.converge[name] = run
        saved()
        log(f"  {run.seconds:.1f} s, {run.task_results} task results ({run.tasks} tasks), {run.changed} changed")
    for round_index in range(settings.rounds):
        plays = [DEEVNET] + ([BASELINE] if baseline_converges and round_index < baseline_rounds else [])
        for name in plays:
            _, kept_as, frr_local_var, apply_var = PLAYS[name]
            run = run_play(name, inventory, env, {frr_local_var: kept_as, apply_var: ["false"]},
                           expect_changes=False)
            result.steady.setdefault(name, []).append(run)
            saved()
        log(f"{tenants} tenants, steady-state round {round_index + 1}/{settings.rounds}: " + ", ".join(
            f"{name} {result.steady[name][-1].seconds:.1f} s ({result.steady[name][-1].task_results} results)"
            for name in plays))


@dataclass
class Settings:
    sizes: list[int]
    rounds: int
    baseline_max_tenants: int
    baseline_steady_max_tenants: int
    command: str


def bench_tenant_play(env: dict, settings: Settings, lab_run_dir: Path) -> list[SizeResult]:
    """Boots the lab in its own run folder, measures every size, always stops the VM. The raw
    figures are saved to RESULTS after every run (a run cut short keeps what it measured)."""
    WORK.mkdir(parents=True, exist_ok=True)
    env = ansible_env(env)
    vm = LabVM(lab_run_dir)
    results: list[SizeResult] = []
    vm.start()
    try:
        add_tenant_vrfs(vm, max(settings.sizes))
        # Warm-up, not reported: the fast path's one-time binary upload, SSH, the guest's caches.
        log("warm-up (not reported): the deevnet play at 1 tenant")
        warm_up = Settings([1], 1, baseline_max_tenants=0, baseline_steady_max_tenants=0, command="")
        bench_size(vm, env, SizeResult(1), warm_up, saved=lambda: None)
        for tenants in settings.sizes:
            results.append(SizeResult(tenants))
            try:
                bench_size(vm, env, results[-1], settings, saved=lambda: save_results(results, settings))
            except RuntimeError as failure:  # the next tenant count still runs; the report says so
                results[-1].error = str(failure).strip().splitlines()[0][:300]
                save_results(results, settings)
                log(f"FAILED at {tenants} tenants: {failure}")
        return results
    finally:
        vm.stop()


def save_results(results: list[SizeResult], settings: Settings) -> None:
    RESULTS.write_text(json.dumps({"settings": asdict(settings), "date": time.strftime("%Y-%m-%d"),
                                   "results": [asdict(size) for size in results]}, indent=1))


def load_results(path: Path) -> tuple[list[SizeResult], Settings, str]:
    data = json.loads(path.read_text())
    results = [SizeResult(size["tenants"],
                          {name: PlayRun(**run) for name, run in size["converge"].items()},
                          {name: [PlayRun(**run) for run in runs] for name, runs in size["steady"].items()},
                          size.get("error", ""))
               for size in data["results"]]
    return results, Settings(**data["settings"]), data["date"]


# --- report --------------------------------------------------------------------------------------

def median_seconds(runs: list[PlayRun]) -> float:
    return statistics.median(run.seconds for run in runs)


def seconds_summary(runs: list[PlayRun]) -> str:
    times = [run.seconds for run in runs]
    if len(times) == 1:
        return f"{times[0]:.1f} s (1 run)"
    return f"{statistics.median(times):.1f} s ({min(times):.1f}-{max(times):.1f})"


def ratio_cells(size: SizeResult) -> str:
    """Baseline time over deevnet time, steady state (medians) and converge, where both ran."""
    cells = []
    if size.steady.get(BASELINE) and size.steady.get(DEEVNET):
        cells.append(f"**{median_seconds(size.steady[BASELINE]) / median_seconds(size.steady[DEEVNET]):.1f}x** steady")
    if BASELINE in size.converge:
        cells.append(f"**{size.converge[BASELINE].seconds / size.converge[DEEVNET].seconds:.1f}x** converge")
    return ", ".join(cells)


def report_section(results: list[SizeResult], settings: Settings, date: str) -> str:
    # A tenant count still running (raw figures saved mid-run) has nothing to show yet.
    results = sorted((size for size in results if size.converge or size.error), key=lambda size: size.tenants)
    lines = [SECTION_TITLE, "",
             f"Reproduce: `{settings.command}` ({date}; the lab VM under QEMU with TCG emulation, as "
             "this machine has no usable KVM, on 2 host cores shared with other work). Both plays over "
             "SSH with pipelining against the lab's exit node with N tenant VRFs (vrf_t0001 ..., one "
             "management probe each), the role with `--tags tenant-egress`, the baseline role "
             "`bench/baseline` with the same inventory.", "",
             "- *Converge*: from the incident's state (no frr.conf.local, no sysctl.d file, transit "
             "forwarding 0) to fixed, FRR reloaded with the N stanzas (`lab-sdn-apply`), outcome "
             "asserted; one run per play.",
             f"- *Steady state*: the same play again on the converged node, nothing changed; median "
             f"(min-max) of up to {settings.rounds} interleaved rounds.",
             "- *Task results*: module executions counted by a callback "
             "(`bench/baseline/callback_plugins/task_results.py`): each loop item counts one, so does "
             "the FRR handler and the role's argument validation.", "",
             "| tenants | play | task results, converge / steady | converge | steady state | "
             "baseline / deevnet |",
             "|---|---|---|---|---|---|"]
    for size in results:
        for name in PLAYS:
            if name not in size.converge:
                lines.append(f"| {size.tenants:,} | {name} | {'FAILED' if size.error else 'not run'} | | | |")
                continue
            steady = size.steady.get(name, [])
            steady_counts = "/".join(str(c) for c in sorted({run.task_results for run in steady})) or "-"
            lines.append(f"| {size.tenants:,} | {name} | {size.converge[name].task_results} / {steady_counts} | "
                         f"{size.converge[name].seconds:.1f} s | "
                         f"{seconds_summary(steady) if steady else 'not run'} | "
                         f"{ratio_cells(size) if name == BASELINE else ''} |")
    lines += [""] + goal_lines(results, settings)
    return "\n".join(lines) + "\n"


def goal_lines(results: list[SizeResult], settings: Settings) -> list[str]:
    failures = [f"**FAILED at {size.tenants:,} tenants**: {size.error}" for size in results if size.error]
    results = [size for size in results if DEEVNET in size.converge]
    converge_counts = {size.tenants: size.converge[DEEVNET].task_results for size in results}
    steady_counts = {size.tenants: {run.task_results for run in size.steady.get(DEEVNET, [])} for size in results}
    independent = (len(set(converge_counts.values())) == 1
                   and len(set().union(*steady_counts.values())) <= 1)
    lines = ["Goal: deevnet's task count independent of the tenant count: "
             + ("**met**" if independent else "**NOT met**") + " (task results, converge / steady, by "
             "tenant count: " + ", ".join(
                 f"{n:,}: {converge_counts[n]} / {'/'.join(map(str, sorted(steady_counts[n]))) or '-'}"
                 for n in converge_counts) + ").", ""]
    at_100 = next((size for size in results if size.tenants == 100 and BASELINE in size.converge), None)
    if at_100 is None:
        lines.append("Goal: at least 10x faster than the baseline at 100 tenants: not measured in this run.")
    else:
        ratios = [size_ratio for size_ratio in (
            median_seconds(at_100.steady[BASELINE]) / median_seconds(at_100.steady[DEEVNET])
            if at_100.steady.get(BASELINE) else None,
            at_100.converge[BASELINE].seconds / at_100.converge[DEEVNET].seconds) if size_ratio is not None]
        lines.append("Goal: at least 10x faster than the baseline at 100 tenants: "
                     + ("**met**" if min(ratios) >= 10 else "**NOT met**") + f" ({ratio_cells(at_100)}).")
    not_converged = [size.tenants for size in results if BASELINE not in size.converge]
    no_steady = [size.tenants for size in results if BASELINE in size.converge and not size.steady.get(BASELINE)]
    if not_converged or no_steady:
        lines += ["", "Not measured, and why: the baseline runs one Python module per tenant and step "
                  "(about four per tenant, see its task results), each several seconds in the emulated "
                  "VM, so its runs grow to tens of minutes at 100 tenants and hours at 1,000."]
        if not_converged:
            lines.append(f"The baseline was not run at {', '.join(f'{n:,}' for n in not_converged)} tenants "
                         f"(`--baseline-max-tenants {settings.baseline_max_tenants}`).")
        if no_steady:
            lines.append(f"Its steady state was not run at {', '.join(f'{n:,}' for n in no_steady)} tenants "
                         f"(`--baseline-steady-max-tenants {settings.baseline_steady_max_tenants}`); "
                         "there the ratio is the converge runs'.")
        lines.append("No figure is given for what was not measured.")
    if failures:
        lines += [""] + failures
    lines += ["", "Under TCG each Python start in the guest costs seconds; the baseline's modules are Python, "
              "deevnet's are native, so emulation weighs on the baseline more than a real node would: read the "
              "ratios as this lab's. The task counts do not depend on it."]
    return lines


NOT_MEASURED_LINE = ("- The whole `--tags tenant-egress` play at 1, 100 and 1,000 tenants against a baseline role: "
                     "in the lab VM, one to two hours under TCG: `make bench BENCH_ARGS=--tenant-play` "
                     "(bench/README.md).\n")


def existing_section(path: Path) -> str:
    """This part's section in an existing BENCHMARKS.md (measured earlier), or ''."""
    return sections.existing_section(path, SECTION_TITLE)


def update_section(path: Path, section: str) -> str:
    """Replaces this part's section in an existing BENCHMARKS.md, or appends it."""
    return sections.update_section(path, SECTION_TITLE, section)


# --- entry points --------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared with bench/run.py --tenant-play."""
    parser.add_argument("--tenant-sizes", default="1,100,1000",
                        help="tenant counts, comma-separated (default 1,100,1000)")
    parser.add_argument("--tenant-rounds", type=int, default=3,
                        help="interleaved steady-state rounds per tenant count (default 3)")
    parser.add_argument("--baseline-max-tenants", type=int, default=100,
                        help="converge the baseline only up to this many tenants (default 100)")
    parser.add_argument("--baseline-steady-max-tenants", type=int, default=100,
                        help="steady-state rounds of the baseline only up to this many tenants (default 100)")
    parser.add_argument("--lab-run-dir", default=str(DEFAULT_LAB_RUN_DIR),
                        help="the lab VM's run folder (its own, so no other VM is touched)")


def settings_of(args, command: str) -> Settings:
    sizes = [int(part) for part in args.tenant_sizes.split(",")]
    if not sizes or min(sizes) < 1 or max(sizes) > 9999:
        raise SystemExit("--tenant-sizes: between 1 and 9999 tenants (VRF names are vrf_tNNNN)")
    if args.tenant_rounds < 1:
        raise SystemExit("--tenant-rounds: at least 1")
    return Settings(sizes, args.tenant_rounds, args.baseline_max_tenants, args.baseline_steady_max_tenants,
                    command)


def run_from_args(env: dict, args, command: str) -> tuple[str, bool]:
    """Measures as the arguments say (bench/run.py): the BENCHMARKS.md section, and whether any
    tenant count failed (the section says where and why)."""
    settings = settings_of(args, command)
    results = bench_tenant_play(env, settings, Path(args.lab_run_dir))
    return report_section(results, settings, time.strftime("%Y-%m-%d")), any(size.error for size in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--update", metavar="BENCHMARKS_MD",
                        help="replace (or append) this benchmark's section in that file")
    parser.add_argument("--from-results", metavar="JSON", nargs="?", const=str(RESULTS),
                        help=f"measure nothing: report the raw figures a run saved (default {RESULTS})")
    args = parser.parse_args()
    if args.from_results:
        results, settings, date = load_results(Path(args.from_results))
    else:
        if os.geteuid() != 0:
            raise SystemExit("the lab VM needs root (bench/run.py runs as root too)")
        settings = settings_of(args, " ".join(["bench/tenant_play.py", *sys.argv[1:]]))
        results, date = bench_tenant_play(installed_collections_env(), settings, Path(args.lab_run_dir)), time.strftime("%Y-%m-%d")
    section = report_section(results, settings, date)
    print(section)
    if args.update:
        update_section(Path(args.update), section)
    return 1 if any(size.error for size in results) else 0


def installed_collections_env() -> dict:
    """As bench/run.py: the built collection installed privately, ansible.posix from PyPI."""
    installed = WORK / "installed"
    install_built_collection(installed)
    return collections_env(installed, ensure_ansible_posix(log), WORK / "ansible-home")


if __name__ == "__main__":
    sys.exit(main())
