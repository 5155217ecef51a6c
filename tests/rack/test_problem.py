from __future__ import annotations

import pytest

from taskassign.errors import RackAwareOptimizationError
from taskassign.rack.cost import CostModel, PartitionScope, RackTable
from taskassign.rack.problem import FlowProblem
from tests.helpers import PID_1, PID_2, tid
from tests.rack.instances import racked_client, racked_state, racked_task

STATE = racked_state([racked_task("1_0", [["r1"]]), racked_task("1_1", [["r2"]]), racked_task("2_0", [None])],
                     [racked_client(1, "r1"), racked_client(2, "r2")])
COSTS = CostModel(RackTable.build(STATE, PartitionScope.SOURCE), 10, 1)
TASKS = (tid("1_0"), tid("1_1"))


def test_finds_each_tasks_holder_and_the_per_client_counts() -> None:
    problem = FlowProblem.of(TASKS, (PID_1, PID_2), {PID_1: {tid("1_1"), tid("1_0")}, PID_2: set()}, COSTS)
    assert problem.holders == (0, 0)
    assert problem.orig == (2, 0)
    assert problem.client_racks == (0, 1)
    assert problem.cost(1, 1) == 1  # moving 1_1 to its own rack: non-overlap only
    assert problem.assignment_cost([0, 1]) == 1
    assert problem.assignment_cost(problem.holders) == 10


def test_kafkas_errors_for_a_task_held_twice_or_not_at_all() -> None:  # P28
    with pytest.raises(RackAwareOptimizationError, match="Task 1_1 assigned to multiple clients"):
        FlowProblem.of(TASKS, (PID_1, PID_2), {PID_1: {tid("1_0"), tid("1_1")}, PID_2: {tid("1_1")}}, COSTS)
    with pytest.raises(RackAwareOptimizationError, match="Task 1_0 not assigned to any client"):
        FlowProblem.of(TASKS, (PID_1, PID_2), {PID_2: {tid("1_1")}}, COSTS)


def test_strict_problems_refuse_tasks_without_rack_information() -> None:  # P28
    holds = {PID_1: {tid("2_0")}}
    with pytest.raises(RackAwareOptimizationError, match="TopicPartition topic2-0 has no rack information"):
        FlowProblem.of((tid("2_0"),), (PID_1, PID_2), holds, COSTS)
    assert FlowProblem.of((tid("2_0"),), (PID_1, PID_2), holds, COSTS, strict=False).cost(0, 1) == 11


def test_tasks_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="distinct"):
        FlowProblem.of((tid("1_0"), tid("1_0")), (PID_1,), {PID_1: {tid("1_0")}}, COSTS)


def test_tasks_must_belong_to_the_application() -> None:
    with pytest.raises(RackAwareOptimizationError, match="Task 9_9 is not a task of the application"):
        FlowProblem.of((tid("9_9"),), (PID_1,), {PID_1: {tid("9_9")}}, COSTS)


def test_given_holders_make_the_problem_the_search_finds_with_the_same_task_checks() -> None:
    holds = {PID_1: {tid("1_1")}, PID_2: {tid("1_0")}}
    assert FlowProblem.with_holders(TASKS, (PID_1, PID_2), (1, 0), COSTS) == FlowProblem.of(TASKS, (PID_1, PID_2),
                                                                                           holds, COSTS)
    with pytest.raises(RackAwareOptimizationError, match="TopicPartition topic2-0 has no rack information"):
        FlowProblem.with_holders((tid("2_0"),), (PID_1, PID_2), (0,), COSTS)
    with pytest.raises(RackAwareOptimizationError, match="Task 3_0 is not a task of the application"):
        FlowProblem.with_holders((tid("3_0"),), (PID_1, PID_2), (0,), COSTS)
