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
callback bench/baseline/callback_plugins/task_results.py, which also times each task.

The probe step (issue 25, --probe-sizes, before the tenant counts): for N probed tenants, each
with a VNet bridge in its VRF and a `probe` in the inventory, the role's one egress_probe task:
its wall time, how many times the module ran (one, whatever N), the whole play; steady-state
rounds interleaved over the counts; then the module alone in the guest with its phases.

Standalone:  bench/tenant_play.py [--tenant-sizes 1,100,1000] [--tenant-rounds 3]
             [--baseline-max-tenants 100] [--baseline-steady-max-tenants 100]
             [--probe-sizes 1,10,100|none]
             [--update BENCHMARKS.md]   (replaces this benchmark's section in that file)
             bench/tenant_play.py --from-results [--update BENCHMARKS.md]   (re-report, measure nothing)
From make bench: make bench BENCH_ARGS=--tenant-play (bench/run.py appends the section).
The baseline runs one Python module per tenant and step; under TCG that is tens of minutes per
run at 100 tenants, so the baseline is not run above --baseline-max-tenants (see bench/README.md).
"""
from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import json
import re
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
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
PROBE_TITLE = "### The probe step: one `egress_probe` run for every probed tenant"

# The lab's exit node (tests/lab/README.md). One management probe per tenant keeps the baseline
# at one `ip route get` per tenant; the deevnet role checks the same lookup plus the default.
TRANSIT_INTERFACE = "vmbr0.50"
TRANSIT_GATEWAY = "10.20.50.1"
MANAGEMENT_INTERFACE = "vmbr0"
MANAGEMENT_PROBE = "10.20.99.5"
FIRST_TENANT_TABLE = 20001

GUEST_FRR_LOCAL = "/etc/frr/frr.conf.local"

# The probe step (--probe-sizes): each probed tenant t0001 ... gets a VNet bridge vnet_t0001 ...
# in its VRF with a /24 of 10.64.0.0/10 (gateway .1 on the bridge), where egress_probe plugs its
# workload (.250) in. Its target is the lab's internet host. The lab's SNAT covers the demo
# tenant's subnet only, and its transit router knows no tenant subnet: the script adds SNAT for
# 10.64.0.0/10 on the transit interface, and the return path of the un-NATed replies (each /24
# in the main table through its bridge, as Proxmox's `import vrf` leaks a zone's subnets). No
# route toward 10.64.0.0/10 on the transit router: another tenant's workload stays unreachable,
# which the role's isolation targets expect.
PROBE_NETWORK = "10.64.0.0/10"
PROBE_TARGET = "203.0.113.8"  # the lab's internet host (TEST-NET-3)
PROBE_ACTION = "egress_probe"  # the task's action, as the role names it (deevnet.net.egress_probe)
PROBE_NAT_COMMENT = "bench probe tenants"
# The role's defaults the probe step runs with (roles/proxmox_node_network/defaults/main.yml):
# each probe's blocked targets are the next ISOLATION_PEERS tenants' workloads and the management
# probe; each target gets PROBE_COUNT echoes, each waiting up to egress_probe's timeout.
ISOLATION_PEERS = 3
PROBE_COUNT = 3
PROBE_TIMEOUT_S = 2
LAB_NAT_TABLE = "deevnet_lab_nat"
LAB_SNAT_SOURCE = "10.20.50.22"  # the node's address on the transit VLAN
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


def probe_vnet(index: int) -> str:
    return f"vnet_t{index:04d}"


def probe_subnet(index: int) -> ipaddress.IPv4Network:
    """Tenant `index`'s /24 of PROBE_NETWORK: 10.64.0.0/24, 10.64.1.0/24, ..."""
    return list(ipaddress.ip_network(PROBE_NETWORK).subnets(new_prefix=24))[index - 1]


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


def guest_value(out: str, key: str) -> str:
    """The value a guest script printed as `key=value`."""
    return out.split(f"{key}=")[1].split()[0]


def expect_made(out: str, key: str, count: int, what: str) -> None:
    """Fails unless the guest script counted `count` of what it made (printed as `key=N`)."""
    made = int(guest_value(out, key))
    if made != count:
        raise RuntimeError(f"expected {count} {what} in the VM, found {made}:\n{out}")


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
    expect_made(out, "tenant_vrfs", count, "tenant VRFs")
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
    load = float(guest_value(out, "load"))
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
    probe_seconds: float = 0.0  # the egress_probe task's wall time (0 without one)
    probe_runs: int = 0  # egress_probe module executions in the play


@dataclass
class SizeResult:
    tenants: int
    converge: dict[str, PlayRun] = field(default_factory=dict)
    steady: dict[str, list[PlayRun]] = field(default_factory=dict)
    error: str = ""  # why this tenant count stopped short; reported, and the run exits non-zero


def probed_tenant(index: int) -> dict:
    """Tenant t<index> with a probe: the workload at .250 of its subnet, the internet host as
    its target; the role derives the isolation targets (isolation_peers, the management probe)."""
    subnet = probe_subnet(index)
    return {"name": f"t{index:04d}",
            "probe": {"address": f"{subnet.network_address + 250}/{subnet.prefixlen}",
                      "targets": [{"address": PROBE_TARGET}]}}


def tenant_egress_settings(tenants: int, probed: bool = False) -> dict:
    """proxmox_node_network_tenant_egress for N tenants, each with a probe when `probed`."""
    return {
        "transit_interface": TRANSIT_INTERFACE,
        "transit_gateway": TRANSIT_GATEWAY,
        "management_interface": MANAGEMENT_INTERFACE,
        "management_probes": [MANAGEMENT_PROBE],
        "asn": 65020,
        "tenants": [probed_tenant(i) if probed else {"name": f"t{i:04d}"} for i in range(1, tenants + 1)],
    }


def write_inventory(path: Path, vm: LabVM, tenants: int, probed: bool = False) -> Path:
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
        "proxmox_node_network_tenant_egress": tenant_egress_settings(tenants, probed),
        # The lab has no Proxmox: its own command merges frr.conf.local as Proxmox does.
        "proxmox_node_network_frr_apply_command": ["/usr/local/sbin/lab-sdn-apply"],
        # The N tenants are VRFs made for the benchmark, not zones of the lab's SDN.
        "proxmox_node_network_sdn": "ignore",
        # The node holds VRFs the inventory does not list: the lab's vrf_tdemo and the bench's
        # beyond N (made once for the largest count). Without a default they would fail the role's
        # undeclared-VRF check (default fail); the runs measure the inventory's tenants only.
        "proxmox_node_network_undeclared_vrfs": "ignore",
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
    probe_tasks = [task for task in counted.get("task_list", []) if task["action"].endswith(PROBE_ACTION)]
    return PlayRun(seconds, counted["task_results"], counted["tasks"], counted["changed"],
                   probe_seconds=sum(task["seconds"] for task in probe_tasks),
                   probe_runs=sum(task["results"] - task["skipped"] for task in probe_tasks))


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


# --- the probe step (--probe-sizes) ----------------------------------------------------------------

def add_probe_vnets(vm: LabVM, count: int) -> dict:
    """vnet_t0001 ... (a bridge per probed tenant, in its VRF, gateway .1, the lab VNet's MTU),
    the return path of each /24 in the main table, and SNAT for PROBE_NETWORK. Returns the
    guest's neighbour-table thresholds and the MTU used (reported)."""
    commands, routes = [], []
    for index in range(1, count + 1):
        bridge, subnet = probe_vnet(index), probe_subnet(index)
        commands += [f"link add {bridge} type bridge stp_state 0 forward_delay 0",
                     f"link set {bridge} mtu $mtu master {tenant_vrf(index)}",
                     f"addr add {subnet.network_address + 1}/{subnet.prefixlen} dev {bridge}",
                     f"link set {bridge} up"]
        routes.append(f"route add {subnet} dev {bridge}")
    out = vm.script(
        # The lab's VNet tdemo0 has the zone's MTU (the VXLAN overhead taken off).
        "mtu=$(cat /sys/class/net/tdemo0/mtu)\n"
        "ip -batch - <<BATCH\n" + "\n".join(commands + routes) + "\nBATCH\n"
        f"nft add rule ip {LAB_NAT_TABLE} postrouting oifname {TRANSIT_INTERFACE} ip saddr {PROBE_NETWORK} "
        f"counter snat to {LAB_SNAT_SOURCE} comment '\"{PROBE_NAT_COMMENT}\"'\n"
        "udevadm settle --timeout=300\n"
        "echo mtu=$mtu\n"
        "echo gc_thresh=$(sysctl -n net.ipv4.neigh.default.gc_thresh1 net.ipv4.neigh.default.gc_thresh2 "
        "net.ipv4.neigh.default.gc_thresh3 | paste -sd/)\n"
        "echo vnets=$(ip -brief link show type bridge | grep -c '^vnet_t[0-9]')\n")
    expect_made(out, "vnets", count, "probe VNets")
    wait_until_quiet(vm)
    return {"mtu": int(guest_value(out, "mtu")), "gc_thresh": guest_value(out, "gc_thresh")}


def remove_probe_vnets(vm: LabVM, count: int) -> None:
    """What add_probe_vnets made, gone (the main table's routes go with their bridges)."""
    vm.script(
        "ip -batch - <<'BATCH' || true\n"
        + "\n".join(f"link del {probe_vnet(index)}" for index in range(1, count + 1)) + "\nBATCH\n"
        f"handle=$(nft -a list chain ip {LAB_NAT_TABLE} postrouting | "
        f"sed -n 's/.*\"{PROBE_NAT_COMMENT}\".*# handle \\([0-9]*\\).*/\\1/p')\n"
        f"[ -z \"$handle\" ] || nft delete rule ip {LAB_NAT_TABLE} postrouting handle $handle\n")


@dataclass
class ProbeSizeResult:
    probed: int  # tenants, each with a probe
    first: PlayRun | None = None  # the first run at this count: FRR loads its stanzas, not reported as steady
    steady: list[PlayRun] = field(default_factory=list)
    direct: dict = field(default_factory=dict)  # the module run alone in the guest (see direct_probe_run)
    error: str = ""


def probe_plan(probed: int) -> dict:
    """egress_probe's arguments as the role computes them for N probed tenants (the role's own
    filter on the role's defaults): what a direct run of the module gets."""
    import yaml  # Ansible's dependency, in the venv that runs this script

    spec = importlib.util.spec_from_file_location(
        "node_plan", ROOT / "collection" / "plugins" / "filter" / "node_plan.py")
    node_plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(node_plan)
    defaults = yaml.safe_load((ROOT / "roles" / "proxmox_node_network" / "defaults" / "main.yml").read_text())
    plan = node_plan.tenant_egress_plan(tenant_egress_settings(probed, probed=True),
                                        defaults["__proxmox_node_network_tenant_egress_defaults"])
    run = plan["egress_probe"]
    return {"probes": run["probes"], "count": run["count"], "forbidden_interfaces": run["forbidden_interfaces"]}


def direct_probe_run(vm: LabVM, probed: int) -> dict:
    """The module alone in the guest, on the role's arguments for N probed tenants, with the
    cached binary the plays ran: its wall time, and its phases read from `ip -ts monitor link`
    (the node ends of its veths: made, attached to the VNet, carrier up once the workload is
    configured, deleted). The module reports no timing of its own."""
    args = json.dumps(probe_plan(probed))
    out = vm.script(f"""
module=$(ls -t /root/.ansible/deevnet.net/egress_probe-* 2>/dev/null | head -1)
[ -n "$module" ] || {{ echo "no cached egress_probe binary in the guest" >&2; exit 1; }}
work=$(mktemp -d)
cat >"$work/args.json" <<'ARGS'
{args}
ARGS
ip -ts monitor link >"$work/monitor" 2>&1 & monitor=$!
sleep 1
start=$(date +%Y-%m-%dT%H:%M:%S.%N)
rc=0; "$module" "$work/args.json" >"$work/out.json" || rc=$?
end=$(date +%Y-%m-%dT%H:%M:%S.%N)
sleep 1; kill $monitor; wait $monitor 2>/dev/null || true
echo "start=$start"; echo "end=$end"; echo "rc=$rc"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("failed=" + str(bool(r.get("failed"))).lower()); print("msg=" + str(r.get("msg", "")).replace(chr(10), " ")[:300])' "$work/out.json"
grep -E '(^|\\] )(Deleted )?[0-9]+: dvp' "$work/monitor" || true
rm -rf "$work"
""")
    return {"probed": probed, **probe_phases(out)}


TIMESTAMP = re.compile(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)\]")


