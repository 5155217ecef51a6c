"""Kafka's StreamsAssignmentScaleTest through the whole leader (``rebalance_group``): decoding every
subscription, tasks and lags, the assignor, validation, thread distribution and encoding every
member's assignment, as Kafka times it (StreamsAssignmentScaleTest).

Round 1: every member sends SubscriptionInfo v11 with no offsets and owns nothing. Round 2: every
member reports -2 for the actives and 0 for the standbys it got in round 1 and owns its round-1
partitions. The assignor is pluggable (``--assignor``, a short name or ``module:Class``); the default is
Kafka's, ``high_availability``.

    PYTHONPATH=src python -m benchmarks.group_scale --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks._results import load_average, report
from taskassign.configs import AssignmentConfigs
from taskassign.formats.group import GroupSpec, MemberSpec, PartitionSpec, SubtopologySpec, TopicSpec
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.group import GroupRebalanceResult, rebalance_group
from taskassign.wire import AssignmentInfo, Subscription, SubscriptionInfo

CHANGELOG = "streams-assignment-scale-test-store-changelog"
END_OFFSET = 100_000

#: (name, partitions, clients, threads per client, standbys): the distinct shapes of the twelve cases.
SHAPES = (
    ("large-partition-count", 6_000, 2, 1, 1),
    ("large-num-consumers", 1_000, 1_000, 1, 1),
    ("many-standbys", 1_000, 100, 1, 20),
    ("many-threads-per-client", 1_000, 10, 1_000, 1),
)


def _spec(partitions: int, members: list[MemberSpec], standbys: int) -> GroupSpec:
    topics = {
        "topic": TopicSpec("topic", tuple(PartitionSpec(p) for p in range(partitions))),
        CHANGELOG: TopicSpec(CHANGELOG, tuple(PartitionSpec(p, end_offset=END_OFFSET) for p in range(partitions))),
    }
    return GroupSpec("scale", 0, AssignmentConfigs(num_standby_replicas=standbys), {"num.standby.replicas": standbys},
                     (SubtopologySpec(0, ("topic",), ("store",), (CHANGELOG,)),), topics, tuple(members),
                     members[0].member_id)


def _member(member_id: str, pid: ProcessId, sums: dict[TaskId, int], owned: list[tuple[str, int]],
            rack: str | None) -> MemberSpec:
    info = SubscriptionInfo.of(11, pid, sums)
    data = Subscription.of(["topic"], info.encode(), owned, rack_id=rack).encode()
    subscription = Subscription.decode(data)  # as the leader receives it
    return MemberSpec(member_id, subscription, SubscriptionInfo.decode(subscription.user_data or b""))


def round_one(partitions: int, clients: int, threads: int, standbys: int) -> GroupSpec:
    members = [_member(f"consumer-{c}-{t}", ProcessId.of_ints(0, c), {}, [], f"rack-{c % 31}")
               for c in range(clients) for t in range(threads)]
    return _spec(partitions, members, standbys)


def round_two(first: GroupSpec, result: GroupRebalanceResult) -> GroupSpec:
    members = []
    for m in first.members:
        outcome = result.members[m.member_id]
        info = AssignmentInfo.decode(outcome.assignment.user_data or b"")
        sums = dict.fromkeys(info.active_tasks, -2)
        sums.update({t: 0 for t, _ in info.standby_tasks})
        members.append(_member(m.member_id, outcome.process_id, sums, list(outcome.assignment.topic_partitions()),
                               None))
    return _spec(len(first.topics["topic"].partitions), members, first.configs.num_standby_replicas)


def timed(spec: GroupSpec, assignor: str) -> tuple[float, GroupRebalanceResult]:
    start = time.perf_counter()
    result = rebalance_group(spec, assignor)
    return time.perf_counter() - start, result


def run(assignor: str, repeats: int) -> dict[str, Any]:
    cases = []
    for name, partitions, clients, threads, standbys in SHAPES:
        first = round_one(partitions, clients, threads, standbys)
        one_times, two_times = [], []
        for _ in range(repeats):
            seconds, result = timed(first, assignor)
            one_times.append(seconds)
            assert result.failure is None and len(result.members) == clients * threads
            second = round_two(first, result)
            seconds, result2 = timed(second, assignor)
            two_times.append(seconds)
            assert result2.failure is None and len(result2.members) == clients * threads
        cases.append({
            "case": name, "partitions": partitions, "clients": clients, "threads_per_client": threads,
            "members": clients * threads, "standbys": standbys,
            "round1_seconds_median": round(statistics.median(one_times), 3),
            "round2_seconds_median": round(statistics.median(two_times), 3),
            "round1_seconds_all": [round(t, 3) for t in one_times],
            "round2_seconds_all": [round(t, 3) for t in two_times],
            "kafka_limit_seconds": 120,
        })
    return {
        "benchmark": "group_scale",
        "command": f"PYTHONPATH=src python -m benchmarks.group_scale --assignor {assignor} --repeats {repeats}",
        "assignor": assignor,
        "repeats": repeats,
        "load_average_at_end": load_average(),
        "cases": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignor", default="high_availability")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    result = run(args.assignor, args.repeats)
    report("group_scale", result, write=not args.no_write)


if __name__ == "__main__":
    main()
