"""The fabric proof's report renderers (collection/plugins/filter/fleet_report.py), without a
host: a small document made by hand (2 tenants x 3 nodes, one failed cell with its finding, one
undecided cell, one failed fleet check, a node not reached, a QinQ matrix) rendered as the
terminal matrix, the diff against earlier documents, JUnit XML and the HTML page; the page
opened in headless Chromium; and a 100 tenants x 10 nodes document (bench/fleet_report.py's)
for the page's size."""
from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser

import pytest
from ansible.errors import AnsibleFilterError

from conftest import ROOT, filter_docs_from_source, filter_plugin

fleet_report = filter_plugin("fleet_report")
matrix = fleet_report.fleet_report_matrix
diff = fleet_report.fleet_report_diff
junit = fleet_report.fleet_report_junit
render_html = fleet_report.fleet_report_html

sys.path.insert(0, str(ROOT / "bench"))
import fleet_report as bench  # noqa: E402  (bench/ is no package)

FILTERS = {"fleet_report_matrix": matrix, "fleet_report_diff": lambda doc: diff(doc, None),
           "fleet_report_junit": junit, "fleet_report_html": render_html}
SCREENSHOTS = ROOT / "build" / "fleet-proof"

FORWARDING = {"id": "F1", "node": "hv02", "subject": "net.ipv4.conf.nic5.forwarding",
              "text": "hv02 does not forward returns arriving on nic5 (forwarding 0)",
              "fix": "set net.ipv4.conf.nic5.forwarding=1 (the role's sysctl_forwarding)"}
SDN = {"id": "F2", "node": None, "subject": "sdn_version", "text": "hv01 runs SDN version 6, hv02 runs 7",
       "fix": "upgrade hv01's SDN to version 7"}


def column(column_id: str, label: str, kind: str, node=None) -> dict:
    return {"id": column_id, "label": label, "kind": kind, "node": node, "tenant": None}


def cell(tenant: str, node: str, column_id: str, verdict: str, findings=()) -> dict:
    observed = {"pass": "reply", "fail": "blocked"}.get(verdict, verdict)
    return {"tenant": tenant, "node": node, "column": column_id, "expect": "reply", "target": "203.0.113.8",
            "prediction": {"verdict": "reply", "dev": "nic5", "nat": True, "fall_through": False,
                           "text": f"203.0.113.8 in vrf_{tenant}: dev nic5, SNAT matches"},
            "observation": {"verdict": observed, "text": f"3/3 probes {observed}"},
            "verdict": verdict, "findings": list(findings)}


def document(tenants=("tdemo", "tother")) -> dict:
    """2 tenants x 3 nodes: tdemo@hv02's internet fails (F1), tother@hv02's management is
    undecided, hv03 was not reached; the SDN versions disagree (F2); hv02 -> hv01 loses the
    inner QinQ tag."""
    nodes = [{"name": name, "exit": name != "hv03", "vtep": f"198.51.100.13{index}", "sdn_version": 7,
              "uplinks": ["nic5"] if name != "hv03" else [], "management": "vmbr0", "reached": name != "hv03"}
             for index, name in enumerate(["hv01", "hv02", "hv03"], 1)]
    columns = [column("internet", "internet", "internet"), column("management", "mgmt", "management"),
               column("peer:hv01", "hv01", "peer", "hv01"), column("peer:hv02", "hv02", "peer", "hv02")]
    cells = []
    for tenant in tenants:
        for node in ("hv01", "hv02", "hv03"):
            for one in columns:
                if one["node"] != node:
                    cells.append(cell(tenant, node, one["id"], "not_run" if node == "hv03" else "pass"))
    doc = {
        "format": "deevnet.net.fabric_proof/1", "generated": "2026-12-06T10:00:00Z", "nodes": nodes,
        "tenants": [{"name": tenant, "vrf": f"vrf_{tenant}", "subnets": []} for tenant in tenants],
        "columns": columns, "cells": cells, "findings": [dict(FORWARDING), dict(SDN)],
        "checks": [{"id": "sdn_version", "label": "one SDN version", "ok": False, "text": SDN["text"],
                    "findings": ["F2"]},
                   {"id": "vtep_mesh", "label": "VTEP mesh", "ok": True, "text": "every VTEP reaches every other",
                    "findings": []}],
        "qinq": {"hosts": ["hv01", "hv02"], "rows": [
            {"sender": "hv01", "receiver": "hv02", "vlan": 201, "verdict": "both_tags", "ok": True, "message": ""},
            {"sender": "hv02", "receiver": "hv01", "vlan": 201, "verdict": "inner_tag_lost", "ok": False,
             "sender_slave": "eth1", "message": "hv02 -> hv01, VLAN 201: the inner tag was lost"}]},
        "summary": {"cells": 20, "passed": 10, "failed": 1, "unknown": 1, "not_run": 8, "checks_failed": 1,
                    "findings": 2},
    }
    find_cell(doc, tenants[0], "hv02", "internet").update(cell(tenants[0], "hv02", "internet", "fail", ["F1"]))
    find_cell(doc, tenants[1], "hv02", "management").update(cell(tenants[1], "hv02", "management", "unknown"))
    return doc


