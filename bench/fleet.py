"""make bench, part 5: one play over a fleet of N hosts (issue "Fastest at fleet scale").

N inventory hosts (fleet001 ...), all `ansible_host=127.0.0.1` through the private sshd of
bench/run.py, each with its own folder build/bench/fleet/<host>/ so they never contend on one
file, and each with its own SSH ControlPath (stock) and its own ssh arguments, hence its own
connection (mitogen keys its connections by them), as N real hosts would have.

The play, in steady state (run once to converge, then timed): the forwarding file and one FRR
stanza.
  * anchors: ansible.posix.sysctl (sysctl_file in the host's folder, reload: false) and
    ansible.builtin.blockinfile (the same stanza text);
  * deevnet.net: deevnet.net.sysctl_forwarding (apply: false) and deevnet.net.frr_local_stanza.
  * floor: two tasks that do nothing on the target, what Ansible itself costs per task:
    ansible.builtin.raw `true` under the stock strategy, ansible.builtin.ping under mitogen.
Six variants interleaved per round: each under the stock strategy with pipelining (the deevnet
pair takes its fast path there) and under mitogen_linear. Each run's whole-play wall
time and the controller CPU seconds of the ansible-playbook process tree
(getrusage(RUSAGE_CHILDREN) deltas: ansible-playbook, its forks and their ssh clients; the
sshd side and the modules on the target are not in it) are kept.

Then a profile pass on one host: SSH execs per task (EXEC lines at -vvv, one host, one task of
each module), and the target-side time of each module run alone (no Ansible), as part 2 does.
"""
from __future__ import annotations

import importlib.util
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import sections  # bench/sections.py
import worker_profile  # bench/worker_profile.py

SECTION_TITLE = "## 5. Fleet scale: one play over many hosts"

STANZA_HEADER = "vrf vrf_tdemo"
STANZA_LINE = "ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"
HOST_DIR = "{{ fleet_root }}/{{ inventory_hostname }}"

# name: (task pair, under mitogen_linear)
VARIANTS = {
    "anchors, stock strategy + pipelining": ("anchors", False),
    "deevnet.net, stock strategy (fast path)": ("deevnet", False),
    "floor: ansible.builtin.raw, stock strategy": ("floor-raw", False),
    "anchors, mitogen_linear": ("anchors", True),
    "deevnet.net, mitogen_linear": ("deevnet", True),
    "floor: ansible.builtin.ping, mitogen_linear": ("floor-ping", True),
}
ANCHORS_STOCK, DEEVNET_STOCK, FLOOR_STOCK, ANCHORS_MITOGEN, DEEVNET_MITOGEN, FLOOR_MITOGEN = VARIANTS
PAIRS = ("anchors", "deevnet", "floor-raw", "floor-ping")
# The floor's play with one task instead of two, in every round: the difference is one task over the
# fleet, and what is left of the play is its fixed cost (start-up, connections), which no module changes.
ONE_TASK_FLOORS = {"stock strategy": ("floor-raw", False), "mitogen_linear": ("floor-ping", True)}
STRATEGY_VARIANTS = {"stock strategy": (ANCHORS_STOCK, DEEVNET_STOCK, FLOOR_STOCK),
                     "mitogen_linear": (ANCHORS_MITOGEN, DEEVNET_MITOGEN, FLOOR_MITOGEN)}
PROFILED_TASKS = 20  # the worker profile's one-host play: the two tasks, ten times


def add_arguments(parser) -> None:
    parser.add_argument("--fleet-hosts", type=int, default=50,
                        help="inventory hosts in the fleet part (0 skips it; an earlier section is kept)")
    parser.add_argument("--fleet-forks", type=int, default=10, help="ansible-playbook --forks in the fleet part")
    parser.add_argument("--fleet-rounds", type=int, default=3, help="interleaved rounds in the fleet part")
    parser.add_argument("--fleet-only", action="store_true",
                        help="measure only the fleet part; the other sections of --output are kept as they are")


