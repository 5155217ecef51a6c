"""TaskMovement: TaskMovementTest's warm-up budget of 1 (E6), movement counts (P18) and order (P19)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from taskassign.assignors._task_movement import (
    WarmupBudget,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from taskassign.internals.client_state import ClientState, client_states, task_numbers
from taskassign.internals.constrained_priority_set import PoolFactory, fast_pool_factory, java_pool_factory
from taskassign.internals.lags import LagTable
from taskassign.model import ApplicationState
from tests.helpers import PID_1, PID_2, PID_3, app_state, client, task

END = 1000


def lags_state(lags: Mapping[str, Mapping[int, int]], acceptable: int = 10) -> ApplicationState:
    """Three clients; ``lags[task][n]`` is the lag of client Pn on the task (absent: lag = END)."""
    tasks = sorted(lags)
    offsets: dict[int, dict[str, int]] = {1: {}, 2: {}, 3: {}}
    for name, per_client in lags.items():
        for n, lag in per_client.items():
            offsets[n][name] = lag if lag < 0 else END - lag
    return app_state([task(t, end=END) for t in tasks],
                     [client(pid, offsets=offsets[n]) for n, pid in ((1, PID_1), (2, PID_2), (3, PID_3))],
                     acceptable_recovery_lag=acceptable)


def setup(state: ApplicationState, active: Mapping[int, list[str]], standby: Mapping[int, list[str]] | None = None,
          ) -> tuple[list[ClientState], LagTable, dict[str, int]]:
    clients = client_states(state)
    numbers = {str(t): n for t, n in task_numbers(state.task_ids.items).items()}
    for n, names in active.items():
        clients[n - 1].active.update(numbers[t] for t in names)
    for n, names in (standby or {}).items():
        clients[n - 1].standby.update(numbers[t] for t in names)
    return clients, LagTable(state, task_numbers(state.task_ids.items)), numbers


def tasks_of(clients: list[ClientState], numbers: Mapping[str, int], standby: bool = False) -> dict[int, list[str]]:
    names = {n: t for t, n in numbers.items()}
    return {c.index + 1: sorted(names[t] for t in (c.standby if standby else c.active)) for c in clients}


E6 = {"0_0": {1: 0, 2: 50, 3: 100}, "0_1": {3: 0, 1: 50, 2: 100}, "0_2": {2: 0, 1: 50, 3: 100}}


def pools(clients: list[ClientState], exact: bool) -> PoolFactory:
    hashes = [c.process_id.java_hash() for c in clients]
    return java_pool_factory(hashes) if exact else fast_pool_factory(hashes)


@pytest.mark.parametrize("exact", [False, True])
def test_e6_one_warm_up_for_the_first_movement(exact: bool) -> None:
    clients, lags, numbers = setup(lags_state(E6), {1: ["0_0"], 2: ["0_1"], 3: ["0_2"]})
    warmups: dict[int, set[int]] = {}
    moved = assign_active_task_movements(clients, lags, warmups, WarmupBudget(1), pools(clients, exact))
    assert moved == 2
    assert tasks_of(clients, numbers) == {1: ["0_0"], 2: ["0_2"], 3: ["0_1"]}
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: ["0_1"], 3: []}
    assert warmups == {1: {numbers["0_1"]}}


def test_e6_unlimited_budget_warms_up_both() -> None:
    clients, lags, numbers = setup(lags_state(E6), {1: ["0_0"], 2: ["0_1"], 3: ["0_2"]})
    assign_active_task_movements(clients, lags, {}, WarmupBudget(2**31 - 1), pools(clients, False))
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: ["0_1"], 3: ["0_2"]}


def test_e6_a_caught_up_standby_swaps_in_without_budget() -> None:
    clients, lags, numbers = setup(lags_state({"0_0": {1: 0, 2: 100}}), {2: ["0_0"]}, {1: ["0_0"]})
    budget = WarmupBudget(0)
    assert assign_active_task_movements(clients, lags, {}, budget, pools(clients, False)) == 1
    assert tasks_of(clients, numbers) == {1: ["0_0"], 2: [], 3: []}
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: ["0_0"], 3: []}
    assert budget.remaining == 0


def test_p18_no_movement_when_every_active_is_caught_up_or_nobody_is_ahead() -> None:
    clients, lags, _ = setup(lags_state(E6), {1: ["0_0"], 2: ["0_2"], 3: ["0_1"]})
    assert assign_active_task_movements(clients, lags, {}, WarmupBudget(2), pools(clients, False)) == 0
    even = {"0_0": {1: 100, 2: 100, 3: 100}}
    clients, lags, _ = setup(lags_state(even), {2: ["0_0"]})
    assert assign_active_task_movements(clients, lags, {}, WarmupBudget(2), pools(clients, False)) == 0


def test_p19_fewest_caught_up_clients_move_first() -> None:
    # 0_0 has two caught-up clients, 0_1 only one: 0_1 moves first and takes the only warm-up
    lags = {"0_0": {1: 0, 2: 0, 3: 100}, "0_1": {1: 0, 3: 100}}
    clients, table, numbers = setup(lags_state(lags), {3: ["0_0", "0_1"]})
    assert assign_active_task_movements(clients, table, {}, WarmupBudget(1), pools(clients, False)) == 2
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: [], 3: ["0_1"]}


def test_standby_movements_keep_warm_ups_and_move_the_rest() -> None:
    # P3 holds standbys of 0_0 (a warm-up from the active phase) and 0_1, both far behind; P1 is caught up
    lags = {"0_0": {1: 0, 3: 100}, "0_1": {1: 0, 3: 100}}
    clients, table, numbers = setup(lags_state(lags), {2: ["0_0", "0_1"]}, {3: ["0_0", "0_1"]})
    p3 = 2  # client index of P3
    moved = assign_standby_task_movements(clients, table, {p3: {numbers["0_0"]}}, WarmupBudget(0),
                                          pools(clients, False))
    assert moved == 1
    assert tasks_of(clients, numbers, standby=True) == {1: ["0_1"], 2: [], 3: ["0_0"]}


def test_standby_movement_walks_the_lag_order_when_no_caught_up_client_is_free() -> None:
    # nobody is caught up on 0_0 (acceptable lag 10); P1 is ahead of P3 in lag order and holds nothing
    clients, table, numbers = setup(lags_state({"0_0": {1: 40, 3: 90}}), {2: ["0_0"]}, {3: ["0_0"]})
    budget = WarmupBudget(1)
    assert assign_standby_task_movements(clients, table, {}, budget, pools(clients, False)) == 1
    assert tasks_of(clients, numbers, standby=True) == {1: ["0_0"], 2: [], 3: ["0_0"]}  # P3 keeps a copy
    assert budget.remaining == 0


def test_warmup_budget_decrements_past_zero_like_an_atomic_integer() -> None:
    budget = WarmupBudget(1)
    assert [budget.take(), budget.take(), budget.take()] == [True, False, False]
    assert budget.remaining == -2