def _when(text: str) -> float:
    """Seconds of a guest timestamp (2026-12-03T18:30:00.123456[789], the guest's clock)."""
    day_time, fraction = text.split(".")
    return datetime.strptime(day_time, "%Y-%m-%dT%H:%M:%S").timestamp() + float("0." + fraction)


def probe_phases(out: str) -> dict:
    """The direct run's wall time and phases, in seconds from its start, from the guest's output
    (start=, end=, rc=, failed=, msg= and the monitor's lines of the probe veths)."""
    values = dict(line.split("=", 1) for line in out.splitlines() if re.match(r"^(start|end|rc|failed|msg)=", line))
    start, end = _when(values["start"]), _when(values["end"])
    made, attached, up, deleted = {}, {}, {}, {}
    for line in out.splitlines():
        stamp = TIMESTAMP.search(line)
        name = re.search(r"\d+: (dvp[0-9]+p[0-9]+)[@:]", line)
        if not stamp or not name:
            continue
        when, veth = _when(stamp.group(1)) - start, name.group(1)
        if "Deleted" in line:
            deleted.setdefault(veth, when)
            continue
        made.setdefault(veth, when)
        if " master " in line:
            attached.setdefault(veth, when)
        if "LOWER_UP" in line:
            up.setdefault(veth, when)
    phases = {"seconds": round(end - start, 2), "rc": int(values["rc"]), "failed": values.get("failed") == "true",
              "msg": values.get("msg", ""), "workloads": len(made)}
    if made and attached and up and deleted:
        phases.update({
            "first_made": round(min(made.values()), 2),  # before it: arguments, node facts, locks, ARP checks
            "last_attached": round(max(attached.values()), 2),
            "last_up": round(max(up.values()), 2),  # every workload configured (in parallel)
            "first_deleted": round(min(deleted.values()), 2),  # probes sent and answered (in parallel)
            "last_deleted": round(max(deleted.values()), 2),  # teardown
        })
    return phases


