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
  - "Fast path: the module's binary is cached on the target in C(~/.ansible/deevnet.net/<module>-<sha256[:16]>)
    (a folder only the remote user can write); its hash is verified once per install and recorded with its
    stat stamp, which every run checks (a changed file is hashed again), so a task is one SSH round trip once
    cached. Under mitogen a task is one call into mitogen's interpreter on the target, which runs the binary
    directly. Set the variable C(deevnet_net_fast_path=false) to use Ansible's stock module path instead.
    The stock path is taken by itself for async tasks, become to an unprivileged user, a cache folder other
    users could change, and targets without C(sha256sum) or C(/proc), with a warning for the last three.
    Each refusal of the cache names its cause and fix (a read-only home, a folder of another user, a link, a home
    writable by its group or by everyone).
    Every upload (the install's, and the stock path's when the fast path sends a task there) goes to a new
    private temp folder in the first of C(remote_tmp) and the system temp folders whose every folder from
    C(/) down belongs to root or the remote user and is writable by no one else; when none is, the task
    fails naming the folder and its owner."
  - "Cache location: the variable C(deevnet_net_cache_dir), else the entry C(cache_dir) of the section
    C([deevnet.net]) in C(ansible.cfg), else the environment variable C(DEEVNET_NET_CACHE_DIR) on the
    controller; default C(~/.ansible/deevnet.net), C(~) standing for the home of the user the module runs as on the
    target. The folder must be an absolute path (or start with C(~/)), a real folder of that user whose parent
    belongs to that user or root, and neither they nor the parent's parent may be writable by a group or by everyone
    (sticky folders such as C(/tmp) excepted)."
  - "Execution environments: ansible-builder's images run as uid 1000 with HOME C(/runner) writable by group
    C(root) (mode 0775), which the cache refuses, so tasks on the controller itself (connection C(local)) take the
    stock path with a warning that says so. To use the fast path there, set C(deevnet_net_cache_dir) (or
    C(DEEVNET_NET_CACHE_DIR) in the environment, for example ansible-runner's C(env/envvars)) to a folder only that
    user can write, such as C(/tmp/deevnet.net-cache). Tasks on managed nodes are not affected: their cache is in the
    node's home."
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
