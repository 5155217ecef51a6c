"""Hypothesis strategy: random small applications for the sticky family's property tests.

Varies what the sticky assignors look at: 1-4 subtopologies of 1-6 partitions, each stateful with a
changelog, stateful without one (a non-logged store) or stateless; 1-7 clients of 1-3 threads with
small or random (both-halves) UUIDs; random previous actives (a task may be claimed by two clients,
and a client may report a task that no longer exists) and previous standbys; 0-3 standby replicas.
"""

from __future__ import annotations

import uuid

from hypothesis import strategies as st

from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, KafkaStreamsState, TaskInfo, TaskTopicPartition

_KINDS = ("changelog", "changelog", "store_only", "stateless")


_RACKS = ("rack-a", "rack-b", "rack-c")


def _task(sub: int, part: int, kind: str, racks: tuple[frozenset[str] | None, frozenset[str] | None]) -> TaskInfo:
    parts = [TaskTopicPartition(f"source-{sub}", part, True, False, racks[0])]
    stores: tuple[str, ...] = ()
    if kind != "stateless":
        stores = (f"store-{sub}",)
    if kind == "changelog":
        parts.append(TaskTopicPartition(f"app-store-{sub}-changelog", part, False, True, racks[1]))
    return TaskInfo(TaskId(sub, part), frozenset(stores), tuple(parts), 0)  # type: ignore[arg-type]


@st.composite
def applications(
    draw: st.DrawFn, *, max_clients: int = 7, max_partitions: int = 6, racks: bool = False
) -> ApplicationState:
    """With ``racks``: every client and partition has racks, a rack strategy is set, costs vary."""
    rack_sets = st.frozensets(st.sampled_from(_RACKS), min_size=1)
    tasks: list[TaskInfo] = []
    for sub in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(_KINDS))
        for p in range(draw(st.integers(1, max_partitions))):
            placed = (draw(rack_sets), draw(rack_sets)) if racks else (None, None)
            tasks.append(_task(sub, p, kind, placed))
    task_ids = [t.id for t in tasks]
    ghost = TaskId(99, 0)  # reported by a client although the topology no longer has it
    num_clients = draw(st.integers(1, max_clients))
    if draw(st.booleans()):
        pids = [ProcessId.of_ints(0, n) for n in range(1, num_clients + 1)]
    else:
        ints = draw(st.lists(st.integers(0, 2**128 - 1), min_size=num_clients, max_size=num_clients, unique=True))
        pids = [ProcessId(uuid.UUID(int=i)) for i in ints]
    clients = []
    for pid in pids:
        prev_active = set(draw(st.lists(st.sampled_from([*task_ids, ghost]), max_size=len(task_ids))))
        rest = [t for t in task_ids if t not in prev_active]
        prev_standby = set(draw(st.lists(st.sampled_from(rest), max_size=len(rest)))) if rest else set()
        clients.append(KafkaStreamsState(
            process_id=pid,
            consumer_client_ids=tuple(f"{pid}-StreamThread-{i}" for i in range(1, draw(st.integers(1, 3)) + 1)),
            previous_active_tasks=frozenset(prev_active),  # type: ignore[arg-type]
            previous_standby_tasks=frozenset(prev_standby),  # type: ignore[arg-type]
            rack_id=draw(st.sampled_from(_RACKS)) if racks else None,
        ))
    rack_configs = {}
    if racks:
        costs = st.one_of(st.none(), st.integers(0, 10))
        rack_configs = {"rack_aware_assignment_strategy": draw(st.sampled_from(["min_traffic", "balance_subtopology"])),
                        "rack_aware_traffic_cost": draw(costs), "rack_aware_non_overlap_cost": draw(costs)}
    configs = AssignmentConfigs(num_standby_replicas=draw(st.integers(0, 3)), **rack_configs)
    return ApplicationState(tasks=tasks, clients=clients, configs=configs)
