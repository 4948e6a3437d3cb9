# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The action behind every deevnet.net module: each module has a thin action plugin of its own
name (plugins/action/<module>.py) that is this class, so users and ansible-lint see the
module's own name as the canonical one.

ansible-core runs a binary module with six remote operations and a full copy of the binary on
every task; over SSH that makes a fast Rust module slower than a pipelined Python one. This
plugin instead:

1. validates the arguments on the controller against the module's own DOCUMENTATION, with
   Ansible's validator and wording (so ``-a 'mtu=9000'`` arrives as the int 9000);
2. keeps each binary on the target in a cache keyed by its content hash
   (``~/.ansible/deevnet.net/<module>-<sha256[:16]>``, a folder owned by the executing user,
   mode 0700, never followed through a link), verifies its hash once per install and its stat
   stamp before every run (a changed file is hashed again), and runs it with the arguments on
   standard input: one round trip per task once cached;
3. on a miss (or a corrupted copy) uploads the binary through Ansible's own temp folder,
   installs it atomically, and runs it in the same command;
4. under mitogen, runs a cache hit through mitogen's own call chain instead of a shell
   (plugin_utils/mitogen_target.py, with the same checks and stamp; the stamp's trade-off is
   written down there and in ARCHITECTURE.md);
5. falls back to the stock module path for what it cannot serve (async, become to an
   unprivileged user, a connection without stdin, keep_remote_files, or
   ``deevnet_net_fast_path: false``), and says why at -vvv.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.json_utils import _filter_non_json_lines
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.loader import fragment_loader
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.plugin_docs import get_docstring

display = Display()

MISS = "DEEVNET_NET_CACHE_MISS"
UNSAFE = "DEEVNET_NET_UNSAFE_CACHE"
MISMATCH = "DEEVNET_NET_HASH_MISMATCH"
NO_SHA256SUM = "DEEVNET_NET_NO_SHA256SUM"
NO_PROC = "DEEVNET_NET_NO_PROC"
NOEXEC = "DEEVNET_NET_NOEXEC"
UNSUPPORTED = "DEEVNET_NET_UNSUPPORTED"
MARKERS = (MISS, UNSAFE, MISMATCH, NO_SHA256SUM, NO_PROC, NOEXEC, UNSUPPORTED)
SUPPORTED_TARGETS = "x86_64 Linux, glibc 2.34+"

