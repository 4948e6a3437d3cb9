#!/usr/bin/env python3
"""Suzieq next to deevnet.net.bgp_evpn_assert on the all-exit lab's faults (issue 27; not part of
`make test`). For the healthy fabric and each fault of tests/lab/all-exit/guest/all-exit-faults:
inject it, poll the four FRR nodes once with Suzieq's poller and ask `suzieq-cli bgp assert` and
`suzieq-cli evpnVni assert`, run bgp_evpn_assert on each hypervisor (ad hoc, through the same SSH
path as molecule/all-exit), time each, clear the fault. Prints a Markdown table and keeps every
answer under build/bench/suzieq/.

Needs: the all-exit lab up and converged (the role applied, e.g. `molecule converge -s all-exit`
from the staged collection, or molecule/all-exit's test left before destroy), Suzieq in its own
venv (Suzieq 0.25 wants Python < 3.12; the project's .venv is 3.13):

    python3.11 -m venv build/bench/suzieq-venv && build/bench/suzieq-venv/bin/pip install suzieq==0.25.0
    .venv/bin/python bench/suzieq_side_by_side.py [--faults core-as,...] [--frr-json DIR]

How Suzieq reaches the nodes: the containers have no address the host can reach. Ansible gets in
with the ProxyCommand `ssh <VM> podman exec -i <node> /usr/sbin/sshd -i`; Suzieq's SSH client
(asyncssh) did not apply a ProxyCommand from `--ssh-config-file` (it resolved `hv01` by DNS:
"Name or service not known"), so this script listens on 127.0.0.1 (one port per node) and runs
that same command for each connection (127.0.0.11-14, one per node). Nothing listens beyond loopback, no route is opened. Suzieq runs FRR's commands as `sudo vtysh`:
the node image has no sudo, so the script puts a two-line shim (`exec "$@"`) into each container
(they are root already); that is the only change made for Suzieq.
"""
import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "tests/lab/all-exit/all-exit"
RUN_DIR = Path(os.environ.get("LAB_RUN_DIR", ROOT / "build/lab-all-exit"))
WORK = ROOT / "build/bench/suzieq"
SQ_VENV = Path(os.environ.get("SUZIEQ_VENV", ROOT / "build/bench/suzieq-venv"))
NODES = ["hv01", "hv02", "hv03", "core"]
HVS = ["hv01", "hv02", "hv03"]
# The poller starts its workers with the python3 it finds first.
SQ_ENV = dict(os.environ, PATH=f"{SQ_VENV / 'bin'}:{os.environ['PATH']}")
FAULTS = ["core-as", "ipv4-activation", "core-route-map", "vni-missing"]
FAULT_NAMES = {
    "healthy": "none (the converged fabric)",
    "core-as": "the core's AS 45689 (the hypervisors' base AS)",
    "ipv4-activation": "IPv4 activation missing toward the core (hv01)",
    "core-route-map": "route-map toward the core missing (hv02): /32s and /128s leak",
    "vni-missing": "L2VNI 11001 missing on hv02",
}


def lab_env() -> dict:
    env = {}
    for line in (RUN_DIR / "lab.env").read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = value
    return env