def find_cell(doc: dict, tenant: str, node: str, column_id: str) -> dict:
    return next(one for one in doc["cells"] if (one["tenant"], one["node"], one["column"]) == (tenant, node, column_id))


# --- the terminal matrix ----------------------------------------------------------------------

def test_the_matrix_prints_each_cell_aligned_then_checks_findings_qinq_and_the_summary():
    assert matrix(document()) == [
        "tenant@node  internet  mgmt  hv01  hv02",
        "tdemo@hv01   ok        ok    -     ok",
        "tdemo@hv02   FAIL F1   ok    ok    -",
        "tdemo@hv03   n/r       n/r   n/r   n/r",
        "tother@hv01  ok        ok    -     ok",
        "tother@hv02  ok        ?     ok    -",
        "tother@hv03  n/r       n/r   n/r   n/r",
        "check one SDN version: hv01 runs SDN version 6, hv02 runs 7",
        "F1 hv02 net.ipv4.conf.nic5.forwarding: hv02 does not forward returns arriving on nic5 (forwarding 0); "
        "fix: set net.ipv4.conf.nic5.forwarding=1 (the role's sysctl_forwarding)",
        "F2 sdn_version: hv01 runs SDN version 6, hv02 runs 7; fix: upgrade hv01's SDN to version 7",
        "qinq acceptance:",
        "sender -> receiver  hv01       hv02",
        "hv01                -          ok",
        "hv02                LOST eth1  -",
        "hv02 -> hv01, VLAN 201: the inner tag was lost",
        "20 cells: 10 passed, 1 failed, 1 unknown, 8 not run; 1 fleet checks failed; 2 findings",
    ]


def test_the_matrix_keeps_a_host_s_text_on_one_line_and_leaves_out_an_absent_qinq():
    doc = document()
    doc["qinq"] = None
    doc["findings"][0]["text"] = "two\nlines"
    lines = matrix(doc)
    assert "F1 hv02 net.ipv4.conf.nic5.forwarding: two lines; fix: set net.ipv4.conf.nic5.forwarding=1 " \
           "(the role's sysctl_forwarding)" in lines
    assert not any("qinq" in line or "sender -> receiver" in line for line in lines)


def large_fleet(monkeypatch) -> dict:
    """The document with every cell of hv03 passed, read as a fleet past the terminal's size."""
    doc = document()
    for one in doc["cells"]:
        if one["node"] == "hv03":
            one.update(verdict="pass")
    monkeypatch.setattr(fleet_report, "TERMINAL_CELLS", 10)
    return doc


def test_a_large_fleet_s_matrix_shows_only_the_rows_and_columns_with_a_cell_not_passed(monkeypatch):
    doc = large_fleet(monkeypatch)
    assert matrix(doc)[:5] == [
        "tenant@node  internet  mgmt",
        "tdemo@hv02   FAIL F1   ok",
        "tother@hv02  ok        ?",
        "4 more rows of 4 columns: every cell passed",
        "2 more columns: every cell in them passed",
    ]


