# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a run of the role deevnet.net.proxmox_node_network's tenant-egress section found and did,
as pure functions of its registered results and its plan (node_plan.py): each declared tenant
whose VRF the node lacks, with the fixes (tenant_vrfs_missing), and the one block the role prints
at its end (tenant_egress_summary): what changed on the node and what was proven, or in check mode
what a real run would change and what is missing.

The documentation of the filters is in tenant_vrfs_missing.yml and tenant_egress_summary.yml,
next to this file."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

VARIABLE = "proxmox_node_network_tenant_egress"


def _result(value) -> dict:
    """A registered result as a dict ({} for none)."""
    return dict(value) if isinstance(value, Mapping) else {}


def _ran(result: dict) -> bool:
    return bool(result) and not result.get("skipped")


def _vrf_hints(index) -> str:
    """The fixes for a tenant VRF the node lacks, the likeliest first; the tenant's `vrf` key only
    for a listed tenant (`index`; None for a discovered one, whose VRF is the SDN's)."""
    key = [] if index is None else [f"set the tenant's vrf: key ({VARIABLE}.tenants[{index}].vrf) when its VRF "
                                    f"has another name"]
    return "; ".join(
        ["apply the SDN in Proxmox, so that the node creates the zone's VRF (Datacenter > SDN > Apply)"] + key
        + ["on a node without Proxmox's SDN, define the VRF in its network configuration",
           "a kernel without VRF support (no CONFIG_NET_VRF) can have none: boot one that has it"])


def tenant_vrfs_missing(presence, plan) -> dict:
    """The declared tenants whose VRF the node lacks, from vrf_route_assert's result on the plan's
    `declared_vrfs` (its failed `vrf` checks): `lines`, one per tenant (what the module found - a
    kernel without VRF support says so there - and the fixes), and `failure`, the real run's
    refusal before any change ("" when none lacks it). A result without checks (the module could
    not ask the kernel) raises its message: nothing is planned on a node that was not seen."""
    lines = _vrfs_missing_lines(_result(presence), _result(plan))
    failure = ("\n".join([f"{len(lines)} declared tenant(s) lack their VRF on this node; nothing was changed:"]
                         + lines) if lines else "")
    return {"lines": lines, "failure": failure}


def _vrfs_missing_lines(result: dict, plan: dict) -> list[str]:
    if not _ran(result):
        return []
    if "checks" not in result:
        raise AnsibleFilterError(f"the tenants' VRFs could not be checked (deevnet.net.vrf_route_assert): "
                                 f"{result.get('msg', result)}")
    from_sdn = _result(plan.get("sdn")).get("tenants_from") == "sdn"
    tenants = {tenant.get("vrf"): (index, tenant) for index, tenant in enumerate(plan.get("tenants") or [])}
    lines = []
    for check in result["checks"]:
        if check.get("check") != "vrf" or check.get("ok"):
            continue
        index, tenant = tenants.get(check.get("vrf"), (None, {"name": check.get("vrf")}))
        lines.append(f"tenant {tenant.get('name')}: {check.get('msg')}; fix: "
                     f"{_vrf_hints(None if from_sdn else index)}")
    return lines


def _findings(result: dict) -> list[str]:
    """An assertion's failed checks (what check mode reported as warnings)."""
    return [check.get("msg", "") for check in result.get("checks") or [] if not check.get("ok")]


def _node_line(plan: dict) -> str:
    tenants = plan.get("tenants") or []
    shape = (f"exit node (transit {plan.get('transit_interface')})" if plan.get("exit_node") else "member node")
    names = ", ".join(f"{tenant.get('name')} ({tenant.get('vrf')})" for tenant in tenants) or "none"
    sdn = _result(plan.get("sdn"))
    if sdn.get("mode", "ignore") == "ignore":
        read = "not read (proxmox_node_network_sdn: ignore)"
    elif sdn.get("absent"):
        read = "not applied on this node"
    else:
        read = f"compared ({len(sdn.get('disagreements') or [])} disagreement(s), {len(sdn.get('drift') or [])} drift)"
    return f"node: {shape}; tenants: {names}; SDN: {read}"


