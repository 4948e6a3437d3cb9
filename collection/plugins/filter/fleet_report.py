# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric proof's report rendered for people and for CI, as pure functions of one document
(format deevnet.net.fabric_proof/1, made by the filter deevnet.net.fleet_proof_reconcile): the
terminal matrix, what changed since an earlier report, JUnit XML, and one self-contained HTML
page with a picture of the fleet. Nothing here reads a host; every text of the document came
from one, so each renderer escapes it for its output.

The documentation of the filters is in fleet_report_matrix.yml, fleet_report_diff.yml,
fleet_report_junit.yml and fleet_report_html.yml, next to this file (ansible-doc reads it from
there: a filter file may hold several filters, so each has its own sidecar)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

try:  # as the collection's own filter (Ansible's collection loader)
    from ansible_collections.deevnet.net.plugins.filter.qinq_acceptance import qinq_acceptance_table
    from ansible_collections.deevnet.net.plugins.plugin_utils.fabric_proof_cells import CellsError, ProofCells
except ImportError:  # this file loaded by its path (the bench): the files of the collection beside it
    import importlib.util

    def _beside(path: str, name: str):
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, path))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    qinq_acceptance_table = _beside("filter/qinq_acceptance.py", "deevnet_net_qinq_acceptance").qinq_acceptance_table
    _cells_module = _beside("plugin_utils/fabric_proof_cells.py", "deevnet_net_fabric_proof_cells")
    CellsError, ProofCells = _cells_module.CellsError, _cells_module.ProofCells

FORMAT = "deevnet.net.fabric_proof/1"
FIX = "give the document the filter deevnet.net.fleet_proof_reconcile made"
VERDICTS = ("pass", "fail", "unknown", "not_run")
# Where several cells make one mark of the picture, the mark shows the worst of them: a failure
# must never hide behind passes, and an undecided or unreached cell is not a pass either.
RANK = {"pass": 0, "not_run": 1, "unknown": 2, "fail": 3}
# A cell in the terminal matrix; a failed cell is FAIL with its findings' ids.
MARKS = {"pass": "ok", "unknown": "?", "not_run": "n/r"}
NO_CELL = "-"
CORNER = "tenant@node"
# Beyond this many cells, the terminal matrix shows only the rows and columns with a cell not
# passed (at 500 tenants x 32 nodes every cell would be 16,000 lines of 600 columns).
TERMINAL_CELLS = 200_000
FIRST_RUN = "no earlier report to compare with: this is the first"

# The keys every item of the document's lists has, and those of them that are lists.
ITEM_KEYS = {
    "nodes": ("name", "exit", "uplinks", "management", "reached"),
    "tenants": ("name",),
    "columns": ("id", "label", "kind", "node"),
    "cells": ("tenant", "node", "column", "verdict", "findings"),
    "findings": ("id", "node", "subject", "text", "fix"),
    "checks": ("id", "label", "ok", "text", "findings"),
}
ITEM_LISTS = {"nodes": ("uplinks",), "cells": ("findings",), "checks": ("findings",)}
# The names and ids the document refers to each other by: text, so they can be looked up.
ITEM_NAMES = {"nodes": ("name",), "tenants": ("name",), "columns": ("id",), "cells": ("tenant", "node", "column"),
              "findings": ("id",)}
# What each filter reads of the document.
MATRIX_KEYS = ("tenants", "nodes", "columns", "cells", "findings", "checks", "qinq")
DIFF_KEYS = ("generated", "columns", "cells", "findings", "checks")
JUNIT_KEYS = ("generated",) + MATRIX_KEYS
HTML_KEYS = JUNIT_KEYS


# --- the document, checked --------------------------------------------------------------------

def _shown(value) -> str:
    """A value in an error message, cut short: it came from a host and may be long."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _wrong(filter_name: str, where: str, value, expected: str) -> AnsibleFilterError:
    return AnsibleFilterError(f"{filter_name}: {where} is {_shown(value)}, {expected}; {FIX}")


def _missing(filter_name: str, where: str) -> AnsibleFilterError:
    return AnsibleFilterError(f"{filter_name}: {where} is missing; {FIX}")


def _check_items(doc: Mapping, key: str, filter_name: str, argument: str) -> None:
    items = doc[key]
    if not isinstance(items, list):
        raise _wrong(filter_name, f"{argument}.{key}", items, "not a list")
    for index, item in enumerate(items):
        where = f"{argument}.{key}[{index}]"
        if not isinstance(item, Mapping):
            raise _wrong(filter_name, where, item, "not a dict")
        for field in ITEM_KEYS[key]:
            if field not in item:
                raise _missing(filter_name, f"{where}.{field}")
        for field in ITEM_LISTS.get(key, ()):
            if not isinstance(item[field], list):
                raise _wrong(filter_name, f"{where}.{field}", item[field], "not a list")
        for field in ITEM_NAMES.get(key, ()):
            if not isinstance(item[field], str) or not item[field]:
                raise _wrong(filter_name, f"{where}.{field}", item[field], "not a name")


def _check_qinq(qinq, filter_name: str, argument: str) -> None:
    if qinq is None:
        return
    if not isinstance(qinq, Mapping):
        raise _wrong(filter_name, f"{argument}.qinq", qinq, "neither null nor a dict of hosts and rows")
    for field in ("hosts", "rows"):
        if field not in qinq:
            raise _missing(filter_name, f"{argument}.qinq.{field}")


def _check_cells(doc: Mapping, keys: tuple, filter_name: str, argument: str) -> None:
    """Each cell's verdict is one the renderers know, and what it names is in the document."""
    known = {
        "column": {column["id"] for column in doc["columns"]},
        "tenant": {tenant["name"] for tenant in doc["tenants"]} if "tenants" in keys else None,
        "node": {node["name"] for node in doc["nodes"]} if "nodes" in keys else None,
    }
    findings = {finding["id"] for finding in doc["findings"]}
    for index, cell in enumerate(doc["cells"]):
        where = f"{argument}.cells[{index}]"
        if not isinstance(cell["verdict"], str) or cell["verdict"] not in VERDICTS:
            raise _wrong(filter_name, f"{where}.verdict", cell["verdict"], f"not one of {', '.join(VERDICTS)}")
        for field, names in known.items():
            if names is not None and cell[field] not in names:
                raise _wrong(filter_name, f"{where}.{field}", cell[field], f"which {argument}.{field}s does not hold")
        _check_finding_ids(cell["findings"], findings, f"{where}.findings", filter_name, argument)


def _check_finding_ids(ids: list, findings: set, where: str, filter_name: str, argument: str) -> None:
    for finding in ids:
        if not isinstance(finding, str) or finding not in findings:
            raise _wrong(filter_name, where, finding, f"an id {argument}.findings does not hold")


def _check_references(doc: Mapping, keys: tuple, filter_name: str, argument: str) -> None:
    ids = Counter(finding["id"] for finding in doc["findings"])
    doubled = sorted(finding for finding, count in ids.items() if count > 1)
    if doubled:
        raise _wrong(filter_name, f"{argument}.findings", doubled, "ids held twice (each is an HTML anchor)")
    _check_cells(doc, keys, filter_name, argument)
    for index, check in enumerate(doc["checks"]):
        if not isinstance(check["ok"], bool):
            raise _wrong(filter_name, f"{argument}.checks[{index}].ok", check["ok"], "not true or false")
        _check_finding_ids(check["findings"], set(ids), f"{argument}.checks[{index}].findings", filter_name, argument)


