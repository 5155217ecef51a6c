"""TaskMovement: TaskMovementTest's warm-up budget of 1 (E6), movement counts (P18) and order (P19)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.assignors import high_availability
from taskassign.assignors._task_movement import (
    WarmupBudget,
    _LightestCaughtUp,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from taskassign.internals.client_state import ClientState, client_states, task_numbers
from taskassign.internals.constrained_priority_set import (
    ClientPool,
    Constraint,
    IndexedConstrainedPrioritySet,
    PoolFactory,
    fast_pool_factory,
    java_pool_factory,
)
from taskassign.internals.lags import LagTable
from taskassign.model import ApplicationState
from tests.assignors.strategies import applications
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


def pools(clients: list[ClientState], exact: bool, *, lightest: bool = False) -> PoolFactory:
    """Kafka's heap (``exact``), the replayed heap, or (``lightest``) true-minimum pools, which the movement
    phases answer without a pool."""
    hashes = [c.process_id.java_hash() for c in clients]
    return java_pool_factory(hashes) if exact else fast_pool_factory(hashes, replay_java_heap=not lightest)


class _PooledMovements:
    """True-minimum pools that the movement phases must use as pools (the general loops)."""

    true_minimum = True
    movements_true_minimum = False

    def __init__(self, hashes: Sequence[int], *, replay_java_heap: bool = True) -> None:
        self._inner = fast_pool_factory(hashes, replay_java_heap=replay_java_heap)

    def __call__(self, constraint: Constraint, weight: Callable[[int], float],
                 candidates: Callable[[int], object] | None = None, weights_change_inside: bool = False,
                 ) -> ClientPool:
        return self._inner(constraint, weight, candidates, weights_change_inside)  # type: ignore[arg-type]


@settings(max_examples=300)
@given(applications(max_clients=12))
def test_movements_without_a_pool_answer_as_the_true_minimum_pool(state: ApplicationState) -> None:
    """The movement phases' own loops (no pool object) against the same phases driven by the true-minimum
    ``IndexedConstrainedPrioritySet``: the same assignment, warm-ups and counts, on whole random applications."""
    expected = None
    with patch.object(high_availability, "fast_pool_factory", _PooledMovements):
        expected = high_availability.assign_high_availability(state)
    assert high_availability.assign_high_availability(state) == expected


@pytest.mark.parametrize(("exact", "lightest"), [(False, False), (True, False), (False, True)])
def test_e6_one_warm_up_for_the_first_movement(exact: bool, lightest: bool) -> None:
    clients, lags, numbers = setup(lags_state(E6), {1: ["0_0"], 2: ["0_1"], 3: ["0_2"]})
    warmups: dict[int, set[int]] = {}
    moved = assign_active_task_movements(clients, lags, warmups, WarmupBudget(1),
                                         pools(clients, exact, lightest=lightest))
    assert moved == 2
    assert tasks_of(clients, numbers) == {1: ["0_0"], 2: ["0_2"], 3: ["0_1"]}
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: ["0_1"], 3: []}
    assert warmups == {1: {numbers["0_1"]}}


@pytest.mark.parametrize("lightest", [False, True])
def test_e6_unlimited_budget_warms_up_both(lightest: bool) -> None:
    clients, lags, numbers = setup(lags_state(E6), {1: ["0_0"], 2: ["0_1"], 3: ["0_2"]})
    assign_active_task_movements(clients, lags, {}, WarmupBudget(2**31 - 1), pools(clients, False, lightest=lightest))
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: ["0_1"], 3: ["0_2"]}


@pytest.mark.parametrize("lightest", [False, True])
def test_e6_a_caught_up_standby_swaps_in_without_budget(lightest: bool) -> None:
    clients, lags, numbers = setup(lags_state({"0_0": {1: 0, 2: 100}}), {2: ["0_0"]}, {1: ["0_0"]})
    budget = WarmupBudget(0)
    assert assign_active_task_movements(clients, lags, {}, budget, pools(clients, False, lightest=lightest)) == 1
    assert tasks_of(clients, numbers) == {1: ["0_0"], 2: [], 3: []}
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: ["0_0"], 3: []}
    assert budget.remaining == 0


@pytest.mark.parametrize("lightest", [False, True])
def test_p18_no_movement_when_every_active_is_caught_up_or_nobody_is_ahead(lightest: bool) -> None:
    clients, lags, _ = setup(lags_state(E6), {1: ["0_0"], 2: ["0_2"], 3: ["0_1"]})
    assert assign_active_task_movements(clients, lags, {}, WarmupBudget(2), pools(clients, False, lightest=lightest)
                                        ) == 0
    even = {"0_0": {1: 100, 2: 100, 3: 100}}
    clients, lags, _ = setup(lags_state(even), {2: ["0_0"]})
    assert assign_active_task_movements(clients, lags, {}, WarmupBudget(2), pools(clients, False, lightest=lightest)
                                        ) == 0


@pytest.mark.parametrize("lightest", [False, True])
def test_p19_fewest_caught_up_clients_move_first(lightest: bool) -> None:
    # 0_0 has two caught-up clients, 0_1 only one: 0_1 moves first and takes the only warm-up
    lags = {"0_0": {1: 0, 2: 0, 3: 100}, "0_1": {1: 0, 3: 100}}
    clients, table, numbers = setup(lags_state(lags), {3: ["0_0", "0_1"]})
    assert assign_active_task_movements(clients, table, {}, WarmupBudget(1), pools(clients, False, lightest=lightest)
                                        ) == 2
    assert tasks_of(clients, numbers, standby=True) == {1: [], 2: [], 3: ["0_1"]}


@pytest.mark.parametrize("lightest", [False, True])
def test_standby_movements_keep_warm_ups_and_move_the_rest(lightest: bool) -> None:
    # P3 holds standbys of 0_0 (a warm-up from the active phase) and 0_1, both far behind; P1 is caught up
    lags = {"0_0": {1: 0, 3: 100}, "0_1": {1: 0, 3: 100}}
    clients, table, numbers = setup(lags_state(lags), {2: ["0_0", "0_1"]}, {3: ["0_0", "0_1"]})
    p3 = 2  # client index of P3
    moved = assign_standby_task_movements(clients, table, {p3: {numbers["0_0"]}}, WarmupBudget(0),
                                          pools(clients, False, lightest=lightest))
    assert moved == 1
    assert tasks_of(clients, numbers, standby=True) == {1: ["0_1"], 2: [], 3: ["0_0"]}


@pytest.mark.parametrize("lightest", [False, True])
def test_standby_movement_walks_the_lag_order_when_no_caught_up_client_is_free(lightest: bool) -> None:
    # nobody is caught up on 0_0 (acceptable lag 10); P1 is ahead of P3 in lag order and holds nothing
    clients, table, numbers = setup(lags_state({"0_0": {1: 40, 3: 90}}), {2: ["0_0"]}, {3: ["0_0"]})
    budget = WarmupBudget(1)
    assert assign_standby_task_movements(clients, table, {}, budget, pools(clients, False, lightest=lightest)) == 1
    assert tasks_of(clients, numbers, standby=True) == {1: ["0_0"], 2: [], 3: ["0_0"]}  # P3 keeps a copy
    assert budget.remaining == 0


def test_warmup_budget_decrements_past_zero_like_an_atomic_integer() -> None:
    budget = WarmupBudget(1)
    assert [budget.take(), budget.take(), budget.take()] == [True, False, False]
    assert budget.remaining == -2


@settings(max_examples=200)
@given(applications(max_clients=10), st.randoms(use_true_random=False))
def test_the_standby_movements_pool_answers_as_the_indexed_set(state: ApplicationState, rng: random.Random) -> None:
    """``_LightestCaughtUp`` against ``IndexedConstrainedPrioritySet`` over the same constraint and weight, in
    the movement pattern: poll, change the polled client and another, offer both back."""
    clients = client_states(state)
    lags = LagTable(state, task_numbers(state.task_ids.items))
    stateful = sorted(lags.ends)
    if not stateful:
        return
    for c in clients:  # some load: each client holds random tasks as standbys
        c.standby.update(t for t in stateful if rng.random() < 0.3)
    light = _LightestCaughtUp(clients, lags)
    indexed = IndexedConstrainedPrioritySet(
        len(clients), lags.is_caught_up, lambda c: clients[c].assigned_load(), lags.caught_up_clients)
    everyone = range(len(clients))
    light.offer_all(everyone)
    indexed.offer_all(everyone)
    for _ in range(30):
        task = rng.choice(stateful)
        refused = {c for c in everyone if rng.random() < 0.3}
        answer = indexed.poll(task, lambda c, r=refused: c not in r)  # type: ignore[misc]
        assert light.poll(task, lambda c, r=refused: c not in r) == answer  # type: ignore[misc]
        changed = [answer if answer is not None else rng.choice(everyone), rng.choice(everyone)]
        for c in changed:  # a task more or fewer
            held = clients[c].standby
            extra = rng.choice(stateful)
            if extra in held:
                held.discard(extra)
            elif extra not in clients[c].active:
                held.add(extra)
        light.offer_all(changed)
        indexed.offer_all(changed)


@pytest.mark.parametrize(("swap", "source_active", "source_standby", "dest_active", "dest_standby", "message"), [
    (False, False, False, False, False, "does not hold task #0 as active"),  # the destination never held it
    (False, True, False, True, False, "already holds task #0"),  # the source holds it too
    (False, False, True, True, False, "already holds task #0"),
    (True, False, False, True, False, "does not hold task #0 as standby"),  # a swap without the source's standby
    (True, True, True, True, False, "already holds task #0"),
    (True, False, True, False, False, "does not hold task #0 as active"),
    (True, False, True, True, True, "already holds task #0"),  # the destination holds a standby as well
])
def test_move_active_keeps_client_states_checks(swap: bool, source_active: bool, source_standby: bool,
                                                dest_active: bool, dest_standby: bool, message: str) -> None:
    """``_move_active`` changes the sets directly only where ClientState's mutators would accept the move: a
    broken invariant still raises their AssertionError."""
    from taskassign.assignors._task_movement import _move_active

    clients = client_states(app_state([task("0_0", end=END)], [client(PID_1), client(PID_2)]))
    source, dest = clients
    for held, into in ((source_active, source.active), (source_standby, source.standby),
                       (dest_active, dest.active), (dest_standby, dest.standby)):
        if held:
            into.add(0)
    with pytest.raises(AssertionError, match=message):
        _move_active(clients, 0, 0, 1, swap, {0: [0]}, WarmupBudget(0), {})


def test_move_active_moves_and_swaps() -> None:
    """The direct set changes: a move leaves a warm-up while the budget lasts, a swap trades the roles."""
    from taskassign.assignors._task_movement import _move_active

    clients = client_states(app_state([task("0_0", end=END)], [client(PID_1), client(PID_2)]))
    source, dest = clients
    dest.active.add(0)
    holders: dict[int, list[int]] = {}
    warmups: dict[int, set[int]] = {}
    _move_active(clients, 0, 0, 1, False, holders, WarmupBudget(1), warmups)
    assert (source.active, source.standby, dest.active, dest.standby) == ({0}, set(), set(), {0})
    assert holders == {0: [1]} and warmups == {1: {0}}
    _move_active(clients, 0, 1, 0, True, holders, WarmupBudget(0), warmups)  # back: the standby holder swaps
    assert (source.active, source.standby, dest.active, dest.standby) == (set(), {0}, {0}, set())
    assert holders == {0: [0]}
