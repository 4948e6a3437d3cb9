"""Where a forked ansible-playbook worker spends one task (bench/fleet.py's profile pass).

Each worker of a play (one fork per host and task) runs under cProfile through
worker_profile_hook/sitecustomize.py; the stats of all of them are summed and split into:
blocked (waiting in poll/select: the SSH command or mitogen call, i.e. the round trip and
everything on the target, and the scheduler), writes to the connection (mitogen's multiplexer
socket), the deevnet.net plugin's own controller work (argument spec from the docs, the
binary's hash), and the rest (Ansible's task executor: templating, validation, results).
"""
from __future__ import annotations

import pstats
from pathlib import Path

HOOK = Path(__file__).resolve().parent / "worker_profile_hook"

# the plugin's controller work: category -> its function in plugin_utils/binary_module.py
PLUGIN_FUNCTIONS = {"argument spec from the docs": "documented_spec", "binary hash": "binary_sha256"}


def env_for(env: dict, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.prof"):
        old.unlink()
    path = f"{HOOK}:{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(HOOK)
    return dict(env, PYTHONPATH=path, WORKER_PROFILE_DIR=str(out))


def breakdown(out: Path, tasks: int) -> dict[str, float]:
    """ms per task of each category, over the workers' stats in `out` (a worker killed while
    writing its stats is skipped)."""
    stats = None
    for path in sorted(out.glob("*.prof")):
        try:
            one = pstats.Stats(str(path))
        except (EOFError, ValueError, TypeError):
            continue
        stats = one if stats is None else stats.add(one)
    if stats is None:
        return {}
    raw = stats.stats  # {(file, line, func): (cc, nc, tottime, cumtime, callers)}
    # WorkerProcess._run; under mitogen it also shows as a recursive call, whose cumulative time is the outer one.
    total = sum(v[3] for k, v in raw.items() if k[2] == "_run" and k[0].endswith("executor/process/worker.py"))
    blocked = sum(v[2] for k, v in raw.items() if k[0] == "~" and ("poll" in k[2] or "select" in k[2]))
    writes = sum(v[2] for k, v in raw.items() if k[0] == "~" and k[2] == "<built-in method posix.write>")
    result = {"worker, whole task": total, "blocked in poll/select": blocked, "socket and pipe writes": writes}
    for name, func in PLUGIN_FUNCTIONS.items():
        result[name] = sum(v[3] for k, v in raw.items() if k[2] == func and "binary_module" in k[0])
    result["the rest (Ansible's task executor)"] = total - sum(v for k, v in result.items() if k != "worker, whole task")
    return {k: v / tasks * 1000 for k, v in result.items()}