def _check_document(doc, keys: tuple, filter_name: str, argument: str = "doc") -> None:
    """The document is the reconcile filter's, with every key `keys` names; else an error that
    names the filter, the key, its value and the fix."""
    if not isinstance(doc, Mapping):
        raise _wrong(filter_name, argument, doc, f"not the report document (a dict of format {FORMAT})")
    if doc.get("format") != FORMAT:
        raise _wrong(filter_name, f"{argument}.format", doc.get("format"), f"not {FORMAT!r}")
    for key in keys:
        if key not in doc:
            raise _missing(filter_name, f"{argument}.{key}")
        if key in ITEM_KEYS:
            _check_items(doc, key, filter_name, argument)
    if "qinq" in keys:
        _check_qinq(doc["qinq"], filter_name, argument)
    _check_references(doc, keys, filter_name, argument)


def _proof_cells(doc: Mapping, keys: tuple, filter_name: str, argument: str) -> ProofCells:
    """Every cell of the checked document, its summaries (`passed`, `unobserved`) read too: each
    node and column they name is in the document, each index one of its tenants."""
    try:
        cells = ProofCells(doc)
    except CellsError as error:
        raise _wrong(filter_name, f"{argument}.{error.where}", error.value, error.expected) from None
    columns = {column["id"] for column in doc["columns"]}
    nodes = {node["name"] for node in doc["nodes"]} if "nodes" in keys else None
    for verdict, node, column, _tenants in cells.summarised():
        if column not in columns or (nodes is not None and node not in nodes):
            summary = "passed" if verdict == "pass" else "unobserved"
            raise _wrong(filter_name, f"{argument}.{summary}.{node}", column,
                         f"a node or column which {argument}.nodes or {argument}.columns does not hold")
    return cells


class _Report:
    """A checked document and the lookups every renderer needs."""

    def __init__(self, doc, keys: tuple, filter_name: str, argument: str = "doc"):
        _check_document(doc, keys, filter_name, argument)
        self.doc = doc
        self.filter_name = filter_name
        self.columns = {column["id"]: column for column in doc["columns"]}
        self.findings = {finding["id"]: finding for finding in doc["findings"]}
        self.cells = _proof_cells(doc, keys, filter_name, argument)

    def rows(self) -> list:
        """(tenant, node) of each row, in the order of tenants then nodes: those with a cell."""
        present = self.cells.rows()
        return [(tenant["name"], node["name"]) for tenant in self.doc["tenants"] for node in self.doc["nodes"]
                if (tenant["name"], node["name"]) in present]

    def where(self, cell: Mapping) -> str:
        """The cell as a person finds it in the matrix: its row and its column's label."""
        return f"{_line(cell['tenant'])}@{_line(cell['node'])} {_line(self.columns[cell['column']]['label'])}"

    def findings_of(self, cell: Mapping) -> list:
        return [self.findings[finding] for finding in cell["findings"]]


def _line(text) -> str:
    """A host's text on one line: a newline in it would break the line-per-item outputs."""
    return " ".join(str(text if text is not None else "").split())


def _finding_said(finding: Mapping, with_id: bool = True) -> str:
    """`F3 hv02 net.ipv4.conf.nic5.forwarding: text`: the id, the node (none for a fleet-wide
    finding) and the subject, then the text."""
    parts = (finding["id"] if with_id else None, finding["node"], finding["subject"])
    where = " ".join(_line(part) for part in parts if part not in (None, ""))
    return f"{where}: {_line(finding['text'])}" if where else _line(finding["text"])


def _finding_line(finding: Mapping) -> str:
    fix = _line(finding["fix"])
    return _finding_said(finding) + (f"; fix: {fix}" if fix else "")


def _said(cell: Mapping) -> str:
    """What the prediction and the observation of a cell said, where the document has them."""
    parts = []
    for name in ("prediction", "observation"):
        said = cell.get(name)
        if isinstance(said, Mapping) and (said.get("text") or said.get("verdict")):
            parts.append(f"{name}: {_line(said.get('text') or said.get('verdict'))}")
    return "; ".join(parts)


def _tally(report: "_Report") -> dict:
    """The counts of the summary, from the document's cells (so they agree with what is shown)."""
    doc, verdicts = report.doc, report.cells.verdicts()
    return {"cells": len(report.cells), **{verdict: verdicts[verdict] for verdict in VERDICTS},
            "checks_failed": sum(1 for check in doc["checks"] if not check["ok"]), "findings": len(doc["findings"])}


def _summary_line(report: "_Report") -> str:
    tally = _tally(report)
    return (f"{tally['cells']} cells: {tally['pass']} passed, {tally['fail']} failed, {tally['unknown']} unknown, "
            f"{tally['not_run']} not run; {tally['checks_failed']} fleet checks failed; {tally['findings']} findings")


# --- the terminal matrix ----------------------------------------------------------------------

def _matrix_mark(cell) -> str:
    if cell is None:
        return NO_CELL
    if cell["verdict"] == "fail":
        return " ".join(["FAIL", ",".join(str(finding) for finding in cell["findings"])]).rstrip()
    return MARKS[cell["verdict"]]