# The one remote script, constant text: every value reaches it as a positional argument.
#   $1 run|install   $2 module name   $3 its sha256   $4 cache entry name (module-sha256[:16])
#   $5 the uploaded binary (install only)
# Why each step:
# - the cache folder is created with mkdir that tolerates a concurrent mkdir (no
#   check-then-act), and is used only when it and ~/.ansible are real folders owned by the
#   executing user; at install, ~, ~/.ansible and the cache must also not be writable by group
#   or others (sticky folders such as /tmp excepted), else nobody but the user could swap them
#   later; the plugin then takes Ansible's stock path instead.
# - the binary is opened once (fd 3), and that open file is checked (regular, owned by the
#   user) and executed through /proc/self/fd/3: what runs is what was verified, whatever
#   happens to the path in between. Verified: hashed once per install, then held by its stat
#   stamp (device, inode, size, mtime, ctime, with the hash) recorded in .<entry>.stamp beside
#   it; a file whose stamp is not the recorded one is hashed again (one `stat` per run instead
#   of hashing the binary; the trade-off is in plugin_utils/mitogen_target.py and
#   ARCHITECTURE.md). A `stat` that fails or prints anything but numbers (one without GNU's
#   format) gives no stamp: every run hashes, as before.
# - a miss, a copy that does not match its hash, or a folder that is not private prints a
#   marker and exits 0; the plugin decides what follows.
# - install checks the target's architecture and C library first, removes temp files of dead
#   installs and, once the new copy is in place, the module's copies of other versions.
REMOTE_SCRIPT = r"""
name=$2 digest=$3 key=$4
a=$HOME/.ansible d=$HOME/.ansible/deevnet.net
exe=$d/$key
command -v sha256sum >/dev/null 2>&1 || { echo DEEVNET_NET_NO_SHA256SUM; exit 0; }
[ -d /proc/self/fd ] || { echo DEEVNET_NET_NO_PROC; exit 0; }
if [ "$1" = install ]; then
  umask 077
  arch=$(uname -m 2>/dev/null) libc=$(getconf GNU_LIBC_VERSION 2>/dev/null)
  v=${libc#glibc } major=${v%%.*} minor=${v#*.} minor=${minor%%.*}
  case "$arch:$libc" in
    x86_64:glibc\ [0-9]*.[0-9]*)
      [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 34 ]; } ||
        { echo DEEVNET_NET_UNSUPPORTED "$arch" "$libc"; exit 0; } ;;
    *) echo DEEVNET_NET_UNSUPPORTED "${arch:-unknown}" "${libc:-no glibc}"; exit 0 ;;
  esac
  mkdir "$a" 2>/dev/null; mkdir "$d" 2>/dev/null
  for p in "$a" "$d"; do
    [ -d "$p" ] && [ ! -L "$p" ] && [ -O "$p" ] || { echo DEEVNET_NET_UNSAFE_CACHE "$p is a link or is not a folder owned by $(id -un)"; exit 0; }
  done
  open=$(find "$HOME/" "$a" "$d" -maxdepth 0 -perm /022 ! -perm -1000 2>/dev/null)
  [ -z "$open" ] || { echo DEEVNET_NET_UNSAFE_CACHE "$open is writable by other users"; exit 0; }
  for t in "$d/.$name"-*.tmp; do
    [ -e "$t" ] || continue
    pid=${t%.tmp} pid=${pid##*.}
    [ -d "/proc/$pid" ] || rm -f "$t"
  done
  t=$d/.$key.$$.tmp
  rm -f "$t"
  { cp "$5" "$t" && chmod 0700 "$t" && [ "$(sha256sum <"$t")" = "$digest  -" ]; } 2>/dev/null ||
    { rm -f "$t"; echo DEEVNET_NET_HASH_MISMATCH; exit 0; }
  mv -f "$t" "$exe" || { rm -f "$t"; echo DEEVNET_NET_UNSAFE_CACHE "$d: cannot install $key"; exit 0; }
  for old in "$d/$name"-????????????????; do
    [ "$old" = "$exe" ] || rm -f "$old" "$d/.${old##*/}.stamp"
  done
fi
[ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ] && [ ! -L "$a" ] && [ -O "$a" ] && [ -f "$exe" ] && [ ! -L "$exe" ] ||
  { echo DEEVNET_NET_CACHE_MISS; exit 0; }
{ command exec 3<"$exe"; } 2>/dev/null || { echo DEEVNET_NET_CACHE_MISS; exit 0; }
fd=/proc/self/fd/3 s=$d/.$key.stamp
[ -f "$fd" ] && [ -O "$fd" ] || { echo DEEVNET_NET_CACHE_MISS; exit 0; }
st=$(stat -L -c '%d %i %s %.9Y %.9Z' "$fd" 2>/dev/null) || st=
case $st in *[!0-9.\ ]*) st= ;; esac
recorded=
[ -n "$st" ] && [ -f "$s" ] && [ ! -L "$s" ] && [ -O "$s" ] && read -r recorded <"$s"
if [ -z "$st" ] || [ "$recorded" != "$st $digest" ]; then
  [ "$(sha256sum <&3)" = "$digest  -" ] || { echo DEEVNET_NET_CACHE_MISS; exit 0; }
  [ -z "$st" ] || { printf '%s\n' "$st $digest" >"$s.$$.tmp" && mv -f "$s.$$.tmp" "$s"; } 2>/dev/null || rm -f "$s.$$.tmp"
fi
[ -x "$fd" ] || { echo DEEVNET_NET_NOEXEC "$d"; exit 0; }
exec "$fd" -
"""


def remote_command(action, name, digest, uploaded=""):
    """The command line that runs REMOTE_SCRIPT with its positional arguments."""
    args = [action, name, digest, f"{name}-{digest[:16]}"] + ([uploaded] if uploaded else [])
    return "/bin/sh -c " + " ".join(shlex.quote(a) for a in [REMOTE_SCRIPT, "deevnet.net", *args])


