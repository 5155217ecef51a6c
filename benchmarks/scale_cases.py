"""Kafka's StreamsAssignmentScaleTest cases as ApplicationStates.

One subtopology with one logged store: tasks ``0_0 .. 0_{n-1}``, every task stateful, changelog end
offset 100 000. Clients ``UUID(0, c)`` for c in 0..C-1 with ``threads`` consumers
``consumer-<c>-<t>`` and rack ``rack-<c mod 31>``. Round 1 ("cold"): nobody reports offsets, so every
lag is 100 000. Round 2 ("churn"): every client reports -2 for the actives it got in round 1 and 0 for
its standbys, so it is caught up exactly on what it ran. Rack awareness is off, as in Kafka's test.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    LATEST_OFFSET,
    ApplicationState,
    GroupAssignment,
    KafkaStreamsState,
    TaskInfo,
    TaskTopicPartition,
)

END_OFFSET = 100_000


@dataclass(frozen=True)
class ScaleCase:
    """One row of Kafka's scale test table."""

    name: str
    assignor: str
    partitions: int
    clients: int
    threads: int
    standbys: int


#: The twelve StreamsAssignmentScaleTest cases, plus the public sticky cases measured for issues 3 and 20.
SCALE_CASES: tuple[ScaleCase, ...] = (
    ScaleCase("ha-large-partition-count", "high_availability", 6_000, 2, 1, 1),
    ScaleCase("ha-large-num-consumers", "high_availability", 1_000, 1_000, 1, 1),
    ScaleCase("ha-many-standbys", "high_availability", 1_000, 100, 1, 50),
    ScaleCase("ha-many-threads-per-client", "high_availability", 1_000, 10, 1_000, 1),
    ScaleCase("legacy-large-partition-count", "legacy_sticky", 2_000, 2, 1, 1),
    ScaleCase("legacy-large-num-consumers", "legacy_sticky", 1_000, 1_000, 1, 1),
    ScaleCase("legacy-many-standbys", "legacy_sticky", 1_000, 100, 1, 20),
    ScaleCase("legacy-many-threads-per-client", "legacy_sticky", 1_000, 10, 1_000, 1),
    ScaleCase("fallback-large-partition-count", "fallback_prior", 2_000, 2, 1, 1),
    ScaleCase("fallback-large-num-consumers", "fallback_prior", 1_000, 1_000, 1, 1),
    ScaleCase("fallback-many-standbys", "fallback_prior", 1_000, 100, 1, 20),
    ScaleCase("fallback-many-threads-per-client", "fallback_prior", 1_000, 10, 1_000, 1),
    ScaleCase("sticky-large-partition-count", "sticky", 6_000, 2, 1, 1),
    ScaleCase("sticky-large-num-consumers", "sticky", 1_000, 1_000, 1, 1),
    ScaleCase("sticky-many-standbys", "sticky", 1_000, 100, 1, 50),
)


def _tasks(partitions: int) -> list[TaskInfo]:
    return [
        TaskInfo(
            TaskId(0, p),
            ("store",),  # type: ignore[arg-type]
            (
                TaskTopicPartition("topic", p, True, False),
                TaskTopicPartition("streams-assignment-scale-test-store-changelog", p, False, True),
            ),
            END_OFFSET,
        )
        for p in range(partitions)
    ]


def _client(index: int, threads: int, **previous: object) -> KafkaStreamsState:
    pid = ProcessId.of_ints(0, index)
    return KafkaStreamsState(
        process_id=pid,
        consumer_client_ids=tuple(f"consumer-{index}-{t}" for t in range(threads)),
        rack_id=f"rack-{index % 31}",
        **previous,  # type: ignore[arg-type]
    )


def cold_state(case: ScaleCase) -> ApplicationState:
    """Round 1: a fresh group, every client with lag 100 000 on every task."""
    return ApplicationState(
        tasks=_tasks(case.partitions),  # type: ignore[arg-type]
        clients=[_client(c, case.threads) for c in range(case.clients)],  # type: ignore[arg-type]
        configs=AssignmentConfigs(num_standby_replicas=case.standbys),
    )


def churn_state(case: ScaleCase, round_one: GroupAssignment) -> ApplicationState:
    """Round 2: each client reports what it got in round 1 (actives -2, standbys offset 0)."""
    clients = []
    for c in range(case.clients):
        pid = ProcessId.of_ints(0, c)
        assignment = round_one.clients[pid]
        offsets = dict.fromkeys(assignment.active_tasks(), LATEST_OFFSET)
        offsets.update(dict.fromkeys(assignment.standby_tasks(), 0))
        clients.append(_client(
            c, case.threads,
            previous_active_tasks=frozenset(assignment.active_tasks()),
            previous_standby_tasks=frozenset(assignment.standby_tasks()),
            task_offset_sums=offsets,
        ))
    return ApplicationState(
        tasks=_tasks(case.partitions),  # type: ignore[arg-type]
        clients=clients,  # type: ignore[arg-type]
        configs=AssignmentConfigs(num_standby_replicas=case.standbys),
    )
