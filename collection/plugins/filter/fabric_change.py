# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The guarded fleet change of the playbook deevnet.net.fabric_change, as pure functions: the
settings refused before anything changes (``fabric_change_refusal``), the waves from the canary
and the counts or percentages (``fabric_change_waves``), the proof held against the baseline
(``fabric_change_compare``), the interfaces an interface reload would touch outside the change
(``fabric_change_stanzas``, ``fabric_change_stale_interfaces``), the results a step's nodes
wrote (``fabric_change_step_results``, ``fabric_change_changes``,
``fabric_change_switch_state``) and the report of the whole change
(``fabric_change_report``, ``fabric_change_summary``). Nothing here reads a host.

The documentation of each filter is in its sidecar YAML, next to this file."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible_collections.deevnet.net.plugins.plugin_utils.fabric_proof_cells import CellsError, ProofCells

FORMAT = "deevnet.net.fabric_change/1"
PROOF_FORMAT = "deevnet.net.fabric_proof/1"
KINDS = ("tasks", "node_network", "sdn_apply", "file")
# The switch's range (the module change_guard's timeout).
TIMEOUT_MIN = 10
TIMEOUT_MAX = 86400
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
# An interface name as the kernel takes it (1 to 15 bytes, no slash, no whitespace).
IFNAME = re.compile(r"^[^\s/:'\"\[\],]{1,15}$")


def _fail(filter_name: str, where: str, value, fix: str):
    raise AnsibleFilterError(f"{filter_name}: {where} is {value!r}; {fix}")


def _is_int(value) -> bool:
    """A whole number, 0 or more, as a number or its text (extra variables arrive as text)."""
    if isinstance(value, bool):
        return False
    return (isinstance(value, int) and value >= 0) or (isinstance(value, str) and value.strip().isdecimal())


# --- the settings ------------------------------------------------------------------------------

def _argv_problem(name: str, value) -> list:
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(arg, str) for arg in value):
        return [f"{name} is {value!r}: give the command as a list of strings, the program first (no shell)"]
    if not value[0].startswith("/"):
        return [f"{name} is {value!r}: its program {value[0]!r} is not an absolute path; give the program's full "
                "path (the node runs it without a shell or PATH)"]
    return []


def _paths_problem(name: str, value) -> list:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(path, str) for path in value):
        return [f"{name} is {value!r}: give a list of absolute paths"]
    relative = [path for path in value if not path.startswith("/")]
    if relative:
        return [f"{name} holds {relative!r}: give absolute paths (a folder means every file under it)"]
    return []


def _reload_problem(name: str, value) -> list:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        return [f"{name} is {value!r}: give a list of {{paths, argv}}"]
    problems = []
    for index, entry in enumerate(value):
        where = f"{name}[{index}]"
        if not isinstance(entry, Mapping) or set(entry) - {"paths", "argv"}:
            problems.append(f"{where} is {entry!r}: give a dict with paths (absolute) and argv (the command)")
            continue
        problems += _paths_problem(f"{where}.paths", entry.get("paths") or None) or (
            [] if entry.get("paths") else [f"{where}.paths is {entry.get('paths')!r}: give the paths whose restore "
                                           "needs this command"])
        problems += _argv_problem(f"{where}.argv", entry.get("argv"))
    return problems


def _wave_problems(waves) -> list:
    name = "fabric_change_waves"
    if not isinstance(waves, (list, tuple)) or not waves:
        return [f"{name} is {waves!r}: give the waves after the canary, a list of counts or percentages, e.g. "
                "[1, '50%', '100%']"]
    problems = []
    for index, wave in enumerate(waves):
        if _is_int(wave) and int(wave) >= 1:
            continue
        match = PERCENT.match(wave) if isinstance(wave, str) else None
        if match and 0 < float(match[1]) <= 100:
            continue
        problems.append(f"{name}[{index}] is {wave!r}: give a count of nodes (1 or more) or a percentage of the "
                        "nodes such as '25%' (above 0, at most '100%')")
    return problems


