#!/usr/bin/env python3
"""The fabric proof's controller side at the size of a real cluster (BENCHMARKS.md section 13):
reconcile and render from recorded node results, at 100 tenants x 10 nodes, 500 x 32 and
1,000 x 32. No host and no Ansible run: the collection's filters, imported as Ansible imports
them, on results a simulator records.

The simulator: every node's SDN (sdn_check's result shape: an EVPN zone per tenant, a VNet with
a /24), then the plan the filter fleet_plans gives each node (every lookup and probe the proof
asks, not cut to one egress_probe run's limits), answered in each module's real output shape:
bgp_evpn_assert's VNIs with their remote VTEPs, vrf_route_assert's lookups with their source
NAT answers, egress_probe's probes with every target's keys. The fleet is healthy but for a few
faults applied after loading: every 25th tenant's internet fails on the second node, and every
50th tenant's full-size peer from the third node to the fourth. The returns are not made to land
(no return_landing), so their cells are predicted only. Each node's registered results are
written as JSON (build/bench/fabric-proof-scale/<size>/), as the controller holds them.

Measured per size, each in a fresh interpreter (its peak memory is that process's): loading the
recorded results, fleet_proof_facts and fleet_proof_reconcile, the document as the playbook
writes it (to_nice_json), the HTML page, the terminal matrix, the diff against a kept report
(the same fleet with other faults, reconciled before and read back from its file) and JUnit XML.
`--root` measures another checkout's filters on the same recordings.
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TITLE = "## 13. The fabric proof's controller side at 500 tenants x 32 nodes"
WORK = ROOT / "build" / "bench" / "fabric-proof-scale"
SIZES = ((100, 10), (500, 32), (1000, 32))
# The goals at 500 x 32 (issue: the document, the page, reconcile and render).
GOALS = {"document_mb": 20, "page_mb": 5, "seconds": 10, "peak_mb": 1024}
INTERNET, DNS, MANAGEMENT, PRIVATE = "203.0.113.8", "198.51.100.53", "198.51.100.5", "10.99.0.5"
SETTINGS = {"internet": [INTERNET], "dns": [DNS], "ntp": [], "management": [MANAGEMENT], "private": [PRIVATE],
            "count": 3, "timeout": 2, "isolation_peers": 3, "full_size": True}
UPLINK = "nic5"


def _tag(root: Path) -> str:
    """A name for a checkout's files: its path, readable."""
    return str(root.resolve()).strip("/").replace("/", "-")


def filters(root: Path):
    """The collection's filter modules of `root`, imported as Ansible imports them."""
    base = WORK / "collections" / _tag(root)
    link = base / "ansible_collections" / "deevnet" / "net"
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(root.resolve() / "collection", target_is_directory=True)
    sys.path.insert(0, str(base))
    from ansible_collections.deevnet.net.plugins.filter import fleet_proof, fleet_report
    return fleet_proof, fleet_report


# --- the simulator ---------------------------------------------------------------------------

def names(tenants: int, nodes: int) -> tuple:
    return [f"t{index:04d}" for index in range(tenants)], [f"hv{index + 1:02d}" for index in range(nodes)]


def vtep(node_index: int) -> str:
    return f"198.51.{100 + node_index // 250}.{1 + node_index % 250}"


def subnet(index: int) -> ipaddress.IPv4Network:
    return ipaddress.ip_network(f"10.{64 + index // 256}.{index % 256}.0/24")


def sdn_result(node_index: int, tenants: list, exits: int) -> dict:
    """sdn_check's result on one node: an EVPN zone per tenant, each with one VNet and subnet."""
    zones = []
    for index, name in enumerate(tenants):
        cidr = subnet(index)
        zones.append({
            "name": name, "type": "evpn", "vrf": f"vrf_{name}", "l3vni": 10000 + index,
            "l3vni_vxlan": f"vrfvx_{name}", "l3vni_bridge": f"vrfbr_{name}", "exit_node": node_index < exits,
            "primary_exit_node": None, "local_routing": False, "vtep": vtep(node_index), "vxlan_port": None,
            "mtu": 1450, "generated": True,
            "vnets": [{"name": f"v{index:04d}", "vni": 20000 + index, "vlan": None, "vlan_aware": False,
                       "vxlan_device": f"vxlan_v{index:04d}", "mtu": 1450,
                       "subnets": [{"cidr": str(cidr), "gateway": str(cidr.network_address + 1), "snat": False}]}]})
    return {"changed": False, "failed": False, "version": {"running": 7, "applied": 7}, "drift": [], "zones": zones,
            "msg": f"{len(zones)} zones read"}


