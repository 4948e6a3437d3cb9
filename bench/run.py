#!/usr/bin/env python3
"""make bench: deevnet.net against what users run today, side by side in one run.

This machine is shared and noisy, so every figure is a ratio of variants measured interleaved
in the same rounds, reported with its median and spread (min-max over the rounds).

1. Per task over SSH (a private sshd on 127.0.0.1): deevnet.net.sysctl_forwarding through the
   fast path and through the stock binary path, and ansible.posix.sysctl with and without
   pipelining. Per-task time = (T(N tasks) - T(1 task)) / (N - 1): Ansible's start-up cancels.
2. Module execution alone, no Ansible, in a network namespace: sysctl_forwarding's whole run
   against `sysctl -w` and against ansible.posix.sysctl's module run (python, AnsibleModule).
3. Size of each module binary and of the collection tarball.
5. Fleet scale: one two-task play over N hosts (bench/fleet.py), the anchors against deevnet.net,
   under the stock strategy and under mitogen_linear, with where a task's time goes.
   Alone: bench/run.py --fleet-only (the other sections of --output are kept).
7. egress_probe in network namespaces (bench/probe_namespaces.py): 1 probe against 100 and against
   128 x 32 targets, beside the run's physical floor. Alone: bench/probe_namespaces.py --output BENCHMARKS.md.
10. The runtime's nftables walker (bench/nft_walk.py): 1,000 rules in 15 levels of shared jumps,
   and TR8's 72 rules, loaded by nft, parsed and walked. Alone: bench/nft_walk.py --output BENCHMARKS.md.
11. The fabric proof's NAT prediction (bench/nat_prediction.py): 100 tenants in one vrf_route_assert run
   against 1, on a 41-rule NAT ruleset with jumps. Alone: bench/nat_prediction.py --output BENCHMARKS.md.

Results go to BENCHMARKS.md with the command that reproduces them.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import ansible_mitogen

import fleet  # bench/fleet.py: one play over N hosts (part 5)
import nat_prediction  # bench/nat_prediction.py: the fabric proof's NAT prediction at 100 tenants (part 11)
import nft_walk  # bench/nft_walk.py: the runtime's nftables walker on deep shared jumps (part 10)
import probe_namespaces  # bench/probe_namespaces.py: egress_probe's probes and targets at once (part 7)
import tenant_play  # bench/tenant_play.py: the whole play in the lab VM (--tenant-play)
from installed_collections import ROOT, VENV, collections_env, ensure_ansible_posix, install_built_collection, run

WORK = ROOT / "build" / "bench"


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --- setup -------------------------------------------------------------------------------------

def ensure_sshd() -> None:
    if Path("/usr/sbin/sshd").exists():
        return
    log("installing openssh-server (the benchmark's SSH target is a private sshd on 127.0.0.1)")
    # Keep the package from starting the system-wide sshd: only the private one runs.
    policy = Path("/usr/sbin/policy-rc.d")
    planted = not policy.exists()
    if planted:
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    try:
        run(["apt-get", "install", "-y", "-q", "openssh-server"], stdout=subprocess.DEVNULL,
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    finally:
        if planted:
            policy.unlink()


class PrivateSshd:
    """sshd on a free loopback port with its own host key and authorized key; stopped by PID."""

    def __init__(self, home: Path):
        self.dir = home
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = self.dir / "id_ed25519"
        host_key = self.dir / "host_ed25519"
        for path in (self.key, host_key):
            if not path.exists():
                run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path])
        shutil.copy(self.key.with_suffix(".pub"), self.dir / "authorized_keys")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = self.dir / "sshd_config"
        config.write_text(textwrap.dedent(f"""\
            ListenAddress 127.0.0.1
            Port {self.port}
            HostKey {host_key}
            AuthorizedKeysFile {self.dir}/authorized_keys
            PermitRootLogin prohibit-password
            PasswordAuthentication no
            StrictModes no
            UsePAM no
            PidFile {self.dir}/sshd.pid
            Subsystem sftp internal-sftp
            MaxStartups 200
            MaxSessions 200
            """))
        Path("/run/sshd").mkdir(exist_ok=True)
        self.proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(config)],
                                     stderr=subprocess.DEVNULL)
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError("the private sshd did not start")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)


# --- 1. per task over SSH -------------------------------------------------------------------------

# name: (task kind, extra vars, pipelining, under mitogen_linear)
VARIANTS = {
    "deevnet.net fast path": ("deevnet", {"deevnet_net_fast_path": True}, False, False),
    "deevnet.net stock binary path": ("deevnet", {"deevnet_net_fast_path": False}, False, False),
    "ansible.posix.sysctl, pipelining": ("posix", {}, True, False),
    "ansible.posix.sysctl, no pipelining": ("posix", {}, False, False),
    "ansible.builtin.raw (the stock floor)": ("raw", {}, True, False),
    "deevnet.net under mitogen_linear": ("deevnet", {}, True, True),
    "ansible.posix.sysctl under mitogen_linear": ("posix", {}, True, True),
}
MITOGEN_STRATEGIES = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"


def task_for(kind: str, target: Path) -> dict:
    if kind == "deevnet":
        return {"deevnet.net.sysctl_forwarding": {
            "path": f"{target}/etc/90-deevnet-tenant-fabric.conf",
            "sysctl_dirs": [f"{target}/etc"], "apply": False}}
    if kind == "raw":
        return {"ansible.builtin.raw": "true", "changed_when": False}
    return {"ansible.posix.sysctl": {
        "name": "net.ipv4.conf.all.forwarding", "value": "1",
        "sysctl_file": f"{target}/etc/90-posix.conf", "reload": False}}


def playbook(path: Path, kind: str, count: int, target: Path) -> Path:
    """A play of `count` identical tasks (a loop), written as JSON, which YAML reads as is."""
    task = dict(task_for(kind, target), loop=list(range(count)))
    path.write_text(json.dumps([{"hosts": "bench", "gather_facts": False, "tasks": [task]}], indent=1))
    return path


def bench_ssh(sshd: PrivateSshd, env: dict, tasks: int, rounds: int) -> dict:
    target = WORK / "target"
    (target / "etc").mkdir(parents=True, exist_ok=True)
    inventory = WORK / "inventory.ini"
    inventory.write_text(
        f"bench ansible_host=127.0.0.1 ansible_port={sshd.port} ansible_user=root "
        f"ansible_ssh_private_key_file={sshd.key} ansible_python_interpreter=/usr/bin/python3 "
        "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n")
    books = {}
    for name, (kind, _, _, _) in VARIANTS.items():
        books[name] = (playbook(WORK / f"{kind}-1.yml", kind, 1, target),
                       playbook(WORK / f"{kind}-n.yml", kind, tasks, target))

    def timed(name: str, book: Path) -> float:
        _, extra, pipelining, mitogen = VARIANTS[name]
        cmd = [VENV / "ansible-playbook", "-i", inventory, book, "-e", json.dumps(extra)]
        e = dict(env, ANSIBLE_PIPELINING=str(pipelining))
        if mitogen:
            e.update(ANSIBLE_STRATEGY_PLUGINS=str(MITOGEN_STRATEGIES), ANSIBLE_STRATEGY="mitogen_linear")
        start = time.perf_counter()
        proc = subprocess.run([str(c) for c in cmd], env=e, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise RuntimeError(f"{name} failed:\n{proc.stdout}\n{proc.stderr}")
        return elapsed

    # Warm-up: the fast path's one-time upload, SSH control master, page cache.
    for name in VARIANTS:
        timed(name, books[name][0])
    per_task: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for r in range(rounds):
        for name in VARIANTS:
            one = timed(name, books[name][0])
            many = timed(name, books[name][1])
            per_task[name].append((many - one) / (tasks - 1))
        log(f"ssh round {r + 1}/{rounds}: " + ", ".join(f"{n}: {v[-1] * 1000:.0f} ms" for n, v in per_task.items()))
    return per_task


# --- 2. module execution alone --------------------------------------------------------------------

def bench_module_alone(collections: Path, runs: int) -> dict:
    netns = f"dvn-bench-{os.getpid()}"
    work = WORK / "alone"
    (work / "etc").mkdir(parents=True, exist_ok=True)
    run(["ip", "netns", "add", netns])
    try:
        args = work / "args.json"
        args.write_text(json.dumps({"path": str(work / "etc" / "90-x.conf"), "sysctl_dirs": [str(work / "etc")]}))
        posix_args = work / "posix.json"
        posix_args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
            "name": "net.ipv4.conf.all.forwarding", "value": "1",
            "sysctl_file": str(work / "etc" / "90-posix.conf"), "reload": True}}))
        posix_module = collections / "ansible_collections/ansible/posix/plugins/modules/sysctl.py"
        commands = {
            "sysctl_forwarding (file + runtime + boot check)": ["ip", "netns", "exec", netns,
                                                                ROOT / "target/release/sysctl_forwarding", args],
            "sysctl -w (runtime only)": ["ip", "netns", "exec", netns, "sysctl", "-qw",
                                         "net.ipv4.conf.all.forwarding=1"],
            "ansible.posix.sysctl module run (python)": ["ip", "netns", "exec", netns, VENV / "python",
                                                         posix_module, posix_args],
        }
        env = dict(os.environ, PYTHONPATH=str(collections))
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, cmd in commands.items():
                start = time.perf_counter()
                subprocess.run([str(c) for c in cmd], check=True, capture_output=True, env=env)
                times[name].append(time.perf_counter() - start)
        return times
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=False)


# --- report ---------------------------------------------------------------------------------------

def summary(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


LOAD: dict[str, tuple[float, float, float]] = {}  # the machine's load average when the run started and ended


def load_line() -> str:
    """The load average over the run: the machine is shared, and every figure here depends on it."""
    LOAD.setdefault("end", os.getloadavg())
    start, end = LOAD.get("start", LOAD["end"]), LOAD["end"]
    return (f"Load average (1, 5, 15 min) when the run started: {start[0]:.1f}, {start[1]:.1f}, {start[2]:.1f}; "
            f"when it ended: {end[0]:.1f}, {end[1]:.1f}, {end[2]:.1f} (other work shares these cores).")


def report(ssh: dict, alone: dict, sizes: dict, args) -> str:
    lines = ["# Benchmarks", "",
             f"Generated by `make bench` (`bench/run.py --tasks {args.tasks} --rounds {args.rounds} "
             f"--runs {args.runs}`) on {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
             f"{subprocess.run(['uname', '-r'], capture_output=True, text=True).stdout.strip()}. "
             "Variants are interleaved in the same rounds; ratios are of medians; spread is min-max. "
             f"{load_line()}", ""]
    lines += ["## 1. Per task over SSH (private sshd on 127.0.0.1, ControlPersist on)", "",
              "| variant | median ms/task | spread | ratio to pipelined Python |", "|---|---|---|---|"]
    base = statistics.median(ssh["ansible.posix.sysctl, pipelining"])
    for name, values in ssh.items():
        med, lo, hi = summary(values)
        lines.append(f"| {name} | {med * 1000:.0f} | {lo * 1000:.0f}-{hi * 1000:.0f} | {med / base:.2f}x |")
    fast = statistics.median(ssh["deevnet.net fast path"])
    floor = statistics.median(ssh["ansible.builtin.raw (the stock floor)"])
    mito = statistics.median(ssh["deevnet.net under mitogen_linear"])
    mito_posix = statistics.median(ssh["ansible.posix.sysctl under mitogen_linear"])
    lines += ["", f"Goal: the fast path at most 0.5x pipelined Python. Measured: **{fast / base:.2f}x** "
              f"({'met' if fast / base <= 0.5 else 'NOT met'}); **{fast / floor:.2f}x** `ansible.builtin.raw`, "
              "the floor of stock Ansible (one SSH exec per task); goal within 1.1x of it: "
              f"{'met' if fast / floor <= 1.1 else 'NOT met'}.", "",
              f"Under mitogen (`mitogen_linear`, mitogen {importlib.metadata.version('mitogen')}): "
              f"deevnet.net **{mito / mito_posix:.2f}x** `ansible.posix.sysctl` under mitogen; "
              "the plugin runs the cached binary through one call into mitogen's interpreter on the target "
              "(no shell), and both are several times faster than any stock-strategy variant. Per-task figures this small sit within the noise of a play's start-up (a spread below zero means a 15-task play finished faster than a 1-task one): read them as an order of magnitude.", ""]
    lines += ["## 2. Module execution alone (no Ansible), in a network namespace", "",
              "| command | median ms | spread |", "|---|---|---|"]
    for name, values in alone.items():
        med, lo, hi = summary(values)
        lines.append(f"| {name} | {med * 1000:.1f} | {lo * 1000:.1f}-{hi * 1000:.1f} |")
    lines += ["", "## 3. Sizes", "", "| artifact | bytes | MiB |", "|---|---|---|"]
    for name, size in sizes.items():
        lines.append(f"| {name} | {size} | {size / 2**20:.2f} |")
    lines += ["", "Galaxy refuses collections over 20 MB; on the stock path each MB of module costs about "
              "36 ms per task on loopback (none on the fast path once cached).", "",
              "## Not measured here yet", "",
              "- `qinq_check` against `ethtool -k` per slave: "
              "it needs bonding, so it runs in the lab VM, whose TCG emulation would dominate the figures. "
              "`vrf_route_assert` on 1,000 VRFs x 100 routes was measured in the lab VM by "
              "`LAB_BENCH=1 tests/lab/lab test vrf_route_assert-scale` (2026-11-30, TCG): one module run 11.3 s, "
              "against 136.6 s for one `ip -j route show vrf X` per VRF (12x); see that script's header.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=15, help="tasks per playbook in the SSH benchmark")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds in the SSH benchmark")
    parser.add_argument("--runs", type=int, default=30, help="runs per command when a module runs alone")
    parser.add_argument("--output", default=str(ROOT / "BENCHMARKS.md"))
    parser.add_argument("--probe-rounds", type=int, default=3,
                        help="interleaved rounds of egress_probe's namespace benchmark (part 7)")
    parser.add_argument("--nft-walk-rounds", type=int, default=20,
                        help="rounds of the nftables walker's benchmark (part 10)")
    parser.add_argument("--nat-rounds", type=int, default=5,
                        help="interleaved rounds of the NAT prediction's benchmark (part 11)")
    parser.add_argument("--tenant-play", action="store_true",
                        help="also the whole --tags tenant-egress play in the lab VM (bench/tenant_play.py)")
    tenant_play.add_arguments(parser)
    fleet.add_arguments(parser)
    # `make bench BENCH_ARGS='--tenant-play ...'`: make hands command-line variables to the recipe.
    args = parser.parse_args(sys.argv[1:] + shlex.split(os.environ.get("BENCH_ARGS", "")))
    if os.geteuid() != 0:
        print("make bench runs as root (namespaces, a private sshd)", file=sys.stderr)
        return 1
    LOAD["start"] = os.getloadavg()
    WORK.mkdir(parents=True, exist_ok=True)
    ensure_sshd()
    collections = ensure_ansible_posix(log)
    installed = WORK / "installed"
    tarball = install_built_collection(installed)
    env = collections_env(installed, collections, WORK / "ansible-home", ANSIBLE_HOST_KEY_CHECKING="False",
                          ANSIBLE_NOCOLOR="1")
    command = "make bench BENCH_ARGS='" + " ".join(sys.argv[1:] + shlex.split(os.environ.get("BENCH_ARGS", ""))) + "'"
    fleet_section = ""
    sshd = PrivateSshd(WORK / "sshd")
    try:
        if not args.fleet_only:
            log(f"per task over SSH: {len(VARIANTS)} variants, {args.tasks} tasks, {args.rounds} rounds")
            ssh = bench_ssh(sshd, env, args.tasks, args.rounds)
        if args.fleet_hosts > 0:
            log(f"fleet: {args.fleet_hosts} hosts, {args.fleet_forks} forks, {args.fleet_rounds} rounds, "
                f"{len(fleet.VARIANTS)} variants")
            result = fleet.bench_fleet(sshd, env, args, VENV, ROOT, WORK / "fleet", MITOGEN_STRATEGIES,
                                       collections, installed, log)
            fleet_section = fleet.report_section(result, command, importlib.metadata.version("mitogen"))
    finally:
        sshd.stop()
    if args.fleet_only:  # the other sections of --output stay as an earlier run wrote them
        if fleet_section:
            fleet.update_section(Path(args.output), fleet_section)
            print(fleet_section)
        return 0
    # Without --fleet-hosts > 0, the fleet section measured by an earlier run stays, with its own command and date.
    fleet_section = fleet_section or fleet.existing_section(Path(args.output))
    log(f"module execution alone: {args.runs} runs each")
    alone = bench_module_alone(collections, args.runs)
    sizes = {f"module {p.name}": p.stat().st_size
             for p in sorted((ROOT / "target" / "release").iterdir())
             if p.is_file() and os.access(p, os.X_OK) and (ROOT / "modules" / p.name / "src" / "main.rs").exists()}
    sizes[f"collection {tarball.name}"] = tarball.stat().st_size
    text = report(ssh, alone, sizes, args)
    # Without --tenant-play, the play's section measured by an earlier run stays, with its own command and date.
    kept_tenant_play = "" if args.tenant_play else tenant_play.existing_section(Path(args.output))
    if not args.tenant_play:
        text += ("\n" + kept_tenant_play) if kept_tenant_play else tenant_play.NOT_MEASURED_LINE
    # One blank line before the fleet section, however the kept sections ended.
    text = text.rstrip("\n") + "\n"
    tail = ("\n" + fleet_section.rstrip("\n") + "\n") if fleet_section else ""
    log(f"egress_probe in network namespaces: {args.probe_rounds} rounds")
    tail += "\n" + probe_namespaces.section(probe_namespaces.measure(args.probe_rounds, log), command)
    log(f"the nftables walker: {args.nft_walk_rounds} rounds")
    tail += "\n" + nft_walk.section(nft_walk.measure(args.nft_walk_rounds, log), command)
    log(f"the fabric proof's NAT prediction: {args.nat_rounds} rounds")
    tail += "\n" + nat_prediction.section(nat_prediction.measure(args.nat_rounds, log), command)
    Path(args.output).write_text(text + tail)
    print(text + tail)
    if args.tenant_play:  # written after parts 1-3 and 5 are safe: it boots the lab VM and takes long
        log("the whole --tags tenant-egress play in the lab VM (bench/tenant_play.py)")
        section, failed = tenant_play.run_from_args(env, args, command)
        Path(args.output).write_text(text + "\n" + section.rstrip("\n") + "\n" + tail)
        print(section)
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