def _host_problems(settings: Mapping, context: Mapping) -> list:
    hosts = list(context.get("hosts") or [])
    if not hosts:
        return [f"fabric_change_hosts is {settings.get('fabric_change_hosts')!r}: no host of the inventory is in it; "
                "give the group of the Proxmox nodes (-e fabric_change_hosts=GROUP)"]
    canary = settings.get("fabric_change_canary")
    if canary not in (None, "") and canary not in hosts:
        return [f"fabric_change_canary is {canary!r}: not one of fabric_change_hosts ({', '.join(hosts)}); give one "
                "of them, or leave it unset for the first"]
    return []


def _kind_problems(settings: Mapping, context: Mapping) -> list:
    kind = settings.get("fabric_change_kind")
    if kind not in KINDS:
        return [f"fabric_change_kind is {kind!r}: give one of {', '.join(KINDS)}"]
    problems = []
    if kind == "tasks":
        tasks_file = settings.get("fabric_change_tasks_file")
        if not tasks_file:
            problems.append("fabric_change_tasks_file is unset: kind tasks runs the tasks of this file on each node; "
                            "give its path")
        elif not context.get("tasks_file_exists"):
            problems.append(f"fabric_change_tasks_file is {tasks_file!r}: no such file on the controller; give the "
                            "path of your tasks file")
    if kind == "sdn_apply":
        problems += _argv_problem("fabric_change_sdn_commit", settings.get("fabric_change_sdn_commit"))
        problems += _argv_problem("fabric_change_sdn_reload", settings.get("fabric_change_sdn_reload"))
    if kind == "file":
        for key in ("fabric_change_file_path", "fabric_change_file_content"):
            if key in settings and settings[key] is not None and not isinstance(settings[key], str):
                problems.append(f"{key} is {settings[key]!r}: give a string")
        path = settings.get("fabric_change_file_path")
        if isinstance(path, str) and not path.startswith("/"):
            problems.append(f"fabric_change_file_path is {path!r}: give an absolute path")
        if settings.get("fabric_change_file_reload"):
            problems += _argv_problem("fabric_change_file_reload", settings["fabric_change_file_reload"])
    return problems


def _timeout_problems(settings: Mapping, context: Mapping) -> list:
    timeout = settings.get("fabric_change_timeout")
    margin = settings.get("fabric_change_reconnect_margin", 30)
    if not _is_int(margin):
        return [f"fabric_change_reconnect_margin is {margin!r}: give whole seconds, 0 or more"]
    if not _is_int(timeout) or not TIMEOUT_MIN <= int(timeout) <= TIMEOUT_MAX:
        return [f"fabric_change_timeout is {timeout!r}: give the switch's timeout in whole seconds, {TIMEOUT_MIN} to "
                f"{TIMEOUT_MAX}"]
    proof = context.get("proof_seconds")
    if proof is None:
        # Before the baseline the proof's duration is unknown: the switch must at least outlast a reconnection.
        need, why = int(margin) + TIMEOUT_MIN, f"the reconnect margin ({int(margin)} s) + {TIMEOUT_MIN} s"
    else:
        need = int(math.ceil(float(proof))) + int(margin)
        why = f"one proof ({float(proof):.1f} s, {context.get('proof_measured') or 'measured'}) + the reconnect margin " \
              f"({int(margin)} s)"
    if int(timeout) < need:
        return [f"fabric_change_timeout is {int(timeout)}: shorter than {why}; the switch would restore the wave while "
                f"its proof runs; give {need} or more"]
    return []


# Where a Proxmox VE node keeps the SDN files an sdn_apply's dry run reads and its snapshot holds.
SDN_FILE_DEFAULTS = {"running_config": "/etc/pve/sdn/.running-config", "config_dir": "/etc/pve/sdn",
                     "interfaces_sdn": "/etc/network/interfaces.d/sdn", "interfaces": "/etc/network/interfaces",
                     "frr_conf": "/etc/frr/frr.conf"}
SDN_FILES = tuple(SDN_FILE_DEFAULTS)


def _sdn_files_problems(files) -> list:
    if files is None:
        return []
    if not isinstance(files, Mapping):
        return [f"fabric_change_sdn_files is {files!r}: give a dict of any of {', '.join(SDN_FILES)} (absolute paths)"]
    return [f"fabric_change_sdn_files.{key} is {value!r}: "
            + (f"give one of {', '.join(SDN_FILES)}" if key not in SDN_FILES else "give an absolute path")
            for key, value in files.items()
            if key not in SDN_FILES or not isinstance(value, str) or not value.startswith("/")]