def controller_spec(spec):
    """Validate `path` options as plain strings: `~` and `$VARS` belong to the target, whose
    binary expands them as Ansible's `path` type would (the controller's HOME is not the
    target's)."""
    out = {}
    for name, entry in spec.items():
        entry = dict(entry)
        if entry.get("type") == "path":
            entry["type"] = "str"
        if entry.get("elements") == "path":
            entry["elements"] = "str"
        if "options" in entry:
            entry["options"] = controller_spec(entry["options"])
        out[name] = entry
    return out


# Per controller process: (path, size, mtime) -> value. Hashing 1 MB or parsing the docs once
# per module, not once per task. ansible-playbook forks a worker per host and task, so each fork
# starts with its parent's copy: the strategy imports each task's action plugin in the parent
# before forking, and that import fills these (BinaryModuleAction.__init_subclass__).
_hashes: dict[tuple, str] = {}
_specs: dict[tuple, dict] = {}


def _file_key(path):
    st = os.stat(path)
    return (path, st.st_size, st.st_mtime_ns)


def binary_sha256(path):
    key = _file_key(path)
    if key not in _hashes:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _hashes[key] = digest.hexdigest()
    return _hashes[key]


def argument_spec_from_doc(options):
    """Ansible's argument_spec from a DOCUMENTATION options mapping."""
    spec = {}
    for name, doc in (options or {}).items():
        entry = {"type": doc.get("type", "str")}
        for key in ("required", "default", "choices", "elements", "aliases"):
            if key in doc:
                entry[key] = doc[key]
        if "suboptions" in doc:
            entry["options"] = argument_spec_from_doc(doc["suboptions"])
        spec[name] = entry
    return spec


def documented_spec(binary_path):
    doc_path = binary_path + ".py"
    key = _file_key(doc_path)
    if key not in _specs:
        # With the doc fragments (extends_documentation_fragment): they hold the options the
        # file modules share.
        doc = get_docstring(doc_path, fragment_loader, collection_name="deevnet.net", is_module=True)[0] or {}
        _specs[key] = controller_spec(argument_spec_from_doc(doc.get("options")))
    return _specs[key]


def preload(action_plugin_file):
    """Fill the per-process caches for the module beside an action plugin
    (plugins/action/<m>.py -> plugins/modules/<m>), in the process that imports it. Best effort:
    anything wrong is left for the task itself to report."""
    plugins = os.path.dirname(os.path.dirname(os.path.abspath(action_plugin_file)))
    binary = os.path.join(plugins, "modules", os.path.splitext(os.path.basename(action_plugin_file))[0])
    try:
        if os.path.isfile(binary) and os.path.isfile(binary + ".py"):
            documented_spec(binary)
            binary_sha256(binary)
    except (OSError, ValueError, AnsibleError) as e:
        display.debug(f"deevnet.net: could not preload {binary}: {e}")