def bench_probes(vm: LabVM, env: dict, settings: "Settings", results: list[ProbeSizeResult], saved) -> None:
    """The role on the converged node with N probed tenants, N in settings.probe_sizes: a first
    run per count (ascending: FRR ends with every stanza of the largest), each count's converged
    frr.conf.local kept, then steady-state rounds interleaved over the counts, then the module
    run alone at each count. A count that fails is reported, the others still run."""
    reset_node(vm, forget_kept_state=True)
    for probed in sorted(settings.probe_sizes):
        result = next(size for size in results if size.probed == probed)
        kept_as = f"/etc/frr/bench-probe-{probed}.conf.local"
        inventory = write_inventory(WORK / f"inventory-probe-{probed}.json", vm, probed, probed=True)
        try:
            log(f"{probed} probed tenants: first run (FRR loads the stanzas)")
            run = run_play(DEEVNET, inventory, env, {PLAYS[DEEVNET][2]: GUEST_FRR_LOCAL}, expect_changes=True)
            keep_converged_frr_local(vm, kept_as)
            result.first = run
            log(f"  {run.seconds:.1f} s, probe step {run.probe_seconds:.1f} s ({run.probe_runs} egress_probe runs)")
        except RuntimeError as failure:
            result.error = str(failure).strip().splitlines()[0][:300]
            log(f"FAILED at {probed} probed tenants: {failure}")
        saved()
    for round_index in range(settings.rounds):
        for result in results:
            if result.error:
                continue
            _, _, frr_local_var, apply_var = PLAYS[DEEVNET]
            inventory = WORK / f"inventory-probe-{result.probed}.json"
            try:
                run = run_play(DEEVNET, inventory, env,
                               {frr_local_var: f"/etc/frr/bench-probe-{result.probed}.conf.local",
                                apply_var: ["false"]}, expect_changes=False)
            except RuntimeError as failure:
                result.error = str(failure).strip().splitlines()[0][:300]
                log(f"FAILED at {result.probed} probed tenants: {failure}")
                saved()
                continue
            result.steady.append(run)
            saved()
        log(f"probe step, steady-state round {round_index + 1}/{settings.rounds}: " + ", ".join(
            f"{size.probed}: play {size.steady[-1].seconds:.1f} s, probe {size.steady[-1].probe_seconds:.1f} s"
            for size in results if size.steady))
    for result in results:
        try:
            result.direct = direct_probe_run(vm, result.probed)
            log(f"{result.probed} probed tenants, the module alone: {result.direct}")
        except (RuntimeError, KeyError, ValueError) as failure:
            result.direct = {"error": str(failure).strip().splitlines()[0][:300]}
            log(f"the module alone at {result.probed} probed tenants failed: {failure}")
        saved()