def fabric_change_sdn_files(files=None) -> dict:
    """A node's SDN files: Proxmox's own places, each overridden where `files` (the node's
    fabric_change_sdn_files) gives another."""
    problems = _sdn_files_problems(files)
    if problems:
        raise AnsibleFilterError(f"fabric_change_sdn_files: {problems[0]}")
    return {**SDN_FILE_DEFAULTS, **(files or {})}


def _other_problems(settings: Mapping) -> list:
    problems = _paths_problem("fabric_change_paths", settings.get("fabric_change_paths"))
    problems += _reload_problem("fabric_change_reload", settings.get("fabric_change_reload"))
    age = settings.get("fabric_change_baseline_max_age", 0)
    if not _is_int(age):
        problems.append(f"fabric_change_baseline_max_age is {age!r}: give whole seconds (0: always prove now)")
    if not settings.get("fabric_change_dir") or not isinstance(settings.get("fabric_change_dir"), str):
        problems.append(f"fabric_change_dir is {settings.get('fabric_change_dir')!r}: give the folder of the reports")
    lock = settings.get("fabric_change_sdn_lock")
    if not isinstance(lock, str) or not lock.startswith("/"):
        problems.append(f"fabric_change_sdn_lock is {lock!r}: give the absolute path of Proxmox's SDN lock "
                        "(/etc/pve/sdn/.lock)")
    problems += _sdn_files_problems(settings.get("fabric_change_sdn_files"))
    run_id = settings.get("fabric_change_run_id")
    if run_id is not None and (not isinstance(run_id, str) or not RUN_ID.match(run_id)):
        problems.append(f"fabric_change_run_id is {run_id!r}: give 1 to 64 letters, digits, _ . - (a letter or "
                        "digit first)")
    return problems


def fabric_change_refusal(settings, context=None) -> list:
    """What is wrong with the settings, one message each naming the setting, the value and the
    fix; empty when the change may go on. `context`: hosts (the group's hosts), tasks_file_exists,
    proof_seconds (the proof's duration, once known) and proof_measured (where it came from)."""
    if not isinstance(settings, Mapping):
        _fail("fabric_change_refusal", "_input", settings, "give the role's settings keyed by their names")
    context = context if isinstance(context, Mapping) else {}
    return (_host_problems(settings, context) + _kind_problems(settings, context) + _wave_problems(
        settings.get("fabric_change_waves")) + _timeout_problems(settings, context) + _other_problems(settings))


# --- the waves ---------------------------------------------------------------------------------

def _wave_size(wave, total: int) -> int:
    """A wave's count: a number as given, a percentage of every node (the canary included)
    rounded down as Ansible's serial does, never below one node."""
    if _is_int(wave):
        return int(wave)
    return max(1, int(float(PERCENT.match(wave)[1]) * total / 100))


def fabric_change_waves(hosts, canary=None, waves=None) -> list:
    """The waves in order: the canary alone, then the others in inventory order, each wave as
    large as its count or percentage; the last size repeats until every node had its wave."""
    name = "fabric_change_waves"
    if not isinstance(hosts, (list, tuple)) or not hosts:
        _fail(name, "_input", hosts, "give the hosts of fabric_change_hosts, in inventory order")
    hosts = list(dict.fromkeys(hosts))
    canary = hosts[0] if canary in (None, "") else canary
    if canary not in hosts:
        _fail(name, "canary", canary, f"give one of {', '.join(hosts)}")
    problems = _wave_problems(waves)
    if problems:
        raise AnsibleFilterError(f"{name}: {problems[0]}")
    rest = [host for host in hosts if host != canary]
    plan, index = [[canary]], 0
    while rest:
        size = _wave_size(waves[min(index, len(waves) - 1)], len(hosts))
        plan.append(rest[:size])
        rest, index = rest[size:], index + 1
    return plan


# --- the proof against the baseline -------------------------------------------------------------

def _proof(filter_name: str, argument: str, doc) -> Mapping:
    if not isinstance(doc, Mapping) or doc.get("format") != PROOF_FORMAT:
        _fail(filter_name, argument, doc if not isinstance(doc, Mapping) else doc.get("format"),
              "give the JSON report of the fabric proof (format deevnet.net.fabric_proof/1)")
    summarised = doc.get("passed") is not None or doc.get("unobserved") is not None
    for key in ("cells", "checks", "findings") + (("tenants",) if summarised else ()):
        if not isinstance(doc.get(key), list):
            _fail(filter_name, f"{argument}.{key}", doc.get(key), "give the whole report, as the proof kept it")
    return doc


