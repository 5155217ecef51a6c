"""The shared sticky engine against a literal transcription of Kafka's algorithm (tests/assignors/
sticky_reference.py): the engine's shortcuts (compact task pairs, a heap for shouldBalance, one
hash-order sort per table size) must never change an assignment."""

from __future__ import annotations

from hypothesis import given, settings

from taskassign.assignors.fallback_prior import FallbackPriorTaskAssignor
from taskassign.assignors.legacy_sticky import LegacyStickyTaskAssignor
from taskassign.assignors.sticky import StickyPreserveTaskAssignor, StickyTaskAssignor
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, TaskAssignment
from tests.assignors.sticky_apps import applications
from tests.assignors.sticky_reference import ReferenceSticky

Sets = tuple[dict[ProcessId, set[TaskId]], dict[ProcessId, set[TaskId]]]


def _sets(result: TaskAssignment) -> Sets:
    by_pid = result.by_process()
    return ({p: set(a.active_tasks()) for p, a in by_pid.items()},
            {p: set(a.standby_tasks()) for p, a in by_pid.items()})


@settings(max_examples=300)
@given(applications())
def test_legacy_sticky_equals_literal_kafka(state: ApplicationState) -> None:
    expected = ReferenceSticky(state, legacy=True, must_preserve=False).run()
    assert _sets(LegacyStickyTaskAssignor().assign(state)) == expected


@settings(max_examples=150)
@given(applications())
def test_fallback_prior_equals_literal_kafka(state: ApplicationState) -> None:
    expected = ReferenceSticky(state, legacy=True, must_preserve=True).run()
    assert _sets(FallbackPriorTaskAssignor().assign(state)) == expected


@settings(max_examples=300)
@given(applications())
def test_public_sticky_equals_literal_kafka(state: ApplicationState) -> None:
    expected = ReferenceSticky(state, legacy=False, must_preserve=False).run()
    assert _sets(StickyTaskAssignor().assign(state)) == expected


@settings(max_examples=150)
@given(applications())
def test_public_sticky_preserve_equals_literal_kafka(state: ApplicationState) -> None:
    expected = ReferenceSticky(state, legacy=False, must_preserve=True).run()
    assert _sets(StickyPreserveTaskAssignor().assign(state)) == expected
