from __future__ import annotations

import random

import pytest

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import TaskId
from taskassign.model import ApplicationState, SortedFrozenSet, TaskInfo, TaskTopicPartition
from taskassign.rack.cost import CostModel, PartitionScope, RackTable
from tests.helpers import PID_1, PID_2, PID_3, tid
from tests.rack.instances import racked_client, racked_state, racked_task

STATE = racked_state(
    [racked_task("0_0", [["a", "b"], ["b"]], [["c"]]), racked_task("0_1", [None], [[]]),
     racked_task("1_0", [], [["a"]], stateful=True)],
    [racked_client(1, "b"), racked_client(2, "a"), racked_client(3, None)],
)


def test_scopes_pick_the_partitions_that_carry_traffic() -> None:
    info = STATE.tasks[tid("0_0")]
    assert len(PartitionScope.SOURCE.partitions(info)) == 2
    assert len(PartitionScope.CHANGELOG.partitions(info)) == 1
    assert len(PartitionScope.ALL.partitions(info)) == 3


def test_table_counts_partitions_per_rack_with_clients_interned_first() -> None:
    table = RackTable.build(STATE, PartitionScope.SOURCE)
    assert table.racks == ("b", "a")
    assert table.client_racks == {PID_1: 0, PID_2: 1, PID_3: None}
    b, a = 0, 1
    assert table.on_rack[tid("0_0")] == {a: 1, b: 2}
    assert table.missing(tid("0_0"), b) == 0
    assert table.missing(tid("0_0"), a) == 1
    row = table.row[tid("0_0")]
    entries = range(table.indptr[row], table.indptr[row + 1])
    assert {int(table.rack_ids[e]): int(table.counts[e]) for e in entries} == {a: 1, b: 2}
    assert int(table.partition_counts[row]) == 2


def test_table_reports_what_cannot_be_costed_strictly() -> None:
    source = RackTable.build(STATE, PartitionScope.SOURCE)
    assert source.unknown_racks == {tid("0_1"): "source partition topic0-10 has no rack information"}
    assert "has no rack information. Maybe forgot to call canEnableRackAwareAssignor" in source.problems[tid("0_1")]
    assert source.problems[tid("1_0")] == "task 1_0 has no source partitions to compute a rack-aware cost from"
    with pytest.raises(RackAwareOptimizationError, match="TopicPartition topic0-10 has no rack information"):
        source.require([tid("0_0"), tid("0_1")])
    source.require([tid("0_0")])
    changelog = RackTable.build(STATE, PartitionScope.CHANGELOG)
    assert changelog.unknown_racks[tid("0_1")] == (
        "changelog partition app-store0-changelog-10 has no replica with a rack")
    with pytest.raises(RackAwareOptimizationError, match=r"client .*3 has no rack"):
        changelog.rack_of(PID_3)


def test_cost_is_traffic_per_remote_partition_plus_non_overlap_for_a_move() -> None:
    costs = CostModel(RackTable.build(STATE, PartitionScope.SOURCE), 10, 3)
    a = costs.table.rack_of(PID_2)
    assert costs.traffic(tid("0_0"), a) == 10
    assert costs.cost(tid("0_0"), a, moved=True) == 13
    assert costs.cost(tid("0_0"), costs.table.rack_of(PID_1), moved=False) == 0


def _reference_table(state: ApplicationState, scope: PartitionScope) -> dict[str, object]:
    """RackTable's content counted partition by partition, racks numbered by first appearance (clients first)."""
    label = {PartitionScope.SOURCE: "source partition", PartitionScope.ALL: "partition",
             PartitionScope.CHANGELOG: "changelog partition"}[scope]
    index: dict[str, int] = {}
    client_racks = {pid: None if c.rack_id is None else index.setdefault(c.rack_id, len(index))
                    for pid, c in state.clients.items()}
    on_rack: dict[TaskId, list[tuple[int, int]]] = {}
    problems: dict[TaskId, str] = {}
    unknown: dict[TaskId, str] = {}
    for t, info in state.tasks.items():
        parts = scope.partitions(info)
        counts: dict[int, int] = {}
        for p in parts:
            names = [] if p.rack_ids is None else list(p.rack_ids)
            if not names and t not in unknown:
                unknown[t] = (f"{label} {p.topic}-{p.partition} has "
                              f"{'no rack information' if p.rack_ids is None else 'no replica with a rack'}")
                problems[t] = (f"TopicPartition {p.topic}-{p.partition} has no rack information. "
                               "Maybe forgot to call canEnableRackAwareAssignor first")
            for name in names:
                r = index.setdefault(name, len(index))
                counts[r] = counts.get(r, 0) + 1
        if not parts:
            problems[t] = f"task {t} has no {label}s to compute a rack-aware cost from"
        on_rack[t] = list(counts.items())
    return {"racks": tuple(index), "client_racks": client_racks, "on_rack": on_rack, "problems": problems,
            "unknown": unknown, "partitions": {t: len(scope.partitions(i)) for t, i in state.tasks.items()}}


def _observed_table(table: RackTable) -> dict[str, object]:
    csr = {t: [(int(table.rack_ids[e]), int(table.counts[e]))
               for e in range(table.indptr[table.row[t]], table.indptr[table.row[t] + 1])] for t in table.row}
    on_rack = {t: list(counts.items()) for t, counts in table.on_rack.items()}
    assert csr == on_rack
    assert list(table.row.values()) == list(range(len(table.row)))
    assert [int(n) for n in table.partition_counts] == list(table.partitions.values())
    return {"racks": table.racks, "client_racks": dict(table.client_racks), "on_rack": on_rack,
            "problems": dict(table.problems), "unknown": dict(table.unknown_racks),
            "partitions": dict(table.partitions)}


@pytest.mark.parametrize("seed", range(40))
def test_table_equals_a_partition_by_partition_count_with_shared_and_unshared_rack_sets(seed: int) -> None:
    rng = random.Random(seed)
    shared: list[SortedFrozenSet[str] | None] = [
        None, SortedFrozenSet(()), *(SortedFrozenSet(rng.sample("abcde", rng.randint(1, 3))) for _ in range(4))]

    def racks() -> SortedFrozenSet[str] | None:
        pick = rng.choice(shared)
        if pick is not None and rng.random() < 0.3:  # an equal set, another object
            return SortedFrozenSet(pick.items)
        return pick

    tasks = []
    for k in range(rng.randint(0, 30)):
        t = TaskId(k % 3, k // 3)
        parts = [TaskTopicPartition(f"in{t.subtopology}", 10 * t.partition + j, True, False, racks())
                 for j in range(rng.choice((0, 1, 1, 1, 2, 3)))]
        parts += [TaskTopicPartition(f"log{t.subtopology}", 10 * t.partition + j, rng.random() < 0.2, True, racks())
                  for j in range(rng.choice((0, 0, 1, 2)))]
        tasks.append(TaskInfo(t, ("s",) if parts and parts[-1].is_changelog else (), tuple(parts), 0))
    clients = [racked_client(n, rng.choice([None, "a", "c", "f"])) for n in range(1, rng.randint(1, 5))]
    state = racked_state(tasks, clients)
    for scope in PartitionScope:
        table = RackTable.build(state, scope)
        assert _observed_table(table) == _reference_table(state, scope)
        for t in state.task_ids:  # the problems mapping answers membership and lookups alike
            assert (t in table.problems) == (t in dict(table.problems))
