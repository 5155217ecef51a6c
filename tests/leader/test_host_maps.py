from __future__ import annotations

from taskassign.leader.host_maps import host_maps
from taskassign.model import KafkaStreamsAssignment
from taskassign.wire import HostInfo
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, task


def test_endpoints_map_to_source_partitions_and_collisions_are_reported() -> None:
    tasks = {t.id: t for t in (task("0_0"), task("0_1"))}
    assignments = {PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0], [TASK_0_1]),
                   PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1]),
                   PID_3: KafkaStreamsAssignment.of_tasks(PID_3)}
    h = HostInfo("h", 1)
    maps = host_maps(assignments, {PID_1: h, PID_2: None, PID_3: HostInfo("idle", 2)}, tasks)
    assert maps.partitions_by_host == ((h, (("source-0", 0),)), (HostInfo("idle", 2), ()))
    assert maps.standby_partitions_by_host == ((h, (("source-0", 1),)), (HostInfo("idle", 2), ()))
    clash = host_maps(assignments, {PID_1: h, PID_2: h}, tasks)
    assert clash.collisions == (h,) and clash.partitions_by_host == ((h, (("source-0", 1),)),)
