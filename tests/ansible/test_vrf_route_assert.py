"""deevnet.net.vrf_route_assert through Ansible: its documentation holds to the binary, and an ad
hoc check on a node without the tenant's VRF fails naming it (what step 1 of the role relies
on); the default VRF, settle_timeout and undeclared_vrfs ad hoc, and the new options' refusals. Lookups in real VRFs are tested in the lab VM (tests/lab/tests/vrf_route_assert.sh): this
machine's kernel has no VRF. A lookup's source NAT (snat_src) ad hoc, on real nft."""
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


def test_the_default_vrf_and_settle_timeout_ad_hoc(node, ansible_env):
    """The default VRF needs no VRF device, so its assertion runs here; ad hoc strings become
    the int and the choice."""
    node.ip("link", "set", node.transit, "up")
    node.ip("addr", "add", "10.20.50.2/24", "dev", node.transit)
    proc, (status, result) = adhoc(node, ansible_env, "vrf=default default_via=10.20.50.1 settle_timeout=2")
    assert status == "FAILED!", proc.stdout
    assert result["msg"] == (
        "default: table main has no IPv4 default route; expected default via 10.20.50.1"
    ), result["msg"]
    assert result["attempts"] == 5, result  # at 0, 0.5, 1, 1.5 and 2 s
    assert result["settled_after"] >= 2.0, result

    node.ip("route", "add", "default", "via", "10.20.50.1")
    proc, (status, result) = adhoc(node, ansible_env, "vrf=default default_via=10.20.50.1 undeclared_vrfs=warn")
    assert status == "SUCCESS", proc.stdout
    assert result["attempts"] == 1 and result["leaking_vrfs"] == [], result
    assert result["vrfs"][0]["defaults"][0]["gateway"] == "10.20.50.1", result
    # This kernel has no VRF support: whether an undeclared VRF falls through cannot be told.
    assert result["msg"] == ("all 2 checks passed in 1 VRF; cannot tell whether an undeclared VRF falls through: "
                             "this kernel has no VRF support, see the warnings"), result


def test_undeclared_vrfs_on_a_kernel_without_vrf_support_cannot_tell_and_says_why(node, ansible_env):
    """Never "no undeclared VRF falls through" said of a kernel that can have no VRF (this one)."""
    proc, (status, result) = adhoc(node, ansible_env, "undeclared_vrfs=fail")
    assert status == "FAILED!", proc.stdout
    assert "no undeclared VRF falls through" not in result["msg"], result
    assert result["msg"].startswith("undeclared VRFs: cannot tell whether one falls through: this kernel has no VRF "
                                    "support (kernel "), result
    assert "it was built without CONFIG_NET_VRF), so there is no VRF to inspect" in result["msg"], result
    assert result["changed"] is False


def test_a_missing_vrf_is_not_waited_for_and_names_the_kernel_s_lack(node, ansible_env):
    proc, (status, result) = adhoc(node, ansible_env, "vrf=vrf_tdemo default_via=10.20.50.1 settle_timeout=30")
    assert status == "FAILED!", proc.stdout
    assert result["attempts"] == 1 and result["settled_after"] < 5, result
    assert result["msg"].startswith("vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo); "
                                    "this kernel cannot have VRFs: kernel "), result


def test_new_options_refuse_bad_values_naming_them(node, ansible_env):
    for args, start in [
        ("vrf=default settle_timeout=900", "settle_timeout=900 is out of range;"),
        ("vrf=default forwarding=true", "forwarding: not for the default VRF"),
        ("vrf=vrf_tdemo undeclared_vrfs=sometimes", "value of undeclared_vrfs must be one of: fail, warn, ignore"),
    ]:
        proc, (status, result) = adhoc(node, ansible_env, args)
        assert status == "FAILED!", proc.stdout
        assert result["msg"].startswith(start), (args, result["msg"])


def test_a_lookup_s_snat_src_answers_the_source_nat_of_its_device_through_ansible(node, ansible_env):
    """snat_src through the controller's validation and the fast path: the node's ruleset (real
    nft in the node's namespace) source-translates the workload leaving by the transit only."""
    node.ip("link", "set", node.transit, "up")
    node.ip("addr", "add", "10.20.50.2/24", "dev", node.transit)
    node.ip("route", "add", "default", "via", "10.20.50.1")
    ruleset = ('table ip nat { chain post { type nat hook postrouting priority srcnat; '
               'ip saddr 10.64.0.0/10 oifname "vmbr0.50" masquerade; }; }')
    node.run({}, "/usr/sbin/nft", ruleset).check_returncode()
    args = "vrf=default dst=10.20.50.1 table=any snat_src=10.64.1.250"
    proc, (status, result) = adhoc(node, ansible_env, args)
    assert status == "SUCCESS", proc.stdout
    lookup = next(check for check in result["checks"] if check["check"] == "lookup 10.20.50.1")
    assert lookup["actual"]["snat"] == {"src": "10.64.1.250", "translated": True,
                                        "why": "a source NAT rule of ip nat post matches"}, lookup
    proc, (status, result) = adhoc(node, ansible_env, args.replace("10.64.1.250", "10.200.1.250"))
    lookup = next(check for check in result["checks"] if check["check"] == "lookup 10.20.50.1")
    assert lookup["actual"]["snat"]["translated"] is False, lookup
    proc, (status, result) = adhoc(node, ansible_env, "vrf=default dst=10.20.50.1 snat_src=2001:db8::5")
    assert status == "FAILED!", proc.stdout
    assert result["msg"].startswith("snat_src: '2001:db8::5' is an IPv6 address;"), result["msg"]
