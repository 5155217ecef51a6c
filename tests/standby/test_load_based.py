"""DefaultStandbyTaskAssignor (assignor spec 6.1, P21)."""

from __future__ import annotations

import logging

import pytest

from taskassign.standby.load_based import LoadBasedStandbyTaskAssignor
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
