"""The collection's action plugin: controller-side validation, the content-addressed cache of
module binaries on the target, one round trip per task, and the fallback to the stock path.

The target is localhost (connection local) with HOME pointed at a temp folder, so the cache
under ~/.ansible/deevnet.net is the test's own. sysctl_forwarding runs with apply=false on a
temp file: it needs no namespace and changes nothing else.
"""
from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, VENV_BIN, oneline_result

MODULE = "deevnet.net.sysctl_forwarding"


@pytest.fixture
def target(ansible_env, tmp_path):
    """An isolated HOME (so an isolated cache) and a sysctl.d tree."""
    home = tmp_path / "home"
    home.mkdir()
    etc = tmp_path / "etc"
    etc.mkdir()
    env = dict(ansible_env, HOME=str(home))
    args = f"path={etc}/90-x.conf sysctl_dirs={etc} apply=false"
    return env, home, args


def cache_dir(home: Path) -> Path:
    return home / ".ansible" / "deevnet.net"


def cached_binary(home: Path) -> Path:
    digest = hashlib.sha256((ROOT / "target/release/sysctl_forwarding").read_bytes()).hexdigest()
    return cache_dir(home) / f"sysctl_forwarding-{digest[:16]}"


def adhoc(env, args, *extra):
    proc = subprocess.run([VENV_BIN / "ansible", "localhost", "-o", "-m", MODULE, "-a", args, "-vvv", *extra],
                          env=env, capture_output=True, text=True)
    return proc, oneline_result(proc.stdout)


def remote_commands(output: str) -> int:
    return sum(1 for line in output.splitlines() if line.startswith("<") and "> EXEC " in line)


def test_miss_uploads_once_then_every_task_is_one_round_trip(target):
    env, home, args = target
    proc, (status, _) = adhoc(env, args)
    assert status == "CHANGED", proc.stdout
    assert "is not cached on the target" in proc.stdout
    exe = cached_binary(home)
    assert exe.read_bytes() == (ROOT / "target/release/sysctl_forwarding").read_bytes()
    assert stat.S_IMODE(cache_dir(home).stat().st_mode) == 0o700
    assert stat.S_IMODE(exe.stat().st_mode) == 0o700

    proc, (status, result) = adhoc(env, args)
    assert status == "SUCCESS" and result["changed"] is False, proc.stdout
    assert "ran from the target's cache in one round trip" in proc.stdout
    assert remote_commands(proc.stdout) == 1, proc.stdout


def test_a_corrupted_cached_binary_is_replaced(target):
    env, home, args = target
    adhoc(env, args)
    exe = cached_binary(home)
    exe.write_bytes(b"#!/bin/sh\necho '{\"changed\": false, \"msg\": \"impostor\"}'\n")
    proc, (status, result) = adhoc(env, args)
    assert status == "SUCCESS", proc.stdout
    assert result.get("msg") != "impostor"
    assert "is not cached on the target (or its copy is corrupt)" in proc.stdout
    assert exe.read_bytes() == (ROOT / "target/release/sysctl_forwarding").read_bytes()


def test_a_planted_link_as_cache_folder_is_refused(target, tmp_path):
    env, home, args = target
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".ansible").mkdir()
    cache_dir(home).symlink_to(elsewhere)
    proc, (status, result) = adhoc(env, args)
    assert status == "FAILED!", proc.stdout
    assert "is a link or is owned by another user" in result["msg"]
    assert list(elsewhere.iterdir()) == []


def test_arguments_are_validated_on_the_controller_with_ansibles_wording(target):
    env, _, args = target
    proc, (status, result) = adhoc(env, args + " lock_timeout=soon")
    assert status == "FAILED!", proc.stdout
    assert "argument 'lock_timeout' is of type" in result["msg"] and "int" in result["msg"]
    assert remote_commands(proc.stdout) == 0, "validation must fail before any remote command"
    proc, (status, result) = adhoc(env, args + " bogus=1")
    assert result["msg"].startswith(f"Unsupported parameters for ({MODULE}) module: bogus")


def test_fallback_to_the_stock_path_says_why(target):
    env, home, args = target
    proc, (status, _) = adhoc(env, args, "-e", "deevnet_net_fast_path=false")
    assert status == "CHANGED", proc.stdout
    assert "takes the stock module path: deevnet_net_fast_path is false" in proc.stdout
    assert not cache_dir(home).exists()
    # async_status must look where the wrapper writes: pin the folder under the test's HOME.
    env = dict(env, ANSIBLE_ASYNC_DIR=str(home / ".ansible_async"))
    proc, (status, _) = adhoc(env, args + " state=absent", "-B", "30", "-P", "1")
    assert "takes the stock module path: async tasks need Ansible's async wrapper" in proc.stdout
    assert status == "CHANGED", proc.stdout


def test_two_plays_in_parallel_share_the_cache(target, tmp_path):
    env, home, _ = target
    procs = []
    for i in range(2):
        conf = tmp_path / f"etc{i}"
        conf.mkdir()
        playbook = tmp_path / f"play{i}.yml"
        playbook.write_text(textwrap.dedent(f"""\
            - hosts: localhost
              connection: local
              gather_facts: false
              tasks:
                - {MODULE}:
                    path: {conf}/90-x.conf
                    sysctl_dirs: [{conf}]
                    apply: false
                  loop: [1, 2, 3]
            """))
        procs.append(subprocess.Popen([VENV_BIN / "ansible-playbook", playbook], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out
        assert "failed=0" in out
    assert cached_binary(home).read_bytes() == (ROOT / "target/release/sysctl_forwarding").read_bytes()
    leftovers = [p.name for p in cache_dir(home).iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers


def test_check_and_diff_mode_pass_through(target, tmp_path):
    env, home, args = target
    proc, (status, result) = adhoc(env, args, "--check", "--diff")
    assert status == "CHANGED", proc.stdout
    assert "net.ipv4.conf.all.forwarding = 1" in result["diff"][0]["after"]
    assert not (tmp_path / "etc" / "90-x.conf").exists()
    assert os.path.exists(cached_binary(home))