# --- what changed -----------------------------------------------------------------------------

def earlier_document() -> dict:
    """The run before: tdemo@hv02's internet passed and the SDN versions agreed; its finding
    F2 is numbered F1 there, so an id alone says nothing."""
    earlier = document()
    earlier["generated"] = "2026-12-05T10:00:00Z"
    find_cell(earlier, "tdemo", "hv02", "internet").update(verdict="pass", findings=[])
    earlier["findings"] = [dict(SDN, id="F1")]
    earlier["checks"][0].update(ok=True, findings=[])
    return earlier


def test_a_document_like_the_earlier_one_but_its_date_has_no_change():
    earlier = copy.deepcopy(document())
    earlier["generated"] = "2026-12-05T10:00:00Z"
    assert diff(document(), earlier) == ["no change since the report of 2026-12-05T10:00:00Z"]


def test_a_cell_that_fails_now_and_a_check_that_fails_now_are_the_changes():
    assert diff(document(), earlier_document()) == [
        "tdemo@hv02 internet: pass -> fail (F1 hv02 net.ipv4.conf.nic5.forwarding: hv02 does not forward returns "
        "arriving on nic5 (forwarding 0))",
        "check one SDN version: ok -> failed: hv01 runs SDN version 6, hv02 runs 7",
    ]


def test_findings_are_compared_by_node_subject_and_text_not_by_id():
    earlier = document()
    earlier["findings"] = [dict(SDN, id="F1"), dict(FORWARDING, id="F2", text="hv02 drops returns on nic5")]
    earlier["checks"][0]["findings"] = ["F1"]
    find_cell(earlier, "tdemo", "hv02", "internet")["findings"] = ["F2"]
    assert diff(document(), earlier) == [
        "tdemo@hv02 internet: fail -> fail (F1 hv02 net.ipv4.conf.nic5.forwarding: hv02 does not forward returns "
        "arriving on nic5 (forwarding 0); was: hv02 net.ipv4.conf.nic5.forwarding: hv02 drops returns on nic5)",
    ]


def test_cells_added_and_removed_are_named_each():
    now, earlier = document(), document()
    now["cells"] = [one for one in now["cells"] if (one["tenant"], one["node"]) != ("tother", "hv01")]
    earlier["cells"] = [one for one in earlier["cells"] if one["column"] != "management" or one["node"] != "hv01"]
    assert diff(now, earlier) == [
        "tdemo@hv01 mgmt: added, pass",
        "tother@hv01 internet: removed (was pass)",
        "tother@hv01 hv02: removed (was pass)",
    ]


@pytest.mark.parametrize("earlier", [None, {}, ""])
def test_the_first_run_has_no_earlier_report(earlier):
    assert diff(document(), earlier) == [fleet_report.FIRST_RUN]


def test_an_earlier_document_of_another_format_names_the_argument_earlier():
    with pytest.raises(AnsibleFilterError, match=r"fleet_report_diff: earlier\.format is 'deevnet\.net\.other/1'"):
        diff(document(), {"format": "deevnet.net.other/1"})


# --- JUnit XML --------------------------------------------------------------------------------

def counts(suite) -> list:
    return [suite.get(key) for key in ("tests", "failures", "errors", "skipped")]


def test_junit_has_a_suite_for_the_checks_and_one_per_row_with_counts_that_add_up():
    root = ET.fromstring(junit(document()))
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == ["fleet", "tdemo@hv01", "tdemo@hv02", "tdemo@hv03", "tother@hv01", "tother@hv02",
                            "tother@hv03", "qinq"]
    assert counts(root) == ["24", "3", "1", "8"]
    assert counts(suites["fleet"]) == ["2", "1", "0", "0"]
    assert counts(suites["tdemo@hv02"]) == ["3", "1", "0", "0"]
    assert counts(suites["tother@hv02"]) == ["3", "0", "1", "0"]
    assert counts(suites["tother@hv03"]) == ["4", "0", "0", "4"]
    assert counts(suites["qinq"]) == ["2", "1", "0", "0"]
    case = suites["tdemo@hv02"].find("testcase[@name='internet']")
    assert case.get("classname") == "tdemo@hv02"
    failure = case.find("failure")
    assert failure.get("message") == FORWARDING["text"]
    assert "fix: set net.ipv4.conf.nic5.forwarding=1" in failure.text
    assert "observation: 3/3 probes blocked" in failure.text
    assert suites["tother@hv02"].find("testcase[@name='mgmt']/error").get("message").startswith("undecided: prediction")
    assert suites["fleet"].find("testcase[@name='one SDN version']/failure").text.startswith("F2 sdn_version:")


