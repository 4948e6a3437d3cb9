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
3. on a miss (or a corrupted copy) uploads the binary to a private temp folder it makes and
   verifies on the target (REMOTE_SCRIPT's tmp step), installs it atomically, and runs it in
   the same command;
4. under mitogen, runs a cache hit through mitogen's own call chain instead of a shell
   (plugin_utils/mitogen_target.py, with the same checks and stamp; the stamp's trade-off is
   written down there);
5. falls back to the stock module path for what it cannot serve (async, become to an
   unprivileged user, a connection without stdin, keep_remote_files, or
   ``deevnet_net_fast_path: false``), and says why at -vvv. When the fast path itself sends
   the task there (a cache that is not private, no sha256sum, no /proc), the stock path
   uploads to that private temp folder too, never into a folder the checks refused.

What the target answers (a marker, or the module's output) is defined once, in
plugin_utils/fast_path_answer.py, for both the remote script and mitogen.
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

try:  # as the collection's own plugin_utils (Ansible's collection loader)
    from ansible_collections.deevnet.net.plugins.plugin_utils import fast_path_answer as answers
except ImportError:  # this file loaded by its path, outside Ansible's loader: the file beside it
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        "deevnet_net_fast_path_answer", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fast_path_answer.py"))
    answers = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(answers)

MISS, UNSAFE, MISMATCH, UNSUPPORTED = answers.MISS, answers.UNSAFE, answers.MISMATCH, answers.UNSUPPORTED
NO_SHA256SUM, NO_PROC, NOEXEC = answers.NO_SHA256SUM, answers.NO_PROC, answers.NOEXEC
PRIVATE_TMP, UNSAFE_TMP = answers.PRIVATE_TMP, answers.UNSAFE_TMP
SUPPORTED_TARGETS = "x86_64 Linux, glibc 2.34+"

# The one remote script, constant text (its markers filled in from fast_path_answer.MARKERS):
# every value reaches it as a positional argument.
#   $1 run|install   $2 module name   $3 its sha256   $4 cache entry name (module-sha256[:16])
#   $5 the cache folder (deevnet_net_cache_dir; `~` standing for the home)
#   $6 the uploaded binary (install only)
#   or: $1 tmp   $2... candidate folders for a private temp folder (remote_tmp, then the
#   system temp folders), `~` standing for the home
# Why each step:
# - the cache folder (~/.ansible/deevnet.net unless deevnet_net_cache_dir says otherwise) is
#   created with mkdir that tolerates a concurrent mkdir (no check-then-act), and is used only
#   when it is a real folder owned by the executing user and its parent (~/.ansible) a real
#   folder owned by that user or root; at install, the parent's parent (~), the parent and the
#   cache must also not be writable by group or others (sticky folders such as /tmp excepted),
#   else somebody else could swap them later; the plugin then takes Ansible's stock path
#   instead. Each refusal names its own cause (a read-only or foreign folder, a link, a
#   group-writable home as ansible-builder's execution environments have, a world-writable
#   one) with its own fix.
# - the binary is opened once (fd 3), and that open file is checked (regular, owned by the
#   user) and executed through /proc/self/fd/3: what runs is what was verified, whatever
#   happens to the path in between. Verified: hashed once per install, then held by its stat
#   stamp (device, inode, size, mtime, ctime, with the hash) recorded in .<entry>.stamp beside
#   it; a file whose stamp is not the recorded one is hashed again (one `stat` per run instead
#   of hashing the binary; the trade-off is in plugin_utils/mitogen_target.py). A `stat` that
#   fails or prints anything but numbers (one without GNU's format) gives no stamp: every run
#   hashes, as before.
# - a miss, a copy that does not match its hash, or a folder that is not private prints a
#   marker and exits 0; the plugin decides what follows.
# - install checks the target's architecture and C library first, removes temp files of dead
#   installs and, once the new copy is in place, the module's copies of other versions.
# - tmp makes the folder every upload goes to (the install's, and the stock module path's when
#   the task falls back): a new folder (mktemp -d, 0700) in the first candidate whose every
#   folder from / down belongs to root or the user and is writable by nobody else (sticky
#   folders such as /tmp excepted). Else a user who can rename a folder on the way could swap
#   the uploaded file between its upload and its run, as root (Ansible's stock
#   ~/.ansible/tmp under a ~/.ansible owned by another user). Candidates are checked before
#   anything is made in them; a candidate refused is named with its owner on a second line.
REMOTE_SCRIPT_TEMPLATE = r"""
if [ "$1" = tmp ]; then
  shift
  umask 077
  me=$(id -u) why= who=root
  [ "$me" = 0 ] || who="$(id -un) or root"
  foreign() {
    q=$1 hit=
    while :; do
      [ -n "$(find "$q" -maxdepth 0 \( -user 0 -o -user "$me" \) \( ! -perm /022 -o -perm -1000 \) 2>/dev/null)" ] ||
        hit="$q (owner $(stat -c %U "$q" 2>/dev/null || echo unknown), mode $(stat -c %a "$q" 2>/dev/null || echo unknown))"
      [ "$q" = / ] && break
      q=${q%/*} q=${q:-/}
    done
    printf %s "$hit"
  }
  for base; do
    case $base in "~") base=$HOME ;; "~/"*) base=$HOME/${base#"~/"} ;; esac
    case $base in /*) ;; *) why="$why; $base is not an absolute path"; continue ;; esac
    e=$base
    while [ ! -d "$e" ]; do e=${e%/*} e=${e:-/}; done
    p=$(cd -P "$e" 2>/dev/null && pwd -P) || { why="$why; $e cannot be entered"; continue; }
    bad=$(foreign "$p")
    [ -z "$bad" ] || { why="$why; $bad could be changed by another user than $who"; continue; }
    mkdir -p "$base" 2>/dev/null
    p=$(cd -P "$base" 2>/dev/null && pwd -P) || { why="$why; $base cannot be made"; continue; }
    bad=$(foreign "$p")
    [ -z "$bad" ] || { why="$why; $bad could be changed by another user than $who"; continue; }
    t=$(mktemp -d "$p/deevnet.net-tmp-XXXXXXXXXX" 2>/dev/null) && [ -d "$t" ] && [ ! -L "$t" ] && [ -O "$t" ] ||
      { why="$why; $p: cannot make a folder in it"; continue; }
    echo @PRIVATE_TMP@ "$t"
    [ -z "$why" ] || echo "${why#; }"
    exit 0
  done
  echo @UNSAFE_TMP@ "${why#; }"
  exit 0
fi
name=$2 digest=$3 key=$4 d=$5 me=$(id -un)
case $d in "~") d=$HOME ;; "~/"*) d=$HOME/${d#"~/"} ;; esac
case $d in /*/*|/?*) d=${d%/} ;; *) echo @UNSAFE@ "the cache folder $5 is not an absolute path: set deevnet_net_cache_dir to one (or ~/...)"; exit 0 ;; esac
a=${d%/*} a=${a:-/}
up=${a%/*} up=${up:-/}
exe=$d/$key
command -v sha256sum >/dev/null 2>&1 || { echo @NO_SHA256SUM@; exit 0; }
[ -d /proc/self/fd ] || { echo @NO_PROC@; exit 0; }
if [ "$1" = install ]; then
  umask 077
  arch=$(uname -m 2>/dev/null) libc=$(getconf GNU_LIBC_VERSION 2>/dev/null)
  v=${libc#glibc } major=${v%%.*} minor=${v#*.} minor=${minor%%.*}
  case "$arch:$libc" in
    x86_64:glibc\ [0-9]*.[0-9]*)
      [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 34 ]; } ||
        { echo @UNSUPPORTED@ "$arch" "$libc"; exit 0; } ;;
    *) echo @UNSUPPORTED@ "${arch:-unknown}" "${libc:-no glibc}"; exit 0 ;;
  esac
  mkdir "$a" 2>/dev/null; mkdir "$d" 2>/dev/null
  for p in "$a" "$d"; do
    q=${p%/*} q=${q:-/}
    if [ -L "$p" ]; then
      echo @UNSAFE@ "$p is a link (owner: $(stat -c %U "$p" 2>/dev/null || echo unknown)), and the cache is never \
reached through one: remove it, or set deevnet_net_cache_dir to a real folder"; exit 0
    elif [ ! -e "$p" ] && [ -d "$q" ] && [ ! -w "$q" ]; then
      echo @UNSAFE@ "$p cannot be made: $q is read-only, or not writable by $me; set deevnet_net_cache_dir to a \
folder $me can write (the home of an execution environment or a container may be read-only)"; exit 0
    elif [ ! -d "$p" ]; then
      echo @UNSAFE@ "$p cannot be made or is not a folder; set deevnet_net_cache_dir to a folder $me can write"; exit 0
    elif [ ! -O "$p" ] && { [ "$p" = "$d" ] || [ "$(stat -c %u "$p" 2>/dev/null)" != 0 ]; }; then
      echo @UNSAFE@ "$p belongs to $(stat -c %U "$p" 2>/dev/null || echo unknown), not to $me, so they could swap \
the cached module: chown it to $me, or set deevnet_net_cache_dir to a folder of $me"; exit 0
    fi
  done
  for p in "$up/" "$a" "$d"; do
    [ -n "$(find "$p" -maxdepth 0 -perm /022 ! -perm -1000 2>/dev/null)" ] || continue
    shown=${p%/} shown=${shown:-/} mode=$(stat -L -c %a "$p" 2>/dev/null)
    if [ -n "$(find "$p" -maxdepth 0 -perm /002 2>/dev/null)" ]; then
      echo @UNSAFE@ "$shown is writable by every user (mode $mode), so anyone could swap the cached module: chmod \
o-w it, or set deevnet_net_cache_dir to a folder only $me can write"
    else
      group=$(stat -L -c %G "$p" 2>/dev/null)
      echo @UNSAFE@ "$shown is writable by its group $group (mode $mode), so another member of $group could swap the \
cached module (ansible-builder's execution environments make HOME group-writable like this): \
set deevnet_net_cache_dir to a folder only $me can write whose parent no group can write, or \
chmod g-w it"
    fi
    exit 0
  done
  for t in "$d/.$name"-*.tmp; do
    [ -e "$t" ] || continue
    pid=${t%.tmp} pid=${pid##*.}
    [ -d "/proc/$pid" ] || rm -f "$t"
  done
  t=$d/.$key.$$.tmp
  rm -f "$t"
  { cp "$6" "$t" && chmod 0700 "$t" && [ "$(sha256sum <"$t")" = "$digest  -" ]; } 2>/dev/null ||
    { rm -f "$t"; echo @MISMATCH@; exit 0; }
  mv -f "$t" "$exe" || { rm -f "$t"; echo @UNSAFE@ "$d: cannot install $key"; exit 0; }
  for old in "$d/$name"-????????????????; do
    [ "$old" = "$exe" ] || rm -f "$old" "$d/.${old##*/}.stamp"
  done
fi
[ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ] && [ ! -L "$a" ] && { [ -O "$a" ] || [ "$(stat -c %u "$a" 2>/dev/null)" = 0 ]; } &&
  [ -f "$exe" ] && [ ! -L "$exe" ] ||
  { echo @MISS@; exit 0; }
{ command exec 3<"$exe"; } 2>/dev/null || { echo @MISS@; exit 0; }
fd=/proc/self/fd/3 s=$d/.$key.stamp
[ -f "$fd" ] && [ -O "$fd" ] || { echo @MISS@; exit 0; }
st=$(stat -L -c '%d %i %s %.9Y %.9Z' "$fd" 2>/dev/null) || st=
case $st in *[!0-9.\ ]*) st= ;; esac
recorded=
[ -n "$st" ] && [ -f "$s" ] && [ ! -L "$s" ] && [ -O "$s" ] && read -r recorded <"$s"
if [ -z "$st" ] || [ "$recorded" != "$st $digest" ]; then
  [ "$(sha256sum <&3)" = "$digest  -" ] || { echo @MISS@; exit 0; }
  [ -z "$st" ] || { printf '%s\n' "$st $digest" >"$s.$$.tmp" && mv -f "$s.$$.tmp" "$s"; } 2>/dev/null || rm -f "$s.$$.tmp"
fi
[ -x "$fd" ] || { echo @NOEXEC@ "$d"; exit 0; }
exec "$fd" -
"""


def _with_markers(template):
    """The script with each @NAME@ replaced by its marker: the markers are defined once."""
    for name, marker in answers.MARKERS.items():
        template = template.replace(f"@{name}@", marker)
    if "@" in template:
        raise ValueError(f"a placeholder without a marker in the remote script: {template[template.index('@'):][:40]}")
    return template


REMOTE_SCRIPT = _with_markers(REMOTE_SCRIPT_TEMPLATE)


def _script_command(args):
    return "/bin/sh -c " + " ".join(shlex.quote(a) for a in [REMOTE_SCRIPT, "deevnet.net", *args])


# Where the fast path caches the binaries on the target unless deevnet_net_cache_dir says otherwise.
DEFAULT_CACHE_DIR = "~/.ansible/deevnet.net"


def remote_command(action, name, digest, uploaded="", cache_dir=DEFAULT_CACHE_DIR):
    """The command line that runs REMOTE_SCRIPT with its positional arguments."""
    return _script_command([action, name, digest, f"{name}-{digest[:16]}", cache_dir] + ([uploaded] if uploaded else []))


# The fast path's own settings: each a task variable, an ansible.cfg entry and an environment
# variable (in that order of precedence), resolved by Ansible's own configuration manager and
# documented in plugins/doc_fragments/module.py (its notes).
FAST_PATH_SETTINGS_OWNER = "deevnet.net.fast_path"
FAST_PATH_SETTINGS = {
    "cache_dir": {
        "description": "The folder on the target where the fast path caches the module binaries.",
        "type": "string",
        "default": DEFAULT_CACHE_DIR,
        "vars": [{"name": "deevnet_net_cache_dir"}],
        "ini": [{"section": "deevnet.net", "key": "cache_dir"}],
        "env": [{"name": "DEEVNET_NET_CACHE_DIR"}],
    },
}


def fast_path_setting(name, variables):
    """The value of one of FAST_PATH_SETTINGS for a task whose (templated) variables are
    `variables`."""
    from ansible import constants as C
    C.config.initialize_plugin_configuration_definitions("action", FAST_PATH_SETTINGS_OWNER, FAST_PATH_SETTINGS)
    return C.config.get_config_value(name, plugin_type="action", plugin_name=FAST_PATH_SETTINGS_OWNER, variables=variables)


def private_tmp_command(candidates):
    """The command line that makes a private, verified temp folder in the first of `candidates`
    that allows one (REMOTE_SCRIPT's tmp step)."""
    return _script_command(["tmp", *candidates])


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


class BinaryModuleAction(ActionBase):
    # The temp folder is made only on a cache miss or a fallback (_private_tmp): a hit is a single
    # remote command.
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
                f"{fqcn}: this copy of deevnet.net has the module's documentation but not its compiled binary "
                "(plugins/plugin_utils/_bin/ of the release tarball); install the collection from its release "
                "tarball (ansible-galaxy collection install --force deevnet-net-<version>.tar.gz)"
            )

        module_args, error = self._validate(fqcn, binary)
        if error:
            result.update(failed=True, msg=error)
            return result

        reason = self._why_not_fast(task_vars)
        self._deevnet_cache_dir = self._setting("cache_dir", task_vars)
        self._deevnet_warnings = []
        if not reason:
            self._update_module_args(fqcn, module_args, task_vars)
            stdin = json.dumps(module_args).encode()
            digest = binary_sha256(binary)
            environment = {}
            env = self._compute_environment_string(environment).strip()
            if self._under_mitogen():
                answer = self._mitogen_run(name, digest, stdin, environment)
                ran = "ran from the target's cache through mitogen's call chain, no shell"
            else:
                answer = answers.from_shell(self._remote(env, "run", name, digest, stdin))
                ran = "ran from the target's cache in one round trip"
            if answer["marker"] == MISS:
                display.vvv(f"deevnet.net: {fqcn} is not cached on the target (or its copy is corrupt): uploading")
                answer = self._install_and_run(env, name, digest, binary, stdin)
                ran = "was installed in the target's cache and ran from it"
            reason = self._interpret(name, digest, answer)
            if not reason:
                # Said only once the module itself answered: a marker is not a run.
                display.vvv(f"deevnet.net: {fqcn} {ran}")
                result.update(self._parse_json(answer))
                return self._with_warnings(result)
            self._deevnet_warnings.append(f"deevnet.net: {fqcn} takes Ansible's stock module path (slower): {reason}")
            # The stock path uploads into the task's temp folder: never one the cache's checks
            # refused (Ansible's own ~/.ansible/tmp, when ~/.ansible is another user's).
            tmpdir = self._private_tmp()
            display.vvv(f"deevnet.net: {fqcn} takes the stock module path: {reason} (uploaded to the private temp folder {tmpdir})")
        else:
            display.vvv(f"deevnet.net: {fqcn} takes the stock module path: {reason}")

        result.update(self._execute_module(
            module_name=fqcn, module_args=module_args, task_vars=task_vars,
            wrap_async=bool(self._task.async_val),
        ))
        return self._with_warnings(result)

    def _with_warnings(self, result):
        if self._deevnet_warnings:
            result["warnings"] = [*result.get("warnings", []), *self._deevnet_warnings]
        return result

    def _under_mitogen(self):
        return any(c.__module__.startswith("ansible_mitogen") for c in type(self._connection).__mro__)

    def _mitogen_run(self, name, digest, stdin, environment):
        """A cache hit through mitogen's own connection: one call into its interpreter on the
        target (plugin_utils/mitogen_target.py), which checks the cache and runs the binary with
        the arguments on standard input. Its answer is fast_path_answer's shape, as the remote
        script's is once read by answers.from_shell."""
        # Imported here: mitogen ships the module to the target by this, its collection name.
        from ansible_collections.deevnet.net.plugins.plugin_utils import mitogen_target

        answer = self._connection.get_chain().call(
            mitogen_target.run_cached, f"{name}-{digest[:16]}", str(digest), stdin,
            {str(k): str(v) for k, v in environment.items()}, str(self._deevnet_cache_dir))
        answer["stdout"] = to_text(answer["stdout"], errors="surrogate_or_strict")
        answer["stderr"] = to_text(answer["stderr"], errors="surrogate_or_replace")
        return answer

    def _setting(self, name, task_vars):
        variables = {}
        for entry in FAST_PATH_SETTINGS[name]["vars"]:
            if entry["name"] in task_vars:
                variables[entry["name"]] = self._templar.template(task_vars[entry["name"]])
        return str(fast_path_setting(name, variables))

    def _remote(self, env, action, name, digest, stdin, uploaded=""):
        cmd = remote_command(action, name, digest, uploaded, cache_dir=self._deevnet_cache_dir)
        return self._low_level_execute_command(f"{env} {cmd}" if env else cmd, in_data=stdin)

    def _private_tmp(self):
        """The task's remote temp folder, made private and verified by the remote script's tmp
        step (the first of remote_tmp and the system temp folders that allows one); set as the
        shell's tmpdir, so the stock module path (stock or mitogen's) uploads there too and the
        action's cleanup removes it. Made as the connection's user, as Ansible makes its own:
        the upload is written as that user."""
        # Only a folder this step made and verified is reused (the shell's tmpdir is otherwise
        # unset here: the action transfers no file before it runs).
        tmpdir = self._connection._shell.tmpdir
        if tmpdir and tmpdir == getattr(self, "_deevnet_private_tmp", None):
            return tmpdir
        candidates = [self.get_shell_option("remote_tmp", default="~/.ansible/tmp")]
        try:
            candidates += list(self._connection._shell.get_option("system_tmpdirs") or [])
        except KeyError:
            candidates += ["/var/tmp", "/tmp"]
        answer = answers.from_shell(self._low_level_execute_command(private_tmp_command(candidates), sudoable=False))
        tmpdir = answer["detail"]
        if answer["marker"] != PRIVATE_TMP or not tmpdir.startswith("/") or "\n" in tmpdir:
            raise AnsibleError(
                "deevnet.net: no private temp folder on the target to upload the module to: "
                f"{answer['detail'] or answer['stdout'] or answer['stderr']}. Every folder from / down to remote_tmp must "
                "belong to root or the remote user and be writable by no one else (chown/chmod go-w them), "
                "or set ansible_remote_tmp to a folder that is")
        if answer["more"]:
            moved = f"deevnet.net: the module is uploaded to {tmpdir}, not to remote_tmp: {answer['more']}"
            display.vvv(moved)
            self._deevnet_warnings.append(moved)
        self._connection._shell.tmpdir = self._deevnet_private_tmp = tmpdir
        self._cleanup_remote_tmp = True  # as _make_tmp_path does: cleanup() removes it (its name has "-tmp-")
        return tmpdir

    def _interpret(self, name, digest, answer):
        """The one reading of a fast-path answer: None when the module ran, else why the task
        takes the stock path; raises for what no path can fix."""
        marker, detail = answer["marker"], answer["detail"]
        if marker is None:
            return None
        if marker == UNSAFE:
            # The detail names the cause and its fix (remote script, mitogen_target).
            return f"the module cache cannot be used: {detail}; or set deevnet_net_fast_path: false to silence this"
        if marker == NO_SHA256SUM:
            return "the target has no sha256sum (coreutils) to verify the cached binary with"
        if marker == NO_PROC:
            return "the target has no /proc/self/fd to run the verified binary from"
        if marker == MISMATCH:
            raise AnsibleError(f"deevnet.net: the uploaded {name} does not match its hash {digest}: the transfer corrupted it; run the task again")
        if marker == UNSUPPORTED:
            raise AnsibleError(
                f"deevnet.net: this target's architecture is not supported ({detail}); the modules run on "
                f"{SUPPORTED_TARGETS}")
        if marker == NOEXEC:
            raise AnsibleError(
                f"deevnet.net: the module cache {detail} on the target is on a filesystem mounted noexec, so the "
                "module binary cannot run from it; mount the remote user's home with exec, or set "
                "deevnet_net_fast_path: false and ansible_remote_tmp to a folder on a mount that allows exec")
        if marker == MISS:  # only after an install: the new copy changed before it ran
            raise AnsibleError(f"deevnet.net: the {name} just installed in the target's cache changed before it ran; run the task again")
        raise AnsibleError(f"deevnet.net: unexpected answer from the target: {marker} {detail}")

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
        uploaded = self._connection._shell.join_path(self._private_tmp(), name)
        self._transfer_file(binary, uploaded)
        return answers.from_shell(self._remote(env, "install", name, digest, stdin, uploaded))

    def _parse_json(self, res):
        """The module's result from its answer (rc, stdout, stderr)."""
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
