"""The collection README's quick start, run as written, in a fresh venv: the blocks marked
`<!-- quick-start: NAME -->` are its commands, inventory and playbook. A venv of the test's own
(no system site packages) gets ansible-core from pip, the built tarball is installed by the
README's command into a home of the test's own, and the README's ansible-playbook commands run
against a network namespace (the node fixture: a veth named vmbr0.50, no VRF support).

The namespace differs from a real node in what the quick start itself names: no Proxmox SDN, so
`proxmox_node_network_sdn: ignore`. The tests add only that and where the node is (connection
local, the role's files in temp paths) as extra vars: nothing on this machine is changed. The node
has no VRF vrf_tdemo, so it is a node being prepared: the real run must refuse it before changing
anything, naming the VRF."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT, _tarball

# One worker builds the module's fresh venv (quick_start_env) once for all of its tests.
pytestmark = pytest.mark.xdist_group("quick_start")

README = ROOT / "collection" / "README.md"
QUICK_START_BLOCK = re.compile(r"^<!-- quick-start: (\S+) -->\n```\w*\n(.*?)^```", re.S | re.M)


def quick_start_section() -> str:
    return README.read_text().split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]


def quick_start() -> dict[str, str]:
    """The quick start's marked blocks, by name."""
    return dict(QUICK_START_BLOCK.findall(quick_start_section()))


def commands(block: str) -> list[list[str]]:
    """Each shell line of a block as argv (comments dropped)."""
    return [argv for argv in (shlex.split(line, comments=True) for line in block.splitlines()) if argv]


def ansible_core_pin() -> str:
    return next(line.strip() for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
                if line.startswith("ansible-core=="))


def test_the_quick_start_has_its_blocks_in_order():
    blocks = quick_start()
    assert list(blocks) == ["install", "hosts.yml", "site.yml", "run"], list(blocks)
    assert [argv[:3] for argv in commands(blocks["install"])] == [["ansible-galaxy", "collection", "install"]]
    assert commands(blocks["install"])[0][3] == _tarball().name, "the quick start installs another version"
    runs = commands(blocks["run"])
    assert [argv[0] for argv in runs] == ["ansible-playbook", "ansible-playbook"], runs
    assert "--check" in runs[0] and "--diff" in runs[0] and "--check" not in runs[1], runs
    inventory = yaml.safe_load(blocks["hosts.yml"])
    assert len(inventory["all"]["hosts"]) == 1
    assert len(inventory["all"]["vars"]["proxmox_node_network_tenant_egress"]["tenants"]) == 1
    assert len(blocks["hosts.yml"].strip().splitlines()) <= 10, "a ten-line inventory"
    # What the quick start promises the namespace needs: its reason to ignore the SDN.
    assert "proxmox_node_network_sdn: ignore" in quick_start_section()


@pytest.fixture(scope="module")
def quick_start_env(tmp_path_factory):
    """A fresh venv with ansible-core from pip (the project's pin; pip's cache kept in build/ so a
    second run downloads nothing), and the collection installed by the README's own command,
    into the test's home, from a project folder holding the tarball and the README's files."""
    base = tmp_path_factory.mktemp("quick-start")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ANSIBLE_", "PYTHON", "VIRTUAL_ENV", "PIP_"))}
    home = base / "home"
    home.mkdir()
    env.update(HOME=str(home), PATH=f"{venv / 'bin'}:/usr/sbin:/usr/bin:/sbin:/bin", ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", PIP_CACHE_DIR=str(ROOT / "build" / "pip-cache"),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", ansible_core_pin()],
                         env=env, capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    # Nothing of the test's own venv leaks in: pytest is there, not here.
    isolated = subprocess.run([venv / "bin" / "python", "-c", "import pytest"], env=env, capture_output=True)
    assert isolated.returncode != 0, "the fresh venv sees the test's packages"
    project = base / "project"
    project.mkdir()
    shutil.copy(_tarball(), project / _tarball().name)
    blocks = quick_start()
    (project / "hosts.yml").write_text(blocks["hosts.yml"])
    (project / "site.yml").write_text(blocks["site.yml"])
    for argv in commands(blocks["install"]):
        proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    installed = home / ".ansible" / "collections" / "ansible_collections" / "deevnet" / "net" / "MANIFEST.json"
    assert installed.is_file(), "the README's install command did not install into the user's collections"
    return {"env": env, "project": project, "venv": venv, "runs": commands(blocks["run"])}