def test_a_large_fleet_s_junit_gives_a_row_whose_every_cell_passed_one_testcase(monkeypatch):
    doc = large_fleet(monkeypatch)
    root = ET.fromstring(junit(doc))
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == ["fleet", "passed", "tdemo@hv02", "tother@hv02", "qinq"]
    assert [case.get("name") for case in suites["passed"]] == [
        "tdemo@hv01: all 3 cells passed", "tdemo@hv03: all 4 cells passed", "tother@hv01: all 3 cells passed",
        "tother@hv03: all 4 cells passed"]
    assert counts(suites["tdemo@hv02"]) == ["3", "1", "0", "0"] and counts(root) == ["14", "3", "1", "0"]


def test_junit_carries_a_host_s_control_characters_as_replacement_characters():
    doc = document()
    doc["findings"][0]["text"] = "bad \x1b[31mbyte\x00"
    failure = ET.fromstring(junit(doc)).find(".//testsuite[@name='tdemo@hv02']/testcase[@name='internet']/failure")
    assert failure.get("message") == "bad \ufffd[31mbyte\ufffd"


def test_junit_parses_with_a_junit_consumer_where_one_is_installed(tmp_path):
    consumers = [name for name in ("junitparser", "junit_xml") if importlib.util.find_spec(name)]
    if "junitparser" not in consumers:
        pytest.skip(f"junitparser is not installed in this venv (found: {consumers or 'none'}); not a dependency")
    import junitparser
    path = tmp_path / "fleet.xml"
    path.write_text(junit(document()))
    parsed = junitparser.JUnitXml.fromfile(str(path))
    assert (parsed.tests, parsed.failures, parsed.errors, parsed.skipped) == (24, 3, 1, 8)


# --- HTML -------------------------------------------------------------------------------------

class _Page(HTMLParser):
    """The ids and internal links of a page, and the text of its JSON script."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.json, self._in_json = set(), [], "", False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        self._in_json = tag == "script" and attrs.get("type") == "application/json"

    def handle_data(self, data):
        if self._in_json:
            self.json += data


def parsed(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def test_the_page_links_every_failing_mark_to_a_finding_that_has_its_anchor():
    page = render_html(document())
    found = parsed(page)
    assert {"F1", "F2"} <= found.ids
    assert set(found.links) <= found.ids
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert '<a href="#F1"><circle' in svg and '<a href="#F1"><line' in svg
    assert '<td class="v-fail" title="prediction: 203.0.113.8 in vrf_tdemo: dev nic5, SNAT matches; observation: ' \
           '3/3 probes blocked">FAIL <a href="#F1">F1</a></td>' in page
    assert "LOST eth1" in page and "hv02 -&gt; hv01, VLAN 201" in page


def test_the_page_escapes_a_hostile_tenant_and_embeds_the_document_readable_back():
    hostile = "<script>alert(1)</script>"
    doc = document(tenants=("tdemo", hostile))
    page = render_html(doc)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;@hv01" in page
    # The document's JSON and the page's own filter script, nothing else.
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert page.endswith(f"<script>{fleet_report.SCRIPT}</script>\n</body>\n</html>\n")
    assert json.loads(parsed(page).json) == doc


def test_the_page_fetches_nothing():
    page = render_html(document())
    assert set(re.findall(r"https?://[^\s\"'<>]*", page)) == {"http://www.w3.org/2000/svg"}
    for reference in ("src=", "<link", "@import", "url("):
        assert reference not in page
    assert "default-src 'none'" in page


def _png(path) -> tuple:
    """A PNG's width and height, and how many of its rows differ (after their filter byte):
    a page of a single colour has one or two."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"IDAT":
            chunks.append(data[offset + 8:offset + 8 + length])
        offset += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    stride = len(pixels) // height
    return width, height, len({pixels[row * stride + 1:(row + 1) * stride] for row in range(height)})