@dataclass
class Settings:
    sizes: list[int]
    rounds: int
    baseline_max_tenants: int
    baseline_steady_max_tenants: int
    command: str
    probe_sizes: list[int] = field(default_factory=list)  # probed tenants (--probe-sizes); none: no probe step


@dataclass
class Measured:
    """Everything a run measured: the tenant counts' plays and the probe step's counts."""
    sizes: list[SizeResult] = field(default_factory=list)
    probes: list[ProbeSizeResult] = field(default_factory=list)
    probe_setup: dict = field(default_factory=dict)  # the probe VNets' MTU, the neighbour thresholds
    load: dict = field(default_factory=dict)  # the host's load average when the run started and ended


def host_load() -> str:
    return ", ".join(Path("/proc/loadavg").read_text().split()[:3])


def bench_tenant_play(env: dict, settings: Settings, lab_run_dir: Path) -> Measured:
    """Boots the lab in its own run folder, measures the probe step's counts and every tenant
    count, always stops the VM. The raw figures are saved to RESULTS after every run (a run cut
    short keeps what it measured)."""
    WORK.mkdir(parents=True, exist_ok=True)
    env = ansible_env(env)
    vm = LabVM(lab_run_dir)
    measured = Measured(probes=[ProbeSizeResult(n) for n in sorted(settings.probe_sizes)],
                        load={"start": host_load()})

    def saved() -> None:
        measured.load["end"] = host_load()
        save_results(measured, settings)

    vm.start()
    try:
        add_tenant_vrfs(vm, max(settings.sizes + settings.probe_sizes))
        # Warm-up, not reported: the fast path's one-time binary upload, SSH, the guest's caches.
        log("warm-up (not reported): the deevnet play at 1 tenant")
        warm_up = Settings([1], 1, baseline_max_tenants=0, baseline_steady_max_tenants=0, command="")
        bench_size(vm, env, SizeResult(1), warm_up, saved=lambda: None)
        if settings.probe_sizes:
            probed = max(settings.probe_sizes)
            measured.probe_setup = add_probe_vnets(vm, probed)
            saved()
            try:
                bench_probes(vm, env, settings, measured.probes, saved)
            finally:  # the tenant counts run on the node as they always have: VRFs, no VNets
                remove_probe_vnets(vm, probed)
        for tenants in settings.sizes:
            measured.sizes.append(SizeResult(tenants))
            try:
                bench_size(vm, env, measured.sizes[-1], settings, saved=saved)
            except RuntimeError as failure:  # the next tenant count still runs; the report says so
                measured.sizes[-1].error = str(failure).strip().splitlines()[0][:300]
                saved()
                log(f"FAILED at {tenants} tenants: {failure}")
        return measured
    finally:
        saved()
        vm.stop()


def save_results(measured: Measured, settings: Settings) -> None:
    RESULTS.write_text(json.dumps({"settings": asdict(settings), "date": time.strftime("%Y-%m-%d"),
                                   "results": [asdict(size) for size in measured.sizes],
                                   "probe_results": [asdict(size) for size in measured.probes],
                                   "probe_setup": measured.probe_setup, "load": measured.load}, indent=1))


