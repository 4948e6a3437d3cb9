# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/qinq_probe),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: qinq_probe
short_description: Prove with traffic that a QinQ uplink keeps both VLAN tags, one host pair at a time
version_added: 0.1.0
description:
  - The active pair test of a QinQ uplink (C(bond0) -> C(bond0.40) -> VLAN-aware C(vmbr1)). A NIC
    whose VLAN offload overwrites the inner tag when it inserts the outer one loses the tenant
    VLAN of every frame it sends; only traffic between two hosts shows it, and only in the
    direction that NIC sends. M(deevnet.net.qinq_check) checks the settings of one host; this
    module tests the path.
  - One run is one side of the test. Start O(mode=receive) on the receiving host first (with
    C(async) and C(poll=0)), then O(mode=send) on the sending host, then wait for the receiver
    with C(async_status). Both sides get the same O(run_id), from which both derive the run's
    nonce and each sender's source MAC, so the receiver knows what to look for before anything
    is sent, and the same O(secret), with which every frame is authenticated.
  - "O(mode=send) plugs a probe port into O(bridge) like a guest's - a veth pair whose node end
    C(dvprobe<pid>) is a port of the zone bridge (a tagged member of each of O(vlans) when the
    bridge filters VLANs) and whose other end lives in a network namespace of the module's own
    process. From there it sends O(count) broadcast frames per VLAN of O(vlans), tagged 802.1Q
    with that VLAN, ethertype 0x88b5 (IEEE local experimental), from a locally administered
    source MAC of the run, carrying the run's nonce, the VLAN, the frame's number, the sender's
    O(name) and the NIC and driver the frames leave by, then an HMAC-SHA256 of all that, of the
    run and of the source MAC, keyed with O(secret). Each frame crosses the bridge, the uplink VLAN device
    and the NIC as a guest's frame does. Sending raw frames with both tags straight onto a
    slave would skip the very VLAN offload that loses the inner tag, so it would prove
    nothing."
  - The probe port goes with the run, also on error or C(kill -9) - the namespace has no name
    and is held only by the process, so the kernel removes it and the veth pair with it. The
    node end carries a mark in its alias (the boot, the PID namespace, the process id and its
    start time, as M(deevnet.net.egress_probe)'s workload does), and a marked port whose run is
    verifiably over is removed by the next run, with a warning.
  - "O(mode=receive) opens a packet capture on every NIC under O(uplink) - each slave of the
    bond, active and backup, or the single NIC - filtered in the kernel to the probe's
    ethertype, for at most O(duration) seconds (less once every frame of every sender in
    O(senders) is in). A frame counts for a sender only when its HMAC verifies with O(secret)
    and it comes from that sender's run MAC; any other frame with the run's nonce is counted
    in RV(forged), with a warning, and never as an arrival. It then reads the zone bridge's
    forwarding database. Per sender and VLAN the verdict is V(both_tags) (the outer tag of the
    uplink, then 802.1Q with the VLAN, on every frame that arrived, and at most
    O(max_loss_percent) of the sender's frames lost), V(inner_tag_lost) (only the outer tag -
    the message names this host's receiving slave and the sender's NIC and driver, as the
    sender wrote them into its frames, with the fix), V(other_tags), V(frames_lost) (both tags,
    but more than O(max_loss_percent) of the frames lost), or V(nothing_arrived). On a
    VLAN-aware bridge the sender's MAC must also be learned under the inner VLAN, not VLAN 1."
  - "What a pair that passes proves - at least 100 - O(max_loss_percent) percent of the frames
    the sender sent on that VLAN in this run, each authenticated with O(secret), arrived on
    this host's NICs with the uplink's outer tag and then the inner 802.1Q tag, none arrived
    with another tag stack, and (on a VLAN-aware bridge) the zone bridge learned the sender's
    MAC in the inner VLAN. It proves one direction, the sampled VLANs, and small broadcast
    frames - not the other direction, other VLANs, or full-size frames (the MTU)."
  - "Threat model - the capture sees whatever reaches the uplink, so anyone who can put a frame
    there (a guest in an inner VLAN, which sees every probe frame since they are broadcast; a
    host or device on the switch in the outer VLAN) could try to make a broken direction pass.
    The run's nonce, O(run_id) (often a start time) and each sender's run MAC are public; the
    HMAC keyed with O(secret), which is in no frame, no log and no result (C(no_log)), is what
    proves the sender. Give a new random O(secret) to each run (the playbook
    C(deevnet.net.qinq_acceptance) does) - a frame of another run then fails too. A flood of
    frames costs the receiver constant work per frame and bounded state (the listed senders,
    at most 16 others, 5 forged examples) and a bounded C(msg); frames past the capture's queue
    are counted in RV(dropped). Not covered - the hosts of a run share its secret, so they trust
    each other; and a genuine frame seen during the run (by a guest in its VLAN) can be
    replayed within the run: it repeats a frame its sender did send (each frame counts once),
    but it may reach the receiver by another path than the sender's own."
  - "Traffic is bounded - at most 16 O(vlans), at most 20 frames per VLAN (one every 20 ms), a
    capture of at most 120 seconds, and the frames stay in the named inner VLANs inside the
    uplink's outer VLAN."
  - Refused before anything is created - a O(bridge) or O(uplink) that does not exist, an
    O(uplink) that is not a port of O(bridge), an uplink VLAN device whose id is not
    O(uplink_vlan), VLANs outside 1-4094, and O(count), O(duration), O(vlans) or O(senders)
    over their caps, a O(secret) shorter than 16 characters, and O(max_loss_percent) over 50.
  - C(changed) is always C(false) - no configuration changes and nothing remains.
author:
  - deevnet.net maintainers (@deevnet)
options:
  mode:
    description:
      - V(receive) captures on the uplink's NICs and judges what arrived; V(send) sends the
        probe frames. Start the receivers first.
    type: str
    required: true
    choices: [send, receive]
  run_id:
    description:
      - The same value on every receiver and sender of one test, such as the play's start
        time. The run's nonce and each sender's source MAC derive from it; frames of another
        run are ignored. 1 to 64 printable ASCII characters without spaces.
    type: str
    required: true
  secret:
    description:
      - The same random text on every receiver and sender of one run, 16 to 256 characters,
        made anew for each run and kept from everyone else - the frames' HMAC is keyed with it,
        so a frame counts only if a holder of the secret sent it. It never travels in a frame
        and is C(no_log). Make one on the controller, for instance
        C(lookup('ansible.builtin.password', '/dev/null', length=32, chars=['ascii_letters', 'digits'])),
        set once per play with C(run_once).
    type: str
    required: true
  bridge:
    description:
      - The zone bridge the uplink VLAN device is a port of, such as C(vmbr1). The sender's
        probe port plugs into it; the receiver reads its forwarding database.
    type: str
    required: true
  uplink:
    description:
      - The uplink VLAN device, such as C(bond0.40) or C(eno1.40) (a single NIC), a port of
        O(bridge). The NICs under it - the bond's slaves, or the NIC - are where the receiver
        captures and what the sender names in its frames.
      - A NIC that is itself the bridge port (the outer tag is put on past it) is taken too.
    type: str
    required: true
  uplink_vlan:
    description:
      - The outer VLAN id. An uplink VLAN device with another id is refused.
    type: int
    required: true
  vlans:
    description:
      - The inner VLANs to test, each 1-4094, at most 16. Sample the zone's VLANs, for
        instance its first and last tenant VLAN and the transit VLAN.
    type: list
    elements: int
    required: true
  name:
    description:
      - This host's name, required with O(mode=send) - the receivers report senders by it, and
        it selects the sender's source MAC. With O(mode=receive), the name the messages give
        the receiver (default C(this host)).
    type: str
  count:
    description:
      - Frames per VLAN a sender sends, 1 to 20.
    type: int
    default: 3
  senders:
    description:
      - The O(name) of every sender the receiver expects, at most 64. An expected sender
        without frames is V(nothing_arrived); a sender of the run that is not listed is
        reported too. The capture ends early once every frame of every listed sender is in.
    type: list
    elements: str
    default: []
  duration:
    description:
      - Seconds the receiver captures at most, 1 to 120.
    type: int
    default: 10
  max_loss_percent:
    description:
      - The share of a sender's frames on a VLAN that may go missing with the pair still
        passing, 0 to 50 - more lost is V(frames_lost). The default 20 passes a pair when at
        least 4 in 5 of its frames arrive - with the default O(count) of 3, all of them; from
        5 frames on, one may be lost (a frame dropped while the path settles). A pair that
        passed with 1 frame of 20 would prove only that the path worked once.
      - Used by O(mode=receive); the count sent is what the sender's frames say.
    type: int
    default: 20
extends_documentation_fragment:
  - deevnet.net.module
attributes:
  check_mode:
    support: full
    description: >-
      The test runs in check mode too. It changes no configuration and leaves nothing behind,
      and a test that did not run would prove nothing.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
notes:
  - "On the target: Linux, run as root (it creates a network namespace and a veth pair, and
    opens packet sockets)."
  - A receiver fails when any sender/VLAN pair is not V(both_tags), or when the zone bridge
    learned a sender's MAC outside its inner VLAN; its C(msg) names the first 16 broken pairs
    and how many more there are (all are in RV(pairs)); use C(failed_when) or C(ignore_errors) to
    only report. A sender fails only when it could not send.
  - A zone bridge that does not filter VLANs carries the frames with their inner tag as they
    are, and its forwarding database cannot show a VLAN - the fdb part is V(not_checked), with
    a warning (M(deevnet.net.qinq_check) fails such a bridge).