def lookup_check(vrf: str, lookup: dict, tenants: dict, owner: dict) -> dict:
    """vrf_route_assert's check of one lookup, answered as a healthy node answers it."""
    dst = lookup["dst"]
    if lookup.get("iif") and vrf != "default":
        actual = {"type": "unicast", "via": None, "dev": owner[dst]["vnet"], "table": owner[dst]["table"],
                  "fall_through": False}
    elif lookup.get("iif"):
        workload = owner[dst]
        actual = ({"type": "unicast", "via": None, "dev": workload["vnet"], "table": workload["table"],
                   "fall_through": False} if workload["local"] else
                  {"type": "unicast", "via": workload["vtep"], "dev": f"vrfbr_{workload['tenant']}", "table": 254,
                   "fall_through": False})
    else:
        actual = {"type": "unicast", "via": "fe80::1", "dev": UPLINK, "table": tenants[vrf], "fall_through": False}
    if lookup.get("iif"):
        actual.update(src=lookup["src"], iif=lookup["iif"])
    if lookup.get("snat_src"):
        actual["snat"] = {"src": lookup["snat_src"], "translated": False, "why": "no source NAT rule matches"}
    return {"vrf": vrf, "check": f"lookup {dst}", "ok": True, "expected": {"table": tenants.get(vrf)}, "actual": actual,
            "msg": f"{vrf}: {dst} resolves via dev {actual['dev']} (table {actual['table']})"}


def probe_target(target: dict) -> dict:
    """egress_probe's entry for one target that went as expected."""
    reply = target["expect"] == "reply"
    return {"address": target["address"], "proto": target["proto"], "port": target.get("port"),
            "expect": target["expect"], "size": 1450 if target.get("size") else None, "verdict": "passed",
            "sent": 3, "received": 3 if reply else 0, "replies": 3 if reply else 0,
            "rtt_ms": {"min": 0.3, "avg": 0.4, "max": 0.6} if reply else None, "error": None if reply else "no reply",
            "left_by": [target["via"]] if target.get("via") else [UPLINK], "passed": True,
            "blocked_by": None if reply else "no answer", "frag_needed_mtu": None, "answered_by": None,
            "peer": bool(target.get("peer")), "via": target.get("via")}


def probe_result(plan: dict, start_at: float) -> dict:
    probes = [{"name": probe["name"], "verdict": "passed", "msg": "", "vrf": probe["vrf"], "bridge": None,
               "vlan": None, "vnet": probe["vnet"], "address": probe["address"], "gateway": probe["gateway"],
               "interface": f"dvp{index}p0", "interfaces": [],
               "targets": [probe_target(target) for target in probe["targets"]]}
              for index, probe in enumerate(plan["probes"])]
    return {"changed": False, "failed": False, "verdict": "passed", "capture": {"dropped": 0, "overflowed": []},
            "problems": [], "probes": probes, "start_at": start_at, "start_late_secs": 0.0,
            "msg": f"{len(probes)} probes as expected"}


