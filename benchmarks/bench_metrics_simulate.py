"""Time ``compute_metrics`` at fleet scale and ``simulate`` on a busy timeline.

Metrics: synthetic applications (one changelog task per partition over 20 subtopologies, racks on
every partition, one standby), the assignment shifted by one client against the previous one so that
every placement is a move (the most work the movement and restore metrics can have). Simulation: 1,000
changelog tasks on 20 two-thread clients over 3 racks, one standby, 50 warm-ups per rebalance, clients
restoring 50,000 records/s; 5 clients join, then a rolling restart of all,
then a crash, with the high-availability assignor (the case is skipped until it is registered), starting
from its own steady state. Each case runs
``--repeat`` times; medians of wall-clock and of this process's CPU time (the CPU time is less
disturbed by the other jobs of a shared machine; the load average is recorded too). Results go to
benchmarks/results/metrics_simulate.json.

    PYTHONPATH=src python -m benchmarks.bench_metrics_simulate [--repeat 3] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from types import MappingProxyType
from typing import Any

from benchmarks._results import load_average, report, timed
from taskassign.analysis.metrics import compute_metrics
from taskassign.assignors.registry import BUILTIN_ASSIGNORS, create_assignor
from taskassign.configs import AssignmentConfigs
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ApplicationState,
    GroupAssignment,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskInfo,
    TaskTopicPartition,
)
from taskassign.simulate import parse_events, simulate

SUBTOPOLOGIES = 20
RACKS = 3


def _task(p: int, end: int = 100_000) -> TaskInfo:
    tid = TaskId(p % SUBTOPOLOGIES, p // SUBTOPOLOGIES)
    return TaskInfo(tid, SortedFrozenSet(("store",)), (
        TaskTopicPartition("in", p, True, False, SortedFrozenSet((f"r{p % RACKS}",))),
        TaskTopicPartition("changelog", p, False, True, SortedFrozenSet((f"r{(p + 1) % RACKS}",))),
    ), end)


def metrics_case(tasks: int, clients: int) -> tuple[ApplicationState, GroupAssignment]:
    infos = [_task(p) for p in range(tasks)]
    ids = [info.id for info in infos]
    pids = [ProcessId.of_ints(0, c) for c in range(clients)]
    owned = {c: [ids[p] for p in range(c, tasks, clients)] for c in range(clients)}
    states = [KafkaStreamsState(pid, (f"c{c}",), previous_active_tasks=SortedFrozenSet(owned[c]),
                                task_offset_sums=dict.fromkeys(owned[c], -2), rack_id=f"r{c % RACKS}")
              for c, pid in enumerate(pids)]
    state = ApplicationState(tasks=infos, clients=states, configs=AssignmentConfigs(num_standby_replicas=1))
    group = GroupAssignment({
        pid: KafkaStreamsAssignment.of_tasks(pid, owned[(c + 1) % clients], owned[c]) for c, pid in enumerate(pids)
    })
    return state, group


def simulation_case(assignor: str) -> tuple[Scenario, Any]:
    """1,000 changelog tasks on 20 two-thread clients in ``assignor``'s own steady state (its assignment of
    the cold cluster, every active running and every standby caught up), then the events."""
    tasks = [_task(p) for p in range(1_000)]
    pids = [ProcessId.of_ints(0, c) for c in range(20)]
    configs = AssignmentConfigs(num_standby_replicas=1, max_warmup_replicas=50, probing_rebalance_interval_ms=60_000)
    cold = ApplicationState(tasks=tasks, configs=configs, clients=[
        KafkaStreamsState(pid, (f"{pid}-1", f"{pid}-2"), rack_id=f"r{c % RACKS}") for c, pid in enumerate(pids)])
    steady = create_assignor(assignor, configs.to_properties()).assign(cold).by_process()
    states = []
    for c, pid in enumerate(pids):
        active, standby = steady[pid].active_tasks(), steady[pid].standby_tasks()
        offsets = {**dict.fromkeys(standby, 100_000), **dict.fromkeys(active, -2)}
        states.append(KafkaStreamsState(pid, (f"{pid}-1", f"{pid}-2"), previous_active_tasks=active,
                                        task_offset_sums=offsets, rack_id=f"r{c % RACKS}"))
    scenario = Scenario("bench", ApplicationState(tasks=tasks, clients=states, configs=configs),
                        MappingProxyType(configs.to_properties()))
    events = parse_events({"format": "taskassign/events/v1", "seed": 1, "restore_rate": 50_000, "events": [
        {"type": "append_rate", "records_per_s": 10},
        {"type": "join", "count": 5, "threads": 2, "rack": "r0"},
        {"type": "advance", "ms": 1_800_000},
        {"type": "rolling_restart", "downtime_ms": 30_000, "interval_ms": 60_000},
        {"type": "advance", "ms": 3_600_000},
        {"type": "crash", "count": 1},
    ]})
    return scenario, events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; do not update results/")
    args = parser.parse_args(argv)
    before = load_average()
    cases: list[dict[str, Any]] = []
    for tasks, clients in ((100_000, 1_000), (6_000, 2), (1_000, 1_000)):
        state, group = metrics_case(tasks, clients)
        cases.append({"case": f"metrics-{tasks}-tasks-{clients}-clients", "placements": 2 * tasks,
                      **timed(lambda s=state, g=group: compute_metrics(s, g), args.repeat)})
        print(json.dumps(cases[-1]), file=sys.stderr)
    if "high_availability" in BUILTIN_ASSIGNORS:
        scenario, events = simulation_case("high_availability")
        outcome = simulate(scenario, events, "high_availability")
        row: dict[str, Any] = {
            "case": "simulate-1000-tasks-20-to-25-clients", "assignor": "high_availability",
            "rebalances": len(outcome.rebalances), "by_reason": outcome.by_reason(),
            "probing_rebalances": outcome.probing_rebalances, "converged": outcome.converged,
            "samples": len(outcome.samples), "simulated_ms": outcome.end_ms - outcome.start_ms,
            **timed(lambda: simulate(scenario, events, "high_availability"), args.repeat),
        }
        row["ms_per_rebalance"] = round(row["ms"] / max(1, row["rebalances"]), 1)
        cases.append(row)
        print(json.dumps(row), file=sys.stderr)
    else:
        print("high_availability is not registered: simulation case skipped", file=sys.stderr)
    report("metrics_simulate", {
        "benchmark": "compute_metrics at fleet scale; simulate on a busy timeline",
        "command": f"PYTHONPATH=src python -m benchmarks.bench_metrics_simulate --repeat {args.repeat}",
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores shared with other jobs",
        "load_average": {"before": before, "after": load_average()},
        "cases": cases,
    }, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