def _aligned(grid: list) -> list:
    widths = [max(len(line[column]) for line in grid) for column in range(len(grid[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in grid]


def _qinq_lines(report: _Report) -> list:
    """The QinQ acceptance matrix as the playbook deevnet.net.qinq_acceptance prints it."""
    qinq = report.doc["qinq"]
    if qinq is None:
        return []
    try:
        return qinq_acceptance_table(qinq["rows"], qinq["hosts"])
    except AnsibleFilterError as error:
        raise AnsibleFilterError(f"{report.filter_name}: doc.qinq: {error}; {FIX}") from None


def fleet_report_matrix(doc) -> list:
    """The matrix as text lines: a header of column labels, a line per row `tenant@node` with a
    cell per column (aligned), each failed fleet check, each finding with its fix, the QinQ
    matrix when the document holds one, and the summary."""
    report = _Report(doc, MATRIX_KEYS, "fleet_report_matrix")
    columns, rows, folded = doc["columns"], report.rows(), []
    if len(rows) * len(columns) > TERMINAL_CELLS:
        # A large fleet: the rows and columns with a cell not passed; the others counted.
        listed = [cell for cell in report.cells.listed.values() if cell["verdict"] != "pass"]
        keep_rows = {(cell["tenant"], cell["node"]) for cell in listed}
        keep_columns = {cell["column"] for cell in listed}
        folded = [f"{len(rows) - len(keep_rows):,} more rows of {len(columns):,} columns: every cell passed",
                  f"{len(columns) - len(keep_columns):,} more columns: every cell in them passed"]
        rows = [row for row in rows if row in keep_rows]
        columns = [column for column in columns if column["id"] in keep_columns]
    grid = [[CORNER] + [_line(column["label"]) for column in columns]]
    for tenant, node in rows:
        grid.append([f"{_line(tenant)}@{_line(node)}"] +
                    [_matrix_mark(report.cells.get((tenant, node, column["id"]))) for column in columns])
    lines = _aligned(grid) + folded
    lines += [f"check {_line(check['label'])}: {_line(check['text'])}" for check in doc["checks"] if not check["ok"]]
    lines += [_finding_line(finding) for finding in doc["findings"]]
    qinq = _qinq_lines(report)
    if qinq:
        lines += ["qinq acceptance:"] + qinq
    lines.append(_summary_line(report))
    return lines


# --- what changed since an earlier report -----------------------------------------------------

def _finding_key(finding: Mapping) -> tuple:
    """A finding as it is the same from one run to the next: ids are numbered anew each run."""
    return (_line(finding["node"]), _line(finding["subject"]), _line(finding["text"]))


def _state(report: _Report, cell: Mapping) -> tuple:
    return cell["verdict"], frozenset(_finding_key(finding) for finding in report.findings_of(cell))


def _findings_change(now: _Report, cell: Mapping, before: _Report, old) -> str:
    """The cell's findings now, and the earlier ones it no longer has, in parentheses."""
    current = now.findings_of(cell)
    keys = {_finding_key(finding) for finding in current}
    gone = [finding for finding in (before.findings_of(old) if old else []) if _finding_key(finding) not in keys]
    parts = [_finding_said(finding) for finding in current]
    parts += [f"was: {_finding_said(finding, with_id=False)}" for finding in gone]
    return f" ({'; '.join(parts)})" if parts else ""


def _in_order(now: _Report, before: _Report):
    """The key that sorts cells as the matrix shows them: by tenant, node and column, in the
    order of the document now, then of the earlier one for what only it holds."""
    orders = []
    for key, field in (("tenants", "name"), ("nodes", "name"), ("columns", "id")):
        order = {}
        for report in (now, before):
            for item in report.doc.get(key) or []:
                order.setdefault(item[field], len(order))
        orders.append(order)

    def position(key: tuple) -> tuple:
        return tuple(order.get(part, len(order)) for order, part in zip(orders, key)) + tuple(map(str, key))
    return position


def _cell_changes(now: _Report, before: _Report) -> list:
    """Each cell whose verdict or findings changed, added or removed. A summarised cell has no
    findings, so one summarised alike in both has no change: only the cells listed in either
    document and those new to a summary are compared."""
    compared = set(now.cells.listed)
    for verdict, node, column, tenants in now.cells.summarised():
        same = before.cells.summary_of(verdict, node, column)
        compared.update((tenant, node, column) for tenant in tenants if tenant not in same)
    gone = {key for key in before.cells.listed if key not in now.cells}
    for verdict, node, column, tenants in before.cells.summarised():
        same = now.cells.summary_of(verdict, node, column)
        gone.update((tenant, node, column) for tenant in tenants
                    if tenant not in same and (tenant, node, column) not in now.cells)
    position = _in_order(now, before)
    lines = []
    for key in sorted(compared, key=position):
        cell, old = now.cells.get(key), before.cells.get(key)
        if old is None:
            lines.append(f"{now.where(cell)}: added, {cell['verdict']}{_findings_change(now, cell, before, None)}")
        elif _state(now, cell) != _state(before, old):
            lines.append(f"{now.where(cell)}: {old['verdict']} -> {cell['verdict']}"
                         f"{_findings_change(now, cell, before, old)}")
    for key in sorted(gone, key=position):
        old = before.cells.get(key)
        lines.append(f"{before.where(old)}: removed (was {old['verdict']})")
    return lines


def _check_state(check) -> str:
    return "absent" if check is None else "ok" if check["ok"] else "failed"


def _check_changes(now: _Report, before: _Report) -> list:
    earlier = {check["id"]: check for check in before.doc["checks"]}
    current = {check["id"]: check for check in now.doc["checks"]}
    lines = []
    for check_id in list(current) + [check_id for check_id in earlier if check_id not in current]:
        check, old = current.get(check_id), earlier.get(check_id)
        if _check_state(check) != _check_state(old):
            shown = check or old
            text = f": {_line(check['text'])}" if check and not check["ok"] else ""
            lines.append(f"check {_line(shown['label'])}: {_check_state(old)} -> {_check_state(check)}{text}")
    return lines


def fleet_report_diff(doc, earlier) -> list:
    """What changed since `earlier`: each cell whose verdict or findings changed, cells added and
    removed, fleet checks whose outcome changed; one line when nothing did or there is no earlier
    report."""
    now = _Report(doc, DIFF_KEYS, "fleet_report_diff")
    if earlier is None or (isinstance(earlier, (Mapping, str, list)) and not earlier):
        return [FIRST_RUN]
    before = _Report(earlier, DIFF_KEYS, "fleet_report_diff", argument="earlier")
    lines = _cell_changes(now, before) + _check_changes(now, before)
    return lines or [f"no change since the report of {_line(earlier['generated'])}"]


# --- JUnit XML --------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all, not even escaped: a host's text may hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text) -> str:
    return _NOT_XML.sub("\ufffd", str(text if text is not None else ""))


def _testcase(suite: ET.Element, classname: str, name: str, outcome=None, message: str = "", body: str = ""):
    """A testcase, with its outcome (failure, error, skipped) when it did not pass."""
    case = ET.SubElement(suite, "testcase", classname=_xml(classname), name=_xml(name))
    if outcome:
        ET.SubElement(case, outcome, message=_xml(message)).text = _xml(body) or None


def _finding_body(findings: list) -> str:
    return "\n".join(_finding_line(finding) for finding in findings)


def _cell_case(report: _Report, suite: ET.Element, row: str, cell: Mapping) -> None:
    """A cell's testcase: a failure with its findings' texts and fixes, an error for a cell that
    could not be decided (someone must look), skipped for a node not reached."""
    label = report.columns[cell["column"]]["label"]
    verdict, said = cell["verdict"], _said(cell)
    if verdict == "fail":
        findings = report.findings_of(cell)
        message = "; ".join(_line(finding["text"]) for finding in findings) or said or "fail"
        _testcase(suite, row, label, "failure", message, "\n".join(filter(None, [_finding_body(findings), said])))
    elif verdict == "unknown":
        _testcase(suite, row, label, "error", f"undecided: {said or 'no verdict could be reached'}")
    elif verdict == "not_run":
        _testcase(suite, row, label, "skipped", f"not run: {_line(cell['node'])} was not reached")
    else:
        _testcase(suite, row, label)


def _counted(suite: ET.Element) -> ET.Element:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for outcome, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attribute, str(sum(1 for case in cases if case.find(outcome) is not None)))
    return suite


def _checks_suite(report: _Report) -> ET.Element:
    suite = ET.Element("testsuite", name="fleet")
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="generated",
                  value=_xml(report.doc["generated"]))
    for check in report.doc["checks"]:
        findings = [report.findings[finding] for finding in check["findings"]]
        if check["ok"]:
            _testcase(suite, "fleet", check["label"])
        else:
            _testcase(suite, "fleet", check["label"], "failure", _line(check["text"]), _finding_body(findings))
    return _counted(suite)


def _qinq_suite(report: _Report) -> list:
    """The QinQ acceptance matrix's rows, one testcase each, when the document holds them."""
    qinq = report.doc["qinq"]
    if qinq is None:
        return []
    _qinq_lines(report)  # the rows checked, the error naming this filter
    suite = ET.Element("testsuite", name="qinq")
    for row in qinq["rows"]:
        name = f"{row['sender']} -> {row['receiver']} VLAN {row['vlan']}"
        if row["ok"] is True:
            _testcase(suite, "qinq", name)
        else:
            _testcase(suite, "qinq", name, "failure", _line(row.get("message") or row.get("verdict")))
    return [_counted(suite)]


def fleet_report_junit(doc) -> str:
    """JUnit XML: a testsuite `fleet` of the fleet checks, one per row `tenant@node` with a
    testcase per cell, and one `qinq` when the document holds the QinQ matrix."""
    report = _Report(doc, JUNIT_KEYS, "fleet_report_junit")
    suites = [_checks_suite(report)]
    rows = report.rows()
    if len(rows) * len(doc["columns"]) > TERMINAL_CELLS:
        # A large fleet: a row whose every cell passed is one testcase of the suite `passed`.
        shown = {(cell["tenant"], cell["node"]) for cell in report.cells.listed.values() if cell["verdict"] != "pass"}
        counted = Counter((tenant, node) for tenant, node, _column in report.cells.keys())
        passed = ET.Element("testsuite", name="passed")
        for tenant, node in rows:
            if (tenant, node) not in shown:
                _testcase(passed, "passed", f"{tenant}@{node}: all {counted[(tenant, node)]} cells passed")
        rows = [row for row in rows if row in shown]
        suites.append(_counted(passed))
    for tenant, node in rows:
        row = f"{tenant}@{node}"
        suite = ET.Element("testsuite", name=_xml(row))
        for column in doc["columns"]:
            cell = report.cells.get((tenant, node, column["id"]))
            if cell is not None:
                _cell_case(report, suite, row, cell)
        suites.append(_counted(suite))
    suites += _qinq_suite(report)
    root = ET.Element("testsuites", name="deevnet.net.fabric_proof")
    root.extend(suites)
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(suite.get(attribute)) for suite in suites)))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- the HTML page: the picture ---------------------------------------------------------------

