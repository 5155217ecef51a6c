"""Properties of both solvers on random small instances (issue item 2), against a networkx optimum."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.configs import AssignmentConfigs
from taskassign.rack.balance_subtopology import BalanceSubtopologyGraph, groups_by_subtopology
from taskassign.rack.compact import unique_rows
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.solve import KAFKA_SOLVER, MIN_COST_FLOW_SOLVER, resolve_solver, solve
from tests.rack.instances import active_problem, group_caps, random_instance, reference_optimum

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def _counts(holders: tuple[int, ...] | list[int], clients: int) -> list[int]:
    counts = [0] * clients
    for h in holders:
        counts[h] += 1
    return counts


def _within_caps(holders: tuple[int, ...], members: list[int], caps: list[int]) -> bool:
    received = _counts([holders[i] for i in members], len(caps))
    return all(n <= cap for n, cap in zip(received, caps, strict=True))


@settings(max_examples=150)
@given(seed=SEEDS)
def test_min_traffic_solvers_reach_the_reference_optimum_without_changing_counts(seed: int) -> None:
    rng = random.Random(seed)
    problem = active_problem(random_instance(rng))
    optimum = reference_optimum(problem)
    initial = problem.assignment_cost(problem.holders)
    fast = solve(problem, MinTrafficGraph(), MIN_COST_FLOW_SOLVER)
    kafka = solve(problem, MinTrafficGraph(), KAFKA_SOLVER)
    assert fast.cost == kafka.cost == optimum <= initial
    assert problem.assignment_cost(fast.holders) == fast.cost
    assert problem.assignment_cost(kafka.holders) == kafka.cost
    for solution in (fast, kafka):
        assert _counts(solution.holders, len(problem.clients)) == list(problem.orig)
    moves = sum(a != b for a, b in zip(fast.holders, problem.holders, strict=True))
    kafka_moves = sum(a != b for a, b in zip(kafka.holders, problem.holders, strict=True))
    assert moves <= kafka_moves  # fewest moves among the optimal assignments


@settings(max_examples=150)
@given(seed=SEEDS)
def test_balance_subtopology_solvers_reach_the_reference_optimum_within_the_caps(seed: int) -> None:
    rng = random.Random(seed)
    instance = random_instance(rng)
    problem = active_problem(instance)
    groups = groups_by_subtopology(instance.state.task_ids)
    constructor = BalanceSubtopologyGraph(groups)
    optimum = reference_optimum(problem, groups)
    fast = solve(problem, constructor, MIN_COST_FLOW_SOLVER)
    kafka = solve(problem, constructor, KAFKA_SOLVER)
    assert fast.cost == kafka.cost == optimum
    assert problem.assignment_cost(fast.holders) == fast.cost
    layout = group_caps(problem, groups)
    for solution in (fast, kafka):
        assert _counts(solution.holders, len(problem.clients)) == list(problem.orig)
        assert all(_within_caps(solution.holders, members, caps) for members, caps in layout)
    # Only an input within the caps is itself a candidate, so only then can it bound the result (P25).
    if all(_within_caps(problem.holders, members, caps) for members, caps in layout):
        assert fast.cost <= problem.assignment_cost(problem.holders)


@settings(max_examples=60)
@given(seed=SEEDS)
def test_nothing_moves_when_moving_cannot_gain(seed: int) -> None:
    rng = random.Random(seed)
    instance = random_instance(rng)
    for traffic, non_overlap in ((0, 5), (0, 0)):
        problem = active_problem(instance, traffic=traffic, non_overlap=non_overlap)
        assert solve(problem, MinTrafficGraph(), MIN_COST_FLOW_SOLVER).holders == problem.holders
    problem = active_problem(instance, traffic=0, non_overlap=5)
    assert solve(problem, MinTrafficGraph(), KAFKA_SOLVER).holders == problem.holders  # P25


def test_empty_problem_is_a_no_op() -> None:
    problem = active_problem(random_instance(random.Random(3)))
    empty = type(problem)((), problem.clients, problem.client_racks, (), problem.costs)
    for solver in (KAFKA_SOLVER, MIN_COST_FLOW_SOLVER):
        solution = solve(empty, MinTrafficGraph(), solver)
        assert (solution.holders, solution.cost, solution.moved) == ((), 0, False)


@pytest.mark.parametrize(("extensions", "expected"), [
    ({}, MIN_COST_FLOW_SOLVER),
    ({"taskassign.kafka.compat": True}, KAFKA_SOLVER),
    ({"taskassign.rack.solver": "kafka"}, KAFKA_SOLVER),
    ({"taskassign.kafka.compat": True, "taskassign.rack.solver": "min_cost_flow"}, MIN_COST_FLOW_SOLVER),
    ({"taskassign.rack.solver": "auto"}, MIN_COST_FLOW_SOLVER),
])
def test_solver_comes_from_the_configs(extensions: dict[str, object], expected: str) -> None:
    assert resolve_solver(AssignmentConfigs(extensions=extensions)) == expected


@given(st.lists(st.lists(st.integers(-2, 3), min_size=4, max_size=4), max_size=40),
       st.sampled_from([1, 1001, 2**40]))
def test_unique_rows_is_numpys_unique_over_rows(rows: list[list[int]], scale: int) -> None:
    """The hub graph's task kinds: the same rows, order, inverse and counts as ``np.unique(axis=0)``."""
    array = np.array(rows, dtype=np.int64).reshape(-1, 4) * scale
    kinds, inverse, counts = unique_rows(array)
    if not len(rows):
        assert kinds.shape == (0, 4) and not len(inverse) and not len(counts)
        return
    expected, expected_inverse, expected_counts = np.unique(array, axis=0, return_inverse=True,
                                                            return_counts=True)
    assert np.array_equal(kinds, expected)
    assert np.array_equal(inverse, expected_inverse.reshape(-1))
    assert np.array_equal(counts, expected_counts)