seealso:
  - module: deevnet.net.qinq_check
    description: The uplink's settings on one host, and the fix for a lost inner tag (O(deevnet.net.qinq_check#module:fix_txvlan)).
'''

EXAMPLES = r'''
# One run id and one secret for the run, made on the controller (the secret keys the frames'
# HMAC; no_log keeps it out of the output).
- name: The run's id and secret
  ansible.builtin.set_fact:
    qinq_run_id: "{{ now(utc=true, fmt='%Y%m%dT%H%M%S') }}"
    qinq_secret: "{{ lookup('ansible.builtin.password', '/dev/null', length=32, chars=['ascii_letters', 'digits']) }}"
  run_once: true
  no_log: true

# The receiver first, in the background; then the sender; then the receiver's verdict.
- name: Receive on hv02 what hv01 sends on the tenant VLANs
  deevnet.net.qinq_probe:
    mode: receive
    run_id: "{{ qinq_run_id }}"
    secret: "{{ qinq_secret }}"
    bridge: vmbr1
    uplink: bond0.40
    uplink_vlan: 40
    vlans: [201, 299]
    name: hv02
    senders: [hv01]
    duration: 20
  async: 40
  poll: 0
  register: qinq_receiver
  delegate_to: hv02

- name: Send from hv01
  deevnet.net.qinq_probe:
    mode: send
    run_id: "{{ qinq_run_id }}"
    secret: "{{ qinq_secret }}"
    bridge: vmbr1
    uplink: bond0.40
    uplink_vlan: 40
    vlans: [201, 299]
    name: hv01
  delegate_to: hv01

