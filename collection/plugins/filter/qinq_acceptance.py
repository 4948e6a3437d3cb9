# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The QinQ acceptance matrix of the playbook deevnet.net.qinq_acceptance, as pure functions:
from every receiver's verdicts (the module qinq_probe in mode receive, collected with
async_status) to one row per sender, receiver and VLAN, the table the playbook prints and the
rows that fail the run. Nothing here reads a host.

The documentation of the filters is in qinq_acceptance_matrix.yml, qinq_acceptance_table.yml
and qinq_acceptance_broken.yml, next to this file (ansible-doc reads it from there: a filter
file may hold several filters, so each has its own sidecar)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# The verdict of a row whose receiver said nothing about it.
NO_RESULT = "no_result"
# The table's corner cell, and its cell for a host and itself.
CORNER = "sender -> receiver"
SELF = "-"


def _hosts(hosts, filter_name: str) -> list:
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError(f"{filter_name}: hosts must be a list of host names (ansible_play_hosts), "
                                 f"not {type(hosts).__name__} {hosts!r}")
    for index, host in enumerate(hosts):
        if not isinstance(host, str) or not host:
            raise AnsibleFilterError(f"{filter_name}: hosts[{index}] must be a host name, not {host!r}")
    if len(set(hosts)) != len(hosts):
        raise AnsibleFilterError(f"{filter_name}: hosts names a host twice: {list(hosts)!r}")
    return list(hosts)


def _vlan(value, where: str) -> int:
    """A VLAN ID as an int: an int or a string of digits (an extra variable given as text)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdecimal():
        raise AnsibleFilterError(f"{where} must be a VLAN ID (a number from 1 to 4094), not {value!r}")
    vlan = int(value)
    if not 1 <= vlan <= 4094:
        raise AnsibleFilterError(f"{where}: VLAN {vlan} is outside 1-4094")
    return vlan


def _vlans(vlans) -> list:
    if isinstance(vlans, (str, bytes)) or not isinstance(vlans, (list, tuple)):
        raise AnsibleFilterError("qinq_acceptance_matrix: vlans must be a list of VLAN IDs "
                                 f"(qinq_acceptance_vlans), not {type(vlans).__name__} {vlans!r}")
    return [_vlan(vlan, f"qinq_acceptance_matrix: vlans[{index}]") for index, vlan in enumerate(vlans)]


def _pairs(result, receiver: str) -> tuple:
    """The receiver's verdicts by (sender, VLAN), and why there are none where there are none."""
    if not isinstance(result, Mapping) or not result:
        return {}, ("no result was registered for it (the host was unreachable, or failed before the verdicts "
                    "were collected)")
    pairs = result.get("pairs")
    if pairs is not None and not isinstance(pairs, list):
        raise AnsibleFilterError(f"qinq_acceptance_matrix: results[{receiver!r}].pairs must be a list, "
                                 f"not {type(pairs).__name__}")
    by_key = {}
    for index, pair in enumerate(pairs or []):
        if not isinstance(pair, Mapping) or "sender" not in pair or "vlan" not in pair:
            raise AnsibleFilterError(f"qinq_acceptance_matrix: results[{receiver!r}].pairs[{index}] must be a dict "
                                     f"with at least sender and vlan, not {pair!r}")
        where = f"qinq_acceptance_matrix: results[{receiver!r}].pairs[{index}].vlan"
        by_key.setdefault((pair["sender"], _vlan(pair["vlan"], where)), pair)
    msg = str(result.get("msg") or "")
    if pairs:
        reason = "its pairs hold none for this sender and VLAN" + (f"; it said: {msg}" if msg else "")
    elif not result.get("finished", True):
        reason = "it did not finish" + (f": {msg}" if msg else "")
    else:
        reason = msg or "its result has no pairs"
    return by_key, reason