def tasks_for(pair: str) -> list[dict]:
    if pair == "deevnet":
        return [
            {"name": "forwarding file", "deevnet.net.sysctl_forwarding": {
                "path": f"{HOST_DIR}/sysctl.d/90-deevnet-tenant-fabric.conf",
                "sysctl_dirs": [f"{HOST_DIR}/sysctl.d"], "apply": False}},
            {"name": "FRR stanza", "deevnet.net.frr_local_stanza": {
                "path": f"{HOST_DIR}/frr/frr.conf.local",
                "stanzas": [{"header": STANZA_HEADER, "lines": [STANZA_LINE]}]}},
        ]
    # The least a task costs: under the stock strategy one command on the target and no module (raw);
    # under mitogen, which runs raw through a shell of its own, its lightest in-process module (ping).
    # Each templates the same path as the pairs' tasks, so Ansible's templating costs it the same.
    paths = (f"{HOST_DIR}/sysctl.d/90-deevnet-tenant-fabric.conf", f"{HOST_DIR}/frr/frr.conf.local")
    if pair == "floor-raw":
        return [{"name": f"floor {i}", "ansible.builtin.raw": f"true {path}", "changed_when": False}
                for i, path in enumerate(paths, 1)]
    if pair == "floor-ping":
        return [{"name": f"floor {i}", "ansible.builtin.ping": {"data": path}} for i, path in enumerate(paths, 1)]
    return [
        {"name": "forwarding file", "ansible.posix.sysctl": {
            "name": "net.ipv4.conf.all.forwarding", "value": "1",
            "sysctl_file": f"{HOST_DIR}/etc/90-posix.conf", "reload": False}},
        {"name": "FRR stanza", "ansible.builtin.blockinfile": {
            "path": f"{HOST_DIR}/frr/anchors.conf.local", "create": True,
            "block": f"{STANZA_HEADER}\n {STANZA_LINE}\nexit-vrf"}},
    ]


def write_playbook(path: Path, pair: str, only_first_task: bool = False, repeat: int = 1) -> Path:
    tasks = tasks_for(pair)[:1] if only_first_task else tasks_for(pair) * repeat
    path.write_text(json.dumps([{"hosts": "fleet", "gather_facts": False, "tasks": tasks}], indent=1))
    return path