def _changes(results: dict, check_mode: bool, apply_command) -> list[str]:
    """What changed (or, in check mode, would change), each with its module's own words."""
    changes = []
    for key, what in (("sysctl", "forwarding"), ("frr_local", "frr.conf.local")):
        result = _result(results.get(key))
        if _ran(result) and result.get("changed"):
            changes.append(f"{what} ({result.get('msg', '')})")
    command = " ".join(apply_command) if isinstance(apply_command, (list, tuple)) else str(apply_command or "")
    frr_local = _result(results.get("frr_local"))
    if check_mode:
        if frr_local.get("changed"):
            changes.append(f"FRR applied ({command})")
        if results.get("frr_reapply_due"):
            changes.append(f"FRR applied again ({command}): the kernel lacks a default frr.conf.local implies")
        return changes
    for key, what in (("frr_applied", "FRR applied"),
                      ("frr_reapplied", "FRR applied again (the kernel lacked a default frr.conf.local implies)")):
        result = _result(results.get(key))
        if _ran(result) and not result.get("failed"):
            changes.append(what)
    return changes


# The steps a real run reports as failed, by their result's key: what each is called.
STEPS = (("sysctl", "forwarding"), ("frr_local", "frr.conf.local"), ("frr_applied", "the FRR apply"),
         ("frr_reapplied", "the second FRR apply"), ("assertion", "the route assertion"),
         ("reassertion", "the route assertion after the second FRR apply"), ("control_plane", "the control plane"),
         ("egress_probe", "the probes"))


def _step_failed(key: str, result: dict) -> bool:
    """Whether a step failed, as the role judged it: the probes by their verdict (the role's
    failed_when leaves their `failed` false), every other step by its `failed`."""
    if key == "egress_probe":
        return _ran(result) and result.get("verdict") != "passed"
    return bool(result.get("failed"))


def _failures(results: dict) -> list[str]:
    """Each step of a real run that failed, with the first line of its message. The first route
    assertion's failure is FRR's to repair when the second assertion ran (after FRR was applied
    again): that one's verdict is the routes'."""
    reasserted = _ran(_result(results.get("reassertion")))
    found = []
    for key, what in STEPS:
        result = _result(results.get(key))
        if key == "assertion" and reasserted:
            continue
        if _step_failed(key, result):
            why = str(result.get("msg") or result.get("stderr") or f"rc {result.get('rc')}").splitlines()
            found.append(f"{what} ({why[0] if why else ''})")
    return found


def _proofs(results: dict, plan: dict) -> list[str]:
    """What a real run proved: the routes, the control plane, the probes; or that a step was not
    asserted, or failed."""
    def proof(key: str, what: str, proven: str, not_run: str) -> str:
        result = _result(results.get(key))
        if not _ran(result):
            return f"{what}: {not_run}"
        if _step_failed(key, result):
            return f"{what}: NOT proven (failed, below)"
        return f"{what}: {proven}"

    routes = "reassertion" if _ran(_result(results.get("reassertion"))) else "assertion"
    probe = _result(results.get("egress_probe"))
    return [
        proof(routes, "routes", str(_result(results.get(routes)).get("msg", "")), "not asserted"),
        proof("control_plane", "control plane", str(_result(results.get("control_plane")).get("msg", "")),
              "not asserted" + ("" if plan.get("control_plane") else " (no core_peer)")),
        proof("egress_probe", "probes", f"passed ({len(probe.get('probes') or [])} probe(s))",
              "not run" if plan.get("egress_probe") else "none (no tenant has a probe)"),
    ]