COLORS = {"pass": "#2e7d32", "fail": "#c62828", "not_run": "#9e9e9e", "unknown": "#f9a825"}
# The lanes of a node box, one per column kind, in this order; a kind not named here gets a
# lane after them, drawn inside the box only.
LANES = ("internet", "dns", "ntp", "private", "tenant", "management", "peer", "peer_df", "return")
LANE_LABELS = {"internet": "inet", "dns": "dns", "ntp": "ntp", "private": "priv", "tenant": "iso",
               "management": "mgmt", "peer": "peer", "peer_df": "DF", "return": "ret"}
# Lanes that leave by the uplink up to the core, down to the management side, or along an arc
# to another node (the dash pattern of each arc kind).
UP = ("internet", "dns", "ntp", "private")
DOWN = ("management",)
ARCS = {"peer": "", "peer_df": "6 3", "return": "2 3"}
# The geometry, in SVG user units (pixels at scale 1).
PAD = 8
LANE_W = 14  # between two lanes of a box
NAME_W = 92  # the tenants' names, in a box that draws a dot per tenant
NODE_GAP = 16
MIN_NODE_W = 150  # room for a node's head
LINE_H = 12
HEAD_LINES = 4  # name, role, VTEP, uplinks
LABELS_H = 32  # the lanes' labels, turned upright, under the head
ROW_H = 14
CORE_Y = 8
BAR_H = 26  # the core's and the management side's bars
RISE = 52  # from the core down to the boxes, where the uplinks' lanes run
ARC_BASE = 24
ARC_STEP = 12  # an arc's reach grows by this per node between its ends
# A box draws a dot per tenant and lane while no node holds more tenants and the fleet has no
# more nodes than these; a larger fleet gets one dot per node and lane (the worst verdict, the
# count of failing tenants under it), so the picture's size does not grow with the tenants.
DETAIL_TENANTS = 12
DETAIL_NODES = 6
TITLE_FINDINGS = 3


def _e(value) -> str:
    """A text of the document, escaped for HTML text and attribute values alike."""
    return html.escape(str(value if value is not None else ""), quote=True)


def _lanes(report: _Report) -> list:
    kinds = []
    for column in report.doc["columns"]:
        if str(column["kind"]) not in kinds:
            kinds.append(str(column["kind"]))
    return [kind for kind in LANES if kind in kinds] + [kind for kind in kinds if kind not in LANES]


class _Layout:
    """Where each part of the picture goes: the core on top, the node boxes in a row under it,
    the arcs between nodes under the boxes, the management side at the bottom."""

    def __init__(self, report: _Report):
        self.nodes = [node["name"] for node in report.doc["nodes"]]
        self.index = {name: index for index, name in enumerate(self.nodes)}
        self.tenants = {name: [] for name in self.nodes}
        for tenant, node in report.rows():
            self.tenants[node].append(tenant)
        most = max((len(tenants) for tenants in self.tenants.values()), default=0)
        self.detailed = most <= DETAIL_TENANTS and len(self.nodes) <= DETAIL_NODES
        self.lanes = _lanes(report)
        self.name_w = NAME_W if self.detailed else 0
        self.node_w = max(MIN_NODE_W, self.name_w + len(self.lanes) * LANE_W + 2 * PAD)
        self.node_y = CORE_Y + BAR_H + RISE
        self.node_h = HEAD_LINES * LINE_H + LABELS_H + ROW_H * (max(most, 1) if self.detailed else 2) + PAD
        self.arc_y = self.node_y + self.node_h
        self.management_y = self.arc_y + 0.75 * self.reach(len(self.nodes) - 1, True) + 2 * PAD
        self.width = 2 * PAD + len(self.nodes) * (self.node_w + NODE_GAP) - NODE_GAP
        self.height = self.management_y + BAR_H + PAD

    def node_x(self, index: int) -> int:
        return PAD + index * (self.node_w + NODE_GAP)

    def lane_x(self, index: int, kind: str) -> float:
        return self.node_x(index) + PAD + self.name_w + self.lanes.index(kind) * LANE_W + LANE_W / 2

    def row_y(self, row: int) -> float:
        return self.node_y + HEAD_LINES * LINE_H + LABELS_H + row * ROW_H + ROW_H / 2

    @staticmethod
    def reach(distance: int, backwards: bool) -> float:
        """How far down an arc's control points lie (the curve reaches 3/4 of it): farther for
        farther nodes, and a little farther from right to left, so a pair's two directions stay
        apart."""
        return ARC_BASE + ARC_STEP * max(distance, 0) + (ARC_STEP / 2 if backwards else 0)


class _Marked:
    """The cells of one mark of the picture: those the document lists, and how many of each
    verdict its summaries hold."""

    def __init__(self):
        self.listed, self.summarised = [], Counter()

    def verdicts(self) -> Counter:
        return Counter(cell["verdict"] for cell in self.listed) + self.summarised