def write_inventory(work: Path, sshd, hosts: int) -> tuple[Path, list[str]]:
    names = [f"fleet{i:03d}" for i in range(1, hosts + 1)]
    control = work / "cp"
    control.mkdir(parents=True, exist_ok=True)
    lines = ["[fleet]"]
    for name in names:
        # sysctl.d/ is deevnet's alone: its boot check reads every file there, the anchors' too.
        for sub in ("etc", "sysctl.d", "frr"):
            (work / name / sub).mkdir(parents=True, exist_ok=True)
        # A ControlPath per host: the same host/port/user would otherwise share one master.
        common = (f"-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                  f"-o ControlPath={control}/{name}")
        lines.append(f"{name} ansible_host=127.0.0.1 ansible_ssh_common_args='{common}'")
    lines += ["", "[fleet:vars]", f"ansible_port={sshd.port}", "ansible_user=root",
              f"ansible_ssh_private_key_file={sshd.key}", "ansible_python_interpreter=/usr/bin/python3",
              f"fleet_root={work}", "deevnet_net_fast_path=true"]
    inventory = work / "inventory.ini"
    inventory.write_text("\n".join(lines) + "\n")
    return inventory, names


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU jiffies of the whole machine from /proc/stat: the controller, the ssh
    masters, sshd and the modules all run on these cores."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def play(venv: Path, env: dict, strategies: Path, inventory: Path, book: Path, mitogen: bool,
         forks: int, extra: list[str] = ()) -> tuple[float, float, str, float]:
    """One ansible-playbook run: (wall seconds, controller CPU seconds, stdout, machine cores busy)."""
    e = dict(env, ANSIBLE_PIPELINING="True")
    if mitogen:
        e.update(ANSIBLE_STRATEGY_PLUGINS=str(strategies), ANSIBLE_STRATEGY="mitogen_linear")
    cmd = [str(venv / "ansible-playbook"), "-i", str(inventory), "--forks", str(forks), str(book), *extra]
    cpu = children_cpu()
    busy, total = machine_jiffies()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=e, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    cpu = children_cpu() - cpu
    busy_after, total_after = machine_jiffies()
    cores_busy = (busy_after - busy) / max(1, total_after - total) * (os.cpu_count() or 1)
    if proc.returncode != 0:
        raise RuntimeError(f"fleet play {book.name} (mitogen={mitogen}) failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return elapsed, cpu, proc.stdout, cores_busy


def count_execs(vvv_output: str) -> int:
    """Commands sent to the target at -vvv: the ssh plugin logs `SSH: EXEC ssh ...` per ssh
    process it starts; mitogen's connection logs nothing of the kind for tasks it sends over
    its persistent channel."""
    return sum(1 for line in vvv_output.splitlines() if "SSH: EXEC " in line)


def recap_changed(stdout: str) -> int:
    """Hosts that reported changed>0 in the PLAY RECAP."""
    return sum(1 for line in stdout.splitlines() if " changed=" in line and " changed=0 " not in line)


SCRIPT = "deevnet, the fast path's remote script"


def _plugin_utils(installed: Path):
    """The installed collection's plugin_utils/binary_module.py, for its remote command."""
    spec = importlib.util.spec_from_file_location(
        "deevnet_binary_module", installed / "ansible_collections/deevnet/net/plugins/plugin_utils/binary_module.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_alone(venv: Path, root: Path, collections: Path, installed: Path, host_dir: Path, runs: int) -> dict:
    """Target-side time of each module run on its own, on the profiled host's converged files."""
    args = host_dir / "args"
    args.mkdir(exist_ok=True)
    (args / "fwd.json").write_text(json.dumps({
        "path": str(host_dir / "sysctl.d/90-deevnet-tenant-fabric.conf"), "sysctl_dirs": [str(host_dir / "sysctl.d")],
        "apply": False}))
    (args / "frr.json").write_text(json.dumps({
        "path": str(host_dir / "frr/frr.conf.local"),
        "stanzas": [{"header": STANZA_HEADER, "lines": [STANZA_LINE]}]}))
    (args / "posix.json").write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
        "name": "net.ipv4.conf.all.forwarding", "value": "1",
        "sysctl_file": str(host_dir / "etc/90-posix.conf"), "reload": False}}))
    (args / "block.json").write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
        "path": str(host_dir / "frr/anchors.conf.local"), "create": True,
        "block": f"{STANZA_HEADER}\n {STANZA_LINE}\nexit-vrf"}}))
    commands = {  # pair: [(argv, standard input file or None)]
        "deevnet": [([root / "target/release/sysctl_forwarding", args / "fwd.json"], None),
                    ([root / "target/release/frr_local_stanza", args / "frr.json"], None)],
        "anchors": [([venv / "python", collections / "ansible_collections/ansible/posix/plugins/modules/sysctl.py",
                      args / "posix.json"], None),
                    # -m: run as a file, its folder's tempfile.py would shadow the standard library's
                    ([venv / "python", "-m", "ansible.modules.blockinfile", args / "block.json"], None)],
    }
    # The fast path's remote script on a cache hit, as the stock-strategy variant runs it over SSH
    # (the cache is the one the warm-up runs filled, its stamps recorded): the shell, its checks, then the module.
    plugin = _plugin_utils(installed)
    modules = installed / "ansible_collections/deevnet/net/plugins/modules"
    commands[SCRIPT] = [
        (shlex.split(plugin.remote_command("run", name, plugin.binary_sha256(str(modules / name)))), stdin)
        for name, stdin in (("sysctl_forwarding", args / "fwd.json"), ("frr_local_stanza", args / "frr.json"))]
    env = dict(os.environ, PYTHONPATH=str(collections))
    times: dict[str, list[float]] = {pair: [] for pair in commands}
    for _ in range(runs):
        for pair, cmds in commands.items():
            start = time.perf_counter()
            for cmd, stdin in cmds:
                proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                                      input=stdin.read_text() if stdin else None)
                if proc.returncode != 0 or '"changed": true' in proc.stdout or '"changed"' not in proc.stdout:
                    raise RuntimeError(f"{cmd} failed or changed in steady state:\n{proc.stdout}\n{proc.stderr}")
            times[pair].append(time.perf_counter() - start)
    return times