- name: The verdict per VLAN (fails naming the direction, the slaves and the fix)
  ansible.builtin.async_status:
    jid: "{{ qinq_receiver.ansible_job_id }}"
  register: qinq_verdict
  until: qinq_verdict.finished
  retries: 30
  delay: 1
  delegate_to: hv02
'''

RETURN = r'''
mode:
  description: The O(mode) of the run.
  returned: when the options are valid and the uplink exists
  type: str
  sample: receive
run_id:
  description: The O(run_id) of the run.
  returned: when the options are valid and the uplink exists
  type: str
  sample: "2026-12-03T15:40:00"
slaves:
  description:
    - This host's NICs under O(uplink) - the bond's slaves or the single NIC - with the driver
      (C(null) when ethtool cannot say) and the role (C(active), C(backup), or C(null) for a
      single NIC or when the bond does not say).
  returned: when the options are valid and the uplink exists
  type: list
  elements: dict
  sample:
    - {"name": "eno1", "driver": "mlx4_en", "role": "active"}
    - {"name": "eno2", "driver": "mlx4_en", "role": "backup"}
source_mac:
  description: The sender's source MAC in this run (derived from O(run_id) and O(name)); C(null) for a receiver.
  returned: when the options are valid and the uplink exists
  type: str
  sample: "02:5b:1c:9e:04:7a"