def test_the_page_renders_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if chromium is None:
        pytest.skip("chromium is not installed (make host-deps installs it)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page, screenshot = SCREENSHOTS / "fleet-proof.html", SCREENSHOTS / "fleet-proof.png"
    page.write_text(render_html(document()))
    screenshot.unlink(missing_ok=True)
    proc = subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={screenshot}", "--window-size=1400,1000", page.as_uri()],
        env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300)
    assert screenshot.exists(), proc.stderr[-2000:]
    assert screenshot.stat().st_size > 10_000
    width, height, distinct_rows = _png(screenshot)
    assert (width, height) == (1400, 1000)
    assert distinct_rows > 50


class _Rows(HTMLParser):
    """The rows of the page's tables, by table class: (attributes, texts of its cells); and the
    headings' ids in order."""

    def __init__(self):
        super().__init__()
        self.tables, self.headings, self._table, self._row = {}, [], None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("class"), [])
        elif tag == "tr" and self._table is not None:
            self._row = (attrs, [])
            self._table.append(self._row)
        elif tag == "h2":
            self.headings.append(attrs.get("id"))
        if tag == "output":
            self.headings.append(("output", attrs))

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._row is not None and data.strip():
            self._row[1].append(data.strip())


def _chromium_dom(tmp_path, page_text: str, fragment: str) -> str:
    """The page's DOM after its script ran, as headless Chromium dumps it."""
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if chromium is None:
        pytest.skip("chromium is not installed (make host-deps installs it)")
    page = tmp_path / "fleet-proof.html"
    page.write_text(page_text)
    proc = subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
         "--dump-dom", page.as_uri() + fragment],
        env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300)
    assert "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def _issue_rows(dom: str) -> list:
    rows = _Rows()
    rows.feed(dom)
    return [(attrs.get("data-tenant"), attrs.get("data-node"), texts[1], "hidden" in attrs)
            for attrs, texts in rows.tables["issues"][1:]]


def test_the_page_in_chromium_lists_failures_first_and_filters_by_tenant_and_node(tmp_path):
    page = render_html(document())
    everything = _issue_rows(_chromium_dom(tmp_path, page, ""))
    assert [(tenant, node, verdict) for tenant, node, verdict, _hidden in everything][:3] == [
        ("tdemo", "hv02", "fail"), ("tother", "hv02", "unknown"), ("tdemo", "hv03", "not run")]
    assert len(everything) == 10 and not any(hidden for *_rest, hidden in everything)
    headings = [heading for heading in parsed_headings(page) if isinstance(heading, str)]
    assert headings.index("issues") < headings.index("picture") < headings.index("matrix")
    by_node = _issue_rows(_chromium_dom(tmp_path, page, "#node=hv02"))
    assert {(tenant, node) for tenant, node, _verdict, hidden in by_node if not hidden} == {
        ("tdemo", "hv02"), ("tother", "hv02")}
    by_both = _chromium_dom(tmp_path, page, "#tenant=tother&node=hv03")
    assert {(tenant, node) for tenant, node, _verdict, hidden in _issue_rows(by_both) if not hidden} == {
        ("tother", "hv03")}
    assert "showing tenant tother, node hv03" in by_both
    grid = _Rows()
    grid.feed(by_both)
    assert [(attrs.get("data-node"), "hidden" in attrs) for attrs, _texts in grid.tables["grid"][1:]] == [
        ("hv01", True), ("hv02", True), ("hv03", False)]


def parsed_headings(page: str) -> list:
    rows = _Rows()
    rows.feed(page)
    return rows.headings


