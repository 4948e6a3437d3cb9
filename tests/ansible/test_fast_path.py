"""The collection's action plugin: controller-side validation, the content-addressed cache of
module binaries on the target, one round trip per task, and the fallback to the stock path.

The target is localhost (connection local) with HOME pointed at a temp folder, so the cache
under ~/.ansible/deevnet.net is the test's own. sysctl_forwarding runs with apply=false on a
temp file: it needs no namespace and changes nothing else.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import swap_race
from conftest import ROOT, VENV_BIN, local_playbook, oneline_result, plugin_utils

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
    """A link in place of the cache folder is never followed: the task takes the stock path."""
    env, home, args = target
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".ansible").mkdir(mode=0o700)
    cache_dir(home).symlink_to(elsewhere)
    proc, (status, result) = adhoc(env, args)
    assert status == "CHANGED", proc.stdout
    assert "the module cache cannot be used" in proc.stdout + proc.stderr
    assert "/deevnet.net is a link (owner: " in proc.stdout + proc.stderr
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
        local_playbook(playbook, f"""\
            - {MODULE}:
                path: {conf}/90-x.conf
                sysctl_dirs: [{conf}]
                apply: false
              loop: [1, 2, 3]
            """)
        procs.append(subprocess.Popen([VENV_BIN / "ansible-playbook", playbook], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out
        assert "failed=0" in out
    assert cached_binary(home).read_bytes() == (ROOT / "target/release/sysctl_forwarding").read_bytes()
    leftovers = [p.name for p in cache_dir(home).iterdir() if p.name.startswith(".")]
    assert leftovers == [f".{cached_binary(home).name}.stamp"], leftovers  # no temp file


def test_check_and_diff_mode_pass_through(target, tmp_path):
    env, home, args = target
    proc, (status, result) = adhoc(env, args, "--check", "--diff")
    assert status == "CHANGED", proc.stdout
    assert "net.ipv4.conf.all.forwarding = 1" in result["diff"][0]["after"]
    assert not (tmp_path / "etc" / "90-x.conf").exists()
    assert os.path.exists(cached_binary(home))


# --- Safety of the cache on the target (issue "Safe on a real node", items 3, 6, 7 and 10) ---

def _plugin():
    """The action plugin's module, for driving its remote script directly."""
    return plugin_utils("binary_module")


def _run_script(plugin, home: Path, action: str, uploaded: Path | None = None, env_extra=None, stdin=b"{}"):
    binary = ROOT / "target/release/sysctl_forwarding"
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()
    cmd = plugin.remote_command(action, "sysctl_forwarding", digest, str(uploaded or ""))
    env = dict(os.environ, HOME=str(home), **(env_extra or {}))
    return subprocess.run(["/bin/sh", "-c", cmd], input=stdin, env=env, capture_output=True)


def _check_mode_args(tmp_path: Path) -> bytes:
    etc = tmp_path / "etc-script"
    etc.mkdir(exist_ok=True)
    return json.dumps({"path": f"{etc}/90-x.conf", "sysctl_dirs": [str(etc)], "apply": False,
                       "_ansible_check_mode": True}).encode()