sent:
  description: The frames a sender sent per VLAN; empty for a receiver.
  returned: when the options are valid and the uplink exists
  type: list
  elements: dict
  sample:
    - {"vlan": 201, "frames": 3}
pairs:
  description:
    - A receiver's verdict per sender and VLAN - every sender of O(senders) and every other
      sender of the run seen, each on every VLAN of O(vlans); empty for a sender.
    - C(verdict) is C(both_tags), C(inner_tag_lost), C(other_tags), C(frames_lost) or
      C(nothing_arrived); C(ok) is false when it is not C(both_tags) or when the fdb check
      failed.
    - C(sent) is the frames the sender sent on the VLAN, as its authenticated frames say
      (C(null) when nothing arrived); C(loss_percent) the rounded share of them that did not
      arrive (C(100) when nothing arrived).
    - C(received), C(both_tags), C(outer_only) count the frames, each once however many of this
      host's NICs it arrived on (a switch floods to a backup slave too); C(receiving_slaves) are this
      host's NICs they arrived on; C(sender_slave) and C(sender_driver) are the sender's NICs
      and driver as its frames say (C(null) when nothing arrived); C(tags_seen) lists each
      tag stack seen, outer first.
    - C(fdb) has the sender's C(mac), the C(vlans) the zone bridge learned it under (C(0) for
      an entry without a VLAN), and C(verdict) - C(inner_vlan), C(vlan1), C(other_vlan),
      C(absent), or C(not_checked) on a bridge that does not filter VLANs.
    - C(message) says what is wrong and the fix; empty when ok.
  returned: when the options are valid and the uplink exists
  type: list
  elements: dict
  sample:
    - {"sender": "hv01", "vlan": 201, "verdict": "inner_tag_lost", "ok": false, "sent": 3,
       "received": 3, "loss_percent": 0, "both_tags": 0, "outer_only": 3, "receiving_slaves": ["eno1"], "sender_slave": "eno2",
       "sender_driver": "mlx4_en", "tags_seen": ["802.1Q 40"],
       "fdb": {"mac": "02:5b:1c:9e:04:7a", "vlans": [1], "verdict": "vlan1"},
       "message": "hv01 -> hv02, VLAN 201: 3 of 3 frames arrived with only the outer tag
                   (802.1Q 40) on eno1: the inner tag was lost on the way; it left hv01's eno2
                   (driver mlx4_en), whose VLAN offload overwrites the inner tag: switch
                   txvlan off there ..."}
dropped:
  description:
    - Frames the kernel dropped from the receiver's capture because its queue was full; a
      capture that dropped frames proves nothing about the missing ones. C(0) for a sender.
  returned: when the options are valid and the uplink exists
  type: int
  sample: 0
forged:
  description:
    - Frames with the run's nonce that did not prove their sender - their HMAC does not verify
      with O(secret) (C(bad_authenticator)), they come from another MAC than the run MAC of
      the sender they name (C(foreign_source)), or they cannot be read or are numbered past
      their count (C(malformed)). Counted in C(frames), the first 5 kept in C(examples) with
      the C(sender) they name, their C(source_mac), the C(vlan) they claim and the C(reason);
      never counted as arrivals. A receiver that saw any also warns. C(0) and empty for a
      sender.
  returned: when the options are valid and the uplink exists
  type: dict
  sample: {"frames": 3, "examples": [{"sender": "hv01", "source_mac": "02:5b:1c:9e:04:7a",
           "vlan": 201, "reason": "bad_authenticator"}]}
untracked:
  description:
    - Authenticated frames a receiver did not count - on a VLAN not in O(vlans), or from a
      sender not in O(senders) past the first 16 such senders. C(0) for a sender.
  returned: when the options are valid and the uplink exists
  type: int
  sample: 0
'''