def _cells(filter_name: str, argument: str, doc: Mapping) -> ProofCells:
    """Every cell of the proof: those listed, and those of its summaries (`passed`, `unobserved`)."""
    cells = [cell for cell in doc["cells"] if isinstance(cell, Mapping)]
    tenants = [tenant for tenant in doc.get("tenants") or [] if isinstance(tenant, Mapping)]
    try:
        return ProofCells({"cells": [dict(cell, tenant=cell.get("tenant"), node=cell.get("node"),
                                          column=cell.get("column")) for cell in cells],
                           "tenants": [{"name": tenant.get("name")} for tenant in tenants],
                           "passed": doc.get("passed"), "unobserved": doc.get("unobserved")})
    except CellsError as error:
        _fail(filter_name, f"{argument}.{error.where}", error.value,
              f"{error.expected}: give the whole report, as the proof kept it")


def _passed_before(cells_before: ProofCells):
    """The keys of the cells that passed in the baseline, listed ones first."""
    for key, cell in cells_before.listed.items():
        if cell.get("verdict") == "pass":
            yield key
    yield from cells_before.passed_keys()


def _labels(doc: Mapping) -> dict:
    return {column.get("id"): column.get("label") or column.get("id") for column in doc.get("columns") or []
            if isinstance(column, Mapping)}


def _finding_texts(doc: Mapping, ids) -> list:
    findings = {finding.get("id"): finding for finding in doc["findings"] if isinstance(finding, Mapping)}
    return [f"{findings[i].get('node') or 'fleet'} {findings[i].get('subject')}: {findings[i].get('text')}"
            for i in ids or [] if i in findings]


def _cell_entry(key: tuple, before, now, doc_now: Mapping, labels: Mapping) -> dict:
    tenant, node, column = key
    verdict_now = now.get("verdict") if now else "absent"
    return {"what": "cell", "node": node, "tenant": tenant, "column": column,
            "where": f"{tenant}@{node} {labels.get(column, column)}",
            "before": before.get("verdict") if before else "absent", "now": verdict_now,
            "findings": _finding_texts(doc_now, now.get("findings")) if now else []}


def _check_entry(check_id, before, now, doc_now: Mapping) -> dict:
    shown = now or before
    return {"what": "check", "node": None, "check": check_id, "where": f"check {shown.get('label') or check_id}",
            "before": "absent" if before is None else "ok" if before.get("ok") else "failed",
            "now": "absent" if now is None else "ok" if now.get("ok") else "failed",
            "findings": _finding_texts(doc_now, now.get("findings")) if now else []}


def _line(entry: Mapping) -> str:
    said = f"{entry['where']}: {entry['before']} -> {entry['now']}"
    return said + (f" ({'; '.join(entry['findings'])})" if entry["findings"] else "")


# The fleet checks an SDN apply fails by design between its waves: the cluster runs the committed
# version while the nodes of the later waves still apply the old one, and declare what they lack.
ROLLOUT_CHECKS = ("sdn_version", "sdn_drift")


def _pending_nodes(pending) -> set:
    if pending is None:
        return set()
    if not isinstance(pending, (list, tuple)) or not all(isinstance(node, str) and node for node in pending):
        _fail("fabric_change_compare", "pending", pending,
              "give the names of the nodes the rollout has not reached yet, as a list (empty when none)")
    return set(pending)


def _awaits_wave(entry: Mapping, doc_now: Mapping, pending: set, tenants_before: set) -> bool:
    """Whether an entry is the rollout's own: a rollout check whose findings all name nodes still
    waiting for their wave (sdn_drift's, besides, each one that only the node's reload explains:
    a device the new version adds, not one the node's own applied version has and lost), or a new
    tenant's newly failing cell on such a node or toward it."""
    if not pending:
        return False
    if entry["what"] == "check":
        if entry["check"] not in ROLLOUT_CHECKS:
            return False
        check = next((c for c in doc_now["checks"] if isinstance(c, Mapping) and c.get("id") == entry["check"]), None)
        if check is None:
            return False
        findings = {f.get("id"): f for f in doc_now["findings"] if isinstance(f, Mapping)}
        named = [findings.get(i, {}) for i in check.get("findings") or []]
        return bool(named) and all(
            finding.get("node") in pending and (entry["check"] != "sdn_drift" or finding.get("awaits_reload") is True)
            for finding in named)
    toward = str(entry["column"]).rpartition(":")[2]
    return entry["tenant"] not in tenants_before and (entry["node"] in pending or toward in pending)


