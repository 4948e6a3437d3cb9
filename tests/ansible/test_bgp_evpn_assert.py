"""deevnet.net.bgp_evpn_assert through Ansible, ad hoc as an operator runs it, against a fake
vtysh (a script of the test's own that answers each `-c` from modules/bgp_evpn_assert/tests/data/node):
its documentation holds to the binary, a healthy node passes (in check mode too), a leak to the
core fails with its finding, the result keys are RETURN's. The vtysh failures (missing, hanging,
non-JSON, over the cap, planted) are tested on the binary in the crate's tests/it/vtysh.rs."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, VENV_BIN, assert_documentation_matches_binary, oneline_result
from test_return_keys import assert_keys_match_return, local, run_keys

MODULE = "deevnet.net.bgp_evpn_assert"
DATA = ROOT / "modules" / "bgp_evpn_assert" / "tests" / "data" / "node"
CORE = "2001:db8:60::1"


def fake_vtysh(tmp: Path, leaking: bool = False) -> Path:
    """A vtysh in `tmp` (root's, 0755) that prints the recorded answer of each `-c`."""
    def route(af: str, kind: str) -> str:
        return f"show bgp vrf vrf_tdemo {af} unicast neighbors {CORE} {kind} json"
    answers = {
        "show bgp vrf all neighbors json": "neighbors.json",
        "show bgp vrf all summary json": "summary.json",
        "show evpn vni detail json": "vnis.json",
        "show evpn next-hops vni all json": "next-hops.json",
        route("ipv4", "routes"): "core-ipv4-routes.json",
        route("ipv6", "routes"): "core-ipv6-routes.json",
        route("ipv4", "advertised-routes"): "core-ipv4-advertised-leaking.json" if leaking else "core-ipv4-advertised.json",
        route("ipv6", "advertised-routes"): "core-ipv6-advertised.json",
    }
    cases = "".join(f"    '{command}') cat '{DATA / file}' ;;\n" for command, file in answers.items())
    script = tmp / "vtysh"
    script.write_text("#!/bin/sh\nwhile [ \"$#\" -gt 0 ]; do\n  case \"$2\" in\n" + cases
                      + "    *) echo \"% Unknown command: $2\"; exit 1 ;;\n  esac\n  shift 2\ndone\n")
    script.chmod(0o755)
    return script


def args(vtysh: Path) -> str:
    return json.dumps({
        "vtysh": str(vtysh),
        "fabric_ipv6_only": True,
        "peers": [
            {"peer": "bgpv6", "address_families": ["ipv6_unicast", "l2vpn_evpn"]},
            {"peer": CORE, "vrf": "vrf_tdemo", "remote_as": 65100, "address_families": ["ipv4_unicast", "ipv6_unicast"],
             "receives_default": ["ipv4", "ipv6"], "advertises": "aggregates_only"},
        ],
        "vnis": [{"vni": 10100, "remote_vteps": ["fd00:51::22", "fd00:51::23"]}, {"vni": 4001}],
    })


def adhoc(env: dict, module_args: str, *extra: str):
    proc = local(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m", MODULE, "-a", module_args, *extra)
    return proc, oneline_result(proc.stdout)


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("bgp_evpn_assert", ansible_env)


def test_a_healthy_node_passes_ad_hoc_in_check_mode_too(ansible_env, tmp_path):
    vtysh = fake_vtysh(tmp_path)
    for extra in ((), ("--check",)):
        proc, (status, result) = adhoc(ansible_env, args(vtysh), *extra)
        assert status == "SUCCESS", proc.stdout + proc.stderr
        assert result["changed"] is False and result["findings"] == [], result
        assert [p["peer"] for p in result["peers"]] == ["ens19", "ens20", CORE], result
        assert result["peers"][2]["default_received"] == {"ipv4": True, "ipv6": True}, result


def test_a_leak_to_the_core_fails_naming_it_and_bad_input_is_refused(ansible_env, tmp_path):
    proc, (status, result) = adhoc(ansible_env, args(fake_vtysh(tmp_path, leaking=True)))
    assert status == "FAILED!", proc.stdout
    assert f"peer {CORE} in VRF vrf_tdemo: expected only aggregates advertised" in result["msg"], result["msg"]
    assert result["findings"][0]["found"] == "advertised: 10.20.129.5/32, 0.0.0.0/0", result
    proc, (status, result) = adhoc(ansible_env, "vtysh=/usr/bin/vtysh")
    assert status == "FAILED!", proc.stdout
    assert result["msg"].startswith("peers and vnis are both empty"), result["msg"]


def test_bgp_evpn_assert_returns_its_documented_keys(ansible_env, tmp_path):
    ok, leaking = tmp_path / "ok", tmp_path / "leaking"
    ok.mkdir()
    leaking.mkdir()
    runs = [
        run_keys(local, "bgp_evpn_assert", ansible_env, args(fake_vtysh(ok))),
        run_keys(local, "bgp_evpn_assert", ansible_env, args(fake_vtysh(leaking, leaking=True)), "--check"),
    ]
    assert [status for status, _ in runs] == ["SUCCESS", "FAILED!"], runs
    assert_keys_match_return("bgp_evpn_assert", ansible_env, runs)
