from __future__ import annotations

from taskassign.ids import ProcessId, TaskId
from taskassign.leader.host_maps import host_maps, java_partition_set
from taskassign.model import KafkaStreamsAssignment, TaskInfo
from taskassign.wire import HostInfo
from tests.helpers import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, task

# What tests/leader/java/HostMapOrder.java prints with Kafka's own HostInfo and TopicPartition classes.
JAVA_HOST_ORDER = (
    "host1.example:8083 host2.example:8084 h:8080 host0.example:8082 idle:8081 app-3.svc:8086 10.0.0.7:8085"
)
JAVA_PARTITION_ORDER = (
    "orders-9 orders-12 app-by-key-repartition-0 orders-15 app-by-key-repartition-18 orders-18 "
    "app-by-key-repartition-21 orders-21 app-by-key-repartition-9 app-by-key-repartition-12 "
    "app-by-key-repartition-15 orders-0 app-by-key-repartition-3 orders-3 app-by-key-repartition-6 orders-6"
)


def _parts(tasks: dict[TaskId, TaskInfo]) -> dict[TaskId, tuple[tuple[str, int], ...]]:
    return {t: tuple(p.topic_partition for p in info.source_partitions) for t, info in tasks.items()}


def test_endpoints_map_to_source_partitions_and_collisions_are_reported() -> None:
    tasks = {t.id: t for t in (task("0_0"), task("0_1"))}
    assignments = {PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0], [TASK_0_1]),
                   PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1]),
                   PID_3: KafkaStreamsAssignment.of_tasks(PID_3)}
    h, idle = HostInfo("h", 1), HostInfo("idle", 2)
    maps = host_maps(assignments, {PID_1: h, PID_2: None, PID_3: idle}, _parts(tasks))
    assert dict(maps.partitions_by_host) == {h: (("source-0", 0),), idle: ()}
    assert dict(maps.standby_partitions_by_host) == {h: (("source-0", 1),), idle: ()}
    clash = host_maps(assignments, {PID_1: h, PID_2: h}, _parts(tasks))
    assert clash.collisions == (h,) and clash.partitions_by_host == ((h, (("source-0", 1),)),)


def test_hosts_iterate_as_kafkas_hashmap_of_host_info() -> None:
    names = ["h", "idle", "host0.example", "host1.example", "host2.example", "10.0.0.7", "app-3.svc"]
    pids = [PID_1, PID_2, PID_3, *(ProcessId(f"00000000-0000-0000-0000-00000000010{i}") for i in range(4))]
    hosts = {pid: HostInfo(name, 8080 + i) for i, (pid, name) in enumerate(zip(pids, names, strict=True))}
    assignments = {pid: KafkaStreamsAssignment.of_tasks(pid) for pid in pids}
    maps = host_maps(assignments, hosts, {}, client_order=pids)
    assert " ".join(str(h) for h, _ in maps.partitions_by_host) == JAVA_HOST_ORDER
    assert [h for h, _ in maps.standby_partitions_by_host] == [h for h, _ in maps.partitions_by_host]


def test_a_hosts_partitions_iterate_as_kafkas_hashset_filled_task_by_task() -> None:
    added = [(topic, p) for p in range(0, 24, 3) for topic in ("orders", "app-by-key-repartition")]
    assert " ".join(f"{t}-{p}" for t, p in java_partition_set(added)) == JAVA_PARTITION_ORDER


def test_a_later_client_with_the_same_endpoint_keeps_the_first_ones_place() -> None:
    a, b = HostInfo("host0.example", 8082), HostInfo("host1.example", 8083)
    tasks = {t.id: t for t in (task("0_0"), task("0_1"))}
    assignments = {PID_1: KafkaStreamsAssignment.of_tasks(PID_1, [TASK_0_0]),
                   PID_2: KafkaStreamsAssignment.of_tasks(PID_2, [TASK_0_1]),
                   PID_3: KafkaStreamsAssignment.of_tasks(PID_3)}
    maps = host_maps(assignments, {PID_1: a, PID_2: b, PID_3: a}, _parts(tasks), client_order=[PID_1, PID_2, PID_3])
    assert maps.partitions_by_host == ((b, (("source-0", 1),)), (a, ()))  # Java order: host1 before host0
    assert maps.collisions == (a,)
