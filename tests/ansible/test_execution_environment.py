"""The fast path in execution environments (issue 28): the cache location is an option (task
variable, ansible.cfg entry, environment variable), each refusal of a cache names its real cause,
and a module runs through ansible-runner with the HOME ansible-builder's images have (/runner:
group-writable, owned by uid 1000 and group 0), built in a temp folder of the test.

The target is localhost (connection local), as in test_fast_path.py."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, VENV_BIN, oneline_result
from test_fast_path import adhoc, cache_dir, target  # noqa: F401 (target: the fixture)


def entry_name() -> str:
    digest = hashlib.sha256((ROOT / "target/release/sysctl_forwarding").read_bytes()).hexdigest()
    return f"sysctl_forwarding-{digest[:16]}"


def private_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir(mode=0o700)
    return folder


def test_the_cache_location_is_a_variable(target, tmp_path):  # noqa: F811
    env, home, args = target
    custom = private_folder(tmp_path, "cache-parent") / "deevnet.net"
    proc, (status, _) = adhoc(env, args, "-e", f"deevnet_net_cache_dir={custom}")
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert (custom / entry_name()).is_file(), list(custom.parent.rglob("*"))
    assert not cache_dir(home).exists(), "nothing in the default place"
    proc, (status, _) = adhoc(env, args, "-e", f"deevnet_net_cache_dir={custom}")
    assert "ran from the target's cache in one round trip" in proc.stdout, proc.stdout


def test_the_cache_location_is_an_ini_entry_and_an_environment_variable(target, tmp_path):  # noqa: F811
    env, home, args = target
    by_ini = private_folder(tmp_path, "ini-parent") / "cache"
    config = tmp_path / "ansible.cfg"
    config.write_text(f"[deevnet.net]\ncache_dir = {by_ini}\n")
    proc, (status, _) = adhoc(dict(env, ANSIBLE_CONFIG=str(config)), args)
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert (by_ini / entry_name()).is_file()
    by_env = private_folder(tmp_path, "env-parent") / "cache"
    proc, (status, _) = adhoc(dict(env, DEEVNET_NET_CACHE_DIR=str(by_env)), args)
    assert (by_env / entry_name()).is_file(), proc.stdout
    # `~` stands for the target's home; a relative path is refused with its fix.
    proc, _ = adhoc(env, args, "-e", "deevnet_net_cache_dir=~/elsewhere/deevnet.net")
    assert (home / "elsewhere" / "deevnet.net" / entry_name()).is_file(), proc.stdout
    proc, (status, _) = adhoc(env, args, "-e", "deevnet_net_cache_dir=relative/cache")
    assert status in ("CHANGED", "SUCCESS"), proc.stdout
    assert "the cache folder relative/cache is not an absolute path: set deevnet_net_cache_dir" in proc.stdout


def test_a_read_only_home_is_named_as_such(target, tmp_path):  # noqa: F811
    """It was told "is a link or is not a folder owned by root"."""
    env, home, args = target
    # A read-only bind mount of the test's HOME, in pytest's private mount namespace (conftest).
    subprocess.run(["mount", "--bind", str(home), str(home)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(home)], check=True)
        proc, (status, _) = adhoc(env, args)
    finally:
        subprocess.run(["umount", str(home)], check=True)
    assert status == "CHANGED", proc.stdout
    assert (f"the module cache cannot be used: {home}/.ansible cannot be made: {home} is read-only, or not "
            "writable by root; set deevnet_net_cache_dir to a folder root can write") in proc.stdout, proc.stdout
    why = fallback_warnings(proc.stdout)
    assert "is a link" not in why and "writable by its group" not in why, why


def fallback_warnings(output: str) -> str:
    """The fast path's own lines, without the remote script -vvv echoes."""
    return "\n".join(line for line in output.splitlines() if "takes the stock module path" in line)


def runner_home(tmp_path: Path) -> Path:
    """A HOME laid out as ansible-builder's images have /runner: mode 0775, uid 1000, group 0."""
    home = tmp_path / "runner"
    home.mkdir()
    os.chown(home, 1000, 0)
    home.chmod(0o775)
    return home


def test_a_group_writable_home_is_named_as_such(target, tmp_path):  # noqa: F811
    env, _, args = target
    home = runner_home(tmp_path)
    proc, (status, _) = adhoc(dict(env, HOME=str(home)), args)
    assert status == "CHANGED", proc.stdout
    assert (f"{home} is writable by its group root (mode 775), so another member of root could swap the cached "
            "module (ansible-builder's execution environments make HOME group-writable like this): set "
            "deevnet_net_cache_dir") in proc.stdout, proc.stdout
    why = fallback_warnings(proc.stdout)
    assert "read-only" not in why and "is a link" not in why, why


def runner(tmp_path: Path, home: Path, env: dict, envvars: dict) -> tuple[subprocess.CompletedProcess, list]:
    """`ansible-runner run` of one ad hoc sysctl_forwarding task on localhost, its private data
    folder in the test's temp folder; returns the run and its job events."""
    data = tmp_path / "runner-data"
    (data / "env").mkdir(parents=True, exist_ok=True)
    (data / "env" / "envvars").write_text(json.dumps(envvars))
    etc = tmp_path / "etc"
    etc.mkdir(exist_ok=True)
    proc = subprocess.run(
        [VENV_BIN / "ansible-runner", "run", str(data), "--hosts", "localhost", "-m", "deevnet.net.sysctl_forwarding",
         "-a", f"path={etc}/90-x.conf sysctl_dirs={etc} apply=false", "--rotate-artifacts", "1"],
        env=dict(env, HOME=str(home)), capture_output=True, text=True, timeout=300)
    events = [json.loads(p.read_text()) for p in sorted((data / "artifacts").glob("*/job_events/*.json"))]
    return proc, events


def warnings_of(events: list) -> list[str]:
    return [w for e in events if e.get("event") == "runner_on_ok" for w in e["event_data"]["res"].get("warnings", [])]


def test_ansible_runner_with_a_runner_home(ansible_env, tmp_path):
    """As documented (doc_fragments/module.py): with HOME /runner as ansible-builder makes it, a
    local task takes the stock path, with a warning naming the group-writable HOME and the fix;
    with deevnet_net_cache_dir set to a private folder (as an execution environment sets it, here
    through ansible-runner's env/envvars), the fast path runs and caches there."""
    home = runner_home(tmp_path)
    env = dict(ansible_env, ANSIBLE_CONNECTION="local")
    proc, events = runner(tmp_path, home, env, {"ANSIBLE_LOCALHOST_WARNING": "0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = warnings_of(events)
    assert any("takes Ansible's stock module path" in w and f"{home} is writable by its group root" in w
               and "set deevnet_net_cache_dir" in w for w in warnings), warnings

    cache = private_folder(tmp_path, "ee-cache") / "deevnet.net"
    proc, events = runner(tmp_path, home, env, {"DEEVNET_NET_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [e["event_data"]["res"]["changed"] for e in events if e.get("event") == "runner_on_ok"] == [False], events
    assert warnings_of(events) == [], warnings_of(events)
    assert (cache / entry_name()).is_file()
    default = home / ".ansible" / "deevnet.net"  # made (empty) by the refused first run's install step
    assert not default.exists() or not any(default.iterdir())