def _planned_route_assertion(entry: dict) -> str:
    """One VRF's assertions, as the plan gives them to vrf_route_assert."""
    parts = []
    for key, family in (("default_via", ""), ("ipv6_default_via", "IPv6 ")):
        if entry.get(key):
            parts.append(f"{family}default via {entry[key]}")
    for key, family in (("default_dev", ""), ("ipv6_default_dev", "IPv6 ")):
        if entry.get(key):
            parts.append(f"{family}default by {entry[key]}")
    if entry.get("asymmetric_returns"):
        parts.append("rp_filter off for asymmetric returns")
    if entry.get("no_fall_through"):
        parts.append("no fall-through to the main table, no forwarding")
    forbidden = entry.get("forbidden_interfaces") or []
    if forbidden:
        parts.append(f"{len(entry.get('lookups') or [])} management lookup(s) and every prefix connected on "
                     f"{', '.join(forbidden)} never by {forbidden[0]}")
    return f"{entry.get('name')}: " + (", ".join(parts) or "exists")


def _would_assert(results: dict, plan: dict) -> list[str]:
    """In check mode: what a real run would assert, and how much of it is not true yet."""
    assertion = _result(results.get("assertion"))
    lines = [f"would assert: {_planned_route_assertion(entry)}" for entry in plan.get("route_assertions") or []]
    if plan.get("undeclared_vrfs", "ignore") != "ignore":
        lines.append(f"would assert: no undeclared VRF falls through (undeclared_vrfs: {plan['undeclared_vrfs']})")
    control = plan.get("control_plane") or {}
    if control and _ran(_result(results.get("control_plane"))):
        lines.append(f"would assert: the control plane, core peer(s) "
                     f"{', '.join(str(peer.get('peer')) for peer in control.get('peers') or [])}, "
                     f"{len(control.get('vnis') or [])} VNI(s)")
    probes = (plan.get("egress_probe") or {}).get("probes") or []
    if probes:
        lines.append(f"would probe: {', '.join(str(probe.get('name')) for probe in probes)}")
    findings = (_findings(assertion) + list(_result(results.get("control_plane")).get("findings") or [])
                + ([] if _result(results.get("egress_probe")).get("verdict") in (None, "passed") else ["probes"]))
    if findings:
        lines.append(f"not true yet: {len(findings)} finding(s), the warnings above (what a real run, after its "
                     f"changes, must make true)")
    return lines


def tenant_egress_summary(results, plan, check_mode=False, apply_command=()) -> dict:
    """The role's closing block, from its registered `results` (keys: vrfs, sysctl, frr_local,
    frr_applied, frr_reapplied, frr_reapply_due, assertion, reassertion, control_plane,
    egress_probe; a step that did not run: none) and its plan: `lines` (the node, what changed,
    what was proven and what failed - the role prints the block after a failure too; in check mode
    what would change, what would be asserted and what is missing), `missing` (each line) and
    `failed`: in check mode when a real run would stop before any change (a tenant without its
    VRF); never in a real run, whose failure is the failed step's."""
    results, plan = _result(results), _result(plan)
    check_mode = boolean(check_mode, strict=True)
    vrfs_missing = _vrfs_missing_lines(_result(results.get("vrfs")), plan)
    absent = _result(plan.get("sdn")).get("absent")
    missing = vrfs_missing + ([f"the cluster's SDN, {absent}"] if absent else [])
    changes = _changes(results, check_mode, apply_command)
    lines = [_node_line(plan)]
    if check_mode:
        lines.append("check mode: nothing was changed; a real run would change: " + ("; ".join(changes) or "nothing"))
        lines += _would_assert(results, plan)
        if vrfs_missing:
            lines.append(f"a real run would stop before any change: {len(vrfs_missing)} tenant(s) without their VRF")
    else:
        lines.append("changed: " + ("; ".join(changes) or "nothing"))
        lines.append("proven: " + "; ".join(_proofs(results, plan)))
        failures = _failures(results)
        if failures:
            lines.append("failed: " + "; ".join(failures))
        if vrfs_missing:
            lines.append(f"stopped before any change: {len(vrfs_missing)} tenant(s) without their VRF")
    lines += [f"missing: {line}" for line in missing]
    return {"lines": lines, "missing": missing, "failed": check_mode and bool(vrfs_missing)}


class FilterModule:
    """deevnet.net.tenant_vrfs_missing and deevnet.net.tenant_egress_summary."""

    def filters(self):
        return {"tenant_vrfs_missing": tenant_vrfs_missing, "tenant_egress_summary": tenant_egress_summary}
