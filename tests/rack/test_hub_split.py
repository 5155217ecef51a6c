"""balance_subtopology and min_traffic through rack hubs (rack/compact.py, rack/hub_split.py): the split of
a hub's flow keeps every cap, and the hub solve reaches the full graph's optimum (and the networkx reference)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from taskassign.rack import compact
from taskassign.rack.balance_subtopology import BalanceSubtopologyGraph, groups_by_subtopology
from taskassign.rack.hub_split import split_hub_flow
from taskassign.rack.problem import FlowProblem
from tests.rack.instances import active_problem, group_caps, random_instance, reference_optimum


def _split(pool_flow: list[int], client_flow: list[int], room: list[list[int]]) -> object:
    return split_hub_flow(np.array([0, 1]), np.array([0, 0]), np.array(pool_flow), np.array([0, 1]),
                          np.array([0, 0]), np.array(client_flow), np.array(room))


def test_a_split_keeps_each_clients_intake_and_every_cap() -> None:
    split = _split([2, 1], [2, 1], [[1, 1], [1, 0]])  # group 1 may only go to client 0
    assert split is not None
    pools, clients, counts = split
    assert sorted(zip(pools.tolist(), clients.tolist(), counts.tolist(), strict=True)) == [(0, 0, 1), (0, 1, 1),
                                                                                         (1, 0, 1)]


def test_no_split_when_the_caps_cannot_hold_the_flow() -> None:
    assert _split([2, 0], [1, 1], [[1, 0], [1, 1]]) is None


def _caps_hold(problem: FlowProblem, holders: list[int], groups: list[tuple[list[int], list[int]]]) -> bool:
    for members, caps in groups:
        got = Counter(holders[i] for i in members)
        if any(got[j] > caps[j] for j in got):
            return False
    return True


@pytest.mark.parametrize(("seed", "max_tasks", "max_clients"),
                         [(seed, 24, 7) for seed in range(60)] + [(seed, 60, 12) for seed in range(60, 100)])
def test_hub_solve_reaches_the_full_graphs_optimum(seed: int, max_tasks: int, max_clients: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    instance = random_instance(random.Random(seed), max_tasks=max_tasks, max_clients=max_clients)
    problem = active_problem(instance)
    groups = groups_by_subtopology(instance.state.task_ids)
    graph = BalanceSubtopologyGraph(groups)
    holders, cost = graph.solve_fast(problem)
    with monkeypatch.context() as patched:
        patched.setattr(compact._Compact, "_solve_through_hubs", lambda *a, **k: None)
        full_holders, full_cost = graph.solve_fast(problem)
    assert cost == full_cost == reference_optimum(problem, groups)
    assert cost == problem.assignment_cost(holders)
    assert Counter(holders) == Counter(problem.holders) == Counter(full_holders)
    assert _caps_hold(problem, holders, group_caps(problem, groups))
    moved = sum(a != b for a, b in zip(holders, problem.holders, strict=True))
    full_moved = sum(a != b for a, b in zip(full_holders, problem.holders, strict=True))
    assert moved == full_moved  # the same tie-break: fewest moves among the optima


@pytest.mark.parametrize("seed", range(40))
def test_min_traffic_through_the_hubs_matches_the_full_graph(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskassign.rack.min_traffic import MinTrafficGraph

    problem = active_problem(random_instance(random.Random(seed), max_tasks=60, max_clients=12))
    holders, cost = MinTrafficGraph().solve_fast(problem)
    with monkeypatch.context() as patched:
        patched.setattr(compact._Compact, "_solve_through_hubs", lambda *a, **k: None)
        full_holders, full_cost = MinTrafficGraph().solve_fast(problem)
    assert cost == full_cost == reference_optimum(problem) == problem.assignment_cost(holders)
    assert Counter(holders) == Counter(problem.holders)
    moved = sum(a != b for a, b in zip(holders, problem.holders, strict=True))
    assert moved == sum(a != b for a, b in zip(full_holders, problem.holders, strict=True))
