"""The shared sticky engine against a literal transcription of Kafka's algorithm (tests/assignors/
sticky_reference.py): the engine's shortcuts (compact task pairs, a heap for shouldBalance, one
hash-order sort per table size) must never change an assignment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from taskassign.assignors.fallback_prior import FallbackPriorTaskAssignor
from taskassign.assignors.legacy_sticky import LegacyStickyTaskAssignor
from taskassign.assignors.sticky import StickyPreserveTaskAssignor, StickyTaskAssignor
from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, TaskAssignment
from tests.assignors.sticky_apps import applications
from tests.assignors.sticky_reference import ReferenceSticky

Sets = tuple[dict[ProcessId, set[TaskId]], dict[ProcessId, set[TaskId]]]


def _sets(result: TaskAssignment) -> Sets:
    by_pid = result.by_process()
    return ({p: set(a.active_tasks()) for p, a in by_pid.items()},
            {p: set(a.standby_tasks()) for p, a in by_pid.items()})


VARIANTS = [  # (assignor, legacy comparison, must preserve)
    (LegacyStickyTaskAssignor, True, False),
    (FallbackPriorTaskAssignor, True, True),
    (StickyTaskAssignor, False, False),
    (StickyPreserveTaskAssignor, False, True),
]


@pytest.mark.parametrize(("assignor", "legacy", "preserve"), VARIANTS, ids=lambda v: getattr(v, "name", str(v)))
@settings(max_examples=250)
@given(state=applications())
def test_engine_equals_literal_kafka(assignor: type, legacy: bool, preserve: bool, state: ApplicationState) -> None:
    expected = ReferenceSticky(state, legacy=legacy, must_preserve=preserve).run()
    assert _sets(assignor().assign(state)) == expected
    if not legacy:  # the public assignor's quota before KAFKA-20198 (4.3 and earlier)
        configs = AssignmentConfigs.from_properties({**state.configs.to_properties(), "kafka.version": "4.3"})
        before = ApplicationState(tasks=state.tasks, clients=state.clients, configs=configs, now_ms=state.now_ms)
        assert _sets(assignor().assign(before)) == ReferenceSticky(before, legacy=False, must_preserve=preserve).run()
