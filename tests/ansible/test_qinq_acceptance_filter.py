"""The QinQ acceptance matrix of the playbook deevnet.net.qinq_acceptance
(collection/plugins/filter/qinq_acceptance.py), without a host: from the receivers' registered
results to the rows, the printed table and the broken pairs. The results are shaped as the module
qinq_probe's RETURN documents `pairs`, inside async_status's result."""
from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest
from ansible.errors import AnsibleFilterError

from conftest import ROOT, VENV_BIN

_spec = importlib.util.spec_from_file_location(
    "qinq_acceptance", ROOT / "collection" / "plugins" / "filter" / "qinq_acceptance.py")
qinq_acceptance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qinq_acceptance)
matrix = qinq_acceptance.qinq_acceptance_matrix
table = qinq_acceptance.qinq_acceptance_table
broken = qinq_acceptance.qinq_acceptance_broken

HOSTS = ["hv01", "hv02", "hv03"]
VLANS = [201, 299]
LOST = ("{sender} -> {receiver}, VLAN {vlan}: 3 of 3 frames arrived with only the outer tag (802.1Q 40) on "
        "eno1: the inner tag was lost on the way; it left {sender}'s eth1 (driver mlx4_en), whose VLAN offload "
        "overwrites the inner tag: switch txvlan off there")


def pair(sender: str, receiver: str, vlan: int, verdict: str = "both_tags", **given) -> dict:
    """A receiver's verdict as qinq_probe returns it: both tags by default."""
    ok = verdict == "both_tags"
    made = {
        "sender": sender, "vlan": vlan, "verdict": verdict, "ok": ok, "frames": 3,
        "both_tags": 3 if ok else 0, "outer_only": 3 if verdict == "inner_tag_lost" else 0,
        "receiving_slaves": ["eno1"], "sender_slave": "eth0", "sender_driver": "mlx4_en",
        "tags_seen": ["802.1ad 40 / 802.1Q %d" % vlan],
        "fdb": {"mac": "02:5b:1c:9e:04:7a", "vlans": [vlan], "verdict": "inner_vlan"},
        "message": "",
    }
    made.update(given)
    if verdict == "inner_tag_lost" and "message" not in given:
        made["message"] = LOST.format(sender=sender, receiver=receiver, vlan=vlan)
    return made


def receiver_result(receiver: str, pairs: list) -> dict:
    """async_status's result of a receiver that finished (failed when a pair is not ok)."""
    failed = not all(one["ok"] for one in pairs)
    return {"finished": 1, "started": 1, "changed": False, "failed": failed, "mode": "receive",
            "ansible_job_id": f"j{receiver}", "pairs": pairs, "dropped": 0,
            "msg": "; ".join(one["message"] for one in pairs if not one["ok"])
            or f"both tags arrived for all {len(pairs)} sender/VLAN pairs"}


def healthy(faults=None) -> dict:
    """Every receiver's result for HOSTS and VLANS; `faults` maps (sender, receiver, vlan) to the
    pair's changes."""
    faults = faults or {}
    return {receiver: receiver_result(receiver, [
        pair(sender, receiver, vlan, **faults.get((sender, receiver, vlan), {}))
        for sender in HOSTS if sender != receiver for vlan in VLANS]) for receiver in HOSTS}


def keys(rows) -> list:
    return [(row["sender"], row["receiver"], row["vlan"]) for row in rows]


def hv02_loses_the_inner_tag_on_eth1() -> dict:
    return healthy({(sender, receiver, vlan): {"verdict": "inner_tag_lost", "sender_slave": "eth1"}
                    for sender in ["hv02"] for receiver in HOSTS if receiver != sender for vlan in VLANS})


# --- the matrix -----------------------------------------------------------------------------------

def test_one_broken_direction_on_one_slave_breaks_exactly_its_rows_and_names_the_slave():
    rows = matrix(hv02_loses_the_inner_tag_on_eth1(), HOSTS, VLANS)

    assert keys(rows) == [(sender, receiver, vlan) for sender in HOSTS for receiver in HOSTS
                          if receiver != sender for vlan in VLANS]
    assert keys(broken(rows)) == [("hv02", "hv01", 201), ("hv02", "hv01", 299),
                                  ("hv02", "hv03", 201), ("hv02", "hv03", 299)]
    assert rows[4] == {
        "sender": "hv02", "receiver": "hv01", "vlan": 201, "verdict": "inner_tag_lost", "ok": False,
        "message": LOST.format(sender="hv02", receiver="hv01", vlan=201), "sender_slave": "eth1",
        "receiving_slaves": ["eno1"], "fdb_verdict": "inner_vlan"}
    assert all(type(row) is dict and row["verdict"] == "both_tags" and row["message"] == ""
               for row in rows if row["ok"])

    assert table(rows, HOSTS) == [
        "sender -> receiver  hv01       hv02  hv03",
        "hv01                -          ok    ok",
        "hv02                LOST eth1  -     LOST eth1",
        "hv03                ok         ok    -",
    ] + [LOST.format(sender="hv02", receiver=receiver, vlan=vlan) for receiver in ("hv01", "hv03")
         for vlan in VLANS]