def fabric_change_compare(proof, baseline, pending=None) -> dict:
    """The proof held against the baseline: a regression is a cell that passed and does not pass
    now (failed, unknown, not run, or gone) or a fleet check that held and does not now; newly
    failing is a cell or check that did not pass before either and fails now where it did not
    fail (or was absent) before. `equal` when neither exists. With `pending` (the nodes an SDN
    apply has not reached yet), what only their waiting explains is `expected`, not a regression."""
    name = "fabric_change_compare"
    now, before = _proof(name, "_input", proof), _proof(name, "baseline", baseline)
    waiting = _pending_nodes(pending)
    cells_now, cells_before = _cells(name, "_input", now), _cells(name, "baseline", before)
    labels = {**_labels(before), **_labels(now)}
    regressions, newly_failing = [], []
    for key in _passed_before(cells_before):
        current = cells_now.get(key)
        if current is None or current.get("verdict") != "pass":
            regressions.append(_cell_entry(key, cells_before.get(key), current, now, labels))
    for key, current in cells_now.listed.items():
        old = cells_before.get(key)
        if current.get("verdict") == "fail" and (old is None or old.get("verdict") not in ("pass", "fail")):
            newly_failing.append(_cell_entry(key, old, current, now, labels))
    checks_now = {check.get("id"): check for check in now["checks"] if isinstance(check, Mapping)}
    checks_before = {check.get("id"): check for check in before["checks"] if isinstance(check, Mapping)}
    for check_id, old in checks_before.items():
        current = checks_now.get(check_id)
        if old.get("ok") and not (current or {}).get("ok"):
            regressions.append(_check_entry(check_id, old, current, now))
    for check_id, current in checks_now.items():
        if not current.get("ok") and check_id not in checks_before:
            newly_failing.append(_check_entry(check_id, None, current, now))
    for entry in regressions + newly_failing:
        entry["text"] = _line(entry)
    tenants_before = {tenant for tenant, _node in cells_before.rows()}
    expected = [entry for entry in regressions + newly_failing if _awaits_wave(entry, now, waiting, tenants_before)]
    regressions = [entry for entry in regressions if entry not in expected]
    newly_failing = [entry for entry in newly_failing if entry not in expected]
    return {"regressions": regressions, "newly_failing": newly_failing, "expected": expected,
            "equal": not regressions and not newly_failing,
            "nodes": sorted({entry["node"] for entry in regressions + newly_failing if entry["node"]}),
            "lines": [entry["text"] for entry in regressions]
            + [f"newly failing: {entry['text']}" for entry in newly_failing],
            "expected_lines": [f"expected while {', '.join(sorted(waiting))} run the SDN version from before the "
                               f"commit: {entry['text']}" for entry in expected]}


# --- the interface reload's preview ---------------------------------------------------------------

STANZA = re.compile(r"^\s*(?:iface|auto|allow-\S+)\s+(.+?)\s*$")
# Keys of a stanza that name other interfaces: a reload of the stanza touches them too.
REFERENCES = ("bridge-ports", "bridge_ports", "bond-slaves", "bond_slaves", "vlan-raw-device", "vlan_raw_device",
              "vrf", "vxlan-physdev", "link-dev")


def _stanzas(text) -> dict:
    """Each interface's stanza text, by name: its `iface` lines and their options, and whether it
    is marked auto."""
    stanzas, current = {}, None
    for raw in str(text or "").splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        words = line.split()
        if words[0] == "iface" and len(words) > 1:
            current = words[1]
            stanzas.setdefault(current, []).append(" ".join(words))
        elif words[0] == "auto" or words[0].startswith("allow-"):
            for iface in words[1:]:
                stanzas.setdefault(iface, []).append(f"{words[0]} {iface}")
            current = None
        elif words[0] in ("source", "source-directory", "mapping"):
            current = None
        elif current is not None:
            stanzas[current].append(" ".join(words))
    return {iface: "\n".join(lines) for iface, lines in stanzas.items()}


