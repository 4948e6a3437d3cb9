# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric proof's cells as its document (deevnet.net.fabric_proof/1) keeps them, written and
read in this one place. In full, in the list `cells`: every cell that failed, was not run, or is
undecided for a reason of its own. Summarised, per node and column, as ranges of indexes into the
document's `tenants` (e.g. "0-41,43-499"):

- `passed`: {node: {column: ranges}}, the cells that passed. A passing cell has no findings, so
  its key (tenant, node, column) is all a comparison of two documents reads: the diff and the
  guarded change's comparison stay exact.
- `unobserved`: {node: {column: {tenants: ranges, predicted, text}}}, the undecided cells that the
  proof predicts and by design does not observe (a return through another node where none is
  made to land): the prediction's verdict and why it was not observed, the same for them all.

A document without them lists every cell in `cells`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

PASS = "pass"
UNKNOWN = "unknown"


class CellsError(ValueError):
    """What of the document's summaries is wrong: where, its value, and what it is instead."""

    def __init__(self, where: str, value, expected: str):
        super().__init__(f"{where} is {value!r}, {expected}")
        self.where, self.value, self.expected = where, value, expected


def pass_ranges(indexes) -> str:
    """Indexes as ranges, ascending: [0, 1, 2, 5] -> "0-2,5"."""
    ranges, start, last = [], None, None
    for index in sorted(set(indexes)):
        if start is None:
            start = last = index
        elif index == last + 1:
            last = index
        else:
            ranges.append((start, last))
            start = last = index
    if start is not None:
        ranges.append((start, last))
    return ",".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def range_indexes(text, count: int) -> list:
    """The indexes `text` names, each below `count`; ValueError saying what is wrong otherwise."""
    if not isinstance(text, str):
        raise ValueError("not a text of ranges such as 0-41,43")
    indexes = []
    for part in text.split(",") if text else []:
        low, dash, high = part.partition("-")
        if not low.isdecimal() or not (high.isdecimal() or not dash):
            raise ValueError(f"{part!r} is not an index or a range such as 0-41")
        low, high = int(low), int(high) if dash else int(low)
        if low > high or high >= count:
            raise ValueError(f"{part!r} is not a range of the {count} tenants' indexes")
        indexes.extend(range(low, high + 1))
    return indexes


def passed_summary(passed: Mapping) -> dict:
    """The document's `passed` from {node: {column: [tenant index, ...]}}, in the same order."""
    return {node: {column: pass_ranges(indexes) for column, indexes in columns.items()}
            for node, columns in passed.items() if columns}


def unobserved_summary(unobserved: Mapping) -> dict:
    """The document's `unobserved` from {node: {column: ([tenant index, ...], predicted, text)}}."""
    return {node: {column: {"tenants": pass_ranges(indexes), "predicted": predicted, "text": text}
                   for column, (indexes, predicted, text) in columns.items()}
            for node, columns in unobserved.items() if columns}