def sh(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def guest(command: str) -> str:
    result = sh([str(LAB), "run", command])
    if result.returncode:
        raise SystemExit(f"in the VM: {command}: {result.stderr[-2000:]}")
    return result.stdout


def proxy_command(env: dict, node: str) -> list:
    return ["ssh", "-i", env["LAB_SSH_KEY"], "-p", env["LAB_SSH_PORT"], "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
            "root@127.0.0.1", "podman", "exec", "-i", node, "/usr/sbin/sshd", "-i"]


def start_forwarders(env: dict) -> dict:
    """127.0.0.1N:<port> per node: each connection is piped to `sshd -i` in the node's container."""
    ports, ready = {}, threading.Event()

    async def serve():
        async def pipe(reader, writer):
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        def handler(node):
            async def connected(reader, writer):
                proc = await asyncio.create_subprocess_exec(
                    *proxy_command(env, node), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL)
                await asyncio.gather(pipe(reader, proc.stdin), pipe(proc.stdout, writer))
                if proc.returncode is None:
                    proc.kill()
            return connected

        # One loopback address per node: Suzieq keys its nodes by address, so ports alone would
        # make the four one node.
        for index, node in enumerate(NODES):
            server = await asyncio.start_server(handler(node), f"127.0.0.{11 + index}", 0)
            ports[node] = server.sockets[0].getsockname()[:2]
        ready.set()
        await asyncio.Event().wait()

    threading.Thread(target=lambda: asyncio.run(serve()), daemon=True).start()
    ready.wait(30)
    return ports


def write_config(env: dict, ports: dict) -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "inventory.yml").write_text(
        "sources:\n  - name: all-exit\n    hosts:\n"
        + "".join(f"      - url: ssh://root@{ports[n][0]}:{ports[n][1]} devtype=linux keyfile={env['LAB_SSH_KEY']}\n"
                  for n in NODES)
        + "devices:\n  - name: frr\n    ignore-known-hosts: true\n"
        "namespaces:\n  - name: allexit\n    source: all-exit\n    device: frr\n")
    cfg = WORK / "suzieq-cfg.yml"
    cfg.write_text(
        f"data-directory: {WORK / 'parquet'}\ntemp-directory: {WORK / 'tmp'}\n"
        "logging-level: WARNING\n"
        # A connection through the VM (SSH to it, podman exec, sshd's key exchange under TCG) takes
        # longer than Suzieq's default connect-timeout of 15 s.
        f"poller:\n  logging-level: WARNING\n  log-file: {WORK / 'poller.log'}\n  period: 60\n  connect-timeout: 180\n"
        f"coalescer:\n  log-file: {WORK / 'coalescer.log'}\n"
        f"rest:\n  API_KEY: unused\n  logging-level: WARNING\n  log-file: {WORK / 'rest.log'}\n")
    return cfg


def suzieq(cfg: Path, state: str) -> dict:
    """One poll (run-once update: gather, normalize, write) and the two asserts; seconds each."""
    sh(["rm", "-rf", str(WORK / "parquet")])
    started = time.monotonic()
    poll = sh([str(SQ_VENV / "bin/sq-poller"), "-c", str(cfg), "-I", str(WORK / "inventory.yml"),
               "--run-once", "update",
               "-s", "bgp evpnVni device"], timeout=900, env=SQ_ENV)
    poll_s = time.monotonic() - started
    out = {"poll_s": poll_s, "poll_rc": poll.returncode, "poll_err": poll.stderr[-3000:]}
    for table in ("bgp", "evpnVni"):
        started = time.monotonic()
        answer = sh([str(SQ_VENV / "bin/suzieq-cli"), table, "assert", "--config", str(cfg),
                     "--namespace", "allexit", "--format", "json", "--result", "fail"], timeout=600, env=SQ_ENV)
        out[f"{table}_s"] = time.monotonic() - started
        out[table] = answer.stdout.strip() or answer.stderr.strip()[-2000:]
    (WORK / f"{state}-suzieq.json").write_text(json.dumps(out, indent=1))
    return out


def module(state: str) -> dict:
    """bgp_evpn_assert on each hypervisor, as molecule/all-exit's verify_control_plane.yml runs it."""
    env = dict(os.environ, DEEVNET_LAB_ENV=str(RUN_DIR / "lab.env"),
               ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build/lint"), ANSIBLE_HOST_KEY_CHECKING="false",
               ANSIBLE_TIMEOUT="60", ANSIBLE_SSH_RETRIES="3", ANSIBLE_PIPELINING="true")
    args = {"fabric_ipv6_only": True,
            "peers": [{"peer": "bgpv6", "remote_as": 65001, "address_families": ["ipv4_unicast", "ipv6_unicast"],
                       "receives_default": ["ipv4", "ipv6"], "advertises": "aggregates_only"}],
            "vnis": [{"vni": 10001}, {"vni": 11001}]}
    started = time.monotonic()
    result = sh([str(ROOT / ".venv/bin/ansible"), "exit_nodes", "-i", str(ROOT / "molecule/all-exit/inventory"),
                 "-m", "deevnet.net.bgp_evpn_assert", "-a", json.dumps(args), "-o"], env=env, timeout=600)
    seconds = time.monotonic() - started
    findings = {}
    for line in result.stdout.splitlines():
        match = re.match(r"^(hv0\d) \| (\w+)!? => (\{.*\})$", line)
        if match:
            findings[match[1]] = json.loads(match[3]).get("findings", [])
    out = {"seconds": seconds, "findings": findings, "stderr": result.stderr[-2000:]}
    (WORK / f"{state}-module.json").write_text(json.dumps(out, indent=1))
    return out