def _referenced(stanza: str) -> set:
    names = set()
    for line in stanza.splitlines():
        key, rest = (line.split(" ", 1) + [""])[:2]
        if key in REFERENCES:
            names.update(word for word in rest.split() if word != "none")
    return names


def fabric_change_stanzas(before, after) -> list:
    """The interfaces a change of an interfaces file touches: each stanza added, removed or
    changed, and the interfaces those stanzas name (bridge ports, bond slaves, the VLAN's
    device, the VRF), before and after."""
    old, new = _stanzas(before), _stanzas(after)
    changed = {iface for iface in set(old) | set(new) if old.get(iface) != new.get(iface)}
    touched = set(changed)
    for iface in changed:
        touched |= _referenced(old.get(iface, "")) | _referenced(new.get(iface, ""))
    return sorted(touched)


# `ifreload -a --no-act` prints what it would do as ifupdown2's log lines: "DRY-RUN: <iface>: <what>"
# for each netlink or command step, "<iface>: <what>" for an interface's step, and the interfaces it
# takes down first (changed since the last apply, or gone from the files: stale entries).
DRY_RUN = re.compile(r"DRY-RUN:\s+([^\s:]+):\s+(.*)$")
IFACE_STEP = re.compile(r"^(?:info|warning|error|debug):\s+([^\s:]+):\s+(netlink: .*)$")
SCHEDULED = re.compile(r"scheduling (down|up) on interfaces:\s*\[(.*)\]")
COMMAND_DEVICES = re.compile(r"\b(?:dev|master|link del|link add dev|name)\s+([^\s:]+)")
NOT_INTERFACES = {"executing", "netlink", "reload", "dependency", "none"}


def _preview_touches(preview: str) -> dict:
    """Each interface the preview would act on, with the preview's lines about it."""
    touches = {}

    def add(iface, line):
        iface = iface.strip().strip("'\"")
        if IFNAME.match(iface) and iface not in NOT_INTERFACES:
            touches.setdefault(iface, []).append(line.strip())

    for line in preview.splitlines():
        scheduled = SCHEDULED.search(line)
        if scheduled:
            if scheduled[1] == "down":
                for iface in re.findall(r"['\"]([^'\"]+)['\"]", scheduled[2]):
                    add(iface, line)
            continue
        step = DRY_RUN.search(line) or (IFACE_STEP.match(line.strip()) if "DRY-RUN" not in line else None)
        if not step:
            continue
        add(step[1], line)
        for device in COMMAND_DEVICES.findall(step[2]):
            add(device, line)
    return touches


def fabric_change_stale_interfaces(preview, changed=None, node=None) -> dict:
    """What `ifreload -a --no-act` would touch outside the change: the interfaces its preview
    acts on (steps and downs) that are neither in `changed` (fabric_change_stanzas, or the
    interfaces the change names) nor the loopback. `refusal` names them, with their lines."""
    if isinstance(preview, (list, tuple)):
        preview = "\n".join(str(line) for line in preview)
    if not isinstance(preview, str):
        _fail("fabric_change_stale_interfaces", "_input", preview, "give the output of `ifreload -a --no-act`")
    if changed is not None and not isinstance(changed, (list, tuple)):
        _fail("fabric_change_stale_interfaces", "changed", changed, "give the list of interfaces the change touches")
    allowed = set(changed or []) | {"lo"}
    touches = _preview_touches(preview)
    outside = [{"interface": iface, "lines": lines} for iface, lines in sorted(touches.items()) if iface not in allowed]
    refusal = ""
    if outside:
        where = f" on {node}" if node else ""
        named = "; ".join(f"{entry['interface']} ({entry['lines'][0]})" for entry in outside)
        refusal = (f"the interface reload{where} would touch interfaces outside the change: {named}. They are stale "
                   "entries or drift: bring the files and the kernel to agree for them first (`ifquery --check -a` "
                   "shows where they differ), or name them in the change, then run the change again")
    return {"touched": sorted(touches), "outside": outside, "refusal": refusal}