def load_results(path: Path) -> tuple[Measured, Settings, str]:
    """A saved run, also one from before the probe step (no probe_results)."""
    data = json.loads(path.read_text())
    sizes = [SizeResult(size["tenants"],
                        {name: PlayRun(**run) for name, run in size["converge"].items()},
                        {name: [PlayRun(**run) for run in runs] for name, runs in size["steady"].items()},
                        size.get("error", ""))
             for size in data["results"]]
    probes = [ProbeSizeResult(size["probed"], PlayRun(**size["first"]) if size.get("first") else None,
                              [PlayRun(**run) for run in size["steady"]], size.get("direct", {}),
                              size.get("error", ""))
              for size in data.get("probe_results", [])]
    return (Measured(sizes, probes, data.get("probe_setup", {}), data.get("load", {})),
            Settings(**data["settings"]), data["date"])


# --- report --------------------------------------------------------------------------------------

def median_seconds(runs: list[PlayRun]) -> float:
    return statistics.median(run.seconds for run in runs)


def seconds_summary(runs: list[PlayRun], rounds: int = 0) -> str:
    return times_summary([run.seconds for run in runs], rounds)


def times_summary(times: list[float], rounds: int = 0) -> str:
    """Median (min-max); the number of runs when fewer than `rounds` ran (a run cut short)."""
    if len(times) == 1:
        return f"{times[0]:.1f} s (1 run)"
    fewer = f", {len(times)} runs" if len(times) < rounds else ""
    return f"{statistics.median(times):.1f} s ({min(times):.1f}-{max(times):.1f}{fewer})"


def ratio_cells(size: SizeResult) -> str:
    """Baseline time over deevnet time, steady state (medians) and converge, where both ran."""
    cells = []
    if size.steady.get(BASELINE) and size.steady.get(DEEVNET):
        cells.append(f"**{median_seconds(size.steady[BASELINE]) / median_seconds(size.steady[DEEVNET]):.1f}x** steady")
    if BASELINE in size.converge:
        cells.append(f"**{size.converge[BASELINE].seconds / size.converge[DEEVNET].seconds:.1f}x** converge")
    return ", ".join(cells)


DEFAULT_SIZES = (1, 100, 1000)


def report_section(measured: Measured, settings: Settings, date: str) -> str:
    # A tenant count still running (raw figures saved mid-run) has nothing to show yet.
    results = sorted((size for size in measured.sizes if size.converge or size.error), key=lambda size: size.tenants)
    load = (f" Host load average (1, 5, 15 min) when the run started: {measured.load['start']}; when it ended: "
            f"{measured.load.get('end', '?')}." if measured.load.get("start") else "")
    lines = [SECTION_TITLE, "",
             f"Reproduce: `{settings.command}` ({date}; the lab VM under QEMU with TCG emulation, as "
             f"this machine has no usable KVM, on 2 host cores shared with other work).{load} Both plays over "
             "SSH with pipelining against the lab's exit node with N tenant VRFs (vrf_t0001 ..., one "
             "management probe each), the role with `--tags tenant-egress`, the baseline role "
             "`bench/baseline` with the same inventory. The node holds VRFs the inventory does not list (the "
             "lab's vrf_tdemo, the bench's beyond N), so the role runs with `proxmox_node_network_undeclared_vrfs: "
             "ignore`.", "",
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
                         f"{seconds_summary(steady, settings.rounds) if steady else 'not run'} | "
                         f"{ratio_cells(size) if name == BASELINE else ''} |")
    lines += [""] + goal_lines(results, settings)
    not_rerun = [n for n in DEFAULT_SIZES if n not in settings.sizes]
    if not_rerun:
        lines += ["", f"Not re-run in this run: {', '.join(f'{n:,}' for n in not_rerun)} tenants (the default "
                  f"counts are {', '.join(f'{n:,}' for n in DEFAULT_SIZES)}; this run measured "
                  f"{', '.join(f'{n:,}' for n in settings.sizes)}). No figure is given for them here."]
    if settings.probe_sizes:
        lines += [""] + probe_report(measured, settings.rounds)
    return "\n".join(lines) + "\n"


def probe_targets(probed: int) -> tuple[int, int]:
    """Targets per probe at N probed tenants, and how many of them must be blocked: the internet
    host, up to ISOLATION_PEERS other tenants' workloads, the management probe (the role's plan;
    a test holds the two equal)."""
    blocked = min(ISOLATION_PEERS, probed - 1) + 1
    return 1 + blocked, blocked