def run_on_node(node, quick_start_env, argv: list[str], tmp_path):
    """One of the README's ansible-playbook commands, as written, in the node's namespace; the
    extra vars say where the node is and where its files go, and the play's module_defaults give
    sysctl_forwarding the node's sysctl.d folders (it checks what systemd-sysctl reads at boot).
    The SDN setting stays the role's default: the namespace, like a node without Proxmox's SDN,
    has no /etc/pve."""
    files = tmp_path / "node-files"
    files.mkdir(exist_ok=True)
    plays = yaml.safe_load(quick_start()["site.yml"])
    for play in plays:
        play["module_defaults"] = {"deevnet.net.sysctl_forwarding": {"sysctl_dirs": [str(node.etc), str(node.usr)]}}
    (quick_start_env["project"] / "site.yml").write_text(yaml.safe_dump(plays, sort_keys=False))
    node_vars = {
        "ansible_connection": "local",
        "ansible_python_interpreter": str(quick_start_env["venv"] / "bin" / "python"),
        "proxmox_node_network_sysctl_path": str(node.conf),
        "proxmox_node_network_frr_local_path": str(files / "frr.conf.local"),
        "proxmox_node_network_frr_owner_record": str(files / "frr-local-owners.json"),
    }
    (tmp_path / "node.yml").write_text(yaml.safe_dump(node_vars))
    proc = subprocess.run(["ip", "netns", "exec", node.netns, *argv, "-e", f"@{tmp_path / 'node.yml'}"],
                          cwd=quick_start_env["project"], env=quick_start_env["env"], capture_output=True, text=True)
    written = sorted(path.name for path in [node.conf, *files.iterdir()] if path.exists())
    return proc, written


def last_task(stdout: str) -> str:
    """What the run printed last: its final task's output, up to the recap."""
    return stdout.rsplit("\nTASK [", 1)[-1].split("\nPLAY RECAP", 1)[0]


def test_the_dry_run_changes_nothing_and_ends_naming_what_the_node_lacks(node, quick_start_env, tmp_path):
    proc, written = run_on_node(node, quick_start_env, quick_start_env["runs"][0], tmp_path)
    said = proc.stdout + proc.stderr
    assert "The node's shape is complete, and what each step gets" in proc.stdout, said
    assert written == [], f"a dry run wrote {written}"
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0"
    # It ends on the summary: what a real run would change (changed= counts it, in check mode), and
    # the missing VRF a real run would stop on, which fails the dry run too.
    summary = last_task(proc.stdout)
    assert "What this run changed on the node and what it proved" in summary, said
    assert "missing: tenant tdemo: vrf_tdemo" in summary, said
    assert re.search(r"hv02\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=1\b", proc.stdout), said


def test_the_dry_run_shows_the_sysctl_diff_on_a_node_being_prepared(node, quick_start_env, tmp_path):
    """The plan in full before the list of what is missing: the forwarding file's diff."""
    proc, written = run_on_node(node, quick_start_env, quick_start_env["runs"][0], tmp_path)
    assert written == [], f"a dry run wrote {written}"
    assert "+net.ipv4.conf.all.forwarding = 1" in proc.stdout, proc.stdout + proc.stderr


def test_the_real_run_refuses_a_node_without_the_tenant_s_vrf_before_any_change(node, quick_start_env, tmp_path):
    proc, written = run_on_node(node, quick_start_env, quick_start_env["runs"][1], tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert written == [], f"a refused run wrote {written}"
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0"
    assert "vrf_tdemo" in last_task(proc.stdout), said
