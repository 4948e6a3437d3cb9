"""The fast path's target side under mitogen (plugins/plugin_utils/mitogen_target.py), called
directly: it is plain Python that mitogen runs in its interpreter on the target. The cache's
safety rules are the remote script's (tests/ansible/test_fast_path.py), with the hash verified
once per install and then held by the stat stamp recorded beside the binary.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT, plugin_utils

BINARY = ROOT / "target/release/sysctl_forwarding"
DIGEST = hashlib.sha256(BINARY.read_bytes()).hexdigest()
ENTRY = f"sysctl_forwarding-{DIGEST[:16]}"


def _target():
    return plugin_utils("mitogen_target")


def _fields(answer):
    """The answer (fast_path_answer.answer) as (marker, detail, rc, stdout, stderr)."""
    assert set(answer) == {"marker", "detail", "more", "rc", "stdout", "stderr"}, answer
    return answer["marker"], answer["detail"], answer["rc"], answer["stdout"], answer["stderr"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A HOME with the binary installed as the remote script installs it (0700, private folders)."""
    home = tmp_path / "home"
    folder = home / ".ansible" / "deevnet.net"
    folder.mkdir(parents=True, mode=0o700)
    home.chmod(0o700)
    (home / ".ansible").chmod(0o700)
    shutil.copy(BINARY, folder / ENTRY)
    (folder / ENTRY).chmod(0o700)
    monkeypatch.setenv("HOME", str(home))
    etc = tmp_path / "etc"
    etc.mkdir()
    stdin = json.dumps({"path": f"{etc}/90-x.conf", "sysctl_dirs": [str(etc)], "apply": False,
                        "_ansible_check_mode": True}).encode()
    return folder, stdin


def test_a_hit_runs_the_binary_and_records_the_stamp_once(cache):
    folder, stdin = cache
    target = _target()
    marker, _, rc, out, _ = _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))
    assert marker is None and rc == 0 and json.loads(out)["changed"] is True, out
    stamp = folder / f".{ENTRY}.stamp"
    # The remote script's format (coreutils' stat), so both paths share one stamp.
    stat_line = subprocess.run(["stat", "-L", "-c", "%d %i %s %.9Y %.9Z", folder / ENTRY],
                               capture_output=True, text=True, check=True).stdout.strip()
    assert stamp.read_text() == f"{stat_line} {DIGEST}\n"
    # The next run trusts the stamp: no hash.
    target.hashlib = None
    marker, _, rc, out, _ = _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))
    assert marker is None and json.loads(out)["changed"] is True


def test_a_binary_changed_in_place_after_its_stamp_is_hashed_again_and_refused(cache):
    folder, stdin = cache
    target = _target()
    assert _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))[0] is None
    exe = folder / ENTRY
    data = bytearray(exe.read_bytes())
    data[-1] ^= 0xFF  # same size, same inode
    with open(exe, "r+b") as f:
        f.write(data)
    st = os.stat(exe)
    os.utime(exe, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime could be put back; the ctime cannot
    assert _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))[0] == target.MISS


def test_a_swapped_binary_is_refused(cache, tmp_path):
    folder, stdin = cache
    target = _target()
    assert _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))[0] is None
    impostor = tmp_path / "impostor"
    impostor.write_text("#!/bin/sh\necho '{\"changed\": false, \"msg\": \"impostor ran\"}'\n")
    impostor.chmod(0o700)
    os.replace(impostor, folder / ENTRY)
    marker, _, _, out, _ = _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))
    assert marker == target.MISS and b"impostor" not in out


def test_a_planted_link_is_refused(cache, tmp_path):
    folder, stdin = cache
    target = _target()
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    marker, detail, *_ = _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))
    assert marker == target.UNSAFE and "link" in detail
    folder.unlink()
    elsewhere.rename(folder)
    (folder / ENTRY).rename(tmp_path / "real")
    (folder / ENTRY).symlink_to(tmp_path / "real")
    assert _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))[0] == target.MISS


def test_a_fifo_in_place_of_the_binary_or_the_stamp_is_refused_at_once(cache):
    folder, stdin = cache
    target = _target()
    (folder / f".{ENTRY}.stamp").unlink(missing_ok=True)
    os.mkfifo(folder / f".{ENTRY}.stamp")
    assert _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))[0] is None  # no stamp read: hashed, and a stamp written over it
    (folder / ENTRY).unlink()
    os.mkfifo(folder / ENTRY)
    assert _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))[0] == target.MISS


@pytest.mark.parametrize("how", ["group-writable", "owned-by-another-user"])
def test_a_cache_others_can_change_is_refused(cache, how):
    folder, stdin = cache
    target = _target()
    if how == "group-writable":
        folder.parent.chmod(0o770)
    else:
        os.chown(folder.parent, 65534, 65534)
    marker, detail, rc, out, _ = _fields(target.run_cached(ENTRY, DIGEST, stdin, {}))
    assert marker == target.UNSAFE and str(folder.parent) in detail and out == b"", detail


def test_no_cache_is_a_miss(cache):
    folder, stdin = cache
    shutil.rmtree(folder)
    assert _fields(_target().run_cached(ENTRY, DIGEST, stdin, {}))[0] == _target().MISS


def test_the_task_environment_reaches_the_module(cache, tmp_path):
    """Path options expand on the target with the task's environment, as on the stock path."""
    folder, _ = cache
    (tmp_path / "custom").mkdir()
    stdin = json.dumps({"path": "$CUSTOM/90-x.conf", "sysctl_dirs": ["$CUSTOM"], "apply": False,
                        "_ansible_check_mode": True}).encode()
    marker, _, rc, out, _ = _fields(_target().run_cached(ENTRY, DIGEST, stdin, {"CUSTOM": str(tmp_path / "custom")}))
    assert marker is None and str(tmp_path / "custom" / "90-x.conf") in json.loads(out)["path"], out