def summarize_suzieq(text: str) -> str:
    try:
        rows = json.loads(text)
    except ValueError:
        return text.replace("\n", " ")[:300]
    if not rows:
        return "pass (no failed rows)"
    cells = []
    for row in rows:
        what = row.get("peer") or row.get("vni") or ""
        reason = row.get("assertReason") or row.get("assert") or ""
        reason = ", ".join(reason) if isinstance(reason, list) else str(reason)
        cells.append(f"{row.get('hostname', '')} {what}: {reason}")
    return "; ".join(sorted(set(cells)))[:600]


def summarize_module(findings: dict) -> str:
    cells = [f"{host} {f['object']}: {f['found']} -> {f['fix']}" for host, items in sorted(findings.items())
             for f in items]
    return "; ".join(cells)[:900] or "pass (no findings)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--frr-json", help="also record every node's FRR JSON per state into this folder")
    args = parser.parse_args()
    env = lab_env()
    cfg = write_config(env, start_forwarders(env))
    guest("for n in " + " ".join(NODES) + "; do podman exec $n sh -c "
          "'printf \"#!/bin/sh\\nexec \\\"\\$@\\\"\\n\" >/usr/local/bin/sudo && chmod 755 /usr/local/bin/sudo'; done")
    rows = []
    for state in ["healthy"] + [f for f in args.faults.split(",") if f]:
        if state != "healthy":
            guest(f"/usr/local/sbin/all-exit-faults inject {state}")
        if args.frr_json:
            # FRR's JSON in this state, for the module's tests (/work/notes/frr-json/README.txt)
            out = Path(args.frr_json) / state
            out.mkdir(parents=True, exist_ok=True)
            tar = subprocess.run([str(LAB), "run", "rm -rf /tmp/fj && /usr/local/sbin/all-exit-faults frr-json /tmp/fj "
                                  ">&2 && tar -C /tmp/fj -cf - ."], capture_output=True, check=True)
            subprocess.run(["tar", "-C", str(out), "-xf", "-"], input=tar.stdout, check=True)
        try:
            sq = suzieq(cfg, state)
            mod = module(state)
        finally:
            if state != "healthy":
                guest(f"/usr/local/sbin/all-exit-faults clear {state} && /usr/local/sbin/all-exit-probe wait-fabric 240")
        rows.append((state, sq, mod))
        print(f"{state}: suzieq poll {sq['poll_s']:.0f}s rc={sq['poll_rc']}, bgp {summarize_suzieq(sq['bgp'])}, "
              f"evpnVni {summarize_suzieq(sq['evpnVni'])}; module {mod['seconds']:.0f}s {summarize_module(mod['findings'])}",
              flush=True)
    table = ["| fault | `suzieq-cli bgp assert` | `suzieq-cli evpnVni assert` | Suzieq time (poll + bgp + evpnVni assert) "
             "| `bgp_evpn_assert` (3 hypervisors) | module time |", "|---|---|---|---|---|---|"]
    for state, sq, mod in rows:
        table.append(f"| {FAULT_NAMES.get(state, state)} | {summarize_suzieq(sq['bgp'])} | {summarize_suzieq(sq['evpnVni'])} "
                     f"| {sq['poll_s']:.0f} s + {sq['bgp_s']:.0f} s + {sq['evpnVni_s']:.0f} s "
                     f"| {summarize_module(mod['findings'])} | {mod['seconds']:.0f} s |")
    print("\n".join(table))
    (WORK / "table.md").write_text("\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