def node_results(node: str, node_index: int, plan: dict, sdn: dict, fleet: dict, nodes: list) -> dict:
    """The registered results of one node's four module runs, as the controller's hostvars hold them."""
    tables = {tenant["vrf"]: 1000 + position for position, tenant in enumerate(plan["tenants"])}
    owner = {}
    for other, other_index in ((name, position) for position, name in enumerate(nodes)):
        for tenant in fleet[other]:
            owner[tenant["workload"]] = {"vnet": tenant["vnet"], "table": tables.get(tenant["vrf"], 254),
                                         "local": other == node, "vtep": vtep(other_index),
                                         "tenant": tenant["name"]}
    checks = [lookup_check(vrf["name"], lookup, tables, owner) for vrf in plan["vrfs"] for lookup in vrf["lookups"]]
    vnis = [{"vni": entry["vni"], "type": "L2" if entry["vni"] >= 20000 else "L3",
             "vrf": f"vrf_t{entry['vni'] % 10000:04d}",
             "remote_vteps": [vtep(position) for position, other in enumerate(nodes) if other != node]}
            for entry in plan["vnis"]]
    return {"fabric_proof_sdn": sdn,
            "fabric_proof_evpn": {"changed": False, "failed": False, "vnis": vnis, "findings": [], "msg": "ok"},
            "fabric_proof_lookups": {"changed": False, "failed": False, "checks": checks, "leaking_vrfs": [],
                                     "msg": f"{len(checks)} checks passed"},
            "fabric_proof_probe": probe_result(plan, 1_800_000_000.0),
            "fabric_proof_uplinks": [UPLINK], "fabric_proof_management_bridge": "vmbr0", "fabric_proof_exit": None}


def record(tenant_count: int, node_count: int, fleet_proof, folder: Path) -> None:
    """Every node's results at this size, one JSON file per node in `folder`."""
    tenants, nodes = names(tenant_count, node_count)
    exits = min(2, node_count)
    sdn = {node: sdn_result(index, tenants, exits) for index, node in enumerate(nodes)}
    facts = {node: {"reached": True, "sdn": sdn[node], "uplinks": [UPLINK], "management": "vmbr0"} for node in nodes}
    plans = fleet_proof.fleet_plans(facts, nodes, SETTINGS)
    fleet = {node: plans[node]["tenants"] for node in nodes}
    folder.mkdir(parents=True, exist_ok=True)
    for index, node in enumerate(nodes):
        results = node_results(node, index, plans[node], sdn[node], fleet, nodes)
        (folder / f"{node}.json").write_text(json.dumps(results, separators=(",", ":")))
    (folder / "nodes.json").write_text(json.dumps(nodes))


# --- the faults, applied to the loaded results --------------------------------------------------

def _fail_targets(hostvars: dict, node: str, every: int, matches) -> None:
    probes = hostvars[node]["fabric_proof_probe"]["probes"]
    for index, probe in enumerate(probes):
        if index % every:
            continue
        for target in probe["targets"]:
            if matches(target):
                target.update(passed=False, verdict="failed", received=0, replies=0, rtt_ms=None, error="no reply")
                probe["verdict"] = "failed"
                probe["msg"] = f"{probe['name']}: {target['address']} {target['proto']}: no reply (0/3 probes)"


def faulted(hostvars: dict, nodes: list, shift: int) -> None:
    """The faults of the run: every 25th tenant's internet on one node, every 50th tenant's
    full-size peer from one node to the next; `shift` moves them to other nodes."""
    internet, peer, to = (nodes[(1 + shift) % len(nodes)], nodes[(2 + shift) % len(nodes)],
                          nodes[(3 + shift) % len(nodes)])
    _fail_targets(hostvars, internet, 25, lambda target: target["address"] == INTERNET)
    peers = {probe["address"].split("/")[0] for probe in hostvars[to]["fabric_proof_probe"]["probes"]}
    _fail_targets(hostvars, peer, 50, lambda target: target["address"] in peers and target["size"] is not None)


# --- the measurement ---------------------------------------------------------------------------

def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(results: dict, name: str, work):
    """`work` done, its wall time kept as `name` and its CPU time beside it (`<name>_cpu`): on a
    shared machine the CPU time is what the work costs, the wall time what it took there."""
    start, cpu = time.perf_counter(), time.process_time()
    made = work()
    results[name] = round(time.perf_counter() - start, 3)
    results[f"{name}_cpu"] = round(time.process_time() - cpu, 3)
    return made


