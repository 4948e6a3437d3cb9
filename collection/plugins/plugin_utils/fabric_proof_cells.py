# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric proof's cells as its document (deevnet.net.fabric_proof/1) keeps them, written and
read in this one place: every cell that did not pass in full (the list `cells`), and the cells
that passed summarised (`passed`: per node and column, the tenants whose cell there passed, as
ranges of indexes into the document's `tenants`, e.g. "0-41,43-499").

A passing cell has no findings, so its key (tenant, node, column) says all that a comparison of
two documents needs: the diff and the guarded change's comparison stay exact. A document
without `passed` lists every cell in `cells`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

PASS = "pass"


class CellsError(ValueError):
    """What of the document's `passed` is wrong: where, its value, and what it is instead."""

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
        low, _dash, high = part.partition("-")
        if not low.isdecimal() or not (high.isdecimal() or not _dash):
            raise ValueError(f"{part!r} is not an index or a range such as 0-41")
        low, high = int(low), int(high) if _dash else int(low)
        if low > high or high >= count:
            raise ValueError(f"{part!r} is not a range of the {count} tenants' indexes")
        indexes.extend(range(low, high + 1))
    return indexes


def passed_summary(passed: Mapping) -> dict:
    """The document's `passed` from {node: {column: [tenant index, ...]}}, in the same order."""
    return {node: {column: pass_ranges(indexes) for column, indexes in columns.items()}
            for node, columns in passed.items()}


class ProofCells:
    """Every cell of a document, the passing ones summarised: looked up by (tenant, node,
    column), counted, iterated. `listed` holds the cells of the list `cells` by key; `passed`
    the names of the tenants whose cell passed (a dict, in the tenants' order), by (node,
    column). A `passed` that is not a
    summary of this document's tenants raises CellsError."""

    def __init__(self, doc: Mapping):
        self.listed = {(cell["tenant"], cell["node"], cell["column"]): cell for cell in doc["cells"]}
        self.passed = {}
        summary = doc.get("passed")
        if summary is None:
            return
        if not isinstance(summary, Mapping):
            raise CellsError("passed", summary, "not a dict of node: {column: ranges}")
        names = [tenant["name"] for tenant in doc["tenants"]]
        for node, columns in summary.items():
            if not isinstance(columns, Mapping):
                raise CellsError(f"passed.{node}", columns, "not a dict of column: ranges")
            for column, ranges in columns.items():
                try:
                    # In the tenants' order, so that every reader iterates them alike.
                    tenants = dict.fromkeys(names[index] for index in sorted(range_indexes(ranges, len(names))))
                except ValueError as error:
                    raise CellsError(f"passed.{node}.{column}", ranges, str(error)) from None
                doubled = sorted(tenant for tenant in tenants if (tenant, node, column) in self.listed)
                if doubled:
                    raise CellsError(f"passed.{node}.{column}", ranges, f"also listed in cells for {doubled}")
                self.passed[(node, column)] = tenants

    def get(self, key: tuple):
        """The cell of `key`: the listed one, a passing one made from its key, or None."""
        cell = self.listed.get(key)
        if cell is None and key[0] in self.passed.get(key[1:], ()):
            cell = {"tenant": key[0], "node": key[1], "column": key[2], "verdict": PASS, "findings": []}
        return cell

    def __contains__(self, key: tuple) -> bool:
        return key in self.listed or key[0] in self.passed.get(key[1:], ())

    def __len__(self) -> int:
        return len(self.listed) + sum(len(tenants) for tenants in self.passed.values())

    def passed_keys(self):
        """The keys of the passing cells of the summary."""
        for (node, column), tenants in self.passed.items():
            for tenant in tenants:
                yield tenant, node, column

    def keys(self):
        yield from self.listed
        yield from self.passed_keys()

    def rows(self) -> set:
        """(tenant, node) of every row with a cell."""
        rows = {(tenant, node) for tenant, node, _column in self.listed}
        for (node, _column), tenants in self.passed.items():
            rows.update((tenant, node) for tenant in tenants)
        return rows

    def verdicts(self) -> Counter:
        counted = Counter(cell["verdict"] for cell in self.listed.values())
        counted[PASS] += sum(len(tenants) for tenants in self.passed.values())
        return counted