def test_a_healthy_round_is_all_ok_and_prints_no_message():
    rows = matrix(healthy(), HOSTS, VLANS)
    assert len(rows) == 12 and broken(rows) == []
    assert table(rows, HOSTS) == [
        "sender -> receiver  hv01  hv02  hv03",
        "hv01                -     ok    ok",
        "hv02                ok    -     ok",
        "hv03                ok    ok    -",
    ]


@pytest.mark.parametrize("result, reason", [
    (None, "no result was registered for it (the host was unreachable, or failed before the verdicts were "
           "collected)"),
    ({}, "no result was registered for it (the host was unreachable, or failed before the verdicts were "
         "collected)"),
    ({"finished": 0, "started": 1, "ansible_job_id": "j3", "failed": False}, "it did not finish"),
    ({"finished": 1, "failed": True, "msg": "bridge: there is no interface vmbr9 on this node"},
     "bridge: there is no interface vmbr9 on this node"),
], ids=["missing", "empty", "unfinished", "failed-without-pairs"])
def test_a_receiver_without_verdicts_gives_no_result_rows_naming_the_direction_and_why(result, reason):
    results = healthy()
    if result is None:
        del results["hv03"]
    else:
        results["hv03"] = result
    rows = matrix(results, HOSTS, VLANS)

    assert keys(broken(rows)) == [("hv01", "hv03", 201), ("hv01", "hv03", 299),
                                  ("hv02", "hv03", 201), ("hv02", "hv03", 299)]
    assert broken(rows)[0] == {
        "sender": "hv01", "receiver": "hv03", "vlan": 201, "verdict": "no_result", "ok": False,
        "message": f"hv01 -> hv03, VLAN 201: the receiver gave no verdict: {reason}",
        "sender_slave": None, "receiving_slaves": [], "fdb_verdict": None}
    assert table(rows, HOSTS)[:4] == [
        "sender -> receiver  hv01  hv02  hv03",
        "hv01                -     ok    NO RESULT",
        "hv02                ok    -     NO RESULT",
        "hv03                ok    ok    -",
    ]


def test_a_sender_or_vlan_missing_from_the_pairs_gives_no_result_for_that_row_alone():
    results = healthy()
    results["hv01"]["pairs"] = [one for one in results["hv01"]["pairs"]
                                if (one["sender"], one["vlan"]) != ("hv03", 299)]
    results["hv02"]["pairs"] = [one for one in results["hv02"]["pairs"] if one["sender"] != "hv01"]
    rows = matrix(results, HOSTS, VLANS)

    assert [(row["sender"], row["receiver"], row["vlan"], row["verdict"]) for row in broken(rows)] == [
        ("hv01", "hv02", 201, "no_result"), ("hv01", "hv02", 299, "no_result"),
        ("hv03", "hv01", 299, "no_result")]
    assert broken(rows)[2]["message"] == ("hv03 -> hv01, VLAN 299: the receiver gave no verdict: its pairs hold "
                                          "none for this sender and VLAN; it said: both tags arrived for all 4 "
                                          "sender/VLAN pairs")
    assert table(rows, HOSTS)[:4] == [
        "sender -> receiver  hv01             hv02       hv03",
        "hv01                -                NO RESULT  ok",
        "hv02                ok               -          ok",
        "hv03                NO RESULT (299)  ok         -",
    ]


def test_both_tags_with_the_mac_learned_in_vlan1_is_broken_and_named_fdb_vlan1():
    message = ("hv01 -> hv02, VLAN 201: both tags arrived, but the zone bridge vmbr1 learned it in VLAN 1, not in "
               "VLAN 201")
    fdb = {"mac": "02:5b:1c:9e:04:7a", "vlans": [1], "verdict": "vlan1"}
    results = healthy({("hv01", "hv02", vlan): {"ok": False, "fdb": fdb, "message": message} for vlan in VLANS})
    rows = matrix(results, HOSTS, VLANS)

    assert [(row["verdict"], row["ok"], row["fdb_verdict"]) for row in broken(rows)] == [
        ("both_tags", False, "vlan1")] * 2
    assert table(rows, HOSTS)[1] == "hv01                -     FDB vlan1  ok"
    assert table(rows, HOSTS)[4:] == [message, message]


