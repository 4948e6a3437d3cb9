# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The action plugin behind every deevnet.net module (routed to from meta/runtime.yml).

ansible-core runs a binary module with six remote operations and a full copy of the binary on
every task; over SSH that makes a fast Rust module slower than a pipelined Python one. This
plugin instead:

1. validates the arguments on the controller against the module's own DOCUMENTATION, with
   Ansible's validator and wording (so ``-a 'mtu=9000'`` arrives as the int 9000);
2. keeps each binary on the target in a cache keyed by its content hash
   (``~/.ansible/deevnet.net/<module>-<sha256[:16]>``, a folder owned by the executing user,
   mode 0700, never followed through a link), checks the hash before every run, and runs it
   with the arguments on standard input: one round trip per task once cached;
3. on a miss (or a corrupted copy) uploads the binary through Ansible's own temp folder,
   installs it atomically, and runs it in the same command;
4. falls back to the stock module path for what it cannot serve (async, become to an
   unprivileged user, a connection without stdin, keep_remote_files, or
   ``deevnet_net_fast_path: false``), and says why at -vvv.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.json_utils import _filter_non_json_lines
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.parsing.plugin_docs import read_docstring
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()

CACHE_DIR = "$HOME/.ansible/deevnet.net"
MISS = "DEEVNET_NET_CACHE_MISS"
UNSAFE = "DEEVNET_NET_UNSAFE_CACHE"
MISMATCH = "DEEVNET_NET_HASH_MISMATCH"

# Per controller process: (path, size, mtime) -> value. Hashing 1 MB or parsing the docs once
# per module, not once per task.
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
        doc = read_docstring(doc_path).get("doc") or {}
        _specs[key] = argument_spec_from_doc(doc.get("options"))
    return _specs[key]


def run_cached_command(name, digest, args_from_stdin=True):
    """Shell text that runs the cached binary when it is intact, else prints MISS."""
    exe = f'"{CACHE_DIR}/{name}-{digest[:16]}"'
    return (
        f"d=\"{CACHE_DIR}\"; exe={exe}; "
        f"if [ -d \"$d\" ] && [ ! -L \"$d\" ] && [ -O \"$d\" ] && [ -f \"$exe\" ] && [ ! -L \"$exe\" ] && [ -O \"$exe\" ] "
        f"&& printf '%s  %s\\n' {digest} \"$exe\" | sha256sum -c --status 2>/dev/null; "
        f"then exec \"$exe\" {'-' if args_from_stdin else ''}; fi; echo {MISS}"
    )


def install_and_run_command(name, digest, uploaded):
    """Shell text that installs the uploaded binary into the cache atomically, then runs it."""
    final = f'"$d/{name}-{digest[:16]}"'
    return (
        f"umask 077; d=\"{CACHE_DIR}\"; mkdir -p \"$HOME/.ansible\" && {{ [ -d \"$d\" ] || mkdir \"$d\"; }} "
        f"&& [ ! -L \"$d\" ] && [ -O \"$d\" ] && chmod 0700 \"$d\" || {{ echo {UNSAFE} \"$d\"; exit 0; }}; "
        f"t=\"$d/.{name}-{digest[:16]}.$$\"; rm -f \"$t\"; cp {shlex.quote(uploaded)} \"$t\" && chmod 0700 \"$t\" "
        f"&& printf '%s  %s\\n' {digest} \"$t\" | sha256sum -c --status 2>/dev/null "
        f"|| {{ rm -f \"$t\"; echo {MISMATCH}; exit 0; }}; "
        f"mv -f \"$t\" {final} && exec {final} -"
    )


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


class ActionModule(ActionBase):
    # The temp folder is made only on a cache miss: a hit is a single remote command.
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
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
        if reason:
            display.vvv(f"deevnet.net: {fqcn} takes the stock module path: {reason}")
            result.update(self._execute_module(
                module_name=fqcn, module_args=module_args, task_vars=task_vars,
                wrap_async=bool(self._task.async_val),
            ))
            return result

        self._update_module_args(fqcn, module_args, task_vars)
        stdin = json.dumps(module_args).encode()
        digest = binary_sha256(binary)

        res = self._low_level_execute_command(run_cached_command(name, digest), in_data=stdin)
        if res.get("stdout", "").strip() == MISS:
            display.vvv(f"deevnet.net: {fqcn} is not cached on the target (or its copy is corrupt): uploading")
            res = self._install_and_run(name, digest, binary, stdin)
        else:
            display.vvv(f"deevnet.net: {fqcn} ran from the target's cache in one round trip")
        result.update(self._parse(res))
        return result

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
        if not getattr(self._connection, "has_pipelining", False):
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

    def _install_and_run(self, name, digest, binary, stdin):
        tmpdir = self._connection._shell.tmpdir or self._make_tmp_path()
        try:
            uploaded = self._connection._shell.join_path(tmpdir, name)
            self._transfer_file(binary, uploaded)
            res = self._low_level_execute_command(install_and_run_command(name, digest, uploaded), in_data=stdin)
        finally:
            self._remove_tmp_path(tmpdir)
        out = res.get("stdout", "").strip()
        if out.startswith(UNSAFE):
            raise AnsibleError(
                f"deevnet.net: the module cache {out[len(UNSAFE):].strip()} on the target is a link or is owned by "
                "another user; remove it, or set deevnet_net_fast_path: false"
            )
        if out == MISMATCH:
            raise AnsibleError(f"deevnet.net: the uploaded {name} does not match its hash {digest}: the transfer corrupted it")
        return res

    def _parse(self, res):
        stdout = to_text(res.get("stdout", ""), errors="surrogate_or_strict")
        try:
            text, warnings = _filter_non_json_lines(stdout, objects_only=True)
            for warning in warnings:
                display.warning(warning)
            data = json.loads(text)
        except ValueError:
            return {
                "failed": True,
                "msg": "Module result deserialization failed: the module printed no JSON result",
                "module_stdout": stdout,
                "module_stderr": to_text(res.get("stderr", "")),
                "rc": res.get("rc"),
            }
        if not isinstance(data, dict):
            return {"failed": True, "msg": "Module result deserialization failed: not a JSON object", "module_stdout": stdout}
        return {k: v for k, v in data.items() if not k.startswith("_ansible_")}