def _groups(report: _Report, detailed: bool) -> tuple:
    """The cells of each mark of the picture: a dot per (node, tenant, kind) when the picture is
    detailed, a lane outside the box per (node, kind), an arc per (node, the column's node, kind).
    A summary's cells are counted at once per mark."""
    dots, lanes, arcs = {}, {}, {}

    def marks(node: str, column_id: str):
        column = report.columns[column_id]
        kind = str(column["kind"])
        found = [lanes.setdefault((node, kind), _Marked())]
        if kind in ARCS and isinstance(column["node"], str):
            found.append(arcs.setdefault((node, column["node"], kind), _Marked()))
        return kind, found
    for cell in report.cells.listed.values():
        kind, found = marks(cell["node"], cell["column"])
        if detailed:
            found.append(dots.setdefault((cell["node"], cell["tenant"], kind), _Marked()))
        for marked in found:
            marked.listed.append(cell)
    for verdict, node, column_id, tenants in report.cells.summarised():
        kind, found = marks(node, column_id)
        for marked in found:
            marked.summarised[verdict] += len(tenants)
        for tenant in tenants if detailed else ():
            dots.setdefault((node, tenant, kind), _Marked()).summarised[verdict] += 1
    return dots, lanes, arcs


def _worst(cells: _Marked) -> str:
    return max(cells.verdicts(), key=RANK.__getitem__)


def _failing_findings(report: _Report, cells: _Marked) -> list:
    """The findings of the failed cells, each once, in the cells' order."""
    seen = {}
    for cell in cells.listed:
        if cell["verdict"] == "fail":
            for finding in cell["findings"]:
                seen.setdefault(finding, report.findings[finding])
    return list(seen.values())


def _tooltip(report: _Report, label: str, cells: _Marked) -> str:
    counts = cells.verdicts()
    said = [f"{counts[verdict]} {verdict.replace('_', ' ')}" for verdict in VERDICTS if counts[verdict]]
    findings = _failing_findings(report, cells)
    lines = [f"{label}: {', '.join(said)}"] + [_finding_said(finding) for finding in findings[:TITLE_FINDINGS]]
    if len(findings) > TITLE_FINDINGS:
        lines.append(f"and {len(findings) - TITLE_FINDINGS} more findings")
    return "\n".join(lines)


def _attributes(attributes: Mapping) -> str:
    return " ".join(f'{name}="{_e(f"{value:g}" if isinstance(value, float) else value)}"'
                    for name, value in attributes.items())


def _svg_mark(report: _Report, tag: str, attributes: dict, label: str, cells: _Marked) -> tuple:
    """A shape coloured by the worst verdict of its cells, with a tooltip; a failing one is a
    link to its first finding. Returned with its rank, so failures are drawn last, on top."""
    verdict = _worst(cells)
    paint = {"fill": COLORS[verdict]} if tag == "circle" else {"stroke": COLORS[verdict], "fill": "none"}
    paint["class"] = f"v-{verdict}"
    shape = f"<{tag} {_attributes({**attributes, **paint})}><title>{_e(_tooltip(report, label, cells))}</title></{tag}>"
    findings = _failing_findings(report, cells)
    if verdict == "fail" and findings:
        shape = f'<a href="#{_e(findings[0]["id"])}">{shape}</a>'
    return RANK[verdict], shape


def _text(x: float, y: float, text, css: str = "", **attributes) -> str:
    more = {"class": css} if css else {}
    return f"<text {_attributes({'x': f'{x:g}', 'y': f'{y:g}', **more, **attributes})}>{_e(text)}</text>"