def bench_fleet(sshd, env: dict, args, venv: Path, root: Path, work: Path, strategies: Path,
                collections: Path, installed: Path, log) -> dict:
    shutil.rmtree(work, ignore_errors=True)  # every run converges from empty host folders
    work.mkdir(parents=True)
    inventory, names = write_inventory(work, sshd, args.fleet_hosts)
    books = {pair: write_playbook(work / f"{pair}.yml", pair) for pair in PAIRS}
    firsts = {pair: write_playbook(work / f"{pair}-first-task.yml", pair, True) for pair in PAIRS}
    repeated = {pair: write_playbook(work / f"{pair}-x{PROFILED_TASKS}.yml", pair, repeat=PROFILED_TASKS // 2)
                for pair in PAIRS}
    forks = args.fleet_forks
    load_start = os.getloadavg()
    try:
        result = _measure(sshd, env, args, venv, root, work, strategies, collections, installed, log,
                        inventory, names, books, firsts, repeated, forks)
        result["load"] = (load_start, os.getloadavg())
        return result
    finally:
        close_masters(work / "cp")


def close_masters(control: Path) -> None:
    """Ends the per-host ssh ControlPersist masters (`ssh -O exit`), so none outlives the run."""
    for socket_path in sorted(control.glob("fleet*")):
        subprocess.run(["ssh", "-o", f"ControlPath={socket_path}", "-O", "exit", "fleet"],
                       capture_output=True, check=False)


def _measure(sshd, env, args, venv, root, work, strategies, collections, installed, log,
             inventory, names, books, firsts, repeated, forks) -> dict:
    # Converge, then warm every variant (the fast path's binary cache, page cache, mitogen's import cache).
    for name, (pair, mitogen) in VARIANTS.items():
        play(venv, env, strategies, inventory, books[pair], mitogen, forks)
    machine: dict[str, list[float]] = {name: [] for name in VARIANTS}
    wall: dict[str, list[float]] = {name: [] for name in VARIANTS}
    cpu: dict[str, list[float]] = {name: [] for name in VARIANTS}
    changed: dict[str, int] = {name: 0 for name in VARIANTS}
    one_task: dict[str, list[float]] = {strategy: [] for strategy in ONE_TASK_FLOORS}
    for r in range(args.fleet_rounds):
        for name, (pair, mitogen) in VARIANTS.items():
            w, c, out, m = play(venv, env, strategies, inventory, books[pair], mitogen, forks)
            machine[name].append(m)
            wall[name].append(w)
            cpu[name].append(c)
            changed[name] = max(changed[name], recap_changed(out))
        for strategy, (pair, mitogen) in ONE_TASK_FLOORS.items():
            one_task[strategy].append(play(venv, env, strategies, inventory, firsts[pair], mitogen, forks)[0])
        log(f"fleet round {r + 1}/{args.fleet_rounds}: " + ", ".join(f"{n}: {v[-1]:.1f} s" for n, v in wall.items()))

    # Profile on one host: SSH execs per task at -vvv, two tasks against one so start-up cancels.
    log("fleet profile: SSH execs per task on one host (-vvv), modules alone on the target")
    execs: dict[str, float] = {}
    one_host: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for name, (pair, mitogen) in VARIANTS.items():
        limit = ["--limit", names[0], "-vvv"]
        _, _, one, _ = play(venv, env, strategies, inventory, firsts[pair], mitogen, 1, limit)
        _, _, two, _ = play(venv, env, strategies, inventory, books[pair], mitogen, 1, limit)
        slug = name.split(",")[0].replace(".net", "") + ("-mitogen" if mitogen else "-stock")
        (work / f"profile-{slug}-1task.log").write_text(one)  # kept for a reader of the counts
        (work / f"profile-{slug}-2tasks.log").write_text(two)
        execs[name] = count_execs(two) - count_execs(one)
    for _ in range(max(1, args.fleet_rounds)):
        for name, (pair, mitogen) in VARIANTS.items():
            w, _, _, _ = play(venv, env, strategies, inventory, books[pair], mitogen, 1, ["--limit", names[0]])
            one_host[name].append(w)
    # Where a worker's time goes: every worker of a one-host play of PROFILED_TASKS tasks under cProfile.
    workers: dict[str, dict] = {}
    for name, (pair, mitogen) in VARIANTS.items():
        out = work / f"worker-profile-{pair}-{'mitogen' if mitogen else 'stock'}"
        play(venv, worker_profile.env_for(env, out), strategies, inventory, repeated[pair], mitogen, 1,
             ["--limit", names[0]])
        workers[name] = worker_profile.breakdown(out, PROFILED_TASKS)
    alone = module_alone(venv, root, collections, installed, work / names[0], max(5, 10 * args.fleet_rounds))
    return {"wall": wall, "cpu": cpu, "machine": machine, "changed": changed, "execs": execs, "one_host": one_host,
            "alone": alone, "workers": workers, "one_task": one_task, "hosts": args.fleet_hosts, "forks": forks, "rounds": args.fleet_rounds}


def _med(values: list[float]) -> float:
    return statistics.median(values)


def report_section(result: dict, command: str, mitogen_version: str) -> str:
    wall, cpu, hosts, forks = result["wall"], result["cpu"], result["hosts"], result["forks"]
    host_tasks = hosts * 2
    lines = [f"{SECTION_TITLE} ({hosts} hosts over SSH on 127.0.0.1, {forks} forks)", "",
             f"Reproduce: `{command}` ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores). "
             f"{hosts} inventory hosts (`ansible_host=127.0.0.1`, one private sshd, one SSH connection and one "
             "folder per host), one play of two tasks in steady state (converged and warmed first, nothing "
             "changes): the forwarding file and one FRR stanza (`vrf vrf_tdemo` / "
             f"`{STANZA_LINE}`). Anchors: `ansible.posix.sysctl` (reload: false) + `ansible.builtin.blockinfile`; "
             "deevnet.net: `sysctl_forwarding` (apply: false) + `frr_local_stanza`; floor: two `ansible.builtin.raw: true` (stock), two `ansible.builtin.ping` (mitogen). "
             f"The {len(VARIANTS)} variants are "
             f"interleaved in {result['rounds']} rounds; mitogen {mitogen_version}. " + _load_text(result), "",
             "| variant | play wall, median s | spread | ms per host-task | controller CPU s per play | changed hosts |",
             "|---|---|---|---|---|---|"]
    for name in VARIANTS:
        med = _med(wall[name])
        lines.append(f"| {name} | {med:.1f} | {min(wall[name]):.1f}-{max(wall[name]):.1f} | "
                     f"{med / host_tasks * 1000:.0f} | {_med(cpu[name]):.1f} | {result['changed'][name]} |")
    stock = _med(wall[DEEVNET_STOCK]) / _med(wall[ANCHORS_STOCK])
    mito = _med(wall[DEEVNET_MITOGEN]) / _med(wall[ANCHORS_MITOGEN])
    lines += ["", f"Goal: deevnet.net at most 0.4x the anchors under the stock strategy. Measured: **{stock:.2f}x** "
              f"({'met' if stock <= 0.4 else 'NOT met'}).", "",
              f"Goal: deevnet.net at most 0.8x the anchors under `mitogen_linear`. Measured: **{mito:.2f}x** "
              f"({'met' if mito <= 0.8 else 'NOT met'}).", ""]
    lines += floor_lines(result, host_tasks)

    alone = {pair: _med(v) for pair, v in result["alone"].items()}
    lines += ["### Where a task's time goes", "",
              "Controller CPU is getrusage(RUSAGE_CHILDREN) of the ansible-playbook process tree (its forks, "
              "the ssh clients it waits for, mitogen's multiplexer and its ssh processes; not sshd nor the modules, "
              "which run on the same cores here). Under the stock strategy it leaves out the ssh ControlPersist "
              "masters, which detach from the tree and carry the session's crypto: the stock rows undercount, "
              "so do not read their controller CPU against the mitogen rows'. SSH execs per task: "
              "`SSH: EXEC` lines at -vvv, one host, a two-task play less a one-task play. One-host play: the same play "
              "limited to one host. Target side: both modules run alone on that host's converged files, "
              "no Ansible (a fresh interpreter for the Python ones).", "",
              "Machine CPU busy: /proc/stat over the play, every process on the machine (the controller, the ssh "
              "masters, sshd, the modules, and anything else running), in cores.", "",
              "| variant | controller CPU ms per host-task | controller CPU / wall | machine CPU busy | "
              "SSH execs per task | one-host play, median s | target side, both modules, median ms |",
              "|---|---|---|---|---|---|---|"]
    for name, (pair, _) in VARIANTS.items():
        c = _med(cpu[name])
        lines.append(f"| {name} | {c / host_tasks * 1000:.0f} | {c / _med(wall[name]):.2f} cores | "
                     f"{_med(result['machine'][name]):.2f} of {os.cpu_count()} cores | "
                     f"{result['execs'][name]:g} | {_med(result['one_host'][name]):.1f} | "
                     + (f"{alone[pair] * 1000:.1f} |" if pair in alone else "none |"))
    lines += worker_table(result["workers"], alone)
    cores = os.cpu_count() or 1
    lines += ["", "Reading:", ""]
    for name, (pair, mitogen) in VARIANTS.items():
        c, w = _med(cpu[name]), _med(wall[name])
        busy = c / w
        whole = _med(result["machine"][name])
        if busy >= 0.75 * cores:
            bound = (f"bounded by controller CPU: the ansible-playbook tree alone keeps {busy:.2f} of {cores} "
                     "cores busy, so this machine cannot run it faster without less controller work per task")
        elif whole >= 0.75 * cores:
            bound = (f"bounded by the machine's CPU: {whole:.2f} of {cores} cores busy in all, {busy:.2f} of them "
                     "counted in the ansible-playbook tree; the rest is sshd, the modules"
                     + (", the detached ssh masters" if not mitogen else "") + " and whatever else runs here")
        else:
            bound = (f"not CPU-bound ({whole:.2f} of {cores} cores busy in all, {busy:.2f} in the "
                     "ansible-playbook tree): the play spends its time waiting, on SSH round trips and on "
                     "Ansible's own scheduling between tasks and hosts")
        if pair not in alone:
            lines.append(f"- {name}: {bound}; {result['execs'][name]:g} new SSH exec(s) per task.")
            continue
        target = alone[pair] * hosts
        lines.append(f"- {name}: {bound}. The modules themselves take {alone[pair] * 1000:.0f} ms per host run "
                     f"alone, {target:.1f} s for the {hosts} hosts against {w:.1f} s of play"
                     + (" (less under mitogen for the Python ones, which run in its persistent interpreter "
                        "without a fresh start)" if mitogen and pair == "anchors" else "")
                     + f"; {result['execs'][name]:g} new SSH exec(s) per task"
                     + (" (mitogen sends each task over its persistent connection to the host)" if mitogen else "")
                     + ".")
    lines += ["", "All variants run on the same 2-core machine as the sshd and the \"targets\": on loopback the "
              "network costs nothing and the target's CPU is the controller's, so the controller-side share "
              "here is an upper bound of what a real fleet would see, and the target-side share a lower bound.", ""]
    return "\n".join(lines)


def _load_text(result: dict) -> str:
    if "load" not in result:
        return ""
    (s1, s5, s15), (e1, e5, e15) = result["load"]
    return (f"Load average (1, 5, 15 min) at the start of this part: {s1:.1f}, {s5:.1f}, {s15:.1f}; at its end: "
            f"{e1:.1f}, {e5:.1f}, {e15:.1f}, on {os.cpu_count()} cores shared with other work: a load above the core "
            "count stretches every play, the cheaper ones most in proportion, so it pulls every ratio toward 1.")


def floor_lines(result: dict, host_tasks: int) -> list[str]:
    """What bounds the two goals: the floor rows against the anchors and deevnet.net."""
    wall, workers = result["wall"], result["workers"]
    a, d, f = (_med(wall[n]) for n in (ANCHORS_STOCK, DEEVNET_STOCK, FLOOR_STOCK))
    lines = ["What bounds the ratios: the floor rows run the same play with two tasks that do nothing on the target.", "",
             f"- Stock strategy: `ansible.builtin.raw: true` (one SSH command, no module: the least any task on the "
             f"target costs there) is **{f / a:.2f}x** the anchors, the best ratio any module could reach; deevnet.net "
             f"is {d / a:.2f}x the anchors and {d / f:.2f}x the floor ({(d - f) / host_tasks * 1000:+.0f} ms per "
             "host-task against it)."]
    a, d, p = (_med(wall[n]) for n in (ANCHORS_MITOGEN, DEEVNET_MITOGEN, FLOOR_MITOGEN))
    worker = workers.get(DEEVNET_MITOGEN, {})
    lines.append(
        f"- mitogen_linear: `ansible.builtin.ping` (mitogen's lightest module, run in its interpreter on the target; "
        f"mitogen runs `raw` through a shell of its own, slower than a module) is **{p / a:.2f}x** the anchors; "
        f"deevnet.net is {d / a:.2f}x the anchors and {d / p:.2f}x ping ({(d - p) / host_tasks * 1000:+.0f} ms per "
        "host-task against it): one call per task into mitogen's interpreter is the least a task on the target costs "
        "there, and what is left is the per-task work of Ansible and mitogen on the controller, the same for every "
        f"module: {worker.get('worker, whole task', 0):.0f} ms in each forked worker (profile below), "
        f"{worker.get('blocked in poll/select', 0):.0f} ms of it waiting on mitogen's multiplexer and the target, "
        f"against {_med(result['alone']['deevnet']) / 2 * 1000:.1f} ms for the module itself on the target.")
    return lines + [""] + split_lines(result, host_tasks)


def split_lines(result: dict, host_tasks: int) -> list[str]:
    """Each play split into its fixed cost and its tasks, from the floor's one-task play."""
    if not result.get("one_task"):
        return []
    wall, hosts = result["wall"], result["hosts"]
    lines = ["Each play split into a fixed cost and its two tasks: one floor task over the fleet is the floor's "
             "two-task play less its one-task play (medians), the fixed cost is the floor's play less its two tasks "
             "(ansible-playbook's start-up, one connection per host, and under mitogen each host's interpreter "
             "started and sent the code its first task needs), and each variant's tasks are its play less that "
             "fixed cost.", "",
             "| strategy | floor play, 2 tasks, s | floor play, 1 task, s | one floor task over the fleet, s | "
             "fixed cost, s | anchors' tasks, ms per host-task | deevnet.net's tasks, ms per host-task | "
             "deevnet.net / anchors, tasks alone |", "|---|---|---|---|---|---|---|---|"]
    unresolved = []
    for strategy, (anchors, deevnet, floor) in STRATEGY_VARIANTS.items():
        ones = result["one_task"][strategy]
        two, one = _med(wall[floor]), _med(ones)
        task = two - one
        fixed = two - 2 * task
        a, d = (_med(wall[n]) - fixed for n in (anchors, deevnet))
        cells = [f"{two:.1f} ({min(wall[floor]):.1f}-{max(wall[floor]):.1f})", f"{one:.1f} ({min(ones):.1f}-{max(ones):.1f})",
                 f"{task:.1f}"]
        if min(task, fixed, a, d) <= 0:
            unresolved.append(strategy)
            cells += ["-", "-", "-", "-"]
        else:
            cells += [f"{fixed:.1f}", f"{a / host_tasks * 1000:.0f}", f"{d / host_tasks * 1000:.0f}", f"{d / a:.2f}x"]
        lines.append(f"| {strategy} | " + " | ".join(cells) + " |")
    lines.append("")
    if unresolved:
        lines += [f"Not resolved for {', '.join(unresolved)}: the subtraction gives a share of zero or less, because one "
                  "task over the fleet is within the plays' spread at this load, or because the variants' fixed costs "
                  "differ (under mitogen the first task on each host makes its interpreter import the module's code: "
                  "Ansible's module_utils for ping and the anchors, one small file for deevnet.net). What the row does "
                  "show is how small one task is against the whole play there.", ""]
    return lines + ["A ratio of whole plays is (fixed + deevnet's tasks) / (fixed + the anchors' tasks): the larger the "
                    "fixed share, the closer to 1 it is, whatever the modules cost.", ""]


def worker_table(workers: dict, alone: dict) -> list[str]:
    categories = list(next((w for w in workers.values() if w), {}))
    lines = ["", f"Each forked worker (one per host and task) of a one-host play of {PROFILED_TASKS} tasks under cProfile "
             "(bench/worker_profile.py), ms per task; blocked is time waiting on the connection (the SSH command or "
             "the mitogen call: the round trip and everything on the target) and on the scheduler. cProfile's own "
             "overhead inflates the CPU rows.", "",
             "| ms per task | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    for category in categories:
        lines.append(f"| {category} | " + " | ".join(f"{workers[name].get(category, 0):.1f}" for name in VARIANTS) + " |")
    lines += ["", f"Target side of the stock-strategy fast path, both modules through the cache's remote script on a "
              f"hit (the shell, its checks and one `stat` of the binary against its recorded stamp, then the module; no SSH): "
              f"{alone[SCRIPT] * 1000:.1f} ms, against "
              f"{alone['deevnet'] * 1000:.1f} ms for the two binaries alone."]
    return lines


def existing_section(path: Path) -> str:
    """This part's section in an existing BENCHMARKS.md (measured earlier), or ''."""
    return sections.existing_section(path, SECTION_TITLE)


def update_section(path: Path, section: str) -> str:
    """Replaces this part's section in an existing BENCHMARKS.md, or appends it."""
    return sections.update_section(path, SECTION_TITLE, section)
