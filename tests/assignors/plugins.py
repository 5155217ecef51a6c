"""Plug-in assignors for the tests of what assignor authors see: each breaks one rule (referenced by file path,
as a user's plug-in would be)."""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.ids import TaskId
from taskassign.model import (
    ApplicationState,
    AssignmentError,
    GroupAssignment,
    GroupSubscription,
    KafkaStreamsAssignment,
    TaskAssignment,
)

HERE = Path(__file__).resolve()


def spec(name: str) -> str:
    return f"{HERE}:{name}"


class KeyErrorInAssign(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return {}["missing"]  # type: ignore[no-any-return]


class FailsToConfigure(BaseTaskAssignor):
    def configure(self, configs: Mapping[str, Any]) -> None:
        raise ValueError("needs my.custom.config")

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        raise AssertionError("never called")


class CallbackCrashes(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return _everything_on_the_first(application_state)

    def on_assignment_computed(
        self, assignment: GroupAssignment, subscription: GroupSubscription, error: AssignmentError
    ) -> None:
        raise RuntimeError("callback bug")


class DropsEverything(BaseTaskAssignor):
    """Every client gets nothing: valid for Kafka's validation, but every task is unassigned."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment(tuple(KafkaStreamsAssignment.of_tasks(p) for p in application_state.process_ids))


class ActivesOnly(BaseTaskAssignor):
    """Every active on the first client, no standbys: complete only when no standbys are configured."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return _everything_on_the_first(application_state)


class InventsTasks(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        first = next(iter(application_state.process_ids))
        return TaskAssignment((KafkaStreamsAssignment.of_tasks(first, active=[TaskId(99, 0)]),))


#: Calls of Nondeterministic.assign, kept outside this module: a plug-in file is run anew at every load.
_CALLS = sys.modules.setdefault("_taskassign_test_plugin_calls", types.ModuleType("_taskassign_test_plugin_calls"))


class Nondeterministic(BaseTaskAssignor):
    """Gives every task to the clients in turn, starting from a different client at every call."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        clients = sorted(application_state.process_ids)
        start = getattr(_CALLS, "count", 0)
        _CALLS.count = start + 1  # type: ignore[attr-defined]
        placed: dict[Any, list[TaskId]] = {p: [] for p in clients}
        for n, task in enumerate(sorted(application_state.all_tasks())):
            placed[clients[(start + n) % len(clients)]].append(task)
        return TaskAssignment(tuple(KafkaStreamsAssignment.of_tasks(p, active=t) for p, t in placed.items()))


def _everything_on_the_first(state: ApplicationState) -> TaskAssignment:
    clients = sorted(state.process_ids)
    return TaskAssignment((KafkaStreamsAssignment.of_tasks(clients[0], active=state.all_tasks()),
                           *(KafkaStreamsAssignment.of_tasks(p) for p in clients[1:])))