def _fit(text, width: float, char_w: float = 5.6) -> str:
    """A host's name cut to the room it has in the picture (its tooltip or table keeps it whole)."""
    text = _line(text)
    room = max(int(width // char_w), 2)
    return text if len(text) <= room else text[:room - 1] + "\u2026"


def _node_details(node: Mapping) -> list:
    """A node's role, VTEP, uplinks and management interface, a line each in its box."""
    role = ("exit" if node["exit"] else "member") + ("" if node["reached"] is not False else ", not reached")
    sdn = f" \u00b7 SDN {_line(node['sdn_version'])}" if node.get("sdn_version") is not None else ""
    uplinks = ", ".join(_line(uplink) for uplink in node["uplinks"]) or "none"
    return [f"{role}{sdn}", f"vtep {_line(node.get('vtep') or '?')}",
            f"uplink {uplinks} \u00b7 mgmt {_line(node['management'] or 'none')}"]


def _node_box(report: _Report, layout: _Layout, index: int, node: Mapping) -> list:
    """A node's box and head: its name (a link to its first finding when one names it), its
    role (an exit's top edge drawn thick), VTEP, uplinks, management interface, lanes' labels."""
    x, y, name = layout.node_x(index), layout.node_y, node["name"]
    own = [finding for finding in report.doc["findings"] if finding["node"] == name]
    css = "node" + ("" if node["reached"] is not False else " unreached") + (" faulty" if own else "")
    box = {"x": x, "y": y, "width": layout.node_w, "height": layout.node_h, "rx": 4, "class": css}
    details = _node_details(node)
    parts = [f"<rect {_attributes(box)}><title>{_e(chr(10).join([_line(name)] + details))}</title></rect>"]
    if node["exit"]:
        parts.append(f'<line {_attributes({"x1": x, "y1": y, "x2": x + layout.node_w, "y2": y, "class": "exit"})}/>')
    count = "" if layout.detailed else f" \u00b7 {len(layout.tenants[name])} tenants"
    head = _text(x + PAD, y + LINE_H, _fit(f"{_line(name)}{count}", layout.node_w - 2 * PAD, 6.4), "name")
    parts.append(f'<a href="#{_e(own[0]["id"])}">{head}</a>' if own else head)
    for line, said in enumerate(details):
        parts.append(_text(x + PAD, y + LINE_H * (line + 2), _fit(said, layout.node_w - 2 * PAD), "detail"))
    label_y = y + HEAD_LINES * LINE_H + LABELS_H - 2
    for kind in layout.lanes:
        label_x = layout.lane_x(index, kind) + 3  # the rotated text's middle on the lane
        parts.append(_text(label_x, label_y, _fit(LANE_LABELS.get(kind, kind), LABELS_H), "lane",
                           transform=f"rotate(-90 {label_x:g} {label_y:g})"))
    return parts


def _node_dots(report: _Report, layout: _Layout, index: int, groups: tuple) -> tuple:
    """The dots of a box, and its texts: a dot per tenant and lane with the tenants' names, or
    in a large fleet one per lane with the count of failing tenants under it."""
    dots, lanes, _arcs = groups
    name, x = layout.nodes[index], layout.node_x(index)
    texts, marks = [], []
    if layout.detailed:
        for row, tenant in enumerate(layout.tenants[name]):
            y = layout.row_y(row)
            texts.append(_text(x + PAD, y + 3, _fit(tenant, NAME_W - 4), "tenant"))
            marks += [_svg_mark(report, "circle", {"cx": layout.lane_x(index, kind), "cy": y, "r": 4},
                                f"{tenant}@{name} {kind}", dots[(name, tenant, kind)])
                      for kind in layout.lanes if (name, tenant, kind) in dots]
        return texts, marks
    for kind in layout.lanes:
        cells = lanes.get((name, kind))
        if not cells:
            continue
        lane_x = layout.lane_x(index, kind)
        marks.append(_svg_mark(report, "circle", {"cx": lane_x, "cy": layout.row_y(0), "r": 4},
                               f"{name} {kind}, all tenants", cells))
        failing = len({cell["tenant"] for cell in cells.listed if cell["verdict"] == "fail"})
        if failing:
            texts.append(_text(lane_x, layout.row_y(1) + 3, failing, "count"))
    return texts, marks


def _lane_marks(report: _Report, layout: _Layout, lanes: dict, exits: dict) -> list:
    """A line per node and lane that leaves the box: up by the uplink to the core (dashed for a
    member node, whose traffic rides the fabric to an exit), down to the management side."""
    marks = []
    for (node, kind), cells in lanes.items():
        x = layout.lane_x(layout.index[node], kind)
        if kind in UP:
            attributes = {"x1": x, "y1": layout.node_y, "x2": x, "y2": CORE_Y + BAR_H, "stroke-width": 3}
            if not exits[node]:
                attributes["stroke-dasharray"] = "4 3"
        elif kind in DOWN:
            attributes = {"x1": x, "y1": layout.node_y + layout.node_h, "x2": x, "y2": layout.management_y,
                          "stroke-width": 3}
        else:
            continue
        marks.append(_svg_mark(report, "line", attributes, f"{node} {kind}, all tenants", cells))
    return marks


def _arc_marks(report: _Report, layout: _Layout, arcs: dict) -> list:
    """An arc under the boxes per node, the node its column names, and kind (over all tenants),
    leaving just left of the lane and arriving just right of it."""
    marks = []
    for (node, target, kind), cells in arcs.items():
        if target not in layout.index or target == node:
            continue
        source, to = layout.index[node], layout.index[target]
        x1, x2, y = layout.lane_x(source, kind) - 2, layout.lane_x(to, kind) + 2, layout.arc_y
        reach = y + layout.reach(abs(source - to), source > to)
        attributes = {"d": f"M{x1:g},{y:g} C{x1:g},{reach:g} {x2:g},{reach:g} {x2:g},{y:g}", "stroke-width": 1.5}
        if ARCS[kind]:
            attributes["stroke-dasharray"] = ARCS[kind]
        marks.append(_svg_mark(report, "path", attributes, f"{node} -> {target} {kind}, all tenants", cells))
    return marks


def _bars(report: _Report, layout: _Layout) -> list:
    """The core at the top and the management side at the bottom, across the picture."""
    management = sorted({_line(node["management"]) for node in report.doc["nodes"] if node["management"]})
    width = layout.width - 2 * PAD
    parts = []
    for y, label in ((CORE_Y, "core \u00b7 internet, dns, ntp, private ranges"),
                     (layout.management_y, "management side" + (f" ({', '.join(management)})" if management else ""))):
        band = {"x": PAD, "y": y, "width": width, "height": BAR_H, "rx": 4, "class": "bar"}
        parts.append(f"<rect {_attributes(band)}/>")
        parts.append(_text(PAD * 2, y + BAR_H / 2 + 4, _fit(label, width - 2 * PAD), "bar"))
    return parts


def _picture(report: _Report, layout: _Layout, groups: tuple) -> str:
    """The fleet as inline SVG. The marks are sorted by their verdict's rank (a stable sort:
    the document's order otherwise), so a failure is never drawn under a pass."""
    if not layout.nodes:
        return "<p>The document names no node.</p>"
    exits = {node["name"]: bool(node["exit"]) for node in report.doc["nodes"]}
    shapes = _bars(report, layout)
    marks = _lane_marks(report, layout, groups[1], exits) + _arc_marks(report, layout, groups[2])
    for index, node in enumerate(report.doc["nodes"]):
        shapes += _node_box(report, layout, index, node)
        texts, dots = _node_dots(report, layout, index, groups)
        shapes += texts
        marks += dots
    marks.sort(key=lambda mark: mark[0])
    size = {"width": layout.width, "height": f"{layout.height:g}", "viewBox": f"0 0 {layout.width} {layout.height:g}"}
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="fleet" role="img" {_attributes(size)} '
            f'aria-label="the fleet: core, nodes and their tenants, management side">\n'
            + "\n".join(shapes + [shape for _order, shape in marks]) + "\n</svg>")


# --- the HTML page: the rest ------------------------------------------------------------------

# The page's one script, the filter by tenant and node: it hides what the filter leaves out, from
# the form or from the address's fragment (#tenant=NAME&node=NAME). An element with data-node is
# filtered by its node, one with data-tenant too by its tenant.
SCRIPT = """(function () {
  var form = document.getElementById("filter");
  function apply() {
    var tenant = form.elements.tenant.value.trim(), node = form.elements.node.value;
    document.querySelectorAll("[data-node]").forEach(function (element) {
      var own = element.getAttribute("data-tenant");
      element.hidden = (node !== "" && element.getAttribute("data-node") !== node)
        || (tenant !== "" && own !== null && own !== tenant);
    });
    document.getElementById("shown").textContent = tenant || node
      ? "showing " + [tenant && "tenant " + tenant, node && "node " + node].filter(Boolean).join(", ")
      : "showing every tenant and node";
  }
  var given = new URLSearchParams(location.hash.slice(1));
  form.elements.tenant.value = given.get("tenant") || "";
  form.elements.node.value = given.get("node") || "";
  form.addEventListener("input", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); apply(); });
  apply();
})();"""
# Nothing may be fetched, and only the page's own script runs (by its hash).
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-"
       + base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode() + "'")
