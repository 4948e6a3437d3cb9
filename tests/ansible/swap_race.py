"""The swap race of issue 29 item 1, for test_fast_path.py (stock strategy) and test_mitogen.py
(mitogen_linear): root's ~/.ansible belongs to `nobody`, and a process running as nobody takes
every folder root makes in ~/.ansible/tmp (renames it away, puts its own in its place) and
replaces every file root uploads there with an impostor. If root ever runs an uploaded module
from there, the impostor runs as root and leaves its proof.

Each run is in a mount namespace of its own, with tmpfs on root's home (HOME) and on /var/tmp
(the first system temp folder), so the host's are never written.
"""
from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

NOBODY = 65534

# Runs as root only to open ~/.ansible/tmp (the test's folders above it are root's 0700), then
# as nobody for good: everything after works through that open folder.
SWAPPER = r"""
import os, stat, sys, time
folder, impostor, seconds, names = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3]), sys.argv[4:]
top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
os.setgroups([]); os.setgid(65534); os.setuid(65534)
os.umask(0)
head = impostor[:16]
taken, stolen = {}, 0

def plant(dfd, name):
    tmp = f".{name}.{os.getpid()}.swap"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755, dir_fd=dfd)
    os.write(fd, impostor)
    os.close(fd)
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)

deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    for name in os.listdir(top):
        if name in taken or ".stolen" in name:
            continue
        try:
            st = os.stat(name, dir_fd=top, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid == os.getuid():
                continue
            os.rename(name, f"{name}.stolen{stolen}", src_dir_fd=top, dst_dir_fd=top)
            stolen += 1
            os.mkdir(name, 0o777, dir_fd=top)
            taken[name] = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=top)
        except OSError:
            continue
        print(f"swapper: took {name}", file=sys.stderr, flush=True)
        for n in names:
            plant(taken[name], n)
    for name, dfd in taken.items():
        for entry in os.listdir(dfd):
            if entry.startswith(".") or entry.endswith("args"):
                continue
            try:
                fd = os.open(entry, os.O_RDONLY | os.O_NONBLOCK, dir_fd=dfd)
                try:
                    first = os.read(fd, len(head))
                finally:
                    os.close(fd)
            except FileNotFoundError:
                continue
            except OSError:
                first = b""  # root's own file, unreadable to us: replace it all the same
            if first != head:
                try:
                    plant(dfd, entry)
                    print(f"swapper: swapped {name}/{entry}", file=sys.stderr, flush=True)
                except OSError:
                    pass
    time.sleep(0.0005)
"""

# HOME is root's home from the password database, as Ansible expands remote_tmp's `~` through
# it (`~root`) while the cache uses $HOME: on a real node they are one folder. A tmpfs covers it
# in this namespace; the folder the controller's Python lives in ($KEEP, under that home with
# pyenv) is carried over read-only.
NAMESPACE = r"""
set -e
if [ -n "$KEEP" ]; then
  mkdir -p "$SIDE"
  mount --bind "$HOME/$KEEP" "$SIDE"
fi
mount -t tmpfs -o mode=0700,size=64m tmpfs "$HOME"
if [ -n "$KEEP" ]; then
  mkdir "$HOME/$KEEP"
  mount --bind "$SIDE" "$HOME/$KEEP"
  mount -o remount,bind,ro "$HOME/$KEEP"
fi
mount -t tmpfs -o mode=1777,size=64m tmpfs /var/tmp
mkdir -p "$HOME/.ansible/tmp"
[ "$FOREIGN_CACHE" != 1 ] || mkdir "$HOME/.ansible/deevnet.net"
chown -R 65534:65534 "$HOME/.ansible"
chmod 0777 "$HOME/.ansible/tmp"
"$SWAPPER_PYTHON" -c "$SWAPPER" "$HOME/.ansible/tmp" "$IMPOSTOR" 300 AnsiballZ_sysctl_forwarding sysctl_forwarding &
swapper=$!
set +e
"$@"
rc=$?
kill "$swapper"
wait "$swapper" 2>/dev/null
echo "cache entries: $(ls -A "$HOME/.ansible/deevnet.net" 2>/dev/null | wc -l)" >&2
exit $rc
"""


def impostor(proof: Path) -> str:
    return ("#!/bin/sh\n# deevnet.net test impostor\n"
            f"id -u > {proof}\n"
            "echo '{\"changed\": false, \"msg\": \"impostor ran\"}'\n")


def run(env: dict, tmp: Path, command: list, foreign_cache: bool) -> tuple[subprocess.CompletedProcess, Path]:
    """Runs `command` (an ansible command on localhost, as root) with a fresh tmpfs as root's
    home, whose ~/.ansible (and, with `foreign_cache`, the cache folder in it) belongs to
    nobody, and the swapper at work in ~/.ansible/tmp, which is also remote_tmp (Ansible's
    default). Returns the finished process and the impostor's proof file, which exists only if
    the impostor ran."""
    home = pwd.getpwuid(0).pw_dir
    python = os.path.realpath(sys.executable)
    keep = python[len(home) + 1:].split("/")[0] if python.startswith(home + "/") else ""
    proof = tmp / "impostor-ran-as"
    env = dict(env, HOME=home, KEEP=keep, SIDE=str(tmp / "kept"), ANSIBLE_REMOTE_TEMP="~/.ansible/tmp",
               SWAPPER=SWAPPER, SWAPPER_PYTHON=sys.executable, IMPOSTOR=impostor(proof),
               FOREIGN_CACHE="1" if foreign_cache else "0")
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c", NAMESPACE, "swap-race",
                           *map(str, command)], env=env, capture_output=True, text=True, timeout=600)
    return proc, proof
