"""``streams_balanced`` (KAFKA-20998's broker-side balanced assignor) by member count (issue 32 point 6).

Before issue 32 its ``balance`` visited every (source, destination) pair of processes on every pass and its
spread removed members from lists one by one: 2 s at 1,000 members, 12 s at 10,000, not done after 900 s at
100,000. Now a min-tree finds the pairs that can move and the spread takes no linear removals, with the same
answers (tests/streams_protocol/test_balanced_speedup.py holds them equal on random groups).

Shape per size N (members): N members, one per process (a process per stream thread: the most processes, the
most pairs); N tasks over 10 stateful subtopologies; ``num.standby.replicas`` 1; cold (no previous
assignment) and with a previous one (every member's target is the cold answer). The implementation before
issue 32 (tests/streams_protocol/balanced_reference.py) is timed beside it where it finishes within
``--reference-limit`` members (default 10,000). One run each (they are seconds long); wall clock and this
process's CPU time, with the machine's load.

    PYTHONPATH=src:. python -m benchmarks.bench_balanced_members [--sizes 1000,10000,100000] [--no-write]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from benchmarks._results import load_average, report
from taskassign.streams_protocol import StreamsGroup, StreamsGroupAssignment
from taskassign.streams_protocol.balanced import assign_balanced
from taskassign.streams_protocol.model import GroupMember, Subtopology

SUBTOPOLOGIES = 10


def cold_group(members: int) -> StreamsGroup:
    subtopologies = tuple(Subtopology(str(s), max(1, members // SUBTOPOLOGIES), True) for s in range(SUBTOPOLOGIES))
    group_members = tuple(GroupMember(f"member-{i}", f"process-{i}") for i in range(members))
    return StreamsGroup(f"{members} members", subtopologies, group_members, {"num.standby.replicas": "1"}, "balanced")


def previous_group(cold: StreamsGroup, answer: StreamsGroupAssignment) -> StreamsGroup:
    members = tuple(GroupMember(m.member_id, m.process_id, active_tasks=answer.members[m.member_id].active_tasks,
                                standby_tasks=answer.members[m.member_id].standby_tasks) for m in cold.members)
    return replace(cold, members=members)


def once(fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, {"s": round(time.perf_counter() - wall, 3), "cpu_s": round(time.process_time() - cpu, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--reference-limit", type=int, default=10_000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    from tests.streams_protocol import balanced_reference

    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        load_before = load_average()
        cold = cold_group(size)
        answer, cold_time = once(lambda cold=cold: assign_balanced(cold))
        previous = previous_group(cold, answer)
        _, previous_time = once(lambda previous=previous: assign_balanced(previous))
        row: dict[str, Any] = {"members": size, "processes": size, "tasks": size - size % SUBTOPOLOGIES,
                               "cold": cold_time, "previous": previous_time}
        if size <= args.reference_limit:
            expected, row["before_issue_32_cold"] = once(lambda cold=cold: balanced_reference.assign_balanced(cold))
            row["same_answer"] = expected == answer
        else:
            row["before_issue_32_cold"] = "not run (issue 32: not done after 900 s at 100,000 members)"
        row["load_average"] = [load_before, load_average()]
        rows.append(row)
        print(row, flush=True)
    report("balanced_members", {
        "benchmark": "streams_balanced by member count (issue 32 point 6)",
        "command": "PYTHONPATH=src:. python -m benchmarks.bench_balanced_members",
        "python": platform.python_version(),
        "shape": "N members, one per process, N tasks over 10 stateful subtopologies, num.standby.replicas 1",
        "rows": rows,
    }, write=not args.no_write)


if __name__ == "__main__":
    main()
