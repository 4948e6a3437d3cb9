#!/usr/bin/env python3
"""The fabric proof's report at 100 tenants x 10 nodes (BENCHMARKS.md section 8): how large the
document and each rendering of it are, and how long each renderer takes. No host and no
Ansible: the filters of collection/plugins/filter/fleet_report.py, loaded by their path, render
a synthetic document.

The document: every tenant on every node; its columns the 6 classes (internet, dns, ntp,
management, private ranges, one other tenant) and the peer, peer DF and return columns of each
node; every cell passes but a few failures with a finding and a few undecided cells, and the
last node is not reached (its cells not run). The diff compares it with an earlier document
whose failures were elsewhere.
"""
from __future__ import annotations

import importlib.util
import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TITLE = "## 8. The fabric proof's report at 100 tenants x 10 nodes"
FILTERS = ROOT / "collection" / "plugins" / "filter" / "fleet_report.py"
# The bound tests/ansible/test_fleet_report.py holds the 100 x 10 page to, without the document
# it embeds (about 32 bytes a cell: the picture does not grow with the tenants).
PAGE_BOUND = 1_500_000
CLASSES = (("internet", "internet", "reply"), ("dns", "dns", "reply"), ("ntp", "ntp", "reply"),
           ("management", "mgmt", "blocked"), ("private", "private", "blocked"))
PER_NODE = (("peer", "peer", "{node}", "reply"), ("peer-df", "peer_df", "{node} DF", "reply"),
            ("return", "return", "via {node}", "reply"))


