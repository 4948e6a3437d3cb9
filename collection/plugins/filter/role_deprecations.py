# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A role's renamed variables, reported by the role itself: each old name still set is one of
Ansible's own deprecation warnings (what deprecation_warnings=False silences).

The documentation of the filter is in renamed_variables.yml, next to this file."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.display import Display

KEYS = ("old", "new", "removed_in", "by", "set")


def renamed_in_use(renamed, hostvars=None, hosts=()) -> list[dict]:
    """The entries of `renamed` (each with `old`, `new`, `removed_in`, `by` and `set`, whether the
    old name is set for the calling host) whose old name is set: for the calling host, or for any
    of `hosts` in `hostvars` (its inventory, facts and extra variables). The play's own variables
    are the same for every host, so the calling host's `set` covers them: one task run once sees
    the whole play."""
    if not isinstance(renamed, (list, tuple)):
        raise AnsibleFilterError(f"renamed_variables: the input must be a list of renamed variables, got {renamed!r}")
    for entry in renamed:
        missing = [key for key in KEYS if not isinstance(entry, Mapping) or key not in entry]
        if missing:
            raise AnsibleFilterError(f"renamed_variables: the entry {entry!r} lacks {', '.join(missing)}; "
                                     f"each entry needs {', '.join(KEYS)}")
    # The names only (iterating a host's variables templates none of them).
    names = [set(hostvars[host]) for host in hosts or () if hostvars is not None and host in hostvars]
    return [entry for entry in renamed
            if boolean(entry["set"], strict=True) or any(entry["old"] in known for known in names)]


def renamed_variable_deprecations(renamed, hostvars=None, hosts=()) -> list[dict]:
    """One deprecation for each entry of renamed_in_use(): its message names the role, the old
    name, the release that stops reading it and the new name."""
    return [{"msg": (f"{entry['by']}: the variable {entry['old']} is deprecated and is read only until "
                     f"deevnet.net {entry['removed_in']}; rename it to {entry['new']}"),
             "version": str(entry["removed_in"])}
            for entry in renamed_in_use(renamed, hostvars, hosts)]


def renamed_variables(renamed, hostvars=None, hosts=()) -> list[str]:
    """The filter as a role calls it: each deprecation shown as Ansible's own deprecation warning
    (Ansible removes repeats within a process), and the old names in use returned."""
    for deprecation in renamed_variable_deprecations(renamed, hostvars, hosts):
        # The version is the role's data (its vars/main.yml), not a literal pylint could check: the
        # collection's tests check each role entry's removed_in against the collection's version.
        # pylint: disable-next=collection-invalid-deprecated-version
        Display().deprecated(deprecation["msg"], version=deprecation["version"], collection_name="deevnet.net")
    return [entry["old"] for entry in renamed_in_use(renamed, hostvars, hosts)]


class FilterModule:
    """deevnet.net.renamed_variables."""

    def filters(self):
        return {"renamed_variables": renamed_variables}