# --- a step's results ---------------------------------------------------------------------------

def _step_result(node: str, text, step: str) -> dict:
    if text in (None, ""):
        return {"ok": False, "unreachable": True, "result": None,
                "msg": f"{node} wrote no result of the step {step}: not reached (cut off, or down)"}
    try:
        written = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        written = None
    if not isinstance(written, Mapping):
        return {"ok": False, "unreachable": False, "result": None, "msg": f"{node}: the result of {step} is unreadable"}
    failed = bool(written.get("failed"))
    msg = str(written.get("msg") or "")
    return {"ok": not failed, "unreachable": False, "result": written.get("result"),
            "msg": f"{node}: {msg}" if failed else msg}


def fabric_change_step_results(texts, nodes, step="") -> dict:
    """The results one step's nodes wrote (the text of each node's JSON file, by node), as
    `results` (by node: ok, unreachable, result, msg) and `problems` (a line per node that is not
    ok: it failed, naming why, or wrote nothing, so was not reached)."""
    if not isinstance(texts, Mapping):
        _fail("fabric_change_step_results", "_input", texts, "give the files' texts by node")
    if not isinstance(nodes, (list, tuple)):
        _fail("fabric_change_step_results", "nodes", nodes, "give the step's nodes")
    results = {node: _step_result(node, texts.get(node), step) for node in nodes}
    return {"results": results, "problems": [result["msg"] for result in results.values() if not result["ok"]]}


def fabric_change_changes(preview, nodes) -> dict:
    """What the dry run said would change on each of `nodes`, from the preview step's results
    (fabric_change_step_results' `results`)."""
    if not isinstance(preview, Mapping) or not isinstance(nodes, (list, tuple)):
        _fail("fabric_change_changes", "_input", preview, "give the preview step's results and the wave's nodes")
    changes = {}
    for node in nodes:
        result = (preview.get(node) or {}).get("result")
        changes[node] = str(result.get("changes")) if isinstance(result, Mapping) and result.get("changes") else \
            "no dry run of this node"
    return changes


def fabric_change_switch_state(step) -> str:
    """A switch as the status step read it after its timeout: who restored the node, or that the
    node is still not reached."""
    if not isinstance(step, Mapping) or step.get("unreachable"):
        return "not reached after the switch's timeout and 10 s: what its switch did is unknown; reach it by its console"
    if not step.get("ok"):
        return f"its switch could not be read: {step.get('msg')}"
    result = step.get("result") if isinstance(step.get("result"), Mapping) else {}
    switch = result.get("switch") if isinstance(result.get("switch"), Mapping) else {}
    state = switch.get("state") or "unknown"
    restored = ", ".join(str(path) for path in result.get("restored") or []) or "nothing"
    said = {"expired": f"expired: its own switch restored it ({restored})",
            "booted": f"booted: restored at boot ({restored})",
            "restored": f"restored ({restored})",
            "armed": f"still armed ({switch.get('remaining')} s left): reached again before its switch fired",
            "confirmed": "confirmed: the change was kept"}
    return said.get(state, f"{state}")


# --- the report --------------------------------------------------------------------------------

def _seconds(value) -> float:
    try:
        return round(float(value), 1)
    except (TypeError, ValueError):
        return 0.0


def _wave_entry(index: int, wave: Mapping) -> dict:
    given = wave.get("times") or {}
    times = {key: _seconds(given.get(key)) for key in ("arm", "apply", "proof", "confirm", "restore", "restore_proof")}
    overhead = round(sum(value for key, value in times.items() if key != "apply"), 1)
    return {"wave": index, "nodes": list(wave.get("nodes") or []), "outcome": wave.get("outcome") or "not_run",
            "changes": dict(wave.get("changes") or {}), "proof_diff": list(wave.get("proof_diff") or []),
            "regressions": list(wave.get("regressions") or []), "expected": list(wave.get("expected") or []),
            "restore": wave.get("restore"),
            "cut_off": dict(wave.get("cut_off") or {}), "times": dict(times, overhead=overhead),
            "cause": wave.get("cause")}