def test_each_fault_has_its_token_and_a_token_of_some_vlans_names_them():
    results = healthy({
        ("hv01", "hv02", 201): {"verdict": "nothing_arrived", "sender_slave": None, "message": "nothing arrived"},
        ("hv01", "hv02", 299): {"verdict": "other_tags", "message": "other tags"},
        ("hv03", "hv02", 299): {"verdict": "nothing_arrived", "sender_slave": None, "message": "nothing arrived"},
        ("hv02", "hv01", 201): {"verdict": "inner_tag_lost", "sender_slave": "eth0"},
        ("hv02", "hv01", 299): {"verdict": "inner_tag_lost", "sender_slave": "eth1"},
        ("hv02", "hv03", 201): {"verdict": "inner_tag_lost", "sender_slave": None},
        ("hv03", "hv01", 201): {"verdict": "frames_lost", "message": "only 1 of 20 frames arrived"},
    })
    assert table(matrix(results, HOSTS, VLANS), HOSTS)[:4] == [
        "sender -> receiver  hv01                              hv02                     hv03",
        "hv01                -                                 NONE (201), OTHER (299)  ok",
        "hv02                LOST eth0 (201), LOST eth1 (299)  -                        LOST (201)",
        "hv03                LOSS (201)                        NONE (299)               -",
    ]


def test_vlans_given_as_text_match_the_pairs_and_the_rows_carry_numbers():
    rows = matrix(healthy(), HOSTS, ["201", "299"])
    assert [row["vlan"] for row in rows[:2]] == [201, 299] and broken(rows) == []


# --- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, names", [
    (("not a dict", HOSTS, VLANS), "qinq_acceptance_matrix: results must be a dict"),
    (({}, "hv01,hv02", VLANS), "qinq_acceptance_matrix: hosts must be a list of host names"),
    (({}, ["hv01", 2], VLANS), r"qinq_acceptance_matrix: hosts\[1\] must be a host name"),
    (({}, ["hv01", "hv01"], VLANS), "qinq_acceptance_matrix: hosts names a host twice"),
    (({}, HOSTS, "201,299"), "qinq_acceptance_matrix: vlans must be a list of VLAN IDs"),
    (({}, HOSTS, [201, "abc"]), r"qinq_acceptance_matrix: vlans\[1\] must be a VLAN ID"),
    (({}, HOSTS, [True]), r"qinq_acceptance_matrix: vlans\[0\] must be a VLAN ID"),
    (({}, HOSTS, [4095]), r"qinq_acceptance_matrix: vlans\[0\]: VLAN 4095 is outside 1-4094"),
    (({"hv01": {"pairs": "none"}}, HOSTS, VLANS), r"qinq_acceptance_matrix: results\['hv01'\].pairs must be a list"),
    (({"hv01": {"pairs": [{"sender": "hv02"}]}}, HOSTS, VLANS),
     r"qinq_acceptance_matrix: results\['hv01'\].pairs\[0\] must be a dict with at least sender and vlan"),
])
def test_bad_matrix_input_names_the_argument(args, names):
    with pytest.raises(AnsibleFilterError, match=names):
        matrix(*args)


@pytest.mark.parametrize("call, names", [
    (lambda: table("rows", HOSTS), "qinq_acceptance_table: rows must be the list qinq_acceptance_matrix returns"),
    (lambda: table([{"sender": "hv01"}], HOSTS), r"qinq_acceptance_table: rows\[0\] must be a row"),
    (lambda: table([], {"hv01": 1}), "qinq_acceptance_table: hosts must be a list of host names"),
    (lambda: broken({"ok": False}), "qinq_acceptance_broken: rows must be the list qinq_acceptance_matrix returns"),
    (lambda: broken(["row"]), r"qinq_acceptance_broken: rows\[0\] must be a row"),
])
def test_bad_table_and_broken_input_names_the_argument(call, names):
    with pytest.raises(AnsibleFilterError, match=names):
        call()


# --- through the installed collection -------------------------------------------------------------

def test_the_filters_are_the_collection_s_and_ansible_doc_documents_each(ansible_env):
    assert set(qinq_acceptance.FilterModule().filters()) == {
        "qinq_acceptance_matrix", "qinq_acceptance_table", "qinq_acceptance_broken"}
    for name in ("qinq_acceptance_matrix", "qinq_acceptance_table", "qinq_acceptance_broken"):
        proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "filter", "-j", f"deevnet.net.{name}"],
                              env=ansible_env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)[f"deevnet.net.{name}"]
        assert doc["doc"]["name"] == name and doc["return"]["_value"], doc
