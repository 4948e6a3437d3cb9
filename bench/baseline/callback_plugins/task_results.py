# -*- coding: utf-8 -*-
# Counts what a play really ran, for bench/tenant_play.py: every module execution on a host
# (each loop item is one, a handler is one), the tasks that produced them, and each task's wall
# time (from its start to its last result: one host). Writes JSON to the file named by
# DEEVNET_BENCH_TASK_RESULTS when the play ends. Prints nothing.
from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r'''
name: task_results
type: aggregate
short_description: Count module executions and tasks of a play (deevnet.net benchmarks)
description:
  - Writes C({"task_results", "tasks", "changed", "failed", "task_list"}) to the file named by
    E(DEEVNET_BENCH_TASK_RESULTS) when the play ends. A loop counts one result per item.
  - C(task_list) has one entry per task that produced a result, in the order they started, with
    its C(action), C(name), C(results), C(skipped) (of those results) and C(seconds) (from the
    task's start to its last result).
requirements:
  - enabled with ANSIBLE_CALLBACKS_ENABLED=task_results
'''


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.task_results = 0
        self.changed = 0
        self.failed = 0
        self.tasks: set[str] = set()
        self.started: dict[str, float] = {}  # task uuid -> when it started
        self.task_list: dict[str, dict] = {}  # task uuid -> its entry, in start order

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.started[task._uuid] = time.monotonic()

    def v2_playbook_on_handler_task_start(self, task):
        self.started[task._uuid] = time.monotonic()

    def _count(self, result, failed: bool, skipped: bool = False) -> None:
        self.task_results += 1
        task = result._task
        self.tasks.add(task._uuid)
        entry = self.task_list.setdefault(task._uuid, {"action": task.action, "name": task.get_name(),
                                                       "results": 0, "skipped": 0, "seconds": 0.0})
        entry["results"] += 1
        entry["skipped"] += 1 if skipped else 0
        entry["seconds"] = round(time.monotonic() - self.started.get(task._uuid, time.monotonic()), 3)
        self.changed += 1 if result._result.get("changed") else 0
        self.failed += 1 if failed else 0

    @staticmethod
    def _is_loop(result) -> bool:
        return bool(result._task.loop or result._task.loop_with)

    # A looped task reports each item, then once more for the whole loop: count the items only.
    # (A module's own `results` key, as vrf_route_assert's, is no loop.)
    def v2_runner_item_on_ok(self, result):
        self._count(result, failed=False)

    def v2_runner_item_on_failed(self, result):
        self._count(result, failed=True)

    def v2_runner_item_on_skipped(self, result):
        self._count(result, failed=False, skipped=True)

    def v2_runner_on_ok(self, result):
        if not self._is_loop(result):
            self._count(result, failed=False)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not self._is_loop(result):
            self._count(result, failed=not ignore_errors)

    def v2_runner_on_skipped(self, result):
        if not self._is_loop(result):
            self._count(result, failed=False, skipped=True)

    def v2_runner_on_unreachable(self, result):
        self._count(result, failed=True)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("DEEVNET_BENCH_TASK_RESULTS")
        if not path:
            return
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"task_results": self.task_results, "tasks": len(self.tasks),
                       "changed": self.changed, "failed": self.failed,
                       "task_list": list(self.task_list.values())}, f)
