# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The QinQ section's verdict on a result of the module qinq_check, as a pure function: what
stands in the way of the uplink, given what the role itself fixes after it checked. Nothing here
reads a host.

The documentation of the filter is in qinq_uplink_refusal.yml, next to this file."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# The first line of the refusal: the role runs this check before it writes anything.
REFUSAL = "the QinQ uplink (proxmox_node_network_qinq_uplink) cannot be set up as given; nothing was changed"


def qinq_uplink_refusal(result, role_fixes=()) -> str:
    """The refusal of a qinq_check result, or "" when nothing blocks the uplink. A result without
    `checks` stopped on bad input (an interface that does not exist, a VLAN range written
    backwards, a zone MTU no hop accepts): its message is the refusal. A result with checks is
    refused for each failed check the role does not fix itself (`role_fixes`, the checks' names),
    one line each as the module wrote it (its `msg` holds one line per failed check, starting
    with the check's name). A result marked failed whose every check passed is refused with its
    message: the failure is not the checks'. Otherwise read from the checks (a task's failed_when
    replaces the registered `failed`)."""
    if not isinstance(result, Mapping):
        raise AnsibleFilterError(f"qinq_uplink_refusal: the input must be the registered result of "
                                 f"deevnet.net.qinq_check, not {type(result).__name__} {result!r}")
    if isinstance(role_fixes, (str, bytes)) or not isinstance(role_fixes, (list, tuple)):
        raise AnsibleFilterError(f"qinq_uplink_refusal: role_fixes must be a list of check names, not {role_fixes!r}")
    msg = str(result.get("msg") or "qinq_check failed without a message")
    checks = result.get("checks")
    if not isinstance(checks, list):
        return f"{REFUSAL}:\n{msg}"
    failing = [check for check in checks if not isinstance(check, Mapping) or not check.get("ok")]
    # A failure that no failed check explains (every reported check passed) is the module's own.
    if result.get("failed") is True and not failing:
        return f"{REFUSAL}:\n{msg}"
    blocking = [check for check in failing
                if not isinstance(check, Mapping) or check.get("name") not in role_fixes]
    if not blocking:
        return ""
    fixed_prefixes = tuple(f"{name}: " for name in role_fixes)
    lines = [line for line in msg.splitlines() if line and not line.startswith(fixed_prefixes)]
    return "\n".join([f"{REFUSAL}:", *lines])


class FilterModule:
    """deevnet.net.qinq_uplink_refusal."""

    def filters(self):
        return {"qinq_uplink_refusal": qinq_uplink_refusal}
