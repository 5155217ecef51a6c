from __future__ import annotations

from dataclasses import replace

from taskassign.leader.ownership import ownership_from_state
from tests.helpers import PID_1, PID_2, app_state, client, task, tid


def test_single_thread_client_owns_its_previous_active_source_partitions() -> None:
    state = app_state([task("0_0"), task("0_1")], [client(PID_1, prev_active=["0_0"], prev_standby=["0_1"])])
    owned = ownership_from_state(state)
    assert owned.all_owned == {("source-0", 0)}
    assert dict(owned.of(PID_1).by_consumer) == {("source-0", 0): f"{PID_1}-StreamThread-1"}


def test_consumer_previous_attributes_and_unknown_stays_with_the_client() -> None:
    base = client(PID_2, threads=2, prev_active=["0_0", "0_1"])
    c2 = replace(base, consumer_previous_tasks={f"{PID_2}-StreamThread-2": frozenset({tid("0_1")})})
    owned = ownership_from_state(app_state([task("0_0"), task("0_1")], [client(PID_1), c2]))
    assert dict(owned.of(PID_2).by_consumer) == {("source-0", 1): f"{PID_2}-StreamThread-2"}
    assert owned.of(PID_2).unattributed == {("source-0", 0)}
    assert not owned.of(PID_1).by_consumer