def qinq_acceptance_matrix(results, hosts, vlans) -> list:
    """One row per sender, receiver (every other host) and VLAN, in the order of `hosts` and
    `vlans`: the receiver's verdict, or `no_result` with a message naming the direction, the VLAN
    and what the receiver said instead."""
    if not isinstance(results, Mapping):
        raise AnsibleFilterError("qinq_acceptance_matrix: results must be a dict of host name -> that host's "
                                 f"registered async_status result, not {type(results).__name__} {results!r}")
    hosts = _hosts(hosts, "qinq_acceptance_matrix")
    vlans = _vlans(vlans)
    verdicts = {receiver: _pairs(results.get(receiver), receiver) for receiver in hosts}
    rows = []
    for sender in hosts:
        for receiver in hosts:
            if receiver == sender:
                continue
            pairs, reason = verdicts[receiver]
            for vlan in vlans:
                pair = pairs.get((sender, vlan))
                if pair is None:
                    rows.append({
                        "sender": sender, "receiver": receiver, "vlan": vlan, "verdict": NO_RESULT, "ok": False,
                        "message": f"{sender} -> {receiver}, VLAN {vlan}: the receiver gave no verdict: {reason}",
                        "sender_slave": None, "receiving_slaves": [], "fdb_verdict": None,
                    })
                    continue
                fdb = pair.get("fdb")
                rows.append({
                    "sender": sender, "receiver": receiver, "vlan": vlan,
                    "verdict": str(pair.get("verdict") or NO_RESULT),
                    "ok": pair.get("ok") is True,
                    "message": str(pair.get("message") or ""),
                    "sender_slave": pair.get("sender_slave"),
                    "receiving_slaves": list(pair.get("receiving_slaves") or []),
                    "fdb_verdict": fdb.get("verdict") if isinstance(fdb, Mapping) else None,
                })
    return rows


def _rows(rows, filter_name: str) -> list:
    if isinstance(rows, (str, bytes)) or not isinstance(rows, (list, tuple)):
        raise AnsibleFilterError(f"{filter_name}: rows must be the list qinq_acceptance_matrix returns, "
                                 f"not {type(rows).__name__} {rows!r}")
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping) or any(key not in row for key in ("sender", "receiver", "vlan", "ok")):
            raise AnsibleFilterError(f"{filter_name}: rows[{index}] must be a row of qinq_acceptance_matrix "
                                     f"(sender, receiver, vlan, verdict, ok, ...), not {row!r}")
    return list(rows)


def qinq_acceptance_broken(rows) -> list:
    """The rows that are not ok, in their order."""
    return [row for row in _rows(rows, "qinq_acceptance_broken") if row["ok"] is not True]


def _token(row: Mapping) -> str:
    """A broken row in a few words: what went wrong, and where when the row says."""
    verdict = row.get("verdict")
    if verdict == "inner_tag_lost":
        return f"LOST {row.get('sender_slave') or ''}".strip()
    if verdict == "both_tags":
        return f"FDB {row.get('fdb_verdict') or ''}".strip()
    return {"nothing_arrived": "NONE", "other_tags": "OTHER", "frames_lost": "LOSS",
            NO_RESULT: "NO RESULT"}.get(verdict, "OTHER")


def _cell(rows: list) -> str:
    """One direction over all its VLANs: ok, or each token, with its VLANs where it does not hold
    for all of them."""
    if not rows:
        return "NO RESULT"
    tokens: dict = {}
    for row in rows:
        if row["ok"] is not True or row.get("verdict") != "both_tags":
            tokens.setdefault(_token(row), []).append(row["vlan"])
    if not tokens:
        return "ok"
    return ", ".join(token if len(vlans) == len(rows) else f"{token} ({','.join(str(vlan) for vlan in vlans)})"
                     for token, vlans in tokens.items())


def qinq_acceptance_table(rows, hosts) -> list:
    """The matrix as text lines: a header of receivers, a line per sender with a cell per
    receiver (aligned), then the message of every broken row."""
    rows = _rows(rows, "qinq_acceptance_table")
    hosts = _hosts(hosts, "qinq_acceptance_table")
    grid = [[CORNER] + hosts]
    for sender in hosts:
        grid.append([sender] + [SELF if receiver == sender else _cell(
            [row for row in rows if row["sender"] == sender and row["receiver"] == receiver]) for receiver in hosts])
    widths = [max(len(line[column]) for line in grid) for column in range(len(grid[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in grid]
    for row in qinq_acceptance_broken(rows):
        lines.append(row.get("message") or
                     f"{row['sender']} -> {row['receiver']}, VLAN {row['vlan']}: {row.get('verdict')}")
    return lines


class FilterModule:
    """deevnet.net.qinq_acceptance_matrix, deevnet.net.qinq_acceptance_table and
    deevnet.net.qinq_acceptance_broken."""

    def filters(self):
        return {"qinq_acceptance_matrix": qinq_acceptance_matrix, "qinq_acceptance_table": qinq_acceptance_table,
                "qinq_acceptance_broken": qinq_acceptance_broken}
