"""DefaultStandbyTaskAssignor: min(replicas, clients - 1) standbys per stateful task, least loaded first."""

from __future__ import annotations

import logging
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskassign.internals.client_state import ClientState
from taskassign.standby.base import not_holding_by_assigned_load, place_all_least_loaded, place_least_loaded
from taskassign.standby.load_based import LoadBasedStandbyTaskAssignor
from tests.helpers import PID
from tests.standby.helpers import TASKS, make_clients, n, pools, standbys


@pytest.mark.parametrize("exact", [False, True])
def test_p21_min_replicas_or_clients_minus_one_on_distinct_least_loaded_clients(exact: bool) -> None:
    clients = make_clients([{"active": ["0_0", "0_1"]}, {"active": ["0_2"]}, {}, {"threads": 2}])
    LoadBasedStandbyTaskAssignor().assign(clients, [n("0_0"), n("0_1"), n("0_2")], 2, pools(clients, exact), TASKS)
    # loads 2, 1, 0, 0 (P4 has two threads): 0_0 -> P3, P4; 0_1 -> P4, P2; 0_2 -> P3, P4
    assert standbys(clients) == {1: [], 2: ["0_1"], 3: ["0_0", "0_2"], 4: ["0_0", "0_1", "0_2"]}


def test_too_few_clients_places_what_it_can_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    clients = make_clients([{"active": ["0_0"]}, {}])
    with caplog.at_level(logging.WARNING, logger="taskassign.standby"):
        LoadBasedStandbyTaskAssignor().assign(clients, [n("0_0")], 3, pools(clients), TASKS)
    assert standbys(clients) == {1: [], 2: ["0_0"]}
    assert "0_0" in caplog.text


def test_any_move_is_allowed() -> None:
    a, b = make_clients([{}, {}])
    assignor = LoadBasedStandbyTaskAssignor()
    assert assignor.is_allowed_task_movement(a, b)
    assert assignor.is_allowed_task_movement_for_task(a, b, 0, [a, b])
    assert assignor.standby_move_predicate([a, b])(a.process_id, b.process_id, TASKS[0], {}, {})


@given(seed=st.integers(0, 2**32))
def test_bulk_placement_equals_kafkas_heap_poll_by_poll(seed: int) -> None:
    rng = random.Random(seed)

    def random_clients() -> list[ClientState]:
        r = random.Random(seed)
        clients = []
        for i in range(r.choice([1, 2, 3, r.randint(1, 12)])):
            client = ClientState(i, PID[i + 1], r.randint(1, 4))
            client.active.update(r.sample(range(len(TASKS)), r.randint(0, 5)))
            client.standby.update(t for t in r.sample(range(len(TASKS)), r.randint(0, 3)) if t not in client.active)
            clients.append(client)
        return clients

    tasks = rng.sample(range(len(TASKS)), rng.randint(0, len(TASKS)))
    replicas = rng.randint(0, 4)
    bulk, java = random_clients(), random_clients()
    short = place_all_least_loaded(bulk, tasks, replicas)
    pool = pools(java, exact=True)(*not_holding_by_assigned_load(java))
    pool.offer_all(range(len(java)))
    expected_short = [t for t in tasks if place_least_loaded(java, pool, t, replicas) > 0]
    assert short == expected_short
    assert [c.standby for c in bulk] == [c.standby for c in java]


def test_a_task_nobody_holds_goes_to_the_lightest_clients_only() -> None:
    clients = make_clients([{"active": ["0_1", "0_2"]}, {"active": ["0_3"]}, {}])
    assert place_all_least_loaded(clients, [n("0_0"), n("0_1")], 2) == []
    # 0_0 has no holder: 3 candidates for 2 replicas, the two lightest (P3, then P2) get it; 0_1 goes to P2 and P3
    assert standbys(clients) == {1: [], 2: ["0_0", "0_1"], 3: ["0_0", "0_1"]}
