# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/change_guard),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: change_guard
short_description: One guarded change on a node - its lock, its snapshot and a dead-man's switch
version_added: 0.1.0
description:
  - The node's side of a guarded change. A run is named by O(run_id) and moves through the states
    V(locked), V(armed), then V(confirmed) or V(restored), and V(unlocked).
  - The lock refuses a second guarded change on the node while one runs, naming the run that holds
    it, its holder and since when.
  - Arming takes a snapshot of the files the change may touch and starts a dead-man's switch on the
    node. Unless the controller confirms before O(timeout), the switch restores the snapshot and
    runs the reload commands of the files it restored. The switch lives on the node, not in the SSH
    session. It survives the controller's death and the loss of the connection. A run still armed
    at boot is restored before the network starts.
  - The switch is a transient systemd timer when systemd is PID 1, otherwise a process of its own
    session, recorded with its pid and start time. It is only ever signalled while it is that very
    process.
author:
  - deevnet.net maintainers (@deevnet)
options:
  state:
    description:
      - V(locked) takes the collection's lock on the node for O(run_id). Held by the same run, it
        changes nothing; held by another, the task fails naming it, its holder and since when.
      - V(unlocked) releases the lock held by O(run_id). It never removes another run's lock.
      - V(armed) needs the lock. It takes the snapshot of O(paths) and starts the switch, and reports
        success only once it saw the switch running. A run armed already changes nothing, unless
        O(timeout) changed (a new deadline) or its switch is gone (a new switch).
      - V(confirmed) disarms the switch and removes the snapshot's copies. A run the switch already
        rolled back fails.
      - V(restored) rolls the run back now - the files that differ from the snapshot are restored,
        then the reload commands they call for run. A run rolled back already changes nothing and
        returns what that rollback did.
      - V(status) reads the lock and the run's switch.
    type: str
    required: true
    choices: [locked, unlocked, armed, confirmed, restored, status]
  run_id:
    description:
      - The run's name - 1 to 64 letters, digits, C(_), C(.) or C(-), starting with a letter or a
        digit, such as C(fabric-change-20261207T141500Z-a1b2).
    type: str
    required: true
  holder:
    description:
      - Who runs the change (the controller's host and user), shown to a run the lock refuses.
    type: str
    default: ""
  state_dir:
    description:
      - The guard's own folder on the node - the lock, each run's snapshot and switch, and the copy of
        this module's program that the switch and the boot run.
      - It must be owned by root and writable by root only, and so must every folder above it;
        otherwise the task fails naming the folder, since what it holds is restored and run as root.
        It is created with mode 0700.
    type: path
    default: /var/lib/deevnet/fabric-change
  paths:
    description:
      - With O(state=armed), the absolute paths the change may touch.
      - A folder means every regular file and symlink under it; a file the change creates there is
        removed by a restore. A path that does not exist is recorded as absent, and a restore removes
        what the change created there.
      - A FIFO, a device or a socket is refused, naming it, before anything changes.
    type: list
    elements: path
    default: []
  reload:
    description:
      - With O(state=armed), what a restore runs after it changed a file under one of C(paths), in
        list order, each command line at most once.
      - C(argv[0]) is a program's absolute path. It runs as root, so it must be owned by root in
        folders only root can write; otherwise the task fails before anything changes.
      - The switch's restore at boot runs none of them, since the network starts after it and reads
        the restored files.
    type: list
    elements: dict
    default: []
    suboptions:
      paths:
        description: Absolute paths or folders. A restored file that is one of them, or under one, calls for the command.
        type: list
        elements: path
        required: true
      argv:
        description: The program's absolute path, then its arguments. No shell runs them.
        type: list
        elements: str
        required: true
  timeout:
    description:
      - With O(state=armed), the seconds from 10 to 86400 after which the switch fires.
      - Give the controller time to reconnect, run its checks and confirm.
    type: int
    default: 300
extends_documentation_fragment:
  - deevnet.net.module
attributes:
  check_mode:
    support: full
    description: Says what the run would do - the lock, the snapshot, the files a rollback would restore; nothing changes.
  diff_mode:
    support: full
    description: With O(state=restored), each file a rollback restores, from what it is to what the snapshot holds.
notes:
  - "On the target: Linux, as root. A reload command runs with an empty environment but C(PATH),
    for at most 120 seconds."
  - Idempotent; a second run of the same state reports C(changed=false).
'''

EXAMPLES = r'''
- name: Take the node's lock for this change
  deevnet.net.change_guard:
    state: locked
    run_id: "{{ change_run_id }}"
    holder: "{{ lookup('env', 'USER') }}@{{ inventory_hostname }}"
  become: true

- name: Snapshot the network and FRR files, and arm the switch for five minutes
  deevnet.net.change_guard:
    state: armed
    run_id: "{{ change_run_id }}"
    paths: [/etc/network/interfaces, /etc/network/interfaces.d, /etc/frr/frr.conf]
    reload:
      - paths: [/etc/frr/frr.conf]
        argv: [/usr/bin/systemctl, reload, frr]
    timeout: 300
  become: true

- name: The change held - disarm the switch
  deevnet.net.change_guard:
    state: confirmed
    run_id: "{{ change_run_id }}"
  become: true

- name: The change broke something - roll back now
  deevnet.net.change_guard:
    state: restored
    run_id: "{{ change_run_id }}"
  become: true

- name: Release the lock
  deevnet.net.change_guard:
    state: unlocked
    run_id: "{{ change_run_id }}"
  become: true
'''

RETURN = r'''
lock:
  description: The collection's lock on the node after the run - C(run_id), C(holder) and C(since) (UTC); C(null) when free.
  returned: always
  type: dict
  sample: {"run_id": "fabric-change-20261207T141500Z-a1b2", "holder": "ops@ctl1", "since": "2026-12-07T14:15:00Z"}
switch:
  description:
    - The run's switch - C(run_id), C(deadline) (epoch seconds), C(timer) (V(systemd) or V(process)),
      C(unit) or C(pid), and C(state).
    - C(state) is V(armed), V(confirmed), V(restored) (by the controller), V(expired) (by the switch's
      timer) or V(booted) (at boot). C(null) when the run was never armed on the node.
  returned: always
  type: dict
  sample: {"run_id": "fabric-change-20261207T141500Z-a1b2", "deadline": 1796653200, "timer": "process", "pid": 4242, "state": "armed"}
snapshot:
  description: With O(state=armed), each file of the snapshot - C(path) and whether it C(existed).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/etc/network/interfaces", "existed": true}, {"path": "/etc/network/interfaces.d/vmbr9", "existed": false}]
restored:
  description: The paths the rollback of the run restored or removed (with O(state=restored) in check mode, those it would).
  returned: always
  type: list
  elements: path
  sample: [/etc/network/interfaces]
reloads:
  description: The reload commands the rollback ran - C(argv), C(rc) (-1 when it could not run), and the tails of C(stdout) and C(stderr).
  returned: always
  type: list
  elements: dict
  sample: [{"argv": ["/usr/bin/systemctl", "reload", "frr"], "rc": 0, "stdout": "", "stderr": ""}]
remaining:
  description: Seconds until the switch fires, while the run is armed; C(null) otherwise.
  returned: always
  type: int
  sample: 287
'''