class ProofCells:
    """Every cell of a document, looked up by (tenant, node, column), counted, iterated.
    `listed` holds the cells of the list `cells` by key; `passed` the tenants whose cell passed
    (a dict, in the tenants' order) by (node, column); `unobserved` the same of the undecided
    cells predicted and not observed, with their prediction's verdict and text. Summaries that do
    not fit this document's tenants raise CellsError."""

    def __init__(self, doc: Mapping):
        self.listed = {(cell["tenant"], cell["node"], cell["column"]): cell for cell in doc["cells"]}
        self.passed, self.unobserved = {}, {}
        names = None
        for key in ("passed", "unobserved"):
            summary = doc.get(key)
            if summary is None:
                continue
            if not isinstance(summary, Mapping):
                raise CellsError(key, summary, "not a dict of node: {column: summary}")
            names = names or [tenant["name"] for tenant in doc["tenants"]]
            for node, columns in summary.items():
                if not isinstance(columns, Mapping):
                    raise CellsError(f"{key}.{node}", columns, "not a dict of column: summary")
                for column, entry in columns.items():
                    self._read(key, node, column, entry, names)

    def _read(self, key: str, node: str, column: str, entry, names: list) -> None:
        where = f"{key}.{node}.{column}"
        if key == "unobserved" and not (isinstance(entry, Mapping) and isinstance(entry.get("text"), str)
                                        and isinstance(entry.get("predicted"), str)):
            raise CellsError(where, entry, "not a dict of tenants (ranges), predicted and text")
        ranges = entry["tenants"] if key == "unobserved" else entry
        try:
            # In the tenants' order, so that every reader iterates them alike.
            tenants = dict.fromkeys(names[index] for index in sorted(range_indexes(ranges, len(names))))
        except ValueError as error:
            raise CellsError(where, ranges, str(error)) from None
        doubled = sorted(tenant for tenant in tenants if (tenant, node, column) in self)
        if doubled:
            raise CellsError(where, ranges, f"cells already held elsewhere in the document for {doubled}")
        if key == "passed":
            self.passed[(node, column)] = tenants
        else:
            self.unobserved[(node, column)] = (tenants, entry["predicted"], entry["text"])

    def get(self, key: tuple):
        """The cell of `key`: the listed one, one made from a summary, or None."""
        cell = self.listed.get(key)
        if cell is not None:
            return cell
        made = {"tenant": key[0], "node": key[1], "column": key[2], "findings": []}
        if key[0] in self.passed.get(key[1:], ()):
            return dict(made, verdict=PASS)
        tenants, predicted, text = self.unobserved.get(key[1:], ((), None, None))
        if key[0] in tenants:
            return dict(made, verdict=UNKNOWN, prediction={"verdict": predicted},
                        observation={"verdict": UNKNOWN, "text": text})
        return None

    def __contains__(self, key: tuple) -> bool:
        return (key in self.listed or key[0] in self.passed.get(key[1:], ())
                or key[0] in self.unobserved.get(key[1:], ((),))[0])

    def summarised(self):
        """(verdict, node, column, tenants) of each summary."""
        for (node, column), tenants in self.passed.items():
            yield PASS, node, column, tenants
        for (node, column), (tenants, _predicted, _text) in self.unobserved.items():
            yield UNKNOWN, node, column, tenants

    def summarised_keys(self, verdict=None):
        """The keys of the summarised cells (of one verdict)."""
        for summary, node, column, tenants in self.summarised():
            if verdict in (None, summary):
                for tenant in tenants:
                    yield tenant, node, column

    def passed_keys(self):
        return self.summarised_keys(PASS)

    def summary_of(self, verdict: str, node: str, column: str) -> Mapping:
        """The tenants a summary of `verdict` holds for (node, column): a dict, empty if none."""
        if verdict == PASS:
            return self.passed.get((node, column), {})
        return self.unobserved.get((node, column), ({},))[0]

    def summarised_as(self, key: tuple):
        """The verdict of the summary that holds `key`, or None."""
        if key[0] in self.passed.get(key[1:], ()):
            return PASS
        return UNKNOWN if key[0] in self.unobserved.get(key[1:], ((),))[0] else None

    def __len__(self) -> int:
        return len(self.listed) + sum(len(tenants) for _verdict, _node, _column, tenants in self.summarised())

    def keys(self):
        yield from self.listed
        yield from self.summarised_keys()

    def rows(self) -> set:
        """(tenant, node) of every row with a cell."""
        rows = {(tenant, node) for tenant, node, _column in self.listed}
        for _verdict, node, _column, tenants in self.summarised():
            rows.update((tenant, node) for tenant in tenants)
        return rows

    def verdicts(self) -> Counter:
        counted = Counter(cell["verdict"] for cell in self.listed.values())
        for verdict, _node, _column, tenants in self.summarised():
            counted[verdict] += len(tenants)
        return counted
