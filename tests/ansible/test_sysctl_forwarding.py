"""deevnet.net.sysctl_forwarding as users run it: ad hoc with string values, and in a playbook
with typed values, --check --diff first; results asserted on the file and on /proc."""
from __future__ import annotations

import subprocess

from conftest import VENV_BIN, assert_documentation_matches_binary, local_playbook, oneline_result


def adhoc(node, env, args: str, *extra: str):
    proc = node.run(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m",
                    "deevnet.net.sysctl_forwarding", "-a", args, *extra)
    return proc, oneline_result(proc.stdout)


def test_adhoc_with_string_values_fixes_the_transit_interface(node, ansible_env):
    args = (f"path={node.conf} sysctl_dirs={node.etc},{node.usr} interfaces={node.transit} "
            f"ipv6=no apply=yes rp_filter='{{\"{node.transit}\": \"2\"}}'")
    proc, (status, result) = adhoc(node, ansible_env, args)
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert result["interfaces"][node.transit] == {"before": "0", "after": "1"}
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "1"
    assert node.proc(f"net/ipv4/conf/{node.transit}/rp_filter") == "2"
    assert "-net.ipv4.conf.vmbr0/50.rp_filter = 2" in node.conf.read_text()

    proc, (status, result) = adhoc(node, ansible_env, args)
    assert status == "SUCCESS", proc.stdout
    assert result["changed"] is False


def test_adhoc_bad_input_fails_with_the_parameter_named(node, ansible_env):
    proc, (status, result) = adhoc(node, ansible_env, f"path={node.conf} interfaces=../../kernel")
    assert status == "FAILED!", proc.stdout
    assert "interfaces: '../../kernel' is not a valid interface name" in result["msg"]
    assert proc.returncode != 0
    assert not node.conf.exists()
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0"


def test_playbook_check_diff_then_apply_then_idempotent(node, ansible_env, tmp_path):
    playbook = tmp_path / "site.yml"
    local_playbook(playbook, f"""\
        - name: Tenant egress needs IPv4 forwarding
          deevnet.net.sysctl_forwarding:
            path: {node.conf}
            sysctl_dirs: [{node.etc}, {node.usr}]
            interfaces: [{node.transit}]
            ipv6: false
            rp_filter:
              {node.transit}: 2
          register: forwarding
          tags: [tenant-egress]
        - name: The transit interface forwards (predicted in check mode)
          ansible.builtin.assert:
            that:
              - forwarding.interfaces['{node.transit}'].after == '1'
              - forwarding.boot['net.ipv4.conf.all.forwarding'].value == '1'
          tags: [tenant-egress]
        """)
    playbook_cmd = [str(VENV_BIN / "ansible-playbook"), str(playbook), "--tags", "tenant-egress"]

    check = node.run(ansible_env, *playbook_cmd, "--check", "--diff")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "changed=1" in check.stdout
    assert "+net.ipv4.conf.all.forwarding = 1" in check.stdout, check.stdout
    assert not node.conf.exists(), "check mode wrote the file"
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0", "check mode changed /proc"

    apply = node.run(ansible_env, *playbook_cmd)
    assert apply.returncode == 0, apply.stdout + apply.stderr
    assert "changed=1" in apply.stdout
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "1"
    assert node.proc("net/ipv4/conf/default/forwarding") == "1"

    again = node.run(ansible_env, *playbook_cmd, "--diff")
    assert again.returncode == 0, again.stdout
    assert "changed=0" in again.stdout, again.stdout


def test_documentation_is_shown_listed_and_matches_the_binary(ansible_env):
    shown = subprocess.run([VENV_BIN / "ansible-doc", "deevnet.net.sysctl_forwarding"],
                           env=ansible_env, capture_output=True, text=True, check=True)
    for option in ("interfaces", "rp_filter", "boot_conflict", "RETURN VALUES"):
        assert option in shown.stdout, shown.stdout
    listed = subprocess.run([VENV_BIN / "ansible-doc", "-l", "deevnet.net"],
                            env=ansible_env, capture_output=True, text=True, check=True)
    assert "deevnet.net.sysctl_forwarding" in listed.stdout, listed.stdout + listed.stderr
    assert "documentation formatting error" not in listed.stderr
    assert_documentation_matches_binary("sysctl_forwarding", ansible_env)
