"""What thread-level distribution adds to one leader rebalance at 10^5 tasks.

100 000 stateful tasks in 10 subtopologies, 100 clients with 4 threads each; every client keeps its
tasks (the identity assignor, so the assignor costs almost nothing) and every thread reported its
share, so stickiness, ownership and the Java heap emulation all run at full size. The leader is
timed with and without ``distribute_threads``.

    PYTHONPATH=src python -m benchmarks.threads_overhead --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks._results import load_average, report
from taskassign.assignors.identity import IdentityTaskAssignor
from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.run import rebalance
from taskassign.model import ApplicationState, KafkaStreamsState, TaskInfo, TaskTopicPartition


def state(tasks: int, clients: int, threads: int) -> ApplicationState:
    infos = [TaskInfo(TaskId(p % 10, p // 10), ("s",),  # type: ignore[arg-type]
                      (TaskTopicPartition(f"in-{p % 10}", p // 10, True, False),
                       TaskTopicPartition(f"app-s-{p % 10}-changelog", p // 10, False, True)), 1_000)
             for p in range(tasks)]
    ids = sorted(i.id for i in infos)
    states = []
    for c in range(clients):
        mine = ids[c::clients]
        consumers = tuple(f"client-{c}-thread-{t}" for t in range(threads))
        states.append(KafkaStreamsState(
            ProcessId.of_ints(0, c + 1), consumers, previous_active_tasks=frozenset(mine),  # type: ignore[arg-type]
            task_offset_sums=dict.fromkeys(mine, -2),
            consumer_previous_tasks={consumers[t]: frozenset(mine[t::threads]) for t in range(threads)},  # type: ignore[misc]
        ))
    return ApplicationState(tasks=infos, clients=states, configs=AssignmentConfigs())  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    app = state(args.tasks, 100, 4)
    times: dict[str, list[float]] = {"without_threads": [], "with_threads": []}
    for _ in range(args.repeats):
        for key, threads in (("without_threads", False), ("with_threads", True)):
            start = time.perf_counter()
            result = rebalance(app, IdentityTaskAssignor(), distribute_threads=threads)
            times[key].append(time.perf_counter() - start)
            assert (result.group.consumers is not None) == threads
    out: dict[str, Any] = {
        "benchmark": "threads_overhead",
        "command": "PYTHONPATH=src python -m benchmarks.threads_overhead "
                   f"--tasks {args.tasks} --repeats {args.repeats}",
        "tasks": args.tasks, "clients": 100, "threads_per_client": 4,
        **{f"{k}_seconds_median": round(statistics.median(v), 2) for k, v in times.items()},
        **{f"{k}_seconds_all": [round(t, 2) for t in v] for k, v in times.items()},
        "load_average_at_end": load_average(),
    }
    report("threads_overhead", out, write=not args.no_write)


if __name__ == "__main__":
    main()
