"""Issue item (1) inside Kafka's internal assignors: every call an assignor makes to the rack optimiser
is re-run with both solvers on identical inputs. The default solver must reach Kafka's cost with the same
per-client counts (and, for balance_subtopology, within the same per-subtopology caps); the assignor then
carries on with Kafka's answer, so its final output must still equal Kafka's golden output.

Covers every registered internal assignor that uses the optimiser (legacy_sticky now; high_availability
as soon as it is registered) on their golden cases with a rack strategy and complete rack information.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import pytest

from taskassign.configs import KAFKA_COMPAT
from taskassign.ids import ProcessId, TaskId
from taskassign.rack.balance_subtopology import groups_by_subtopology
from taskassign.rack.cost import CostModel, PartitionScope
from taskassign.rack.internal import RackAwareTaskAssignor
from taskassign.rack.problem import FlowProblem
from taskassign.rack.standby import standby_cost
from tests.golden_parity import GoldenCase, golden_cases, internal_rack_info_complete, kafka_solver_overrides, run_case

USERS = {"legacy_sticky": "legacy_sticky", "high_availability": "high_availability"}


def _cases() -> list[Any]:
    params = []
    for assignor, folder in USERS.items():
        for case in golden_cases(folder):
            scenario = case.scenario()
            if scenario.state.configs.rack_aware_assignment_strategy == "none":
                continue
            if not internal_rack_info_complete(scenario):
                continue
            params.append(pytest.param(assignor, case, id=f"{assignor}-{case.name}"))
    return params


Sets = Mapping[ProcessId, AbstractSet[TaskId]]


def _counts(sets: Sets) -> dict[ProcessId, int]:
    return {pid: len(tasks) for pid, tasks in sets.items()}


def _caps_hold(optimiser: RackAwareTaskAssignor, tasks: list[TaskId], before: Sets, after: Sets) -> bool:
    total = len(tasks)
    chosen = set(tasks)
    for group in groups_by_subtopology(optimiser._state.task_ids):
        members = chosen.intersection(group)
        for pid, held in after.items():
            count = len(chosen & set(before[pid]))
            cap = 0 if count == 0 else math.ceil(count * 1.0 / total * len(members))
            if len(members & set(held)) > cap:
                return False
    return True


@pytest.mark.parametrize(("assignor", "case"), _cases())
def test_both_solvers_agree_on_every_optimiser_call_and_the_assignor_stays_exact(
    assignor: str, case: GoldenCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    moves_call: Callable[..., tuple[list[tuple[Any, ProcessId, ProcessId]], int]] = RackAwareTaskAssignor._active_moves
    standby_call: Callable[..., list[tuple[TaskId, ProcessId, ProcessId]]] = RackAwareTaskAssignor.standby_task_moves

    def with_solver(optimiser: RackAwareTaskAssignor, solver: str, call: Callable[..., Any], *args: Any) -> Any:
        chosen = optimiser._solver
        optimiser._solver = solver  # type: ignore[assignment]
        try:
            return call(optimiser, *args)
        finally:
            optimiser._solver = chosen

    def moved(active: Sets, moves: list[tuple[TaskId, ProcessId, ProcessId]]) -> dict[ProcessId, set[TaskId]]:
        result = {pid: set(held) for pid, held in active.items()}
        for task, source, destination in moves:
            assert task in result[source]
            result[source].discard(task)
            result[destination].add(task)
        return result

    # Every optimiser entry solves through these two (active_task_moves, active_number_moves and
    # optimize_active_tasks through _active_moves; optimize_standby_tasks applies standby_task_moves).
    def both_active(optimiser: RackAwareTaskAssignor, problem: FlowProblem, keys: Any) -> Any:
        tasks = problem.tasks
        active = {pid: {t for t, h in zip(tasks, problem.holders, strict=True) if h == j}
                  for j, pid in enumerate(problem.clients)}
        exact = with_solver(optimiser, "kafka", moves_call, problem, tasks)
        fast = with_solver(optimiser, "min_cost_flow", moves_call, problem, tasks)
        assert fast[1] == exact[1], f"active cost {fast[1]} != Kafka's {exact[1]}"
        assert _counts(moved(active, fast[0])) == _counts(moved(active, exact[0])) == _counts(active)
        if optimiser._state.configs.rack_aware_assignment_strategy == "balance_subtopology":
            assert _caps_hold(optimiser, list(tasks), active, moved(active, fast[0]))
        calls.append("active")
        key_of = dict(zip(tasks, keys, strict=True))
        return [(key_of[t], source, destination) for t, source, destination in exact[0]], exact[1]

    def both_standby(optimiser: RackAwareTaskAssignor, active: Sets, standby: Sets, traffic: int, non_overlap: int,
                     can_move: Any) -> Any:
        exact = with_solver(optimiser, "kafka", standby_call, active, standby, traffic, non_overlap, can_move)
        fast = with_solver(optimiser, "min_cost_flow", standby_call, active, standby, traffic, non_overlap, can_move)
        every = {pid: set(standby.get(pid, ())) for pid in set(active) | set(standby)}
        costs = CostModel(optimiser._table(PartitionScope.CHANGELOG), traffic, non_overlap)
        fast_sets, exact_sets = moved(every, fast), moved(every, exact)
        assert standby_cost(fast_sets, costs) == standby_cost(exact_sets, costs), "standby cost differs from Kafka's"
        assert _counts(fast_sets) == _counts(exact_sets)
        calls.append("standby")
        return exact

    monkeypatch.setattr(RackAwareTaskAssignor, "_active_moves", both_active)
    monkeypatch.setattr(RackAwareTaskAssignor, "standby_task_moves", both_standby)
    overrides = kafka_solver_overrides()
    if case.scenario().state.configs.rack_aware_assignment_tags:
        overrides[KAFKA_COMPAT] = True  # tag cases: Kafka's standby movements only in the Kafka-compatible mode (H10)
    assert run_case(case, assignor, overrides) == []
    assert calls, "the assignor never called the rack optimiser"
