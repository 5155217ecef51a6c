"""Properties of the high-availability assignor on random applications: Kafka's assertValidAssignment, no
warm-ups with acceptable.recovery.lag = Long.MAX_VALUE, no standby on a single client or for a stateless task."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings

from taskassign.assignors.high_availability import assign_high_availability
from taskassign.configs import KAFKA_COMPAT, UNBOUNDED_RECOVERY_LAG
from taskassign.model import ApplicationState, AssignmentError, TaskAssignment
from taskassign.validation import check_completeness, validate_task_assignment
from tests.assignors.strategies import applications


@pytest.fixture(autouse=True)
def _quiet_shortfall_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="taskassign.standby")


def check_properties(state: ApplicationState, result: TaskAssignment) -> None:
    configs = state.configs
    assert validate_task_assignment(state, result) is AssignmentError.NONE  # P1 (one active each), P2
    report = check_completeness(state, result)
    assert report.is_complete, report.lines()  # every task active; min(R, C-1) standbys per changelog task
    holders: Counter[object] = Counter()
    for assignment in result.assignments:
        assert not set(assignment.active_tasks()) & set(assignment.standby_tasks())  # P3
        holders.update(list(assignment.tasks))
    wanted = min(len(state.clients), 1 + configs.num_standby_replicas)
    extra = 0
    for task in state.stateful_task_ids:  # P4: min(C, 1+R) holders, plus at most W warm-up copies in all
        assert holders[task] >= wanted, task  # (two warm-ups can land on one task: an active and a standby move)
        extra += holders[task] - wanted
    assert extra <= configs.max_warmup_replicas
    for task in state.task_ids:
        if task not in state.stateful_task_ids:
            assert holders[task] == 1  # P13: stateless tasks are active only
    if configs.acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG:
        assert not result.probing_rebalance_needed and extra == 0  # P11


@settings(max_examples=150)
@given(applications())
def test_random_applications_get_valid_complete_assignments(state: ApplicationState) -> None:
    result = assign_high_availability(state)
    check_properties(state, result)
    assert assign_high_availability(state) == result  # deterministic


def compat(state: ApplicationState) -> ApplicationState:
    """The same application under ``taskassign.kafka.compat`` (the movement pools replay Kafka's heap)."""
    return replace(state, configs=replace(state.configs, extensions={KAFKA_COMPAT: True}))


@settings(max_examples=150)
@given(applications())
def test_fast_pools_match_kafkas_heap_replayed_step_by_step(state: ApplicationState) -> None:
    assert assign_high_availability(compat(state)) == assign_high_availability(state, java_heap=True)


@settings(max_examples=150)
@given(applications())
def test_default_mode_differs_from_kafka_only_where_its_heap_turned_invalid(state: ApplicationState) -> None:
    # Kafka's heap is invalid in about 1 input in 3,000 (H9); outside those the two modes agree. The
    # property checked here is the weaker one that holds always: both are valid, complete assignments.
    default, exact = assign_high_availability(state), assign_high_availability(compat(state))
    check_properties(state, default)
    check_properties(state, exact)


@pytest.mark.slow
@settings(max_examples=3000)
@given(applications(max_clients=40))
def test_fast_pools_match_kafkas_heap_on_many_large_inputs(state: ApplicationState) -> None:
    fast = assign_high_availability(compat(state))
    assert fast == assign_high_availability(state, java_heap=True)
    check_properties(state, fast)
