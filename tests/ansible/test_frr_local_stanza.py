"""deevnet.net.frr_local_stanza as users run it: ad hoc as a health check and with a JSON stanza
list, and in a playbook with --check --diff first; results asserted on the file."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import VENV_BIN, assert_documentation_matches_binary, local_playbook, oneline_result

MODULE = "deevnet.net.frr_local_stanza"
TDEMO_ROUTE = "ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"


def adhoc(env: dict[str, str], args: str, *extra: str):
    proc = subprocess.run([str(VENV_BIN / "ansible"), "localhost", "-o", "-m", MODULE, "-a", args, *extra],
                          env=env, capture_output=True, text=True)
    return proc, oneline_result(proc.stdout)


def test_adhoc_health_check_names_the_line_and_the_rule(ansible_env, tmp_path: Path):
    conf = tmp_path / "frr.conf.local"
    conf.write_text("vrf vrf_tdemo\n " + TDEMO_ROUTE + "\nexit-vrf\n")
    before = conf.read_bytes()
    proc, (status, result) = adhoc(ansible_env, f"path={conf}")
    assert status == "FAILED!", proc.stdout + proc.stderr
    assert [(f["line"], f["rule"]) for f in result["lint"]] == [(3, "exit-vrf")]
    assert "line 3: exit-vrf" in result["msg"]
    assert conf.read_bytes() == before

    conf.write_text("vrf vrf_tdemo\n " + TDEMO_ROUTE + "\nexit\n")
    proc, (status, result) = adhoc(ansible_env, f"path={conf}")
    assert status == "SUCCESS", proc.stdout + proc.stderr
    assert result["changed"] is False and result["lint"] == []


def test_adhoc_stanzas_as_json_text_then_idempotent(ansible_env, tmp_path: Path):
    conf = tmp_path / "frr.conf.local"
    stanzas = json.dumps([{"header": "vrf vrf_tdemo", "lines": [TDEMO_ROUTE]}])
    args = f"path={conf} asn=45689 stanzas='{stanzas}'"
    proc, (status, result) = adhoc(ansible_env, args)
    assert status == "CHANGED", proc.stdout + proc.stderr
    assert result["stanzas"] == {"vrf vrf_tdemo": "added"}
    assert conf.read_text() == f"vrf vrf_tdemo\n {TDEMO_ROUTE}\nexit\n!\n"
    proc, (status, result) = adhoc(ansible_env, args)
    assert status == "SUCCESS", proc.stdout
    assert result["stanzas"] == {"vrf vrf_tdemo": "unchanged"}


def test_adhoc_refused_header_says_what_to_write(ansible_env, tmp_path: Path):
    conf = tmp_path / "frr.conf.local"
    stanzas = json.dumps([{"header": "ip route 0.0.0.0/0 10.20.50.1 vrf vrf_tdemo nexthop-vrf default"}])
    proc, (status, result) = adhoc(ansible_env, f"path={conf} stanzas='{stanzas}'")
    assert status == "FAILED!", proc.stdout
    assert "`vrf vrf_tdemo` / ` ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default` / `exit`" in result["msg"]
    assert proc.returncode != 0
    assert not conf.exists()


def test_playbook_check_diff_then_apply_then_idempotent(ansible_env, tmp_path: Path):
    conf = tmp_path / "frr.conf.local"
    playbook = tmp_path / "site.yml"
    local_playbook(playbook, f"""\
        - name: Tenant egress through the default VRF, BGP fixes
          deevnet.net.frr_local_stanza:
            path: {conf}
            asn: 45689
            stanzas:
              - header: vrf vrf_tdemo
                lines: ["{TDEMO_ROUTE}"]
              - header: router bgp 45689
                children:
                  - header: address-family ipv4 unicast
                    lines: [neighbor VTEP activate]
              - header: router bgp 45689 vrf vrf_evpn
                children:
                  - header: address-family ipv4 unicast
                    lines: [import vrf default]
          register: frr_local
        - name: Every stanza is accounted for, and the file lints clean
          ansible.builtin.assert:
            that:
              - frr_local.stanzas | length == 3
              - frr_local.lint | length == 0
        """)
    command = [str(VENV_BIN / "ansible-playbook"), str(playbook)]

    check = subprocess.run([*command, "--check", "--diff"], env=ansible_env, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "changed=1" in check.stdout
    assert f"+ {TDEMO_ROUTE}" in check.stdout, check.stdout
    assert "+ exit-address-family" in check.stdout, check.stdout
    assert not conf.exists(), "check mode wrote the file"

    apply = subprocess.run(command, env=ansible_env, capture_output=True, text=True)
    assert apply.returncode == 0, apply.stdout + apply.stderr
    assert "changed=1" in apply.stdout
    assert "router bgp 45689 vrf vrf_evpn\n address-family ipv4 unicast\n  import vrf default\n" in conf.read_text()

    again = subprocess.run([*command, "--diff"], env=ansible_env, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout
    assert "changed=0" in again.stdout, again.stdout


def test_documentation_is_shown_and_matches_the_binary(ansible_env):
    shown = subprocess.run([VENV_BIN / "ansible-doc", MODULE], env=ansible_env,
                           capture_output=True, text=True, check=True)
    for text in ("stanzas", "children", "lint", "asn", "validate", "import vrf default",
                 "neighbor VTEP activate", "nexthop-vrf default", "RETURN VALUES"):
        assert text in shown.stdout, text
    assert_documentation_matches_binary("frr_local_stanza", ansible_env)
