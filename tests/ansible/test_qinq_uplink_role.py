"""The role's QinQ section as an operator meets it: bad input is refused before any file is
written, a node of one shape shows nothing of the other shape's tasks, the tags still select the
sections, and the files the section writes come from the role's templates, each saying what it
is for. The verdict on qinq_check's result (collection/plugins/filter/qinq_uplink.py) is unit
tested here too.

This machine's kernel has no bonding and no 802.1Q: a bond0 that does not exist is exactly the
bad input. The role runs in a network namespace of the test's own (the node fixture), every path
it writes pointed at the test's folder."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import textwrap

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import ROOT, VENV_BIN

ROLE = "deevnet.net.proxmox_node_network"
ROLE_DIR = ROOT / "roles" / "proxmox_node_network"

_spec = importlib.util.spec_from_file_location("qinq_uplink", ROOT / "collection" / "plugins" / "filter" / "qinq_uplink.py")
qinq_uplink = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qinq_uplink)
refusal = qinq_uplink.qinq_uplink_refusal

# The role's QinQ file paths, each a variable whose default is under /etc.
PATH_VARIABLES = {
    "proxmox_node_network_qinq_sysctl_path": "90-deevnet-qinq-bridge.conf",
    "proxmox_node_network_qinq_txvlan_rule_path": "70-deevnet-qinq-txvlan-off.rules",
    "proxmox_node_network_qinq_guard_rules_path": "deevnet.net/guest-vlan.nft",
    "proxmox_node_network_qinq_guard_unit_path": "deevnet-guest-vlan.service",
}

QINQ = {"bond": "bond0", "uplink_vlan": 40, "bridge": "vmbr1", "vlans": "199-299", "zone_mtu": 8996,
        "fix_txvlan": True, "guest_vlan_guard": True}
TENANT_EGRESS = {"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "management_interface": "vmbr0",
                 "tenants": [{"name": "tdemo"}]}


def written_paths(folder):
    return {name: str(folder / relative) for name, relative in PATH_VARIABLES.items()}


def site(tmp_path, variables: dict):
    """A play of the role on this node, the SDN not read (this machine is no Proxmox node)."""
    playbook = tmp_path / "site.yml"
    playbook.write_text(yaml.safe_dump([{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"proxmox_node_network_sdn": "ignore", **variables},
        "roles": [ROLE],
    }], sort_keys=False))
    return playbook


def run(node, ansible_env, playbook, *args):
    return node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook), *args)


def task_names(path) -> set[str]:
    return {task["name"] for task in yaml.safe_load(path.read_text())}


def skipped_tasks(stdout: str) -> list[str]:
    """The name of each task the default callback printed a `skipping:` line under."""
    skipped, task = [], None
    for line in stdout.splitlines():
        header = re.match(r"TASK \[(?:[\w.]+ : )?(.*)\] \**$", line)
        if header:
            task = header.group(1)
        elif line.startswith("skipping: ") and task is not None:
            skipped.append(task)
    return skipped


# --- bad input changes nothing ---------------------------------------------------------------

@pytest.mark.parametrize("bad, named", [
    ({}, "bond: there is no interface bond0 on this node"),
    ({"vlans": "299-199"}, "the range '299-199' is written backwards"),
])
@pytest.mark.parametrize("check", [False, True], ids=["real run", "check mode"])
def test_bad_qinq_input_is_refused_before_any_file_is_written(node, ansible_env, tmp_path, bad, named, check):
    folder = tmp_path / "written"
    folder.mkdir()
    playbook = site(tmp_path, {"proxmox_node_network_qinq_uplink": {**QINQ, **bad}, **written_paths(folder)})
    proc = run(node, ansible_env, playbook, *(["--check", "--diff"] if check else []))
    assert proc.returncode != 0, proc.stdout
    # Not the sysctl.d file, the udev rule, the guard's folder, rules or unit.
    assert sorted(folder.rglob("*")) == [], proc.stdout
    text = " ".join(proc.stdout.replace("\\n", " ").split())
    assert named in text, proc.stdout
    assert "cannot be set up as given; nothing was changed" in text, proc.stdout
    assert "No IPv6 on the zone bridge" not in proc.stdout, proc.stdout


# --- a node of one shape shows nothing of the other shape's tasks -----------------------------

def test_a_qinq_only_run_shows_no_tenant_egress_task_skipped(node, ansible_env, tmp_path):
    folder = tmp_path / "written"
    folder.mkdir()
    proc = run(node, ansible_env, site(tmp_path, {"proxmox_node_network_qinq_uplink": QINQ, **written_paths(folder)}))
    # The run reached the QinQ section (and stopped there, on the missing bond).
    assert "there is no interface bond0" in proc.stdout, proc.stdout
    egress_tasks = task_names(ROLE_DIR / "tasks" / "tenant_egress.yml") | task_names(ROLE_DIR / "tasks" / "sdn.yml")
    skipped = skipped_tasks(proc.stdout)
    assert not egress_tasks & set(skipped), skipped
    # One line says the section does not apply: its include.
    assert skipped == ["Tenant egress, on a node with proxmox_node_network_tenant_egress"], proc.stdout


def test_a_tenant_egress_only_run_shows_no_qinq_task_skipped(node, ansible_env, tmp_path):
    # Every task's failure ignored (this machine has no VRF), so the run goes on past the
    # tenant-egress section to where the QinQ section would be.
    playbook = site(tmp_path, {"proxmox_node_network_tenant_egress": TENANT_EGRESS,
                               "proxmox_node_network_sysctl_path": str(tmp_path / "fabric.conf"),
                               "proxmox_node_network_frr_local_path": str(tmp_path / "frr.conf.local"),
                               "proxmox_node_network_frr_owner_record": str(tmp_path / "owners.json"),
                               "proxmox_node_network_frr_apply_command": ["true"],
                               "proxmox_node_network_settle_timeout": 0})
    play = yaml.safe_load(playbook.read_text())
    play[0]["ignore_errors"] = True
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    proc = run(node, ansible_env, playbook)
    assert "vrf_tdemo" in proc.stdout, proc.stdout
    assert "PLAY RECAP" in proc.stdout, proc.stdout
    skipped = skipped_tasks(proc.stdout)
    assert not task_names(ROLE_DIR / "tasks" / "qinq_uplink.yml") & set(skipped), skipped
    assert "QinQ uplink, on a node with proxmox_node_network_qinq_uplink" in skipped, proc.stdout


# --- the tags still select the sections -------------------------------------------------------

@pytest.mark.parametrize("args, qinq, egress", [
    (["--tags", "qinq-uplink"], True, False),
    (["--tags", "tenant-egress"], False, True),
    (["--skip-tags", "tenant-egress"], True, False),
    (["--skip-tags", "qinq-uplink"], False, True),
])
def test_the_tags_select_the_sections(node, ansible_env, tmp_path, args, qinq, egress):
    folder = tmp_path / "written"
    folder.mkdir()
    playbook = site(tmp_path, {"proxmox_node_network_tenant_egress": TENANT_EGRESS,
                               "proxmox_node_network_qinq_uplink": QINQ, **written_paths(folder)})
    proc = run(node, ansible_env, playbook, *args)
    # Each section fails on this machine (no VRF, no bond), at the task that shows it ran.
    assert proc.returncode != 0, proc.stdout
    assert ("there is no interface bond0" in proc.stdout) == qinq, proc.stdout
    assert ("vrf_tdemo" in proc.stdout) == egress, proc.stdout
    assert sorted(folder.rglob("*")) == [], proc.stdout


# --- the files come from the role's templates -------------------------------------------------

GUARD_COMMANDS = "add table bridge deevnet_guest_vlan; delete table bridge deevnet_guest_vlan; table bridge x {}"
# What each file holds besides its comment lines, as the role wrote it inline before.
EXPECTED = {
    "proxmox_node_network_qinq_sysctl_path": ["-net/ipv6/conf/vmbr1/disable_ipv6 = 1"],
    "proxmox_node_network_qinq_txvlan_rule_path": [
        f'ACTION=="add", SUBSYSTEM=="net", KERNEL=="{nic}", RUN+="/usr/sbin/ethtool -K {nic} tx-vlan-hw-insert off"'
        for nic in ("qinq_a", "qinq_b", "qinq_c")],
    "proxmox_node_network_qinq_guard_rules_path": [GUARD_COMMANDS],
    "proxmox_node_network_qinq_guard_unit_path": [
        "[Unit]",
        "Description=deevnet.net guest VLAN guard: guests' 802.1Q/802.1ad frames kept off the QinQ uplink",
        "DefaultDependencies=no", "Wants=network-pre.target", "After=nftables.service",
        "Before=network-pre.target shutdown.target", "Conflicts=shutdown.target", "",
        "[Service]", "Type=oneshot", "RemainAfterExit=yes", "ExecStart=/usr/sbin/nft -f {guard_rules}", "",
        "[Install]", "WantedBy=sysinit.target"],
}


def test_the_files_come_from_templates_each_saying_what_it_is_for(ansible_env, tmp_path):
    """The section's file tasks, taken from tasks/qinq_uplink.yml as they are, in a play of their
    own with a qinq_check result as the module returns it (this machine cannot pass the checks)."""
    tasks = yaml.safe_load((ROLE_DIR / "tasks" / "qinq_uplink.yml").read_text())
    picked = [task for task in tasks if "ansible.builtin.template" in task
              or task.get("name") == "Folder of the guest VLAN guard's rules"]
    assert len(picked) == 5, [task["name"] for task in tasks]
    (tmp_path / "templates").symlink_to(ROLE_DIR / "templates")
    folder = tmp_path / "written"
    folder.mkdir()
    paths = written_paths(folder)
    playbook = tmp_path / "files.yml"
    playbook.write_text(yaml.safe_dump([{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {
            "__proxmox_node_network_qinq": {**QINQ, "guest_ports": "fail"},
            "__proxmox_node_network_qinq_checked": {
                "slaves": [{"name": "qinq_b", "feature": "tx-vlan-hw-insert"},
                           {"name": "qinq_a", "feature": "tx-vlan-hw-insert"}],
                "configured_slaves": ["qinq_a", "qinq_b", "qinq_c"],
                "guest_vlan_guard": {"commands": GUARD_COMMANDS}},
            **paths},
        "tasks": picked,
    }]))
    proc = subprocess.run([VENV_BIN / "ansible-playbook", str(playbook)], env=ansible_env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for variable, lines in EXPECTED.items():
        text = (folder / PATH_VARIABLES[variable]).read_text()
        first, *rest = text.splitlines()
        assert re.fullmatch(r"# Managed by Ansible \(deevnet\.net\.proxmox_node_network\): \S.*", first), text
        assert rest == [line.replace("{guard_rules}", paths["proxmox_node_network_qinq_guard_rules_path"])
                        for line in lines], text
        assert text.endswith("\n"), text
    assert sorted(path.name for path in (ROLE_DIR / "templates").iterdir()) == [
        "deevnet-guest-vlan.service.j2", "guest-vlan.nft.j2", "qinq-bridge-sysctl.conf.j2", "qinq-txvlan-off.rules.j2"]


def test_the_qinq_tasks_write_no_file_inline():
    tasks = yaml.safe_load((ROLE_DIR / "tasks" / "qinq_uplink.yml").read_text())
    assert not [task["name"] for task in tasks if "content" in task.get("ansible.builtin.copy", {})]


# --- the verdict on qinq_check's result -------------------------------------------------------

def check(name, ok):
    return {"name": name, "ok": ok, "expected": "x", "actual": "y"}


IPV6_LINE = ("bridge_ipv6: expected IPv6 disabled on vmbr1 (no link-local address on the tenant transport), found "
             "net.ipv6.conf.vmbr1.disable_ipv6 = 0; sysctl -w net.ipv6.conf.vmbr1.disable_ipv6=1 now")
MTU_LINE = "mtu:bond0: expected 9000, found 1500; ip link set bond0 mtu 9000"


def test_bad_input_is_refused_with_the_module_s_message():
    said = refusal({"failed": True, "msg": "bond: there is no interface bond0 on this node; check the name"},
                   role_fixes=["bridge_ipv6"])
    assert said == (f"{qinq_uplink.REFUSAL}:\nbond: there is no interface bond0 on this node; check the name")


def test_only_checks_the_role_does_not_fix_refuse():
    result = {"failed": True, "msg": f"{MTU_LINE}\n{IPV6_LINE}",
              "checks": [check("stack", True), check("mtu:bond0", False), check("bridge_ipv6", False)]}
    assert refusal(result, role_fixes=["bridge_ipv6"]) == f"{qinq_uplink.REFUSAL}:\n{MTU_LINE}"
    assert refusal(result) == f"{qinq_uplink.REFUSAL}:\n{MTU_LINE}\n{IPV6_LINE}"
    only_ipv6 = {"failed": True, "msg": IPV6_LINE, "checks": [check("stack", True), check("bridge_ipv6", False)]}
    assert refusal(only_ipv6, role_fixes=["bridge_ipv6"]) == ""
    assert refusal(only_ipv6) == f"{qinq_uplink.REFUSAL}:\n{IPV6_LINE}"


def test_a_result_whose_checks_pass_is_not_refused():
    # failed_when: false replaced `failed`: the checks alone decide.
    assert refusal({"failed": False, "msg": "all 2 QinQ checks passed",
                    "checks": [check("stack", True), check("bridge_ipv6", True)]}) == ""


@pytest.mark.parametrize("role_fixes", [[], ["bridge_ipv6"]])
def test_a_failed_result_whose_checks_all_pass_is_refused(role_fixes):
    # The failure is the module's, not a check's: it is not a pass.
    result = {"failed": True, "msg": "guest_vlan_guard: nft took the guard's table, but the ruleset read back does "
                                     "not show it", "checks": [check("stack", True), check("bridge_ipv6", True)]}
    assert refusal(result, role_fixes=role_fixes) == f"{qinq_uplink.REFUSAL}:\n{result['msg']}"
    # The same result not marked failed passes, and a failure a role-fixed check explains too.
    assert refusal({**result, "failed": False}, role_fixes=role_fixes) == ""
    assert refusal({**result, "checks": [check("stack", True), check("bridge_ipv6", False)]},
                   role_fixes=["bridge_ipv6"]) == ""


def test_a_malformed_check_blocks():
    assert refusal({"failed": True, "msg": "x", "checks": ["stack"]}) == f"{qinq_uplink.REFUSAL}:\nx"


@pytest.mark.parametrize("result, role_fixes, named", [
    ("skipped", [], "the input must be the registered result of deevnet.net.qinq_check, not str"),
    ({"checks": []}, "bridge_ipv6", "role_fixes must be a list of check names, not 'bridge_ipv6'"),
])
def test_a_wrong_argument_is_named(result, role_fixes, named):
    with pytest.raises(AnsibleFilterError, match=re.escape(named)):
        refusal(result, role_fixes=role_fixes)