def probe_report(measured: Measured, rounds: int) -> list[str]:
    """The probe step's subsection: the table, both goals marked, and where the time goes."""
    setup = measured.probe_setup
    lines = [PROBE_TITLE, "",
             "The role with `--tags tenant-egress` on the converged node with N tenants, each probed: tenant "
             "t0001 ... has its VRF and a VNet bridge `vnet_t0001` ... in it (a /24 of 10.64.0.0/10 each, gateway "
             f".1 on the bridge, MTU {setup.get('mtu', 'as the lab VNet tdemo0')}), and a `probe` in the inventory: "
             f"the workload at .250, the target {PROBE_TARGET} (the lab's internet host). The role derives the "
             "isolation targets (`isolation_peers` 3: the next three tenants' workloads, and the management probe "
             f"{MANAGEMENT_PROBE}), so each probe has up to five targets. The bench adds SNAT of 10.64.0.0/10 on "
             f"{TRANSIT_INTERFACE} (the lab's covers the demo tenant only) and each /24 to the main table through its "
             "bridge (the return path of the un-NATed replies, as Proxmox's `import vrf` leaks a zone's subnets); "
             "the transit router knows no tenant subnet, so another tenant's workload stays unreachable. "
             f"Neighbour table thresholds in the guest (gc_thresh1/2/3): {setup.get('gc_thresh', 'not read')}.", "",
             "- *Probe step*: the wall time of the role's `egress_probe` task (from its start to its result, "
             "read by the callback), one SSH round trip and the module run on the node.",
             "- *egress_probe runs*: module executions of that task in the play (the callback's count).",
             "- *Play*: the whole play, steady state (nothing changed; each count's converged frr.conf.local kept, "
             "FRR's apply command `false`); median (min-max) of the interleaved rounds. The first run at each "
             "count (FRR loads its stanzas) is not in the medians.", "",
             "| probed tenants | targets per probe (blocked) | egress_probe runs per play | probe step | "
             "play, steady state | task results |",
             "|---|---|---|---|---|---|"]
    for size in measured.probes:
        targets = "%d (%d)" % probe_targets(size.probed)
        if not size.steady:
            lines.append(f"| {size.probed:,} | {targets} | {'FAILED' if size.error else 'not run'} | | | |")
            continue
        runs = "/".join(str(n) for n in sorted({run.probe_runs for run in size.steady}))
        results = "/".join(str(n) for n in sorted({run.task_results for run in size.steady}))
        lines.append(f"| {size.probed:,} | {targets} | {runs} | "
                     f"{times_summary([r.probe_seconds for r in size.steady], rounds)} | "
                     f"{seconds_summary(size.steady, rounds)} | {results} |")
    lines.append("")
    measured_sizes = [size for size in measured.probes if size.steady]
    every_run = [run for size in measured_sizes for run in ([size.first] if size.first else []) + size.steady]
    if every_run:
        one_task = all(run.probe_runs == 1 for run in every_run)
        lines.append("Goal: one task whatever the count: " + ("**met**" if one_task else "**NOT met**")
                     + " (egress_probe runs per play, every run, first runs included, by probed tenants: "
                     + ", ".join(f"{size.probed:,}: {'/'.join(str(n) for n in sorted({r.probe_runs for r in ([size.first] if size.first else []) + size.steady}))}"
                                 for size in measured_sizes) + ").")
    else:
        lines.append("Goal: one task whatever the count: not measured in this run.")
    lines.append("")
    by_count = {size.probed: statistics.median(r.probe_seconds for r in size.steady) for size in measured_sizes}
    if 1 in by_count and 100 in by_count:
        ratio = by_count[100] / by_count[1]
        # The counts whose probes have as many targets as at 100: the tenant count's own share.
        alike = [n for n in sorted(by_count) if n < 100 and probe_targets(n) == probe_targets(100)]
        context = "".join(f"; against {n:,} probed tenants, whose probes have as many targets as at 100: "
                          f"{by_count[100] / by_count[n]:.2f}x ({by_count[n]:.1f} s)" for n in alike[-1:])
        lines.append(f"Goal: the probe step at 100 probed tenants at most 2x that at 1: "
                     + ("**met**" if ratio <= 2 else "**NOT met**")
                     + f" (**{ratio:.2f}x**: {by_count[100]:.1f} s against {by_count[1]:.1f} s, medians{context}).")
    else:
        lines.append("Goal: the probe step at 100 probed tenants at most 2x that at 1: not measured in this run "
                     "(it needs both counts).")
    failures = [f"**FAILED at {size.probed:,} probed tenants**: {size.error}" for size in measured.probes if size.error]
    if failures:
        lines += [""] + failures
    lines += [""] + where_probe_time_goes(measured.probes)
    return lines


