from __future__ import annotations

import random
from dataclasses import replace

import pytest

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.configs import REBALANCE_PROTOCOL, REBALANCE_PROTOCOL_EAGER
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.ownership import ownership_from_state, task_ownership_from_state
from taskassign.leader.run import _prev_tasks_by_lag, rebalance
from taskassign.model import (
    ACTIVE,
    STANDBY,
    ApplicationState,
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from tests.helpers import PID, PID_1, PID_2, app_state, client, task, tid


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


def _random_state(seed: int) -> ApplicationState:
    """Clients with 1-3 threads; previous actives that may overlap between clients; consumers reporting tasks
    they ran, tasks they did not, and consumers that left; offsets of every kind (running, unknown, ahead)."""
    rng = random.Random(seed)
    tasks = [task(f"{s}_{p}", stateful=rng.random() < 0.7, end=rng.randint(0, 50)) for s in range(3) for p in range(6)]
    names = [str(t.id) for t in tasks]
    clients = []
    for n in range(1, rng.randint(2, 5) + 1):
        base = client(PID[n], threads=rng.randint(1, 3), prev_active=rng.sample(names, rng.randint(0, 8)),
                      prev_standby=rng.sample(names, rng.randint(0, 4)),
                      offsets={t: rng.choice([-2, -3, rng.randint(0, 60)]) for t in rng.sample(names, 8)})
        reporting = [*base.consumer_client_ids, f"{PID[n]}-StreamThread-9"]
        reports = {c: frozenset(tid(t) for t in rng.sample(names, rng.randint(0, 5)))
                   for c in rng.sample(reporting, rng.randint(0, len(reporting)))}
        clients.append(replace(base, consumer_previous_tasks=reports))
    return app_state(tasks, clients, num_standby_replicas=rng.randint(0, 1))


class _Random(BaseTaskAssignor):
    """Any valid assignment: every task active somewhere, a few standbys."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        pids = list(application_state.process_ids)
        placed: dict[ProcessId, dict[TaskId, AssignedTask]] = {pid: {} for pid in pids}
        for t in application_state.task_ids:
            pid = self.rng.choice(pids)
            placed[pid][t] = AssignedTask(t, ACTIVE)
            other = self.rng.choice(pids)
            if other != pid and t in application_state.stateful_task_ids and self.rng.random() < 0.3:
                placed[other][t] = AssignedTask(t, STANDBY)
        deadline = {pid: self.rng.choice([None, None, 500]) for pid in pids}
        return TaskAssignment(tuple(KafkaStreamsAssignment(pid, ts, deadline[pid]) for pid, ts in placed.items()))


@pytest.mark.parametrize("seed", range(60))
def test_ownership_by_task_withholds_what_ownership_by_partition_withholds(seed: int) -> None:
    state = _random_state(seed)
    tasks = task_ownership_from_state(state)
    assert tasks is not None
    partitions = ownership_from_state(state)
    for pid in state.process_ids:  # the same owners, task by task
        expected: dict[str | None, set[TaskId]] = {}
        for t in state.clients[pid].previous_active_tasks:
            (p,) = state.tasks[t].source_topic_partitions
            owner = partitions.of(pid).by_consumer.get(p)
            assert owner is not None or p in partitions.of(pid).unattributed
            expected.setdefault(owner, set()).add(t)
        assert {c: set(ts) for c, ts in tasks.of(pid).items()} == expected
    by_task = rebalance(state, _Random(seed), raise_on_error=False)
    by_partition = rebalance(state, _Random(seed), raise_on_error=False, ownership=ownership_from_state(state))
    assert by_task.group == by_partition.group
    assert by_task.group.consumers is not None
    if seed == 0:
        assert any(a.withheld for consumers in by_task.group.consumers.values() for a in consumers.values())


def test_ownership_by_task_only_where_partitions_are_one_task_s() -> None:
    shared = replace(task("1_0"), topic_partitions=task("0_0").topic_partitions)
    assert task_ownership_from_state(app_state([task("0_0"), shared], [client(PID_1)])) is None
    no_source = replace(task("1_0", stateful=False), topic_partitions=())
    assert task_ownership_from_state(app_state([task("0_0"), no_source], [client(PID_1)])) is None
    eager = app_state([task("0_0")], [client(PID_1, prev_active=["0_0"])],
                      extensions={REBALANCE_PROTOCOL: REBALANCE_PROTOCOL_EAGER})
    nothing = task_ownership_from_state(eager)
    assert nothing is not None and not nothing.owned


@pytest.mark.parametrize("seed", range(20))
def test_the_leader_s_lag_order_is_the_model_s(seed: int) -> None:
    rng = random.Random(seed)
    for c in _random_state(seed).clients.values():
        assigned = {t for ts in c.consumer_previous_tasks.values() for t in ts if rng.random() < 0.7}
        expected = {consumer: tuple(t for t in c.prev_tasks_by_lag(consumer) if t in assigned)
                    for consumer in c.consumer_client_ids if consumer in c.consumer_previous_tasks}
        assert _prev_tasks_by_lag(c, assigned) == expected
        assert _prev_tasks_by_lag(c, assigned, dict(c.changelog_end_offset_sums or {}).get) == expected
