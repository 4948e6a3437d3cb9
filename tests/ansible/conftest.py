"""Fixtures for driving the built collection through real ansible commands.

The collection tarball (make collection) is installed into a temp collections path; each test
gets its own network namespace with a veth named like the mission's transit VLAN device, so
the module changes nothing on the machine running the tests.
"""
from __future__ import annotations

import ctypes
import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _private_run_lock() -> None:
    """The release binaries take their locks under /run/lock (runtime/src/file_policy.rs). This
    pytest process moves into a mount namespace of its own with a tmpfs there, so the host's
    /run/lock is never touched, however pytest is started (every child inherits it)."""
    if os.geteuid() != 0:
        return  # the tests that run modules need root anyway and say so
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) for a private /run/lock")
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777,size=1m", "tmpfs", "/run/lock"], check=True)


def pytest_configure(config) -> None:
    # Under pytest-xdist this runs in the controller and in every worker: each worker process
    # moves into a mount namespace and a /run/lock of its own.
    _private_run_lock()
    config.addinivalue_line("markers", "xdist_group(name): tests of one name run in one pytest-xdist worker "
                            "(make ansible-test: --dist loadgroup), one after another")

VENV_BIN = Path(sys.executable).parent
_counter = itertools.count()


def _tarball() -> Path:
    version = next(
        line.split(":", 1)[1].strip()
        for line in (ROOT / "galaxy.yml").read_text().splitlines()
        if line.startswith("version:")
    )
    tarball = ROOT / "dist" / f"deevnet-net-{version}.tar.gz"
    if not tarball.exists():
        pytest.fail(f"{tarball} is missing: run `make collection` first (make test does)")
    return tarball


