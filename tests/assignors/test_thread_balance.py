"""balanceTasksOverThreads (HighAvailabilityTaskAssignor): Kafka's formula, and the pruned pair scan is exact."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from taskassign.assignors import _thread_balance
from taskassign.assignors._thread_balance import balance_tasks_over_threads, moves_allowed, should_move_a_task
from taskassign.ids import ProcessId
from taskassign.internals.client_state import ClientState


def clients_with(counts: list[int], capacities: list[int], standby: bool = False) -> list[ClientState]:
    out, task = [], 0
    for i, (count, capacity) in enumerate(zip(counts, capacities, strict=True)):
        client = ClientState(i, ProcessId.of_ints(0, i + 1), capacity)
        tasks = set(range(task, task + count))
        task += count
        (client.standby if standby else client.active).update(tasks)
        out.append(client)
    return out


def test_should_move_examples_of_the_spec() -> None:
    one, two = clients_with([2, 1], [1, 2])
    assert should_move_a_task(one, two)  # skew 1.5, proposed 0
    six, three = clients_with([5, 4], [6, 3])
    assert should_move_a_task(three, six) and not should_move_a_task(six, three)
    a, b = clients_with([3, 2], [1, 1])
    assert not should_move_a_task(a, b)  # would only invert the imbalance
    a, b = clients_with([3, 1], [1, 1])
    assert should_move_a_task(a, b)


def test_capacities_six_and_three_end_with_six_and_three() -> None:
    clients = clients_with([5, 4], [6, 3])
    balance_tasks_over_threads(clients, standby=False)
    assert [len(c.active) for c in clients] == [6, 3]
    assert clients[0].active == {0, 1, 2, 3, 4, 5}  # the 3-thread client gave its lowest task


def _naive(clients: list[ClientState], standby: bool) -> None:
    """Kafka's loop as written: every ordered pair, every pass."""
    moved = True
    while moved:
        moved = False
        for source in clients:
            for destination in clients:
                if destination is source:
                    continue
                own = source.standby if standby else source.active
                for task in sorted(own):
                    if not should_move_a_task(source, destination):
                        break
                    if not destination.has_assigned(task):
                        own.remove(task)
                        (destination.standby if standby else destination.active).add(task)
                        moved = True


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 4)), min_size=1, max_size=12), st.booleans())
def test_pruned_scan_moves_exactly_like_kafkas_loop(spec: list[tuple[int, int]], standby: bool) -> None:
    counts, capacities = [c for c, _ in spec], [k for _, k in spec]
    fast, slow = clients_with(counts, capacities, standby), clients_with(counts, capacities, standby)
    if standby:  # standbys balance around the actives: give everyone an active too
        for group in (fast, slow):
            for client in group:
                client.active.add(1000 + client.index)
    vectorised = clients_with(counts, capacities, standby)
    if standby:
        for client in vectorised:
            client.active.add(1000 + client.index)
    balance_tasks_over_threads(fast, standby)
    with patch.object(_thread_balance, "VECTORISE_FROM", 0):  # the numpy scan of large applications
        balance_tasks_over_threads(vectorised, standby)
    _naive(slow, standby)
    assert [(c.active, c.standby) for c in fast] == [(c.active, c.standby) for c in slow]
    assert [(c.active, c.standby) for c in vectorised] == [(c.active, c.standby) for c in slow]


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 4), st.booleans()), min_size=1, max_size=12))
def test_active_balance_around_standbys_moves_like_kafkas_loop(spec: list[tuple[int, int, bool]]) -> None:
    """Actives balanced while some clients hold standbys (not the disjoint slice path): Kafka's loop too."""
    counts, capacities = [c for c, _, _ in spec], [k for _, k, _ in spec]
    fast, slow = clients_with(counts, capacities), clients_with(counts, capacities)
    for group in (fast, slow):
        for client, (_, _, holds) in zip(group, spec, strict=True):
            after = group[(client.index + 1) % len(group)]
            if holds and after is not client and after.active:  # a standby of a task the next client runs,
                client.standby.add(min(after.active))  # which that client then cannot give this one
    balance_tasks_over_threads(fast, standby=False)
    _naive(slow, standby=False)
    assert [(c.active, c.standby) for c in fast] == [(c.active, c.standby) for c in slow]


def test_standby_balance_respects_the_movement_predicate() -> None:
    clients = clients_with([4, 0, 0], [1, 1, 1], standby=True)
    balance_tasks_over_threads(clients, standby=True, allowed=lambda s, d: d.index != 1)
    assert [len(c.standby) for c in clients] == [2, 0, 2]


@given(st.integers(0, 300), st.integers(1, 16), st.integers(0, 300), st.integers(1, 16))
def test_moves_allowed_counts_kafkas_should_move_loop(source: int, source_threads: int, destination: int,
                                                      destination_threads: int) -> None:
    giver, taker = clients_with([source, destination], [source_threads, destination_threads])
    moved = 0
    while should_move_a_task(giver, taker):
        taker.active.add(giver.active.pop())
        moved += 1
    assert moves_allowed(source, source_threads, destination, destination_threads) == moved


def _moves_by_loop(source: int, source_threads: int, destination: int, destination_threads: int) -> int:
    with patch.object(_thread_balance, "_EXACT_COUNTS", -1):  # the double loop, whatever the sizes
        return moves_allowed(source, source_threads, destination, destination_threads)


@given(st.integers(0, 1 << 20), st.integers(1, 1 << 10), st.integers(0, 1 << 20), st.integers(1, 1 << 10),
       st.integers(-3, 3))
def test_moves_allowed_integer_form_is_the_double_loop_up_to_its_bounds(source: int, source_threads: int,
                                                                        destination: int, destination_threads: int,
                                                                        nudge: int) -> None:
    # a destination near the source's load per thread (a few moves to count), anywhere up to the bounds
    destination = max(0, min(destination, source * destination_threads // source_threads + nudge))
    if source + destination > 1 << 20:
        return
    assert moves_allowed(source, source_threads, destination, destination_threads) == _moves_by_loop(
        source, source_threads, destination, destination_threads)


@given(st.integers(0, 3000), st.integers(1, 1 << 12), st.integers(0, 3000), st.integers(1, 1 << 12))
def test_moves_allowed_small_counts_any_capacity(source: int, source_threads: int, destination: int,
                                                 destination_threads: int) -> None:
    assert moves_allowed(source, source_threads, destination, destination_threads) == _moves_by_loop(
        source, source_threads, destination, destination_threads)