def test_parallel_installs_into_a_cold_cache_never_collide(tmp_path):
    """Item 3: `[ -d d ] || mkdir d` lost the race to a concurrent install (80 of 200 trials of 8
    parallel installs printed the UNSAFE marker). 25 trials of 8 parallel cold installs."""
    plugin = _plugin()
    binary = ROOT / "target/release/sysctl_forwarding"
    stdin = _check_mode_args(tmp_path)
    for trial in range(25):
        home = tmp_path / f"home{trial}"
        home.mkdir()
        uploads = []
        for i in range(8):
            upload = tmp_path / f"upload-{trial}-{i}"
            upload.write_bytes(binary.read_bytes())
            uploads.append(upload)
        digest = hashlib.sha256(binary.read_bytes()).hexdigest()
        env = dict(os.environ, HOME=str(home))
        procs = [subprocess.Popen(
            ["/bin/sh", "-c", plugin.remote_command("install", "sysctl_forwarding", digest, str(u))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for u in uploads]
        for proc in procs:
            out, err = proc.communicate(stdin, timeout=60)
            result = json.loads(out)
            assert result.get("changed") is True and "failed" not in result, (trial, out, err)
        names = sorted(p.name for p in cache_dir(home).iterdir())
        assert names == [f".sysctl_forwarding-{digest[:16]}.stamp", f"sysctl_forwarding-{digest[:16]}"], (trial, names)


def _installed(tmp_path: Path, env_extra=None):
    """The remote script's install of sysctl_forwarding into a fresh HOME's cache, run once in
    check mode: (plugin, home, stdin for more runs, the cached binary)."""
    plugin = _plugin()
    home = tmp_path / "home"
    home.mkdir()
    upload = tmp_path / "upload"
    upload.write_bytes((ROOT / "target/release/sysctl_forwarding").read_bytes())
    stdin = _check_mode_args(tmp_path)
    first = _run_script(plugin, home, "install", upload, env_extra=env_extra, stdin=stdin)
    assert json.loads(first.stdout)["changed"] is True, first
    return plugin, home, stdin, cached_binary(home)


@pytest.mark.parametrize("tool", ["stat", "sha256sum"])
def test_what_runs_is_what_was_hashed_even_if_the_path_is_swapped(tmp_path, tool):
    """Item 6: the checks ran on a path and the exec on the same path later; a swap in between
    ran another file. A `stat` (the stamp check of every hit) or a `sha256sum` (the hash when
    there is no stamp) that swaps the cached binary while it checks shows that the verified open
    file is what runs."""
    plugin, home, stdin, exe = _installed(tmp_path)
    if tool == "sha256sum":
        (exe.parent / f".{exe.name}.stamp").unlink()  # so this run hashes
    impostor = tmp_path / "impostor"
    impostor.write_text("#!/bin/sh\necho '{\"changed\": false, \"msg\": \"impostor ran\"}'\n")
    impostor.chmod(0o700)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
    (bin_dir / tool).write_text(f"#!/bin/sh\ncp {impostor} {exe}.swap && mv -f {exe}.swap {exe}\nexec {real} \"$@\"\n")
    (bin_dir / tool).chmod(0o755)
    res = _run_script(plugin, home, "run", env_extra={"PATH": f"{bin_dir}:{os.environ['PATH']}"}, stdin=stdin)
    assert b"impostor ran" not in res.stdout, res
    assert json.loads(res.stdout)["changed"] is True, res
    assert exe.read_text().startswith("#!/bin/sh"), "the swap did happen"


def test_a_hit_checks_the_stamp_and_a_changed_binary_is_hashed_again(tmp_path):
    """The hash is verified once per install and recorded with the binary's stat stamp; a hit
    whose stamp matches runs without sha256sum, and a binary changed in place after its stamp
    (same size and inode, mtime put back: the ctime moved) is hashed again and is a miss."""
    plugin, home, stdin, exe = _installed(tmp_path)
    assert (exe.parent / f".{exe.name}.stamp").read_text().split()[1] == str(exe.stat().st_ino)
    no_hash = {"PATH": _fake_tools(tmp_path, sha256sum="echo 0  -")}  # a wrong hash, were it asked
    assert json.loads(_run_script(plugin, home, "run", env_extra=no_hash, stdin=stdin).stdout)["changed"] is True
    data = bytearray(exe.read_bytes())
    data[-1] ^= 0xFF
    st = exe.stat()
    exe.write_bytes(bytes(data))
    os.utime(exe, ns=(st.st_atime_ns, st.st_mtime_ns))
    res = _run_script(plugin, home, "run", stdin=stdin)
    assert res.stdout.strip() == plugin.MISS.encode(), res


@pytest.mark.parametrize("stat_output", ["", "2049 1234 528912 %.9Y %.9Z"], ids=["no-stat", "no-gnu-format"])
def test_without_a_usable_stat_every_hit_is_hashed(tmp_path, stat_output):
    """A stamp is only numbers: a `stat` that is missing or does not know GNU's format (which
    would leave the times out) gives none, and the binary is hashed on every run."""
    fake_stat = {"stat": f"echo '{stat_output}'" if stat_output else ""}
    plugin, home, stdin, exe = _installed(tmp_path, {"PATH": _fake_tools(tmp_path, **fake_stat)})
    assert not (exe.parent / f".{exe.name}.stamp").exists()
    (tmp_path / "second").mkdir()
    wrong_hash = _fake_tools(tmp_path / "second", sha256sum="echo 0  -", **fake_stat)
    res = _run_script(plugin, home, "run", stdin=stdin, env_extra={"PATH": wrong_hash})
    assert res.stdout.strip() == plugin.MISS.encode(), res


@pytest.mark.parametrize("how", ["group-writable", "owned-by-another-user"])
def test_a_cache_home_others_can_change_takes_the_stock_path(target, how):
    """Item 6: with ~/.ansible writable by, or belonging to, another user, the cache could be
    swapped under a root run. The fast path refuses it and the task runs the stock way."""
    env, home, args = target
    ansible_dir = home / ".ansible"
    ansible_dir.mkdir()
    if how == "group-writable":
        ansible_dir.chmod(0o775)
    else:
        os.chown(ansible_dir, 65534, 65534)
    proc, (status, result) = adhoc(env, args)
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert "takes the stock module path: the module cache cannot be used" in proc.stdout
    assert not cache_dir(home).exists() or not any(cache_dir(home).iterdir())


def test_path_options_are_expanded_on_the_target(target, tmp_path):
    """Item 7: `~` and `$VARS` were expanded on the controller with the controller's HOME. The
    task's environment stands in for the target's: its HOME and variables must win."""
    env, home, _ = target
    target_home = tmp_path / "target-home"
    target_home.mkdir()
    (target_home / "etc").mkdir()
    playbook = tmp_path / "expand.yml"
    local_playbook(playbook, f"""\
        - {MODULE}:
            path: "~/etc/90-home.conf"
            sysctl_dirs: ["~/etc"]
            apply: false
          environment:
            HOME: {target_home}
        - {MODULE}:
            path: "$DEEVNET_TEST_ETC/90-var.conf"
            sysctl_dirs: ["$DEEVNET_TEST_ETC"]
            apply: false
          environment:
            DEEVNET_TEST_ETC: {target_home}/etc
        """)
    proc = subprocess.run([VENV_BIN / "ansible-playbook", playbook], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target_home / "etc/90-home.conf").is_file()
    assert (target_home / "etc/90-var.conf").is_file()
    assert not (home / "etc").exists()


def _fake_tools(tmp_path: Path, **scripts: str) -> str:
    """A PATH whose named tools are replaced by scripts (an empty script removes the tool)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    for folder in os.environ["PATH"].split(":"):
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            link = bin_dir / entry
            if entry not in scripts and not link.exists():
                link.symlink_to(os.path.join(folder, entry))
    for name, body in scripts.items():
        if body:
            (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
            (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def test_a_target_without_sha256sum_takes_the_stock_path(target, tmp_path):
    """Item 10: without sha256sum the target was told "the transfer corrupted it"."""
    env, home, args = target
    env = dict(env, PATH=_fake_tools(tmp_path, sha256sum=""))
    proc, (status, result) = adhoc(env, args)
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert "the target has no sha256sum" in proc.stdout + proc.stderr
    assert "corrupted" not in proc.stdout


@pytest.mark.parametrize("tool,output,expected", [
    ("uname", "aarch64", "(aarch64 glibc"),
    ("getconf", "glibc 2.31", "(x86_64 glibc 2.31)"),
    ("getconf", "", "(x86_64 no glibc)"),
])
def test_an_unsupported_target_is_named_before_anything_runs(target, tmp_path, tool, output, expected):
    """Item 10: an x86_64 binary on another architecture ended as "Exec format error" in
    module_stderr. The install step checks the machine and C library first."""
    env, home, args = target
    env = dict(env, PATH=_fake_tools(tmp_path, **{tool: f"echo '{output}'" if output else "exit 1"}))
    proc, (status, result) = adhoc(env, args)
    assert status == "FAILED!", proc.stdout
    assert "this target's architecture is not supported" in result["msg"], result
    assert expected in result["msg"] and "x86_64 Linux, glibc 2.34+" in result["msg"], result
    assert not (tmp_path / "etc" / "90-x.conf").exists()


def test_a_noexec_home_gets_a_clear_message(target, tmp_path):
    """Item 10: with $HOME mounted noexec the run ended as "module printed no JSON result"."""
    env, home, args = target
    script = f"mount -t tmpfs -o noexec tmpfs {home} && exec {VENV_BIN}/ansible localhost -o -m {MODULE} -a '{args}'"
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          env=env, capture_output=True, text=True)
    status, result = oneline_result(proc.stdout)
    assert status == "FAILED!", proc.stdout
    assert "mounted noexec" in result["msg"] and "ansible_remote_tmp" in result["msg"], result
    assert not (tmp_path / "etc" / "90-x.conf").exists()


def test_installing_a_new_version_prunes_the_old_ones_and_dead_temp_files(target):
    """Item 10: old cache entries were never pruned. Entries of other modules, and temp files of
    live installs, stay."""
    env, home, args = target
    cache = cache_dir(home)
    cache.mkdir(parents=True, mode=0o700)
    (home / ".ansible").chmod(0o700)
    old = cache / "sysctl_forwarding-0123456789abcdef"
    other = cache / "frr_local_stanza-0123456789abcdef"
    old_stamp = cache / f".{old.name}.stamp"
    dead_tmp = cache / ".sysctl_forwarding-0123456789abcdef.999999999.tmp"
    live_tmp = cache / f".sysctl_forwarding-0123456789abcdef.{os.getpid()}.tmp"
    for f in (old, old_stamp, other, dead_tmp, live_tmp):
        f.write_bytes(b"x")
    proc, (status, _) = adhoc(env, args)
    assert status == "CHANGED", proc.stdout
    names = sorted(p.name for p in cache.iterdir())
    new = cached_binary(home).name
    assert names == sorted([live_tmp.name, other.name, new, f".{new}.stamp"]), names


# --- Issue 29 item 1: the fallback never uploads into a folder the checks refused ---

@pytest.mark.parametrize("foreign_cache", [False, True], ids=["no-cache-yet", "foreign-cache-folder"])
def test_a_foreign_ansible_folder_never_gets_a_swapped_module_run_as_root(target, tmp_path, foreign_cache):
    """Root's ~/.ansible belongs to nobody, and a process as nobody swaps whatever root uploads
    under ~/.ansible/tmp (Ansible's remote_tmp). The cache there is refused, and the stock path
    the task falls back to used to upload into that same folder: the swapped file ran as root.
    Now the upload goes to a private temp folder the remote script verified; the module that
    runs is the real one, and nothing is installed in the foreign cache. Three tries each."""
    env, _, args = target
    for attempt in range(3):
        tmp = tmp_path / f"try{attempt}"
        tmp.mkdir()
        proc, proof = swap_race.run(env, tmp, [VENV_BIN / "ansible", "localhost", "-o", "-m", MODULE, "-a", args, "-vvv"],
                                    foreign_cache)
        output = proc.stdout + proc.stderr
        assert not proof.exists(), f"the swapped module ran as uid {proof.read_text().strip()}:\n{output}"
        assert "impostor ran" not in output, output
        status, result = oneline_result(proc.stdout)
        assert status == "CHANGED", output
        assert "takes the stock module path: the module cache cannot be used" in output, output
        assert "/.ansible belongs to nobody, not to root, so they could swap the cached module" in output, output
        assert "cache entries: 0" in proc.stderr, output
        assert "deevnet.net-" in output and "not to remote_tmp" in output and "(owner nobody" in output, output
        (tmp_path / "etc" / "90-x.conf").unlink()


def test_verbose_output_says_what_ran(target, tmp_path):
    """Issue 29 item 17: a fast-path answer that sends the task to the stock path (here: no
    sha256sum) was logged as "ran from the target's cache in one round trip" first."""
    env, _, args = target
    proc, (status, _) = adhoc(dict(env, PATH=_fake_tools(tmp_path, sha256sum="")), args)
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert "takes the stock module path: the target has no sha256sum" in proc.stdout, proc.stdout
    assert "ran from the target's cache" not in proc.stdout, proc.stdout
    proc, _ = adhoc(env, args)
    assert "was installed in the target's cache and ran from it" in proc.stdout, proc.stdout
    assert "ran from the target's cache" not in proc.stdout, proc.stdout
    # The private temp folders of both runs (the fallback's, the install's) are removed.
    assert not list(Path(env["ANSIBLE_REMOTE_TEMP"]).glob("deevnet.net-*"))


# --- Issue 23: the fast path's markers defined once, one answer shape ---

def test_every_marker_occurs_in_the_remote_script_and_is_defined_once():
    """The markers live in plugin_utils/fast_path_answer.py only: the remote script is built from
    them (each occurs in it, no placeholder is left), and neither binary_module.py nor
    mitogen_target.py spells one out."""
    plugin = _plugin()
    markers = plugin.answers.MARKERS
    assert len(set(markers.values())) == len(markers)
    for name, marker in markers.items():
        assert marker in plugin.REMOTE_SCRIPT, f"{name} ({marker}) is not in REMOTE_SCRIPT"
    assert "@" not in plugin.REMOTE_SCRIPT
    for source in ("binary_module.py", "mitogen_target.py"):
        text = (ROOT / "collection/plugins/plugin_utils" / source).read_text()
        spelled = [marker for marker in markers.values() if marker in text]
        assert not spelled, f"{source} spells out a marker: {spelled}"


def test_both_fast_paths_answer_in_one_shape(tmp_path, monkeypatch):
    """The remote script's output, once read, and the mitogen side's return value are the same
    shape (fast_path_answer.answer), with the same marker for the same case: no cache."""
    plugin = _plugin()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    shell = plugin.answers.from_shell({"rc": 0, "stdout": _run_script(plugin, home, "run").stdout.decode()})
    digest = hashlib.sha256((ROOT / "target/release/sysctl_forwarding").read_bytes()).hexdigest()
    mitogen = plugin_utils("mitogen_target").run_cached(f"sysctl_forwarding-{digest[:16]}", digest, b"{}", {})
    assert set(shell) == set(mitogen) == set(plugin.answers.answer())
    assert shell["marker"] == mitogen["marker"] == plugin.MISS


def _private_tmp(plugin, home: Path, *candidates: str):
    res = subprocess.run(["/bin/sh", "-c", plugin.private_tmp_command(list(candidates))],
                         env=dict(os.environ, HOME=str(home)), capture_output=True, text=True)
    return plugin.answers.from_shell({"rc": res.returncode, "stdout": res.stdout})


def test_the_private_temp_folder_is_made_only_where_no_one_else_can_change_the_way(tmp_path):
    """Issue 29 item 1, the remote script's tmp step: a candidate is refused when a folder on
    its way (from /) belongs to another user, or is writable by the group or others without
    the sticky bit; a sticky folder of root's (such as /tmp) is fine, and a link on the way is
    judged by what it leads to. The folder made is new, the user's, 0700; nothing is made in a
    refused candidate, and the refusals are named with their owner."""
    plugin = _plugin()
    home = tmp_path / "home"
    (home / ".ansible").mkdir(parents=True)
    os.chown(home / ".ansible", 65534, 65534)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    (tmp_path / "link").symlink_to(home / ".ansible")

    answer = _private_tmp(plugin, home, "~/.ansible/tmp", f"{open_dir}/x", f"{tmp_path}/link/y", "relative", str(sticky))
    assert answer["marker"] == plugin.PRIVATE_TMP, answer
    made = Path(answer["detail"])
    assert made.parent == sticky and made.name.startswith("deevnet.net-tmp-"), answer
    assert made.stat().st_uid == 0 and stat.S_IMODE(made.stat().st_mode) == 0o700
    assert f"{home}/.ansible (owner nobody, mode 755)" in answer["more"], answer
    assert f"{open_dir} (owner root, mode 777)" in answer["more"], answer
    assert "relative is not an absolute path" in answer["more"], answer
    assert not (home / ".ansible" / "tmp").exists() and not (open_dir / "x").exists()
    assert not (home / ".ansible" / "y").exists()

    refused = _private_tmp(plugin, home, "~/.ansible/tmp", f"{open_dir}/x")
    assert refused["marker"] == plugin.UNSAFE_TMP and "owner nobody" in refused["detail"], refused

    fresh = _private_tmp(plugin, home, str(tmp_path / "new" / "deeper"))
    assert fresh["marker"] == plugin.PRIVATE_TMP and fresh["more"] == "", fresh
    assert Path(fresh["detail"]).parent == tmp_path / "new" / "deeper"


def test_no_private_temp_folder_fails_the_task_naming_the_folder_its_owner_and_the_fix(target, tmp_path):
    """When neither remote_tmp nor any system temp folder is private, the task fails before
    anything is uploaded, and says which folder, whose, and what to do."""
    env, home, args = target
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    os.chown(foreign, 65534, 65534)
    (home / ".ansible").mkdir()
    os.chown(home / ".ansible", 65534, 65534)
    env = dict(env, ANSIBLE_REMOTE_TEMP=str(home / ".ansible" / "tmp"), ANSIBLE_SYSTEM_TMPDIRS=str(foreign))
    proc, (status, result) = adhoc(env, args)
    assert status == "FAILED!", proc.stdout
    assert "no private temp folder on the target" in result["msg"], result
    assert f"{home}/.ansible (owner nobody" in result["msg"] and f"{foreign} (owner nobody" in result["msg"], result
    assert "ansible_remote_tmp" in result["msg"], result
    assert "PUT " not in proc.stdout, "nothing may be uploaded"
    assert not (tmp_path / "etc" / "90-x.conf").exists()
    assert list(foreign.iterdir()) == [] and not (home / ".ansible" / "tmp").exists()