@pytest.fixture(scope="session")
def ansible_env(tmp_path_factory) -> dict[str, str]:
    """Environment for ansible commands that see only the collection under test."""
    base = tmp_path_factory.mktemp("ansible")
    collections = base / "collections"
    subprocess.run(
        [VENV_BIN / "ansible-galaxy", "collection", "install", "--force", "-p", collections, _tarball()],
        check=True,
        capture_output=True,
    )
    env = dict(os.environ)
    home = base / "user-home"  # the module cache (~/.ansible/deevnet.net) lands here, not in $HOME
    home.mkdir()
    env.update(
        HOME=str(home),
        ANSIBLE_COLLECTIONS_PATH=str(collections),
        ANSIBLE_HOME=str(base / "home"),
        ANSIBLE_LOCAL_TEMP=str(base / "tmp"),
        ANSIBLE_REMOTE_TEMP=str(base / "remote-tmp"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        ANSIBLE_LOCALHOST_WARNING="0",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
        PATH=f"{VENV_BIN}:{env['PATH']}",
    )
    return env


class Node:
    """A network namespace standing in for the exit node, plus a temp sysctl.d tree."""

    transit = "vmbr0.50"

    def __init__(self, tmp: Path):
        self.netns = f"dvn-ans-{os.getpid()}-{next(_counter)}"
        self.etc = tmp / "etc" / "sysctl.d"
        self.usr = tmp / "usr" / "lib" / "sysctl.d"
        self.etc.mkdir(parents=True)
        self.usr.mkdir(parents=True)
        self.conf = self.etc / "90-deevnet-tenant-fabric.conf"
        subprocess.run(["ip", "netns", "add", self.netns], check=True)
        self.ip("link", "add", self.transit, "type", "veth", "peer", "name", "peer0")
        for key in ("all", "default", self.transit):
            self.set_proc(f"net/ipv4/conf/{key}/forwarding", "0")

    def ip(self, *args: str) -> None:
        subprocess.run(["ip", "-n", self.netns, *args], check=True)

    def proc(self, key: str) -> str:
        out = subprocess.run(
            ["ip", "netns", "exec", self.netns, "cat", f"/proc/sys/{key}"],
            check=True, capture_output=True, text=True,
        )
        return out.stdout.strip()

    def set_proc(self, key: str, value: str) -> None:
        subprocess.run(
            ["ip", "netns", "exec", self.netns, "sh", "-c", f"echo {value} > /proc/sys/{key}"], check=True
        )

    def run(self, env: dict[str, str], *command: str) -> subprocess.CompletedProcess:
        """Runs an ansible command inside the namespace (connection local)."""
        return subprocess.run(
            ["ip", "netns", "exec", self.netns, *command], env=env, capture_output=True, text=True
        )

    def close(self) -> None:
        subprocess.run(["ip", "netns", "del", self.netns], check=False)


@pytest.fixture
def node(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("these tests create network namespaces: run them as root (make test does)")
    n = Node(tmp_path)
    yield n
    n.close()


def own_make_env(drop=()) -> dict[str, str]:
    """The environment for a `make` a test runs on its own: without what the make the tests run
    under passes down (MAKEFLAGS, make test's lanes' STAGED=1 and LANE), and without `drop`."""
    outer = {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "STAGED", "LANE"}
    return {k: v for k, v in os.environ.items() if k not in outer and not any(k.endswith(d) for d in drop)}


def local_playbook(path: Path, tasks: str) -> Path:
    """Writes a playbook of one play on localhost (local connection, no facts) whose tasks are
    `tasks` (a YAML list, dedented here) to `path`, and returns `path`."""
    path.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
                    + textwrap.indent(textwrap.dedent(tasks), "    "))
    return path


def oneline_result(output: str) -> tuple[str, dict]:
    """Parses `ansible -o` output: `localhost | CHANGED => {...}`."""
    for line in output.splitlines():
        if line.startswith("localhost | "):
            status, _, payload = line[len("localhost | "):].partition(" => ")
            return status.strip(), json.loads(payload)
    raise AssertionError(f"no result line in:\n{output}")


def assert_documentation_matches_binary(module: str, env: dict) -> None:
    """Every option the binary accepts is documented with the same type, default, choices,
    elements, aliases, requiredness and suboptions (recursively, both ways), and nothing else
    is documented."""
    doc = json.loads(subprocess.run([VENV_BIN / "ansible-doc", "-j", f"deevnet.net.{module}"],
                                    env=env, capture_output=True, text=True, check=True).stdout)
    documented = doc[f"deevnet.net.{module}"]["doc"]["options"]
    binary = ROOT / "target" / "release" / module
    spec = json.loads(subprocess.run([binary, "--argument-spec"], capture_output=True,
                                     text=True, check=True).stdout)["argument_spec"]
    compare_options(spec, documented, module)


def compare_options(spec: dict, documented: dict, where: str) -> None:
    assert sorted(spec) == sorted(documented), f"{where}: options differ"
    for name, option in spec.items():
        doc = documented[name]
        at = f"{where}.{name}"
        assert doc.get("type", "str") == option["type"], at
        assert doc.get("required", False) == option.get("required", False), at
        assert doc.get("default") == option.get("default"), at
        assert doc.get("choices") == option.get("choices"), at
        assert doc.get("elements") == option.get("elements"), at
        assert sorted(doc.get("aliases", [])) == sorted(option.get("aliases", [])), at
        if "options" in option:
            compare_options(option["options"], doc.get("suboptions", {}), at)
        else:
            assert "suboptions" not in doc, f"{at}: suboptions documented, none declared"


def _source_collection_importable() -> None:
    """Plugins import the collection's plugin_utils as ansible loads them
    (`ansible_collections.deevnet.net.plugins.plugin_utils...`). Loaded from the source tree, they
    find it through build/source-collections, whose ansible_collections/deevnet/net is a link to
    the source's collection/ folder (namespace packages, as ansible's own loader sees them)."""
    base = ROOT / "build" / "source-collections"
    link = base / "ansible_collections" / "deevnet" / "net"
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        try:
            link.symlink_to(ROOT / "collection", target_is_directory=True)
        except FileExistsError:  # another pytest-xdist worker made it meanwhile
            pass
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))


def _from_source(path: str, name: str):
    import importlib.util
    _source_collection_importable()
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plugin_utils(name: str):
    """collection/plugins/plugin_utils/<name>.py loaded from the source tree, for driving its
    functions directly (the remote script, the mitogen target side)."""
    return _from_source(f"collection/plugins/plugin_utils/{name}.py", f"deevnet_{name}")


def filter_plugin(name: str):
    """collection/plugins/filter/<name>.py loaded from the source tree, its filters called as
    plain functions."""
    return _from_source(f"collection/plugins/filter/{name}.py", name)


def filter_docs_from_source(names: list, tmp_path: Path) -> dict:
    """ansible-doc's JSON of the filters `names` (deevnet.net.<name>), read from the source's
    collection/ folder as the collection (importing each filter file and reading its sidecar)."""
    collections = tmp_path / "collections" / "ansible_collections" / "deevnet"
    collections.mkdir(parents=True)
    (collections / "net").symlink_to(ROOT / "collection")
    env = {**os.environ, "HOME": str(tmp_path), "ANSIBLE_HOME": str(tmp_path / ".ansible"),
           "ANSIBLE_COLLECTIONS_PATH": str(tmp_path / "collections"), "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")}
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "filter", "-j"] + [f"deevnet.net.{name}" for name in names],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