def reconciled(folder: Path, fleet_proof, shift: int, results: dict) -> dict:
    nodes = json.loads((folder / "nodes.json").read_text())
    hostvars = _timed(results, "load_s", lambda: {node: json.loads((folder / f"{node}.json").read_text())
                                                  for node in nodes})
    faulted(hostvars, nodes, shift)
    results["loaded_mb"] = round(_peak_mb())
    return _timed(results, "reconcile_s", lambda: fleet_proof.fleet_proof_reconcile(
        fleet_proof.fleet_proof_facts(hostvars, nodes), nodes, SETTINGS, "2026-12-07T18:00:00Z"))


def measure_one(folder: Path, root: Path, keep: bool) -> dict:
    """In this process: reconcile and render the recordings of `folder` with `root`'s filters;
    with `keep`, only reconcile (other faults) and write the kept report."""
    fleet_proof, fleet_report = filters(root)
    results = {}
    kept = folder / f"kept-{_tag(root)}.json"
    doc = reconciled(folder, fleet_proof, 2 if keep else 0, results)
    text = _timed(results, "document_s", lambda: json.dumps(doc, indent=4, ensure_ascii=False))
    if keep:
        kept.write_text(text)
        return results
    results["document_mb"] = round(len(text.encode()) / 1e6, 2)
    del text
    page = _timed(results, "html_s", lambda: fleet_report.fleet_report_html(doc))
    results["page_mb"] = round(len(page.encode()) / 1e6, 2)
    (folder / f"page-{_tag(root)}.html").write_text(page)
    del page
    results["peak_after_page_mb"] = round(_peak_mb())
    _timed(results, "matrix_s", lambda: fleet_report.fleet_report_matrix(doc))
    _timed(results, "diff_s", lambda: fleet_report.fleet_report_diff(doc, json.loads(kept.read_text())))
    junit = _timed(results, "junit_s", lambda: fleet_report.fleet_report_junit(doc))
    results["junit_mb"] = round(len(junit.encode()) / 1e6, 2)
    results["peak_mb"] = round(_peak_mb())
    results["summary"] = doc["summary"]
    return results


def _chromium_seconds(page: Path, profile: Path) -> float:
    """Headless Chromium's wall time to open `page` and draw it into a screenshot."""
    start = time.perf_counter()
    subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                    f"--screenshot={profile / 'shot.png'}", "--window-size=1400,1000", page.as_uri()],
                   env=dict(os.environ, HOME=str(profile)), capture_output=True, check=True, timeout=600)
    return time.perf_counter() - start


def draw_seconds(page: Path, rounds: int = 3):
    """How long headless Chromium takes to open and draw the page beyond an empty page's: the
    fastest of `rounds` of each, interleaved (on a shared machine the fastest is the least
    disturbed); None without Chromium."""
    if not shutil.which("chromium"):
        return None
    profile = WORK / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    empty = WORK / "empty.html"
    empty.write_text("<!DOCTYPE html><title>empty</title>")
    _chromium_seconds(empty, profile)  # the profile made once, outside the rounds
    pages, empties = [], []
    for _ in range(rounds):
        empties.append(_chromium_seconds(empty, profile))
        pages.append(_chromium_seconds(page, profile))
    return round(max(min(pages) - min(empties), 0.0), 2)


def measure(sizes, root: Path) -> dict:
    fleet_proof, _report = filters(ROOT)
    measured = {}
    for tenants, nodes in sizes:
        folder = WORK / f"{tenants}x{nodes}"
        if not (folder / "nodes.json").exists():
            start = time.perf_counter()
            record(tenants, nodes, fleet_proof, folder)
            print(f"[scale] recorded {tenants}x{nodes} in {time.perf_counter() - start:.0f} s", flush=True)
        for keep in (True, False):
            done = subprocess.run([sys.executable, __file__, "--one", str(folder), "--root", str(root)]
                                  + (["--keep"] if keep else []), capture_output=True, text=True, check=True)
        measured[f"{tenants}x{nodes}"] = json.loads(done.stdout)
        measured[f"{tenants}x{nodes}"]["draw_s"] = draw_seconds(folder / f"page-{_tag(root)}.html")
        measured[f"{tenants}x{nodes}"]["input_mb"] = round(
            sum(path.stat().st_size for path in folder.glob("hv*.json")) / 1e6)
        print(f"[scale] {tenants}x{nodes}: {measured[f'{tenants}x{nodes}']}", flush=True)
    return measured