def _json_text(value, option):
    """Ad hoc `-a 'stanzas=[...]'` sends a list or dict as text; take JSON text as what it says,
    as the binary itself does (Ansible's own list check would split it at commas)."""
    if option and option.get("type") in ("list", "dict") and isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{"):
            try:
                return json.loads(text)
            except ValueError:
                pass
    return value


def _marker(res):
    """(marker, detail) when the remote script printed one of its markers instead of a module
    result, else (None, "")."""
    first, detail = (res.get("stdout", "").strip().split(" ", 1) + [""])[:2]
    return (first, detail) if first in MARKERS else (None, "")


class BinaryModuleAction(ActionBase):
    # The temp folder is made only on a cache miss: a hit is a single remote command.
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A module's own action plugin (plugins/action/<m>.py) is imported by the strategy in the
        # parent process before the workers fork: parse and hash once there.
        module_file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if module_file and cls.__module__.endswith(".plugins.action." + os.path.splitext(os.path.basename(module_file))[0]):
            preload(module_file)

    def run(self, tmp=None, task_vars=None):
        # ansible-core before 2.16 sets both in ActionBase.__init__, over the class attributes.
        self._supports_check_mode = True
        self._supports_async = True
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        del tmp

        context = self._shared_loader_obj.module_loader.find_plugin_with_context(
            self._task.action, collection_list=self._task.collections
        )
        if not context.resolved:
            raise AnsibleError(f"deevnet.net: cannot find the module {self._task.action}")
        fqcn = context.resolved_fqcn or self._task.action
        name = fqcn.split(".")[-1]
        binary = context.plugin_resolved_path
        if binary.endswith(".py"):
            raise AnsibleError(
                f"{fqcn}: the collection has no compiled binary for this module, only its documentation; "
                "install a built collection (make collection)"
            )

        module_args, error = self._validate(fqcn, binary)
        if error:
            result.update(failed=True, msg=error)
            return result

        reason = self._why_not_fast(task_vars)
        if not reason:
            self._update_module_args(fqcn, module_args, task_vars)
            stdin = json.dumps(module_args).encode()
            digest = binary_sha256(binary)
            environment = {}
            env = self._compute_environment_string(environment).strip()
            if self._under_mitogen():
                res = self._mitogen_run(name, digest, stdin, environment)
            else:
                res = self._remote(env, "run", name, digest, stdin)
            if _marker(res)[0] == MISS:
                display.vvv(f"deevnet.net: {fqcn} is not cached on the target (or its copy is corrupt): uploading")
                res = self._install_and_run(env, name, digest, binary, stdin)
            elif self._under_mitogen():
                display.vvv(f"deevnet.net: {fqcn} ran from the target's cache through mitogen's call chain, no shell")
            else:
                display.vvv(f"deevnet.net: {fqcn} ran from the target's cache in one round trip")
            reason = self._stock_path_reason(res)
            if not reason:
                result.update(self._parse(res))
                return result
            fallback_warning = f"deevnet.net: {fqcn} takes Ansible's stock module path (slower): {reason}"
        else:
            fallback_warning = None

        display.vvv(f"deevnet.net: {fqcn} takes the stock module path: {reason}")
        result.update(self._execute_module(
            module_name=fqcn, module_args=module_args, task_vars=task_vars,
            wrap_async=bool(self._task.async_val),
        ))
        if fallback_warning:
            result["warnings"] = [*result.get("warnings", []), fallback_warning]
        return result

    def _under_mitogen(self):
        return any(c.__module__.startswith("ansible_mitogen") for c in type(self._connection).__mro__)

    def _mitogen_run(self, name, digest, stdin, environment):
        """A cache hit through mitogen's own connection: one call into its interpreter on the
        target (plugin_utils/mitogen_target.py), which checks the cache and runs the binary with
        the arguments on standard input; the result in _low_level_execute_command's shape."""
        # Imported here: mitogen ships the module to the target by this, its collection name.
        from ansible_collections.deevnet.net.plugins.plugin_utils import mitogen_target

        marker, detail, rc, stdout, stderr = self._connection.get_chain().call(
            mitogen_target.run_cached, f"{name}-{digest[:16]}", str(digest), stdin,
            {str(k): str(v) for k, v in environment.items()})
        if marker:
            return {"rc": 0, "stdout": f"{marker} {detail}".strip() + "\n", "stderr": ""}
        return {"rc": rc, "stdout": to_text(stdout, errors="surrogate_or_strict"),
                "stderr": to_text(stderr, errors="surrogate_or_replace")}

    def _remote(self, env, action, name, digest, stdin, uploaded=""):
        cmd = remote_command(action, name, digest, uploaded)
        return self._low_level_execute_command(f"{env} {cmd}" if env else cmd, in_data=stdin)

    def _stock_path_reason(self, res):
        """Why a fast-path answer sends the task to the stock path, if it does."""
        marker, detail = _marker(res)
        if marker == UNSAFE:
            return (f"the module cache is not private: {detail}; make ~/.ansible a folder of the remote user "
                    "that only they can write (chmod go-w), or set deevnet_net_fast_path: false to silence this")
        if marker == NO_SHA256SUM:
            return "the target has no sha256sum (coreutils) to verify the cached binary with"
        if marker == NO_PROC:
            return "the target has no /proc/self/fd to run the verified binary from"
        return None

    def _validate(self, fqcn, binary):
        """The task's args, validated and coerced against the module's DOCUMENTATION."""
        spec = documented_spec(binary)
        args = {k: _json_text(v, spec.get(k)) for k, v in self._task.args.items() if not k.startswith("_ansible_")}
        validation = ArgumentSpecValidator(spec).validate(args)
        if validation.error_messages:
            unsupported = [str(e) for e in validation.errors if type(e).__name__ == "UnsupportedError"]
            if unsupported:
                return None, f"Unsupported parameters for ({fqcn}) module: {unsupported[0]}"
            return None, "; ".join(validation.error_messages)
        return dict(validation.validated_parameters), None

    def _why_not_fast(self, task_vars):
        if not boolean(task_vars.get("deevnet_net_fast_path", True), strict=False):
            return "deevnet_net_fast_path is false"
        if self._task.async_val:
            return "async tasks need Ansible's async wrapper"
        # Under mitogen the task goes through its own call chain (_mitogen_run), which takes standard input.
        if not self._under_mitogen() and not getattr(self._connection, "has_pipelining", False):
            return f"the {self._connection.transport} connection cannot pass standard input"
        become = getattr(self._connection, "become", None)
        if become is not None and not getattr(become, "pipelining", True):
            return f"become method {become.name} cannot pass standard input"
        if self._is_become_unprivileged():
            return "become to an unprivileged user, who could not read the uploaded binary"
        from ansible import constants as C
        if C.DEFAULT_KEEP_REMOTE_FILES:
            return "ANSIBLE_KEEP_REMOTE_FILES is set"
        return None

    def _install_and_run(self, env, name, digest, binary, stdin):
        tmpdir = self._connection._shell.tmpdir or self._make_tmp_path()
        try:
            uploaded = self._connection._shell.join_path(tmpdir, name)
            self._transfer_file(binary, uploaded)
            res = self._remote(env, "install", name, digest, stdin, uploaded)
        finally:
            self._remove_tmp_path(tmpdir)
        marker, detail = _marker(res)
        if marker == MISMATCH:
            raise AnsibleError(f"deevnet.net: the uploaded {name} does not match its hash {digest}: the transfer corrupted it; run the task again")
        if marker == UNSUPPORTED:
            raise AnsibleError(
                f"deevnet.net: this target's architecture is not supported ({detail}); the modules run on "
                f"{SUPPORTED_TARGETS}")
        return res

    def _parse(self, res):
        marker, detail = _marker(res)
        if marker == NOEXEC:
            raise AnsibleError(
                f"deevnet.net: the module cache {detail} on the target is on a filesystem mounted noexec, so the "
                "module binary cannot run from it; mount the remote user's home with exec, or set "
                "deevnet_net_fast_path: false and ansible_remote_tmp to a folder on a mount that allows exec")
        return self._parse_json(res)

    def _parse_json(self, res):
        stdout = to_text(res.get("stdout", ""), errors="surrogate_or_strict")
        try:
            text, warnings = _filter_non_json_lines(stdout, objects_only=True)
            for warning in warnings:
                display.warning(warning)
            data = json.loads(text)
        except ValueError:
            rc = res.get("rc")
            msg = "Module result deserialization failed: the module printed no JSON result"
            if rc in (126, 127):
                msg = (f"deevnet.net: the module binary could not be executed on the target (exit status {rc}); "
                       f"the modules run on {SUPPORTED_TARGETS}: check `uname -m` and `getconf GNU_LIBC_VERSION` there")
            return {
                "failed": True,
                "msg": msg,
                "module_stdout": stdout,
                "module_stderr": to_text(res.get("stderr", "")),
                "rc": res.get("rc"),
            }
        if not isinstance(data, dict):
            return {"failed": True, "msg": "Module result deserialization failed: not a JSON object", "module_stdout": stdout}
        return {k: v for k, v in data.items() if not k.startswith("_ansible_")}
