"""deevnet.net.vrf_route_assert through Ansible: its documentation holds to the binary, and an ad
hoc check on a node without the tenant's VRF fails naming it (what step 1 of the role relies
on). Lookups in real VRFs are tested in the lab VM (tests/lab/tests/vrf_route_assert.sh): this
machine's kernel has no VRF."""
from __future__ import annotations

from conftest import VENV_BIN, assert_documentation_matches_binary, oneline_result

MODULE = "deevnet.net.vrf_route_assert"


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("vrf_route_assert", ansible_env)


def adhoc(node, env, args: str):
    proc = node.run(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m", MODULE, "-a", args)
    return proc, oneline_result(proc.stdout)


def test_a_missing_tenant_vrf_fails_naming_it(node, ansible_env):
    proc, (status, result) = adhoc(node, ansible_env, "vrf=vrf_tdemo default_via=10.20.50.1")
    assert status == "FAILED!", proc.stdout
    assert "vrf_tdemo" in result["msg"], result["msg"]
    assert result["changed"] is False


def test_bad_input_is_refused_on_the_controller(node, ansible_env):
    proc, (status, result) = adhoc(node, ansible_env, "vrf=vrf_tdemo bogus=1")
    assert status == "FAILED!", proc.stdout
    assert result["msg"].startswith(f"Unsupported parameters for ({MODULE}) module: bogus")