# Beyond these, the page leaves out the matrix of every cell, the cells not passed after the first
# ones and the embedded document (each is in the JSON report): a large fleet's page stays small.
MATRIX_CELLS = 20_000
MAX_ISSUES = 2_000
EMBED_BYTES = 1_000_000
CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #212121; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #cfd8dc; }
.picture { overflow-x: auto; }
/* The matrix scrolls in its own box, under a header that stays: a fleet has a thousand rows. */
.matrix-box { overflow: auto; max-height: 80vh; border: 1px solid #cfd8dc; }
svg.fleet { max-width: 100%; height: auto; background: #fff; }
svg text { font-family: system-ui, sans-serif; fill: #263238; }
svg text.name { font-size: 11px; font-weight: bold; }
svg text.detail, svg text.tenant { font-size: 9px; }
svg text.lane { font-size: 8px; fill: #607d8b; }
svg text.bar { font-size: 11px; }
svg text.count { font-size: 9px; font-weight: bold; fill: #c62828; text-anchor: middle; }
svg rect.node { fill: #f5f7f8; stroke: #78909c; stroke-width: 1; }
svg rect.node.unreached { fill: #e0e0e0; stroke-dasharray: 4 3; }
svg rect.node.faulty { stroke: #c62828; stroke-width: 2; }
svg rect.bar { fill: #eceff1; stroke: #90a4ae; }
svg line.exit { stroke: #263238; stroke-width: 4; }
svg path.v-pass, svg line.v-pass { stroke-opacity: 0.5; }
svg path.v-fail { stroke-width: 2.5; }
svg a:hover > * { stroke-width: 5; }
table { border-collapse: collapse; }
table.grid td { width: 1.6em; height: 1.4em; padding: 0; text-align: center; font-weight: bold; }
table.grid th.to { writing-mode: vertical-rl; }
table.grid td.predicted { outline: 2px dashed #f9a825; outline-offset: -3px; }
.filter { position: sticky; top: 0; background: #fff; padding: 0.4em 0; z-index: 2; }
th, td { border: 1px solid #cfd8dc; padding: 1px 6px; font: 12px/1.3 ui-monospace, monospace; white-space: nowrap; }
thead th { position: sticky; top: 0; background: #eceff1; }
tbody th { text-align: left; }
.v-pass { background: #c8e6c9; } .v-fail { background: #ffcdd2; }
.v-unknown { background: #ffe082; } .v-not_run { background: #e0e0e0; } .none { color: #90a4ae; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: middle; margin: 0 0.2em 0 0.8em; }
li:target { background: #fff59d; }
pre { background: #f5f7f8; padding: 0.6em; overflow-x: auto; }
"""
LEGEND = ("Lanes: inet internet, dns, ntp, priv private ranges (up to the core, by the uplink), iso the other tenants "
          "(inside the node), mgmt management (down to the management side), peer, DF and ret the same tenant on "
          "another node, its designated forwarder and the return via it (arcs under the boxes: solid, dashed, dotted; "
          "an arc leaves just left of its lane and arrives just right of it). An exit node's top edge is thick; a "
          "member node's lanes to the core are dashed (its traffic rides the fabric to an exit). A mark shows the "
          "worst verdict of its cells; a red one links to its first finding, and each has a tooltip.")
MAX_CELLS_PER_FINDING = 12


def _legend(layout: _Layout) -> str:
    swatches = "".join(f'<span class="swatch" style="background:{COLORS[verdict]}"></span>{verdict.replace("_", " ")}'
                       for verdict in VERDICTS)
    grain = ("Each dot is one tenant's cells of a lane." if layout.detailed else
             f"More than {DETAIL_TENANTS} tenants on a node or {DETAIL_NODES} nodes: each dot is all of a node's "
             "tenants in a lane, with the count of failing tenants under it; the matrix below has every cell.")
    return f'<p class="legend">{swatches}</p>\n<p class="legend">{_e(LEGEND)} {_e(grain)}</p>'


def _table_cell(cell) -> str:
    if cell is None:
        return f'<td class="none">{NO_CELL}</td>'
    verdict, said = cell["verdict"], _said(cell)
    # Only a failed or undecided cell carries its texts: a large fleet's page stays small.
    title = f' title="{_e(said)}"' if said and verdict in ("fail", "unknown") else ""
    if verdict == "fail":
        return f'<td class="v-fail"{title}>FAIL {_finding_links(cell["findings"], ",")}</td>'
    return f'<td class="v-{verdict}"{title}>{MARKS[verdict]}</td>'


def _finding_links(ids: list, separator: str = ", ") -> str:
    return separator.join(f'<a href="#{_e(finding)}">{_e(finding)}</a>' for finding in ids)


def _row_attributes(tenant, node) -> str:
    return f' data-tenant="{_e(tenant)}" data-node="{_e(node)}"'


def _table(report: _Report) -> str:
    """The matrix of every cell, while the fleet is small enough for one table to read."""
    columns, rows = report.doc["columns"], report.rows()
    if len(rows) * len(columns) > MATRIX_CELLS:
        return (f"<p>{len(rows):,} rows of {len(columns):,} columns: more than the page shows as one table. "
                "The cells not passed are listed first above, the fleet by node below; every cell is in the JSON "
                "report, the JUnit XML and the terminal matrix.</p>")
    lines = ['<div class="matrix-box"><table class="matrix">', "<thead><tr><th>" + CORNER + "</th>" +
             "".join(f"<th>{_e(column['label'])}</th>" for column in columns) + "</tr></thead>", "<tbody>"]
    for tenant, node in rows:
        cells = "".join(_table_cell(report.cells.get((tenant, node, column["id"]))) for column in columns)
        lines.append(f"<tr{_row_attributes(tenant, node)}><th>{_e(tenant)}@{_e(node)}</th>{cells}</tr>")
    return "\n".join(lines + ["</tbody>", "</table></div>"])


def _issues(report: _Report) -> str:
    """Every cell that did not pass, failures first, then undecided, then not run, each with its
    findings and what was predicted and observed."""
    order = {"fail": 0, "unknown": 1, "not_run": 2}
    rows = {row: index for index, row in enumerate(report.rows())}
    columns = {column["id"]: index for index, column in enumerate(report.doc["columns"])}
    listed = sorted((cell for cell in report.cells.listed.values() if cell["verdict"] != "pass"),
                    key=lambda cell: (order[cell["verdict"]], rows.get((cell["tenant"], cell["node"]), 0),
                                      columns[cell["column"]]))
    if not listed:
        return "<p>Every cell passed.</p>"
    counted = report.cells.verdicts()
    summarised = counted["unknown"] - sum(cell["verdict"] == "unknown" for cell in listed)
    lines = ['<div class="matrix-box"><table class="issues"><thead><tr><th>cell</th><th>verdict</th>'
             "<th>findings</th><th>predicted and observed</th></tr></thead>", "<tbody>"]
    for cell in listed[:MAX_ISSUES]:
        lines.append(f'<tr{_row_attributes(cell["tenant"], cell["node"])}><td>{_e(report.where(cell))}</td>'
                     f'<td class="v-{cell["verdict"]}">{_e(cell["verdict"].replace("_", " "))}</td>'
                     f'<td>{_finding_links(cell["findings"])}</td><td>{_e(_said(cell))}</td></tr>')
    lines.append("</tbody></table></div>")
    if len(listed) > MAX_ISSUES:
        lines.append(f"<p>and {len(listed) - MAX_ISSUES:,} more cells not passed (in the JSON report).</p>")
    if summarised:
        lines.append(f"<p>{summarised:,} more cells are undecided by design: predicted, not observed (returns "
                     "through another node that the fabric is not made to land there).</p>")
    return "\n".join(lines)


def _grid_mark(report: _Report, label: str, cells, link: bool = True) -> str:
    """A mark of the fleet by node: coloured by the worst verdict of its cells but the returns
    predicted and by design not observed, which outline it in amber (dashed) instead."""
    if cells is None:
        return f'<td class="none">{NO_CELL}</td>'
    observed = _Marked()
    observed.listed, observed.summarised = cells.listed, Counter({"pass": cells.summarised["pass"]})
    by_design = cells.summarised["unknown"]
    verdict = _worst(observed) if observed.verdicts() else "unknown"
    css = f"v-{verdict}" + (" predicted" if by_design else "")
    failing = len({cell["tenant"] for cell in cells.listed if cell["verdict"] == "fail"})
    findings = _failing_findings(report, cells)
    text = str(failing) if failing else ""
    if link and findings:
        text = f'<a href="#{_e(findings[0]["id"])}">{text}</a>'
    return f'<td class="{css}" title="{_e(_tooltip(report, label, cells))}">{text}</td>'


def _node_grid(report: _Report, groups: tuple) -> str:
    """The fleet by node: a row per node, a column per kind of destination outside the fabric,
    then a column per other node (its peers small and full-size and the returns through it, over
    all tenants). Each mark shows the worst verdict, the count of tenants failing, its findings."""
    _dots, lanes, arcs = groups
    nodes = [node["name"] for node in report.doc["nodes"]]
    kinds = [kind for kind in _lanes(report) if kind not in ARCS]
    pairs = {}
    for (node, target, _kind), cells in arcs.items():
        merged = pairs.setdefault((node, target), _Marked())
        merged.listed += cells.listed
        merged.summarised += cells.summarised
    head = ("<thead><tr><th>node \u2193 \u00b7 to \u2192</th>"
            + "".join(f"<th>{_e(LANE_LABELS.get(kind, kind))}</th>" for kind in kinds)
            + "".join(f'<th class="to">{_e(node)}</th>' for node in nodes) + "</tr></thead>")
    lines = ['<div class="matrix-box"><table class="grid">', head, "<tbody>"]
    for node in nodes:
        marks = [_grid_mark(report, f"{node} {kind}, all tenants", lanes.get((node, kind))) for kind in kinds]
        marks += [_grid_mark(report, f"{node} -> {target}: peer, full-size peer, returns, all tenants",
                             pairs.get((node, target))) for target in nodes]
        lines.append(f'<tr data-node="{_e(node)}"><th>{_e(node)}</th>{"".join(marks)}</tr>')
    lines.append("</tbody></table></div>")
    lines.append('<p class="legend">Each mark: the worst verdict of its cells over all tenants (red fail, amber '
                 "unknown, grey not run, green pass), the count of tenants failing, a tooltip with its counts and "
                 "findings. A dashed amber outline: it also holds returns predicted and by design not observed "
                 "(no return_landing), counted in the tooltip.</p>")
    return "\n".join(lines)


def _finding_item(finding: Mapping, where: list) -> str:
    """A finding with its anchor, its fix, and where it shows (the first cells and checks)."""
    node = f" {_e(finding['node'])}" if finding["node"] is not None else ""
    subject = f" <code>{_e(finding['subject'])}</code>" if finding["subject"] else ""
    shown = ", ".join(_e(place) for place in where[:MAX_CELLS_PER_FINDING])
    more = f" and {len(where) - MAX_CELLS_PER_FINDING} more" if len(where) > MAX_CELLS_PER_FINDING else ""
    scope = f' data-node="{_e(finding["node"])}"' if finding["node"] is not None else ""
    return (f'<li id="{_e(finding["id"])}"{scope}><b>{_e(finding["id"])}</b>{node}{subject}: {_e(finding["text"])}'
            + (f"<br>fix: {_e(finding['fix'])}" if finding["fix"] else "")
            + (f"<br><small>in: {shown}{more}</small>" if where else "") + "</li>")


def _findings(report: _Report) -> str:
    where = {finding: [] for finding in report.findings}
    for cell in report.doc["cells"]:
        for finding in cell["findings"]:
            where[finding].append(report.where(cell))
    for check in report.doc["checks"]:
        for finding in check["findings"]:
            where[finding].append(f"check {_line(check['label'])}")
    if not report.doc["findings"]:
        return "<p>No findings.</p>"
    return "\n".join(['<ul class="findings">'] + [_finding_item(finding, where[finding["id"]])
                                                  for finding in report.doc["findings"]] + ["</ul>"])


def _checks(report: _Report) -> str:
    lines = ["<table><thead><tr><th>check</th><th>outcome</th><th>what it says</th><th>findings</th></tr></thead>"]
    for check in report.doc["checks"]:
        outcome = ("v-pass", "ok") if check["ok"] else ("v-fail", "failed")
        lines.append(f'<tr><td>{_e(check["label"])}</td><td class="{outcome[0]}">{outcome[1]}</td>'
                     f"<td>{_e(check['text'])}</td><td>{_finding_links(check['findings'])}</td></tr>")
    return "\n".join(lines + ["</table>"])


def _embedded(doc: Mapping) -> str:
    """The document itself, for a tool to read back, while it is small. Every `<` is written as
    its JSON escape, so no text of the document can close the script element (`</script>`) or
    open a comment."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=str).replace("<", "\\u003c")
    if len(text) > EMBED_BYTES:
        return f"<p>The document ({len(text) / 1e6:.1f} MB) is not embedded: it is the JSON report beside this page.</p>"
    return f'<script type="application/json" id="fleet-proof">{text}</script>'


def _filter_form(report: _Report) -> str:
    tenants = "".join(f'<option value="{_e(tenant["name"])}">' for tenant in report.doc["tenants"])
    nodes = "".join(f'<option value="{_e(node["name"])}">{_e(node["name"])}</option>' for node in report.doc["nodes"])
    return ('<form id="filter" class="filter"><label>tenant <input name="tenant" list="tenant-names" '
            f'autocomplete="off"></label><datalist id="tenant-names">{tenants}</datalist> '
            f'<label>node <select name="node"><option value="">every node</option>{nodes}</select></label> '
            '<output id="shown"></output></form>')


def fleet_report_html(doc) -> str:
    """One self-contained HTML page: the cells not passed (failures first) with the findings, the
    fleet by node (a row per node, a column per other node), the picture of the fleet, the
    matrix while the fleet is small, the fleet checks, the QinQ matrix when the document holds
    one, and the document itself while it is small; a filter by tenant and node over them."""
    report = _Report(doc, HTML_KEYS, "fleet_report_html")
    layout = _Layout(report)
    groups = _groups(report, layout.detailed)
    qinq = _qinq_lines(report)
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>Fabric proof {_e(doc['generated'])}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        f"<h1>Fabric proof, {_e(doc['generated'])}</h1>", f'<p class="summary">{_e(_summary_line(report))}</p>',
        _filter_form(report),
        '<h2 id="issues">Not passed</h2>', _issues(report),
        '<h2 id="findings">Findings</h2>', _findings(report),
        '<h2 id="nodes">The fleet by node</h2>', _node_grid(report, groups),
        '<h2 id="picture">The fleet</h2>', f'<div class="picture">{_picture(report, layout, groups)}</div>',
        _legend(layout),
        '<h2 id="matrix">Matrix</h2>', _table(report),
        '<h2 id="checks">Fleet checks</h2>', _checks(report),
    ]
    if qinq:
        parts += ['<h2 id="qinq">QinQ acceptance</h2>', f"<pre>{_e(chr(10).join(qinq))}</pre>"]
    return "\n".join(parts + [_embedded(doc), f"<script>{SCRIPT}</script>", "</body>", "</html>"]) + "\n"


class FilterModule:
    """deevnet.net.fleet_report_matrix, deevnet.net.fleet_report_diff, deevnet.net.fleet_report_junit
    and deevnet.net.fleet_report_html."""

    def filters(self):
        return {"fleet_report_matrix": fleet_report_matrix, "fleet_report_diff": fleet_report_diff,
                "fleet_report_junit": fleet_report_junit, "fleet_report_html": fleet_report_html}