def _both(run: dict, name: str) -> str:
    """Wall seconds, and the CPU seconds where measured."""
    cpu = run.get(f"{name}_cpu")
    return f"{run[name]:.1f} s" + (f" ({cpu:.1f} s CPU)" if cpu is not None else "")


def _total(run: dict) -> str:
    names = ("reconcile_s", "document_s", "html_s")
    cpu = [run.get(f"{name}_cpu") for name in names]
    return f"{sum(run[name] for name in names):.1f} s" + (
        f" ({sum(cpu):.1f} s CPU)" if None not in cpu else "")


def _seconds(value) -> str:
    return "not measured" if value is None else f"{value:.2f} s"


def section(after: dict, before: dict, command: str) -> str:
    lines = [TITLE, "", f"Measured {time.strftime('%Y-%m-%d')} by `{command}` (load average {os.getloadavg()[0]:.1f} "
             "at the end; each size in a fresh interpreter). No host and no Ansible: the collection's filters on "
             "node results a simulator records in the modules' output shape (every lookup and probe of the proof's "
             "plan, a few faults), loaded from their files as the controller holds them.", "",
             "| tenants x nodes | node results | document | page | reconcile | page render | reconcile + render "
             "| peak memory | page drawn in Chromium | matrix | diff | JUnit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, runs in (("before", before), ("after", after)):
        for size, run in runs.items():
            total = _total(run)
            lines.append(f"| {size.replace('x', ' x ')} ({label}) | {run['input_mb']} MB | {run['document_mb']} MB "
                         f"| {run['page_mb']} MB | {_both(run, 'reconcile_s')} | {_both(run, 'html_s')} | {total} "
                         f"| {run['peak_mb']} MB | {_seconds(run.get('draw_s'))} | {run['matrix_s']:.1f} s "
                         f"| {run['diff_s']:.1f} s "
                         f"| {run['junit_s']:.1f} s ({run['junit_mb']} MB) |")
    run = after.get("500x32")
    if run:
        timed = "CPU" if "reconcile_s_cpu" in run else "wall"
        total = sum(run.get(f"{name}_cpu", run[name]) for name in ("reconcile_s", "document_s", "html_s"))
        met = {"document": run["document_mb"] <= GOALS["document_mb"], "page": run["page_mb"] <= GOALS["page_mb"],
               "time": total <= GOALS["seconds"], "memory": run["peak_mb"] <= GOALS["peak_mb"]}
        lines += ["", "Goals at 500 x 32: " + "; ".join(
            f"{name} **{'met' if ok else 'NOT met'}**" for name, ok in met.items())
            + f" (document {run['document_mb']} MB of {GOALS['document_mb']}, page {run['page_mb']} MB of "
              f"{GOALS['page_mb']}, reconcile + document + page {total:.1f} {timed} seconds of {GOALS['seconds']}, peak "
              f"{run['peak_mb']} MB of {GOALS['peak_mb']}, of which the loaded node results {run['loaded_mb']} MB)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100x10,500x32,1000x32", help="tenants x nodes, comma-separated")
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose filters are measured")
    parser.add_argument("--before", help="a results.json of an earlier measurement, shown as `before`")
    parser.add_argument("--output", help="BENCHMARKS.md to update in place (its other sections stay)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(measure_one(Path(options.one), Path(options.root), options.keep)))
        return
    sizes = [tuple(int(part) for part in size.split("x")) for size in options.sizes.split(",")]
    results = measure(sizes, Path(options.root))
    WORK.mkdir(parents=True, exist_ok=True)
    name = "results.json" if Path(options.root).resolve() == ROOT else "results-root.json"
    (WORK / name).write_text(json.dumps(results, indent=1))
    before = json.loads(Path(options.before).read_text()) if options.before else {}
    text = section(results, before, f"bench/fabric_proof_scale.py --sizes {options.sizes}")
    if options.output:
        sys.path.insert(0, str(ROOT / "bench"))
        from sections import update_section
        update_section(Path(options.output), TITLE, text)
    print(text)


if __name__ == "__main__":
    main()
