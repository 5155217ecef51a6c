"""LagTable: the same caught-up sets and lag order as Kafka's full T x C tables (assignor spec 4.2)."""

from __future__ import annotations

from hypothesis import given, settings

from taskassign.assignors._client_state import task_numbers
from taskassign.assignors._lags import LagTable, is_caught_up
from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.model import ApplicationState
from tests.assignors.strategies import applications
from tests.helpers import PID_1, PID_2, PID_3, app_state, client, task


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
        if lags_of.caught_up_clients is not None:
            assert sorted(lags_of.caught_up_clients) == caught_up
        by_lag = sorted(range(len(clients)), key=lambda i: (lags[i], i))
        assert list(lags_of.by_lag()) == by_lag
        assert lags_of.most_caught_up == by_lag[0]
        assert table.most_caught_up_lag(n) == lags_of.most_caught_up_lag == lags[by_lag[0]]


def test_sentinels_and_bounds() -> None:
    state = app_state([task("0_0", end=100)], [client(PID_1, offsets={"0_0": -2}), client(PID_2, offsets={"0_0": -3}),
                                               client(PID_3, offsets={"0_0": 150})], acceptable_recovery_lag=99)
    table = LagTable(state, task_numbers(state.task_ids.items))
    assert [table.lag(i, 0) for i in range(3)] == [-2, -3, 100]  # ahead of the changelog: restore from scratch
    assert [table.is_caught_up(i, 0) for i in range(3)] == [True, False, False]
    assert list(table[0].by_lag()) == [1, 0, 2]  # -3 sorts first
    assert is_caught_up(-3, UNBOUNDED_RECOVERY_LAG) and is_caught_up(100, 100) and not is_caught_up(101, 100)