def test_the_fleet_by_node_marks_each_pair_with_its_worst_verdict_and_failing_tenants():
    doc = document()
    rows = _Rows()
    rows.feed(render_html(doc))
    grid = {attrs["data-node"]: texts for attrs, texts in rows.tables["grid"][1:]}
    page = render_html(doc)
    # hv02's internet fails for one tenant: its mark is red, counts 1 and links to F1.
    assert grid["hv02"][:2] == ["hv02", "1"]
    assert '<td class="v-fail" title="hv02 internet, all tenants: 1 pass, 1 fail' in page
    assert '<td class="v-not_run" title="hv03 -&gt; hv01: peer, full-size peer, returns, all tenants: 2 not run"' in page


def test_a_fleet_of_100_tenants_on_10_nodes_stays_within_the_page_bound():
    doc = bench.synthetic_document()
    page = render_html(doc)
    # The document (11.9 MB) is not embedded: the JSON report beside the page holds it.
    assert '<script type="application/json"' not in page and "is not embedded" in page
    assert len(page) < bench.PAGE_BOUND, f"the page is {len(page):,} bytes"
    svg = page[page.index("<svg"):page.index("</svg>")]
    assert "t042" not in svg  # drawn per node and lane, not per tenant
    assert len(matrix(doc)) == 1 + 1000 + 1 + 2 + 1 + 4 + 1


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(FILTERS))
def test_a_document_of_another_format_names_the_filter_the_key_the_value_and_the_fix(name):
    with pytest.raises(AnsibleFilterError) as raised:
        FILTERS[name]({"format": "x"})
    assert str(raised.value) == (f"{name}: doc.format is 'x', not 'deevnet.net.fabric_proof/1'; "
                                 "give the document the filter deevnet.net.fleet_proof_reconcile made")


def _without(key: str) -> dict:
    doc = document()
    del doc[key]
    return doc


def _changed(change) -> dict:
    doc = document()
    change(doc)
    return doc


@pytest.mark.parametrize("doc, names", [
    ("tenants", r"doc is 'tenants', not the report document"),
    (_without("cells"), r"doc\.cells is missing"),
    (_changed(lambda doc: doc.update(nodes={})), r"doc\.nodes is \{\}, not a list"),
    (_changed(lambda doc: doc["cells"][0].pop("verdict")), r"doc\.cells\[0\]\.verdict is missing"),
    (_changed(lambda doc: doc["cells"][1].update(verdict="maybe")), r"doc\.cells\[1\]\.verdict is 'maybe', not one of"),
    (_changed(lambda doc: doc["cells"][2].update(findings=["F9"])),
     r"doc\.cells\[2\]\.findings is 'F9', an id doc\.findings does not hold"),
    (_changed(lambda doc: doc["cells"][2].update(column="dns")),
     r"doc\.cells\[2\]\.column is 'dns', which doc\.columns does not hold"),
    (_changed(lambda doc: doc["checks"][0].update(ok="no")), r"doc\.checks\[0\]\.ok is 'no', not true or false"),
    (_changed(lambda doc: doc["findings"].append(dict(SDN))), r"doc\.findings is \['F2'\], ids held twice"),
    (_changed(lambda doc: doc.update(qinq=5)), r"doc\.qinq is 5, neither null nor a dict"),
    (_changed(lambda doc: doc["qinq"].update(rows="x")), r"doc\.qinq: qinq_acceptance_table: rows must be"),
])
def test_a_bad_document_names_the_key_and_its_value(doc, names):
    with pytest.raises(AnsibleFilterError, match=f"^fleet_report_matrix: {names}.*fleet_proof_reconcile made$"):
        matrix(doc)


# --- through Ansible --------------------------------------------------------------------------

def test_ansible_doc_documents_each_filter_from_the_collection_s_folder(tmp_path):
    """ansible-doc finds each filter in the file (importing it, and qinq_acceptance.py through the
    collection loader) and reads its sidecar."""
    names = sorted(fleet_report.FilterModule().filters())
    assert names == sorted(FILTERS)
    docs = filter_docs_from_source(names, tmp_path)
    for name in names:
        assert docs[f"deevnet.net.{name}"]["doc"]["name"] == name and docs[f"deevnet.net.{name}"]["return"]["_value"]
    matrix_doc = docs["deevnet.net.fleet_report_matrix"]
    assert "qinq" in json.dumps(matrix_doc)