def where_probe_time_goes(probes: list[ProbeSizeResult]) -> list[str]:
    """The module alone at each count, split into its phases, and what the split says."""
    direct = [size for size in probes if size.direct]
    if not direct:
        return []
    lines = ["Where the time goes: the module alone in the guest (no Ansible), the cached binary on the role's "
             "arguments for N probed tenants (its own filter), once per count after the rounds. It reports no "
             "timing of its own, so the phases come from `ip -ts monitor link` on the node ends of its veths: "
             "*before* (arguments, node facts, the address locks, the ARP checks of every address at once), "
             "*workloads made* (first veth made to the last attached to its VNet: four makers side by "
             "side), *configured* (to the last workload's carrier up: addresses and "
             "routes inside, in parallel), *probing* (to the first veth deleted: the probes, in parallel), "
             "*teardown* (to the last deleted) and *after* (to the exit: the report).", "",
             "| probed tenants | module wall | before | workloads made | configured | probing | teardown | after | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for size in direct:
        d = size.direct
        if "error" in d:
            lines.append(f"| {size.probed:,} | failed: {d['error']} | | | | | | | |")
            continue
        verdict = "failed: " + d["msg"] if d["failed"] or d["rc"] else "passed"
        if "first_made" not in d:
            lines.append(f"| {size.probed:,} | {d['seconds']:.1f} s | phases not seen ({d['workloads']} veths "
                         f"in the monitor) | | | | | | {verdict} |")
            continue
        cells = [d["first_made"], d["last_attached"] - d["first_made"], d["last_up"] - d["last_attached"],
                 d["first_deleted"] - d["last_up"], d["last_deleted"] - d["first_deleted"],
                 d["seconds"] - d["last_deleted"]]
        lines.append(f"| {size.probed:,} | {d['seconds']:.1f} s | " + " | ".join(f"{c:.1f} s" for c in cells)
                     + f" | {verdict} |")
    lines += [""] + probe_time_finding(direct)
    return lines


def probe_time_finding(direct: list[ProbeSizeResult]) -> list[str]:
    """What grows with the count, in words, from the smallest and the largest direct run."""
    timed = [size for size in direct if "first_made" in size.direct]
    if len(timed) < 2:
        return []
    low, high = timed[0], timed[-1]
    added = high.probed - low.probed

    def phase(size: ProbeSizeResult) -> dict:
        d = size.direct
        return {"before": d["first_made"], "workloads made": d["last_attached"] - d["first_made"],
                "configured": d["last_up"] - d["last_attached"], "probing": d["first_deleted"] - d["last_up"],
                "teardown": d["last_deleted"] - d["first_deleted"], "after": d["seconds"] - d["last_deleted"]}

    def growth(low: ProbeSizeResult, high: ProbeSizeResult) -> str:
        grown = {name: phase(high)[name] - phase(low)[name] for name in phase(low)}
        order = sorted(grown.items(), key=lambda item: -item[1])
        made = grown["workloads made"] / (high.probed - low.probed) * 1000
        return (f"from {low.probed:,} to {high.probed:,} probed tenants the module alone grows by "
                f"{high.direct['seconds'] - low.direct['seconds']:.1f} s ({high.direct['seconds']:.1f} s against "
                f"{low.direct['seconds']:.1f} s, {high.direct['seconds'] / low.direct['seconds']:.2f}x): "
                + ", ".join(f"{name} {seconds:+.1f} s" for name, seconds in order)
                + f"; making the workloads costs {made:.0f} ms per added probed tenant")

    low, high = timed[0], timed[-1]
    lines = ["What grows: " + growth(low, high) + "."]
    alike = [size for size in timed[:-1] if probe_targets(size.probed) == probe_targets(high.probed)]
    if alike and alike[-1] is not low:
        lines[0] += (f" At the same targets per probe ({probe_targets(high.probed)[0]}), "
                     + growth(alike[-1], high) + ".")
    wait = PROBE_COUNT * PROBE_TIMEOUT_S
    probing = {size.probed: phase(size)["probing"] for size in timed}
    made = {size.probed: phase(size)["workloads made"] for size in timed}
    waits = [f"{probing[size.probed]:.1f} s at {size.probed:,} ({probe_targets(size.probed)[1]} blocked "
             "target(s) per probe)" for size in timed]
    full_waits = [size.probed for size in timed if probing[size.probed] >= 0.8 * wait]
    lines += ["", "Reading, from these figures: Ansible adds no task and no module run with "
              "the count (one of each at every count); the module's time goes to two places."]
    lines.append(
        f"- *Probing*: {'; '.join(waits)}. Every target of a workload is probed at once (all_targets.rs), and the "
        f"workloads probe in parallel, so the probing is at most one wait ({PROBE_COUNT} x {PROBE_TIMEOUT_S} s = "
        f"{wait} s, for a blocked target nothing answers), whatever the targets and tenants. "
        + (f"At {', '.join(f'{n:,}' for n in full_waits)} a blocked target stayed silent for the whole wait (the "
           "lab's transit router has no route to the other tenants' workloads). " if full_waits else "")
        + "Where the probing is shorter than the wait, every blocked target was refused at once (an ICMP error "
          "back): the one-tenant run has only the management probe, the larger ones the next tenants' workloads "
          "too, so part of the ratio to 1 is that wait, not the count.")
    per_workload = (made[high.probed] - made[alike[-1].probed if alike else low.probed]) / (
        high.probed - (alike[-1].probed if alike else low.probed)) * 1000
    lines.append(
        "- *Workloads made* follows the tenant count: "
        + ", ".join(f"{made[size.probed]:.1f} s at {size.probed:,}" for size in timed)
        + f" ({per_workload:.0f} ms per workload under TCG): session.rs `make_all` makes them (namespace, veth "
          "pair, alias, attach to the VNet) with four makers side by side, each on its own netlink connection; on "
          "the lab's two emulated CPUs that is the kernel's own work per workload. *Configured*, *teardown* and "
          "*after* (the report) grow with the count too: they are the rest of the ratio.")
    return lines


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
    # A run stopped by hand (results.json keeps what it measured): counts that should have had rounds.
    cut_short = [size.tenants for size in results
                 if len(size.steady.get(DEEVNET, [])) < settings.rounds
                 or (BASELINE in size.converge and size.tenants <= settings.baseline_steady_max_tenants
                     and len(size.steady.get(BASELINE, [])) < settings.rounds)]
    no_steady = [n for n in no_steady if n > settings.baseline_steady_max_tenants]
    if cut_short:
        lines += ["", f"Cut short: the run was stopped before all its steady-state rounds at "
                  f"{', '.join(f'{n:,}' for n in cut_short)} tenants (the table's run counts say how many ran; a "
                  "count without a baseline steady state shows its converge ratio only)."]
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

def update_probe_subsection(path: Path, subsection: str) -> str:
    """Replaces the probe step's subsection of section 4 in place (up to the next heading), or
    appends it to the section; the tenant counts' figures around it stay."""
    text = path.read_text()
    start = text.find(PROBE_TITLE)
    if start == -1:
        section = existing_section(path)
        if not section:
            raise SystemExit(f"{path} has no section {SECTION_TITLE!r} to put the probe step in")
        text = text.replace(section, section.rstrip("\n") + "\n\n" + subsection.rstrip("\n") + "\n\n", 1)
    else:
        ends = [i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1)) if i != -1]
        end = min(ends) if ends else len(text)
        text = text[:start] + subsection.rstrip("\n") + "\n" + text[end:]
    path.write_text(text)
    return text


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
    parser.add_argument("--probe-sizes", default="1,10,100",
                        help="probed tenant counts for the role's probe step, comma-separated, at most "
                             "128 (egress_probe's limit per run); 'none' for no probe step (default 1,10,100)")
    parser.add_argument("--lab-run-dir", default=str(DEFAULT_LAB_RUN_DIR),
                        help="the lab VM's run folder (its own, so no other VM is touched)")
    parser.add_argument("--probe-step-only", action="store_true",
                        help="measure only the probe step (--probe-sizes); --update then replaces only its "
                             "subsection, and the tenant counts stay as an earlier run measured them")


