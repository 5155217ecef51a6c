from __future__ import annotations

import pytest

from taskassign.errors import RackAwareOptimizationError
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
