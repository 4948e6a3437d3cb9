# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every deevnet.net module shares: where it runs, and how a task reaches it."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r'''
requirements:
  # ansible-doc joins the items with ", ": each is a phrase, no closing period.
  - x86_64 Linux with glibc 2.34 or later on the target, such as Proxmox VE 8 and 9 nodes (the module is a
    compiled program, so the target needs no Python)
  - ansible-core 2.15 or later on the controller
attributes:
  action:
    support: full
    description: Runs through the collection's action plugin (the fast path, see the notes).
  async:
    support: full
    description: An async task takes Ansible's stock module path, with its async wrapper.
  platform:
    support: full
    platforms: posix
    description: x86_64 Linux with glibc 2.34 or later (Proxmox VE 8 and 9).
notes:
  - "Fast path: the action plugin runs the binary cached on the target (one SSH round trip per task); set
    C(deevnet_net_fast_path=false) for Ansible's stock module path. How it works, where the cache is
    (C(deevnet_net_cache_dir)), what it refuses and execution environments: C(docs/fast-path.md) in the
    collection, also on its docsite."
'''

    # The options and policy of the modules that read and replace one file.
    FILES = r'''
options:
  backup:
    description:
      - Keep the previous file as C(<path>.<pid>.<YYYY-MM-DD@HH:MM:SS>~) before changing it.
    type: bool
    default: false
  lock_timeout:
    description:
      - Seconds to wait, from 1 to 3600, for another run that holds the lock on the file.
      - The lock is a file only root can open (C(/run/lock/deevnet.net/)), keyed by the file's
        real path, so a link and the real path share it and no other user can block a run.
    type: int
    default: 30
  follow_untrusted_links:
    description:
      - O(path) (or a file the module reads) may be a link. A link is followed only when nobody but
        root could have planted or changed it (the link, its folder and every folder of its target
        owned by root and not writable by group or others); otherwise the task fails naming the
        owner, since the link could lead to a secret or to a file someone wants overwritten.
      - V(true) follows such links on purpose. A link to C(/dev/null) (a masked file) is never
        written through, whatever this says.
    type: bool
    default: false
notes:
  - "Paths: C(~), C(~user), C($VAR) and C(${VAR}) in O(path) (and in folders given as paths) are expanded
    on the target, with the environment and C(HOME) of the user the module runs as there (as Ansible's
    C(path) type does for a Python module); an undefined variable is left as it is. An empty path is
    refused."
  - "Files: only regular files are read or replaced (a FIFO, device or socket fails the task), reads stop
    at 16 MiB, a file masked with a link to C(/dev/null) fails the task and is left alone, and a
    replaced file keeps its mode, owner, group, ACLs and extended attributes, and a trusted link
    (see O(follow_untrusted_links)) is written through to its target. The replacement is atomic
    (a temporary file in the same folder, renamed over it); temporary files of killed runs are removed."
'''

    # The assertion modules' option (vrf_route_assert, egress_probe), declared once in their runtime.
    FINDINGS = r'''
options:
  findings:
    description:
      - What the module does with its findings (the checks that fail), in any mode.
      - V(fail) fails the task.
      - V(warn) reports each finding as one of the module's warnings (a C([WARNING]) line) and
        the task succeeds with its full result, for an assertion run as a report. The role
        C(deevnet.net.proxmox_node_network) sets it where its setting is V(warn).
      - Errors that are not findings (bad input, a tool that is missing or hangs) fail the
        task whatever this says.
    type: str
    choices: [fail, warn]
    default: fail
'''

    CHECK_MODE_FINDINGS = r'''
options:
  check_mode_findings:
    description:
      - What the module does in check mode with its findings (the checks that fail).
      - V(fail) fails the task, as outside check mode.
      - "V(warn) reports each finding as one of the module's warnings (a C([WARNING]) line that
        starts with C(would still be wrong unless a task before this one fixes it))
        and the task succeeds with its full result: in check mode the tasks before the assertion
        changed nothing, so a finding may be what a real run fixes first. The role
        C(deevnet.net.proxmox_node_network) sets it."
      - Outside check mode, and for errors that are not findings (bad input, a missing device),
        the task fails whatever this says.
    type: str
    choices: [fail, warn]
    default: fail
'''

    # The attributes of the modules that only read (bgp_evpn_assert, sdn_check, vrf_route_assert).
    READ_ONLY = r'''
attributes:
  check_mode:
    support: full
    description: The module only reads, so check mode runs every check.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
'''
