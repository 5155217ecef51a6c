"""LagTable: the same caught-up sets and lag order as Kafka's full T x C tables (HighAvailabilityTaskAssignor's
caught-up clients and lag order)."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.ids import TaskId
from taskassign.internals.client_state import task_numbers
from taskassign.internals.lags import LagTable, is_caught_up, reported_lags
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, ApplicationState
from tests.assignors.strategies import applications
from tests.helpers import PID, PID_1, PID_2, PID_3, app_state, client, task


@settings(max_examples=100)
@given(applications())
def test_lag_table_matches_the_full_tables(state: ApplicationState) -> None:
    numbers = task_numbers(state.task_ids.items)
    table = LagTable(state, numbers)
    acceptable = state.configs.acceptable_recovery_lag
    clients = list(state.kafka_streams_states(True).values())
    for task_id in state.stateful_task_ids:
        n = numbers[task_id]
        lags = [c.lag_for(task_id) for c in clients]  # Kafka's per-client lag
        assert [table.lag(i, n) for i in range(len(clients))] == lags
        caught_up = [i for i, lag in enumerate(lags) if is_caught_up(lag, acceptable)]
        assert [i for i in range(len(clients)) if table.is_caught_up(i, n)] == caught_up
        lags_of = table[n]
        assert lags_of.num_caught_up == table.num_caught_up(n) == len(caught_up)
        assert table.caught_up_clients(n) == lags_of.caught_up_clients
        if lags_of.caught_up_clients is not None:
            assert sorted(lags_of.caught_up_clients) == caught_up
        ahead, behind, outside = table.lag_order_parts(n)
        assert (ahead, behind) == lags_of.reporters_around_block()
        assert outside == {i for i in range(len(clients)) if lags[i] != state.changelog_end_offset_sums[task_id]}
        by_lag = sorted(range(len(clients)), key=lambda i: (lags[i], i))
        assert list(lags_of.by_lag()) == by_lag
        assert lags_of.most_caught_up == table.most_caught_up(n) == by_lag[0]
        assert table.most_caught_up_lag(n) == lags_of.most_caught_up_lag == lags[by_lag[0]]


def test_sentinels_and_bounds() -> None:
    state = app_state([task("0_0", end=100)], [client(PID_1, offsets={"0_0": -2}), client(PID_2, offsets={"0_0": -3}),
                                               client(PID_3, offsets={"0_0": 150})], acceptable_recovery_lag=99)
    table = LagTable(state, task_numbers(state.task_ids.items))
    assert [table.lag(i, 0) for i in range(3)] == [-2, -3, 100]  # ahead of the changelog: restore from scratch
    assert [table.is_caught_up(i, 0) for i in range(3)] == [True, False, False]
    assert list(table[0].by_lag()) == [1, 0, 2]  # -3 sorts first
    assert is_caught_up(-3, UNBOUNDED_RECOVERY_LAG) and is_caught_up(100, 100) and not is_caught_up(101, 100)


def _random_state(rng: random.Random) -> ApplicationState:
    """Tasks with and without changelogs (some end offsets unknown), clients reporting sentinels, offsets
    ahead of the changelog and tasks that are not part of the application."""
    tasks = [task(f"{s}_{p}", stateful=rng.random() < 0.8, end=rng.choice([0, 5, 100, 10**12, UNKNOWN_OFFSET_SUM]))
             for s in range(3) for p in range(rng.randint(0, 10))]
    reportable = [str(t.id) for t in tasks] + ["9_0", "9_1"]  # stateless tasks too: their reports are ignored
    clients = []
    for n in range(1, rng.randint(1, 9)):
        reported = rng.sample(reportable, rng.randint(0, len(reportable)))
        clients.append(client(PID[n], offsets={t: rng.choice([LATEST_OFFSET, UNKNOWN_OFFSET_SUM, 0, 3, 100, 10**13])
                                               for t in reported}))
    return app_state(tasks, clients, acceptable_recovery_lag=rng.choice([0, 10, 150, UNBOUNDED_RECOVERY_LAG]))


def _reference_placed_behind(state: ApplicationState, numbers: dict[TaskId, int], assigned: list[set[int]],
                             skip: dict[int, set[int]]) -> list[tuple[int, int]]:
    """Kafka's enqueue loop over the plain per-client lags (the loop LagTable.placed_behind replaces)."""
    ends = {numbers[t]: e for t, e in state.changelog_end_offset_sums.items()}
    by_client, by_task = reported_lags([c.task_offset_sums for c in state.clients.values()], numbers, ends)
    acceptable = state.configs.acceptable_recovery_lag
    out = []
    for c, tasks in enumerate(assigned):
        for t in sorted(tasks):
            if t in skip.get(c, set()):
                continue
            lag = by_client[c].get(t, ends[t])
            if is_caught_up(lag, acceptable):
                continue
            reported = by_task.get(t, {})
            lowest = min([*reported.values(), *([ends[t]] if len(reported) < len(assigned) else [])])
            if lowest < lag:
                out.append((t, c))
    return out


@given(seed=st.integers(0, 2**32))
@example(seed=10050693)  # no task at all, and reports of tasks the application does not have
def test_vectorised_tables_equal_the_plain_loops(seed: int) -> None:
    rng = random.Random(seed)
    state = _random_state(rng)
    numbers = task_numbers(state.task_ids.items)
    ends = {numbers[t]: e for t, e in state.changelog_end_offset_sums.items()}
    table = LagTable(state, numbers)
    by_client, by_task = reported_lags([c.task_offset_sums for c in state.clients.values()], numbers, ends)
    assert table.reported_by_client == by_client
    assert [list(d) for d in table.reported_by_client] == [list(d) for d in by_client]  # same key order too
    assert dict(table.reported_by_task) == by_task
    assert [(t, list(d)) for t, d in table.reported_by_task.items()] == [(t, list(d)) for t, d in by_task.items()]
    stateful = sorted(ends)
    if state.clients:  # (with no client there is no most caught-up one)
        assert [table.most_caught_up(t) for t in stateful] == [table[t].most_caught_up for t in stateful]
    assigned = [set(rng.sample(stateful, rng.randint(0, len(stateful)))) for _ in state.clients]
    skip = {c: set(rng.sample(sorted(tasks), min(1, len(tasks))))
            for c, tasks in enumerate(assigned) if rng.random() < 0.3}
    tasks, movers = table.placed_behind(assigned, skip)
    assert list(zip(tasks.tolist(), movers.tolist(), strict=True)) == _reference_placed_behind(state, numbers, assigned,
                                                                                              skip)


def test_offsets_beyond_a_java_long_use_python_ints() -> None:
    state = app_state([task("0_0", end=10), task("0_1", end=2**70)],
                      [client(PID_1, offsets={"0_0": 2**70, "0_1": -2}), client(PID_2, offsets={"0_1": 5})])
    table = LagTable(state, task_numbers(state.task_ids.items))
    assert table.lag(0, 0) == 10  # ahead of the changelog: restore from scratch
    assert table.lag(1, 1) == 2**70 - 5 and table.most_caught_up_lag(1) == -2
    assert table.most_caught_up(1) == 0 and table.most_caught_up(0) == 0  # -2 first; lag 10 (PID_1) ties the end
    tasks, movers = table.placed_behind([set(), {1}])
    assert (tasks.tolist(), movers.tolist()) == ([1], [1])