def load_filters():
    spec = importlib.util.spec_from_file_location("fleet_report", FILTERS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _columns(tenants: list, nodes: list) -> list:
    """The 6 classes (the other tenant is the first one), then peer, peer DF and return per node."""
    columns = [{"id": kind, "label": label, "kind": kind, "node": None, "tenant": None, "expect": expect}
               for kind, label, expect in CLASSES]
    columns.append({"id": f"tenant:{tenants[0]}", "label": tenants[0], "kind": "tenant", "node": None,
                    "tenant": tenants[0], "expect": "blocked"})
    columns += [{"id": f"{prefix}:{node}", "label": label.format(node=node), "kind": kind, "node": node,
                 "tenant": None, "expect": expect} for node in nodes for prefix, kind, label, expect in PER_NODE]
    return columns


def _cell(tenant: str, node: str, column: dict, verdict: str, findings: list) -> dict:
    expect = column["expect"]
    seen = {"pass": expect, "fail": "blocked" if expect == "reply" else "reply"}.get(verdict, verdict)
    return {
        "tenant": tenant, "node": node, "column": column["id"], "expect": expect, "target": "203.0.113.8",
        "prediction": {"verdict": expect, "dev": "nic5", "nat": True, "fall_through": False,
                       "text": f"203.0.113.8 in vrf_{tenant}: dev nic5 (table 1001), SNAT matches"},
        "observation": {"verdict": seen, "text": f"3/3 probes {seen}, left by nic5 translated"},
        "verdict": verdict, "findings": findings,
    }


def _verdict(index: int, node: str, column: dict, unreached: str, failing: int) -> tuple:
    """The synthetic verdict of a cell, and its findings: a fail every `failing` tenants on hv02's
    internet, an undecided dns on hv03 every 50, nothing run on the unreached node."""
    if node == unreached:
        return "not_run", []
    if node == "hv02" and column["kind"] == "internet" and index % failing == 0:
        return "fail", ["F1"]
    if node == "hv03" and column["kind"] == "dns" and index % 50 == 1:
        return "unknown", []
    return "pass", []


def _findings_and_checks(unreached: str) -> tuple:
    findings = [
        {"id": "F1", "node": "hv02", "subject": "net.ipv4.conf.nic5.forwarding",
         "text": "hv02 does not forward returns arriving on nic5 (forwarding 0)",
         "fix": "set net.ipv4.conf.nic5.forwarding=1 (the role's sysctl_forwarding)"},
        {"id": "F2", "node": None, "subject": "nodes_reached", "text": f"{unreached} was not reached: ssh timed out",
         "fix": f"bring {unreached} back, or leave it out of the run's hosts"},
    ]
    checks = [{"id": check, "label": label, "ok": True, "text": "all agree", "findings": []}
              for check, label in (("sdn_version", "one SDN version"), ("vtep_mesh", "VTEP mesh"),
                                   ("exit_nodes", "exit nodes"))]
    checks.append({"id": "nodes_reached", "label": "nodes reached", "ok": False, "text": findings[1]["text"],
                   "findings": ["F2"]})
    return findings, checks


def synthetic_document(tenant_count: int = 100, node_count: int = 10, failing: int = 25) -> dict:
    """A document of the format deevnet.net.fabric_proof/1 as the reconcile filter makes it."""
    tenants = [f"t{index:03d}" for index in range(tenant_count)]
    nodes = [f"hv{index + 1:02d}" for index in range(node_count)]
    unreached = nodes[-1]
    columns = _columns(tenants, nodes)
    cells = []
    for index, tenant in enumerate(tenants):
        for node in nodes:
            for column in columns:
                if column["node"] == node or column["tenant"] == tenant:
                    continue  # a node's own peer columns, a tenant and itself: no cell
                cells.append(_cell(tenant, node, column, *_verdict(index, node, column, unreached, failing)))
    findings, checks = _findings_and_checks(unreached)
    verdicts = [cell["verdict"] for cell in cells]
    return {
        "format": "deevnet.net.fabric_proof/1", "generated": "2026-12-06T10:00:00Z",
        "nodes": [{"name": node, "exit": index < 2, "vtep": f"198.51.100.{131 + index}", "sdn_version": 7,
                   "uplinks": ["nic5"] if index < 2 else [], "management": "vmbr0", "reached": node != unreached}
                  for index, node in enumerate(nodes)],
        "tenants": [{"name": tenant, "vrf": f"vrf_{tenant}", "subnets": [f"10.{index // 250}.{index % 250}.0/24"]}
                    for index, tenant in enumerate(tenants)],
        "columns": [{key: value for key, value in column.items() if key != "expect"} for column in columns],
        "cells": cells, "findings": findings, "checks": checks,
        "qinq": {"hosts": nodes[:3], "rows": [
            {"sender": sender, "receiver": receiver, "vlan": 201, "verdict": "both_tags", "ok": True, "message": ""}
            for sender in nodes[:3] for receiver in nodes[:3] if sender != receiver]},
        "summary": {"cells": len(cells), "passed": verdicts.count("pass"), "failed": verdicts.count("fail"),
                    "unknown": verdicts.count("unknown"), "not_run": verdicts.count("not_run"),
                    "checks_failed": 1, "findings": len(findings)},
    }


def _size(count: int) -> str:
    return f"{count / 1e6:.2f} MB" if count >= 1e6 else f"{count / 1e3:.1f} KB"


def measure(rounds: int) -> dict:
    """Each renderer's output size and render times over `rounds` renders of the document."""
    filters = load_filters()
    doc, earlier = synthetic_document(), synthetic_document(failing=20)
    renders = {
        "fleet_report_matrix": lambda: "\n".join(filters.fleet_report_matrix(doc)),
        "fleet_report_diff": lambda: "\n".join(filters.fleet_report_diff(doc, earlier)),
        "fleet_report_junit": lambda: filters.fleet_report_junit(doc),
        "fleet_report_html": lambda: filters.fleet_report_html(doc),
    }
    results = {"document": {"size": len(json.dumps(doc, separators=(",", ":")).encode()), "cells": len(doc["cells"]),
                            "columns": len(doc["columns"])}}
    for name, render in renders.items():
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            output = render()
            times.append(time.perf_counter() - start)
        results[name] = {"size": len(output.encode()), "times": times}
    page = renders["fleet_report_html"]()
    embedded = page.find('<script type="application/json"')
    results["page"] = {"without_document": len((page[:embedded] if embedded != -1 else page).encode()),
                       "picture": len(page[page.index("<svg"):page.index("</svg>")].encode())}
    return results


def section(results: dict, command: str) -> str:
    document = results["document"]
    rounds = len(results["fleet_report_html"]["times"])
    lines = [
        TITLE, "",
        f"Measured {time.strftime('%Y-%m-%d')} by `{command}` (median of {rounds} renders; load average "
        f"{os.getloadavg()[0]:.1f} at the end). No host and no Ansible: the filters of "
        "`collection/plugins/filter/fleet_report.py` render a synthetic document of 100 tenants x 10 nodes, "
        f"{document['columns']} columns (6 classes, and peer, peer DF and return per node), "
        f"{document['cells']:,} cells, a few failing, one node not reached.",
        "",
        "| output | size | render, median (min-max) |",
        "|---|---|---|",
        f"| the document (compact JSON) | {_size(document['size'])} | made by `fleet_proof_reconcile` |",
    ]
    for name in ("fleet_report_matrix", "fleet_report_diff", "fleet_report_junit", "fleet_report_html"):
        times = results[name]["times"]
        lines.append(f"| `{name}` | {_size(results[name]['size'])} | {statistics.median(times) * 1000:.0f} ms "
                     f"({min(times) * 1000:.0f}-{max(times) * 1000:.0f}) |")
    page = results["page"]
    lines += ["", f"The HTML page embeds the document while it is under 1 MB; without it the page is "
              f"{_size(page['without_document'])} (the test's bound: {_size(PAGE_BOUND)}), of which the picture is "
              f"{_size(page['picture'])} (drawn per node and lane at this size); the matrix's passing cells carry "
              "no texts."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from sections import command_line
    command_line(__doc__, TITLE, measure, section, "fleet_report.py", rounds=5)