def fabric_change_report(run) -> dict:
    """The report of the whole change (format deevnet.net.fabric_change/1) from what the run
    gathered: run_id, kind, hosts, baseline, refusals, waves (each nodes, outcome, changes,
    proof_diff, regressions, expected, restore, cut_off, times, cause), locks. `outcome` is refused,
    rolled_back, cut_off, failed or changed; `failed` unless every wave was confirmed."""
    if not isinstance(run, Mapping):
        _fail("fabric_change_report", "_input", run, "give the run's gathered results as a dict")
    waves = [_wave_entry(index, wave) for index, wave in enumerate(run.get("waves") or []) if isinstance(wave, Mapping)]
    refusals = list(run.get("refusals") or [])
    outcomes = [wave["outcome"] for wave in waves]
    if refusals:
        outcome = "refused"
    elif "cut_off" in outcomes:
        outcome = "cut_off"
    elif "rolled_back" in outcomes:
        outcome = "rolled_back"
    elif any(o not in ("confirmed",) for o in outcomes) or not waves or run.get("failure"):
        outcome = "failed"
    else:
        outcome = "changed"
    planned = [list(wave) for wave in run.get("plan") or []]
    return {"format": FORMAT, "run_id": run.get("run_id"), "kind": run.get("kind"), "hosts": list(run.get("hosts") or []),
            "started": run.get("started"), "finished": run.get("finished"), "outcome": outcome,
            "failed": outcome != "changed", "refusals": refusals, "failure": run.get("failure"),
            "plan": planned, "baseline": dict(run.get("baseline") or {}), "waves": waves,
            "untouched": [host for wave in planned[len(waves):] for host in wave],
            "locks": dict(run.get("locks") or {})}


def fabric_change_summary(report) -> list:
    """The report for a terminal: a line for the outcome, then a block per wave (its nodes, what
    changed on each, the proof's diff, the times, the rollback and its cause)."""
    if not isinstance(report, Mapping) or report.get("format") != FORMAT:
        _fail("fabric_change_summary", "_input", report, "give the document fabric_change_report made")
    lines = [f"change {report.get('run_id')} ({report.get('kind')}): {report['outcome']}"]
    lines += [f"refused: {text}" for text in report.get("refusals") or []]
    if report.get("failure"):
        lines.append(f"failed: {report['failure']}")
    baseline = report.get("baseline") or {}
    if baseline:
        lines.append(f"baseline: {baseline.get('source')} ({_seconds(baseline.get('seconds'))} s)")
    for wave in report.get("waves") or []:
        times = wave["times"]
        lines.append(f"wave {wave['wave']} {', '.join(wave['nodes'])}: {wave['outcome']} (apply {times['apply']} s, "
                     f"proof {times['proof']} s, overhead {times['overhead']} s)")
        for node, change in wave["changes"].items():
            lines.append(f"  {node}: {change}")
        lines += [f"  proof: {line}" for line in wave["proof_diff"]]
        lines += [f"  regression: {entry.get('text', entry) if isinstance(entry, Mapping) else entry}"
                  for entry in wave["regressions"]]
        lines += [f"  expected: {line}" for line in wave["expected"]]
        for node, state in wave["cut_off"].items():
            lines.append(f"  cut off: {node}: {state}")
        if wave.get("cause"):
            lines.append(f"  cause: {wave['cause']}")
        if wave.get("restore"):
            lines.append(f"  restore: {wave['restore']}")
    if report.get("untouched"):
        lines.append(f"never touched: {', '.join(report['untouched'])}")
    return lines


class FilterModule:
    """deevnet.net.fabric_change_refusal, fabric_change_waves, fabric_change_compare,
    fabric_change_stanzas, fabric_change_stale_interfaces, fabric_change_step_results,
    fabric_change_changes, fabric_change_switch_state, fabric_change_report and
    fabric_change_summary."""

    def filters(self):
        return {"fabric_change_refusal": fabric_change_refusal, "fabric_change_waves": fabric_change_waves,
                "fabric_change_compare": fabric_change_compare, "fabric_change_stanzas": fabric_change_stanzas,
                "fabric_change_stale_interfaces": fabric_change_stale_interfaces,
                "fabric_change_step_results": fabric_change_step_results, "fabric_change_changes": fabric_change_changes,
                "fabric_change_switch_state": fabric_change_switch_state,
                "fabric_change_sdn_files": fabric_change_sdn_files,
                "fabric_change_report": fabric_change_report, "fabric_change_summary": fabric_change_summary}
