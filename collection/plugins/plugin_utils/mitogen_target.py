# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fast path's cache hit under mitogen, run on the target inside mitogen's persistent
interpreter (the plugin calls run_cached() through the connection's call chain): no shell, no
sha256sum, one process (the module itself), arguments on its standard input.

The same checks as the remote script's run step (binary_module.REMOTE_SCRIPT), and the same
stamp: the binary's hash is verified once per install and recorded with its stat stamp
(device, inode, size, mtime, ctime, and the hash) in `.<entry>.stamp` beside it, in the format
of `stat -L -c '%d %i %s %.9Y %.9Z'`, so both paths share it; a run accepts the open file only
if its stamp is the recorded one, else hashes it again. Any write, truncation, chmod, rename
over it or replacement changes the inode, the size, the mtime or the ctime (which no
unprivileged process can set back); what the stamp does not catch is a change made below the
filesystem (a raw write to the block device, bit rot), which needs root or a failing disk.

Only the standard library: mitogen ships this file to the target as it is.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess

try:  # as the collection's own plugin_utils: mitogen ships it from the controller by this name
    from ansible_collections.deevnet.net.plugins.plugin_utils.fast_path_answer import MISS, NOEXEC, NO_PROC, UNSAFE, answer
except ImportError:  # this file loaded by its path (the tests): the file beside it
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        "deevnet_net_fast_path_answer", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fast_path_answer.py"))
    _answers = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_answers)
    MISS, NOEXEC, NO_PROC, UNSAFE, answer = _answers.MISS, _answers.NOEXEC, _answers.NO_PROC, _answers.UNSAFE, _answers.answer
# Never through a link; O_NONBLOCK so that a FIFO planted there opens at once (and is refused as
# not a regular file) instead of waiting for a writer.
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _private_folder(path, uid, owners=None):
    """None if `path` is a real folder (owned by one of `owners`, when given) that no other user
    can write (sticky folders excepted), else why not: the remote script's rules and causes."""
    try:
        st = os.lstat(path) if owners else os.stat(path)  # the home itself may be a link, as `$HOME/` follows
    except OSError:
        return f"{path} is missing"
    if owners and stat.S_ISLNK(st.st_mode):
        return f"{path} is a link (owner: uid {st.st_uid}), and the cache is never reached through one"
    if owners and not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if owners and st.st_uid not in owners:
        return f"{path} belongs to uid {st.st_uid}, not to uid {uid}, so they could swap the cached module"
    if st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX:
        return f"{path} is writable by every user (mode {stat.S_IMODE(st.st_mode):o})"
    if st.st_mode & 0o020 and not st.st_mode & stat.S_ISVTX:
        return (f"{path} is writable by its group (gid {st.st_gid}, mode {stat.S_IMODE(st.st_mode):o}), so another "
                "member could swap the cached module: set deevnet_net_cache_dir to a folder only this user can write")
    return None


def _stamp(st, digest):
    """The stamp as the remote script writes it too: `stat -L -c '%d %i %s %.9Y %.9Z'` and the hash."""
    def seconds(ns):
        return f"{ns // 1000000000}.{ns % 1000000000:09d}"
    return f"{st.st_dev} {st.st_ino} {st.st_size} {seconds(st.st_mtime_ns)} {seconds(st.st_ctime_ns)} {digest}"


def _read_stamp(path, uid):
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_size > 4096:
            return None
        return os.read(fd, 4096).decode("ascii", "replace").strip()
    finally:
        os.close(fd)


def _write_stamp(path, text):
    """Atomically; a failure only means the next run hashes again."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, text.encode("ascii") + b"\n")
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _sha256(fd):
    digest = hashlib.sha256()
    offset = 0
    while True:
        block = os.pread(fd, 1 << 20, offset)
        if not block:
            return digest.hexdigest()
        digest.update(block)
        offset += len(block)


def run_cached(entry, digest, stdin, env, cache_dir="~/.ansible/deevnet.net"):
    """fast_path_answer.answer(): marker None when the module ran (its rc, stdout, stderr).
    `cache_dir` is deevnet_net_cache_dir, `~` standing for the home."""
    uid = os.geteuid()
    cache = os.path.expanduser(cache_dir).rstrip("/")
    if not cache.startswith("/"):
        return answer(UNSAFE, f"the cache folder {cache_dir} is not an absolute path: set deevnet_net_cache_dir to one")
    ansible_dir = os.path.dirname(cache)
    home = os.path.dirname(ansible_dir)
    if not os.path.isdir("/proc/self/fd"):
        return answer(NO_PROC)
    if not os.path.lexists(cache):
        return answer(MISS)
    for folder, owners in ((home, None), (ansible_dir, (uid, 0)), (cache, (uid,))):
        why = _private_folder(folder, uid, owners)
        if why:
            return answer(UNSAFE, why)
    exe = os.path.join(cache, entry)
    try:
        fd = os.open(exe, OPEN_FLAGS)
    except OSError:
        return answer(MISS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid:
            return answer(MISS)
        stamp_path = os.path.join(cache, f".{entry}.stamp")
        if _read_stamp(stamp_path, uid) != _stamp(st, digest):
            if _sha256(fd) != digest:
                return answer(MISS)
            _write_stamp(stamp_path, _stamp(st, digest))
        if not st.st_mode & stat.S_IXUSR:
            return answer(NOEXEC, cache)
        # The child inherits the verified open file as the same fd number and runs it through
        # /proc/self/fd: what runs is what was checked, whatever happens to the path meanwhile.
        try:
            proc = subprocess.run([f"/proc/self/fd/{fd}", "-"], input=stdin, capture_output=True, pass_fds=(fd,),
                                  env=dict(os.environ, **env), check=False)
        except PermissionError:
            return answer(NOEXEC, cache)
        return answer(None, rc=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
    finally:
        os.close(fd)