def settings_of(args, command: str) -> Settings:
    sizes = [] if args.probe_step_only else [int(part) for part in args.tenant_sizes.split(",")]
    if not args.probe_step_only and (not sizes or min(sizes) < 1 or max(sizes) > 9999):
        raise SystemExit("--tenant-sizes: between 1 and 9999 tenants (VRF names are vrf_tNNNN)")
    if args.tenant_rounds < 1:
        raise SystemExit("--tenant-rounds: at least 1")
    probe_sizes = [] if args.probe_sizes in ("", "none") else [int(part) for part in args.probe_sizes.split(",")]
    if probe_sizes and (min(probe_sizes) < 1 or max(probe_sizes) > 128 or len(set(probe_sizes)) != len(probe_sizes)):
        raise SystemExit("--probe-sizes: distinct counts between 1 and 128 probed tenants (egress_probe takes at "
                         "most 128 probes in one run), or none")
    return Settings(sizes, args.tenant_rounds, args.baseline_max_tenants, args.baseline_steady_max_tenants,
                    command, probe_sizes)


def any_failed(measured: Measured) -> bool:
    return any(size.error for size in measured.sizes + measured.probes)


def run_from_args(env: dict, args, command: str) -> tuple[str, bool]:
    """Measures as the arguments say (bench/run.py): the BENCHMARKS.md section, and whether any
    tenant count failed (the section says where and why)."""
    settings = settings_of(args, command)
    measured = bench_tenant_play(env, settings, Path(args.lab_run_dir))
    return report_section(measured, settings, time.strftime("%Y-%m-%d")), any_failed(measured)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--update", metavar="BENCHMARKS_MD",
                        help="replace (or append) this benchmark's section in that file")
    parser.add_argument("--from-results", metavar="JSON", nargs="?", const=str(RESULTS),
                        help=f"measure nothing: report the raw figures a run saved (default {RESULTS})")
    args = parser.parse_args()
    if args.from_results:
        measured, settings, date = load_results(Path(args.from_results))
    else:
        if os.geteuid() != 0:
            raise SystemExit("the lab VM needs root (bench/run.py runs as root too)")
        settings = settings_of(args, " ".join(["bench/tenant_play.py", *sys.argv[1:]]))
        measured = bench_tenant_play(installed_collections_env(), settings, Path(args.lab_run_dir))
        date = time.strftime("%Y-%m-%d")
    if not settings.sizes:  # --probe-step-only
        subsection = "\n".join(probe_report(measured, settings.rounds)) + "\n"
        subsection = subsection.replace(PROBE_TITLE, PROBE_TITLE + f"\n\nReproduce: `{settings.command}` ({date}).", 1)
        print(subsection)
        if args.update:
            update_probe_subsection(Path(args.update), subsection)
        return 1 if any_failed(measured) else 0
    section = report_section(measured, settings, date)
    print(section)
    if args.update:
        update_section(Path(args.update), section)
    return 1 if any_failed(measured) else 0


def installed_collections_env() -> dict:
    """As bench/run.py: the built collection installed privately, ansible.posix from PyPI."""
    installed = WORK / "installed"
    install_built_collection(installed)
    return collections_env(installed, ensure_ansible_posix(log), WORK / "ansible-home")


if __name__ == "__main__":
    sys.exit(main())
