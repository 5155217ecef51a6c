"""State-aware vs Kafka's assignors: balance of state, movement, traffic and convergence (issue 8).

Every case is one generated application and one event script, run through the rebalance simulator
(``taskassign.simulate``, the same restore model for every assignor) with ``high_availability``,
``sticky`` and ``state_aware``. Each assignor starts from its *own* steady state: its assignment of the
cold cluster, with every active running and every standby caught up. Reported per case and assignor:

* ``state_imbalance``: the largest state load per thread of a client over the mean state per thread
  (state load = ``state_bytes`` of its actives and standbys); 1.0 is perfectly even. With equal thread
  counts this is metrics' ``state_load_imbalance`` (max / mean per client); with unequal ones a client
  is compared with its share of the threads. Given after the events (``_final``) and at the steady
  state (``_steady``);
* ``thread_state_imbalance_final``: metrics' ``thread_state_imbalance`` after the events: the heaviest
  *thread's* state over the mean per thread, from the leader's thread-level assignment (which deals tasks
  over a client's threads by count, not by state), so it is at least ``state_imbalance``;
* ``thread_task_spread``: most minus fewest tasks (active + standby) on one thread, from the leader's
  thread-level assignment (metrics' ``thread_total_skew``), at the end;
* ``tasks_moved``: active and standby moves over every rebalance of the run (metrics' ``active_moves``
  + ``standby_moves``);
* ``bytes_restored``: what the run's placements made clients restore (metrics' ``records_to_restore``
  summed over the rebalances, times ``BYTES_PER_RECORD``: every changelog here holds one record per
  ``BYTES_PER_RECORD`` bytes of state, so records and bytes are proportional);
* ``cross_rack_cost``: partitions read across racks at the end (metrics' ``cross_rack_cost``), and
  ``rack_colocated_tasks``: tasks whose replicas share a rack while they could be spread (metrics'
  ``rack_colocated_tasks``: a rack outage takes all of them);
* ``rebalances``: rebalances the events caused until the run settled (the simulator's initial one
  excluded), ``probing_rebalances`` among them, and whether the run ``converged``.

Changelogs grow at ``APPEND_RATE`` records/s (``--append-rate``), so a store a client stops following
falls behind. The cases are also run with frozen changelogs (``frozen_changelogs`` in the results,
high_availability and state_aware only), where a client coming back finds its old stores exactly current.

The generator (``application``): ``subtopologies`` x ``partitions`` stateful tasks (one store, one
changelog partition each) plus ``stateless`` stateless subtopologies of ``partitions`` tasks; state
sizes log-normal with mean ``MEAN_BYTES`` and shape ``sigma`` (seeded); changelog end offset =
state / ``BYTES_PER_RECORD``; clients ``UUID(0, i)`` with the given thread counts, racks dealt
round-robin; each partition's replicas on ``replication`` random racks (its changelog with it). The
target of the issue is checked per case: where high_availability's final imbalance is above 1.10,
state_aware's is at most 1.10, with no more bytes restored and no more rebalances than
high_availability.

The scale section times ``assign`` on 10^4 tasks x 10^3 clients (3 racks, one standby, skewed sizes):
the cold cluster, and the same with 10% more clients joining its caught-up assignment; medians of
``--repeat`` runs (wall clock and this process's CPU time; the machine is shared, its load average is
recorded).

    PYTHONPATH=src python -m benchmarks.bench_state_aware [--repeat 5] [--cases skewed] [--no-scale] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from benchmarks._results import RESULTS_DIR, load_average, report, timed
from taskassign.analysis.metrics import AssignmentMetrics, compute_metrics
from taskassign.assignors.registry import create_assignor
from taskassign.configs import AssignmentConfigs
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ApplicationState,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskAssignment,
    TaskInfo,
    TaskTopicPartition,
)
from taskassign.simulate import parse_events, simulate

ASSIGNORS = ("high_availability", "sticky", "state_aware")
MEAN_BYTES = 1_000_000_000
BYTES_PER_RECORD = 1_000
TARGET_IMBALANCE = 1.10
#: Records per second each changelog grows by: a store that stops following its changelog falls behind.
APPEND_RATE = 20


@dataclass(frozen=True)
class Case:
    """One generated application and what happens to it."""

    name: str
    description: str
    subtopologies: int
    partitions: int
    threads: Sequence[int]
    sigma: float
    events: Sequence[dict[str, Any]]
    stateless: int = 0
    racks: int = 0
    replication: int = 2
    configs: dict[str, Any] = field(default_factory=dict)
    restore_rate: int = 20_000
    append_rate: int = APPEND_RATE
    seed: int = 1


CASES: tuple[Case, ...] = (
    Case("skewed-scale-out", "48 stateful tasks, very skewed sizes (sigma 1.5) + 12 stateless; 6 x 2 threads; "
         "two 2-thread clients join", 4, 12, [2] * 6, 1.5,
         [{"type": "join", "count": 2, "threads": 2}], stateless=1,
         configs={"num.standby.replicas": 1}),
    Case("heterogeneous-threads-crash", "48 stateful tasks (sigma 1.0) on clients of 1, 1, 2, 2, 4 and 4 threads; "
         "a 4-thread client crashes and comes back 30 minutes later", 3, 16, [1, 1, 2, 2, 4, 4], 1.0,
         [{"type": "crash", "client": str(ProcessId.of_ints(0, 5))}, {"type": "advance", "ms": 1_800_000},
          {"type": "rejoin", "client": str(ProcessId.of_ints(0, 5))}],
         configs={"num.standby.replicas": 1}),
    Case("churn-rolling-restart", "40 stateful tasks (sigma 1.0) on 8 x 2 threads; a rolling restart of every "
         "client, then three random membership changes", 4, 10, [2] * 8, 1.0,
         [{"type": "rolling_restart", "downtime_ms": 30_000, "interval_ms": 60_000},
          {"type": "advance", "ms": 3_600_000}, {"type": "perturb", "count": 3, "threads": 2}],
         configs={"num.standby.replicas": 1}, seed=3),
    Case("racks-scale-out", "48 stateful tasks (sigma 1.0) on 9 x 2 threads over 3 racks, partitions on 2 of "
         "the 3 racks, rack strategy min_traffic; three clients join, one per rack", 4, 12, [2] * 9, 1.0,
         [{"type": "join", "count": 1, "threads": 2, "rack": f"rack-{r}"} for r in range(3)],
         racks=3, configs={"num.standby.replicas": 1, "rack.aware.assignment.strategy": "min_traffic"}),
    Case("no-standby-scale-in", "48 stateful tasks (sigma 1.2), no standbys, 8 x 1 thread; one client leaves",
         4, 12, [1] * 8, 1.2, [{"type": "leave", "client": str(ProcessId.of_ints(0, 3))}]),
)


def application(case: Case) -> ApplicationState:
    """The cold cluster of ``case`` (see the module docstring for the rules)."""
    rng = random.Random(case.seed)
    rack_names = [f"rack-{r}" for r in range(case.racks)]
    tasks: list[TaskInfo] = []
    for s in range(case.subtopologies + case.stateless):
        stateful = s < case.subtopologies
        for q in range(case.partitions):
            racks = SortedFrozenSet(rng.sample(rack_names, case.replication)) if rack_names else None
            parts = [TaskTopicPartition(f"in-{s}", q, True, False, racks)]
            if not stateful:
                tasks.append(TaskInfo(TaskId(s, q), (), tuple(parts)))
                continue
            size = max(BYTES_PER_RECORD, round(MEAN_BYTES * rng.lognormvariate(-case.sigma ** 2 / 2, case.sigma)))
            parts.append(TaskTopicPartition(f"app-store-{s}-changelog", q, False, True, racks))
            tasks.append(TaskInfo(TaskId(s, q), (f"store-{s}",), tuple(parts), size // BYTES_PER_RECORD, size))
    clients = [KafkaStreamsState(pid, tuple(f"{pid}-StreamThread-{i}" for i in range(1, n + 1)),
                                 rack_id=rack_names[c % case.racks] if rack_names else None)
               for c, (pid, n) in enumerate(_clients(case))]
    return ApplicationState(tasks=tasks, clients=clients, configs=AssignmentConfigs.from_properties(case.configs))


def _clients(case: Case) -> list[tuple[ProcessId, int]]:
    return [(ProcessId.of_ints(0, c + 1), n) for c, n in enumerate(case.threads)]


def steady_state(case: Case, cold: ApplicationState, assignor: str) -> tuple[ApplicationState, TaskAssignment]:
    """``assignor``'s assignment of the cold cluster, every active running, every standby caught up."""
    assignment = create_assignor(assignor, case.configs).assign(cold)
    by_client = assignment.by_process()
    ends = cold.changelog_end_offset_sums
    clients = []
    for pid, client in cold.clients.items():
        active, standby = by_client[pid].active_tasks(), by_client[pid].standby_tasks()
        offsets = {**{t: ends[t] for t in standby}, **{t: -2 for t in active if t in ends}}
        clients.append(KafkaStreamsState(pid, client.consumer_client_ids, previous_active_tasks=active,
                                         previous_standby_tasks=standby, task_offset_sums=offsets,
                                         rack_id=client.rack_id))
    return ApplicationState(tasks=cold.tasks, clients=clients, configs=cold.configs), assignment


def state_imbalance(metrics: AssignmentMetrics) -> float:
    """Largest state per thread of a client over the mean state per thread."""
    rows = metrics.client_metrics
    total = sum(r.state_load for r in rows)
    threads = sum(r.threads for r in rows)
    if not total:
        return 0.0
    return max(r.state_load / r.threads for r in rows) / (total / threads)


def run_case(case: Case, assignor: str) -> dict[str, Any]:
    cold = application(case)
    steady, assignment = steady_state(case, cold, assignor)
    scenario = Scenario(case.name, steady, MappingProxyType(dict(case.configs)))
    events = parse_events({"format": "taskassign/events/v1", "seed": case.seed, "restore_rate": case.restore_rate,
                           "events": [{"type": "append_rate", "records_per_s": case.append_rate}, *case.events]})
    started = time.perf_counter()
    outcome = simulate(scenario, events, assignor)
    elapsed = time.perf_counter() - started
    final = outcome.last_metrics
    assert final is not None
    after_initial = outcome.rebalances[1:]
    return {
        "case": case.name,
        "assignor": assignor,
        "state_imbalance_steady": round(state_imbalance(compute_metrics(cold, assignment)), 3),
        "state_imbalance_final": round(state_imbalance(final), 3),
        "thread_state_imbalance_final": round(final.thread_state_imbalance, 3),
        "thread_task_spread": final.thread_total_skew,
        "thread_active_spread": final.thread_active_skew,
        "subtopology_skew": final.subtopology_skew_max,
        "tasks_moved": sum(int(r.metrics["active_moves"]) + int(r.metrics["standby_moves"])
                           for r in outcome.rebalances),
        "bytes_restored": BYTES_PER_RECORD * sum(int(r.metrics["records_to_restore"]) for r in outcome.rebalances),
        "cross_rack_cost": final.cross_rack_cost,
        "rack_colocated_tasks": final.rack_colocated_tasks,
        "rebalances": len(after_initial),
        "probing_rebalances": outcome.probing_rebalances,
        "converged": outcome.converged,
        "simulated_minutes": round((outcome.end_ms - outcome.start_ms) / 60_000, 1),
        "simulation_s": round(elapsed, 2),
    }


def check_target(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's target for one case: where HA's imbalance is above 1.10, state_aware's is at most 1.10,
    and state_aware restores no more bytes and needs no more rebalances than HA."""
    ha = next(r for r in rows if r["assignor"] == "high_availability")
    sa = next(r for r in rows if r["assignor"] == "state_aware")
    balance_applies = ha["state_imbalance_final"] > TARGET_IMBALANCE
    checks = {
        "balance": (not balance_applies) or sa["state_imbalance_final"] <= TARGET_IMBALANCE,
        "bytes_restored": sa["bytes_restored"] <= ha["bytes_restored"],
        "rebalances": sa["rebalances"] <= ha["rebalances"],
        "converged": sa["converged"],
    }
    return {"case": rows[0]["case"], "balance_target_applies": balance_applies, **checks, "met": all(checks.values())}


# -- scale ----------------------------------------------------------------------------------------

def scale_state(tasks: int, clients: int, previous: TaskAssignment | None = None, extra_clients: int = 0,
                seed: int = 7) -> ApplicationState:
    """``tasks`` stateful tasks over 10 subtopologies (sigma 1.0), ``clients`` one-thread clients on 3 racks,
    one standby; with ``previous``, every client runs / holds (caught up) what it got there."""
    rng = random.Random(seed)
    racks = ("rack-0", "rack-1", "rack-2")
    infos = []
    for q in range(tasks):
        rack_set = SortedFrozenSet(rng.sample(racks, 2))
        size = max(BYTES_PER_RECORD, round(MEAN_BYTES * rng.lognormvariate(-0.5, 1.0)))
        infos.append(TaskInfo(TaskId(q % 10, q // 10), ("store",), (
            TaskTopicPartition(f"in-{q % 10}", q // 10, True, False, rack_set),
            TaskTopicPartition(f"changelog-{q % 10}", q // 10, False, True, rack_set),
        ), size // BYTES_PER_RECORD, size))
    by_client = previous.by_process() if previous is not None else {}
    ends = {info.id: info.changelog_end_offset_sum for info in infos}
    states = []
    for c in range(clients + extra_clients):
        pid = ProcessId.of_ints(0, c + 1)
        got = by_client.get(pid)
        active = got.active_tasks() if got is not None else SortedFrozenSet()
        standby = got.standby_tasks() if got is not None else SortedFrozenSet()
        offsets = {**{t: ends[t] for t in standby}, **dict.fromkeys(active, -2)}
        states.append(KafkaStreamsState(pid, (f"{pid}-1",), previous_active_tasks=active,
                                        previous_standby_tasks=standby, task_offset_sums=offsets,
                                        rack_id=racks[c % 3]))
    return ApplicationState(tasks=infos, clients=states, configs=AssignmentConfigs(num_standby_replicas=1))


def scale_rows(repeat: int, assignors: Sequence[str], churn_once: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    cold = scale_state(10_000, 1_000)
    for assignor in assignors:
        make: Callable[[], Any] = lambda a=assignor: create_assignor(a, {})  # noqa: E731
        first = make().assign(cold)
        churn = scale_state(10_000, 1_000, first, extra_clients=100)
        for label, state in (("cold", cold), ("churn +10% clients", churn)):
            runs = 1 if (assignor in churn_once and label != "cold") else repeat
            measured = timed(lambda s=state, m=make: m().assign(s), runs)
            row = {"case": "10k-tasks-1k-clients", "round": label, "assignor": assignor, "repeat": runs, **measured}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    return rows


def run_cases(name_filter: str, append_rate: int, assignors: Sequence[str]
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every case (whose name contains ``name_filter``) with every assignor; the rows and the targets."""
    rows: list[dict[str, Any]] = []
    targets = []
    for case in CASES:
        if name_filter not in case.name:
            continue
        case_rows = []
        for assignor in assignors:
            row = run_case(replace(case, append_rate=append_rate), assignor)
            case_rows.append(row)
            print(json.dumps(row), file=sys.stderr)
        rows += case_rows
        targets.append(check_target(case_rows))
    return rows, targets


def table(rows: list[dict[str, Any]]) -> str:
    columns = ("case", "assignor", "state_imbalance_final", "thread_state_imbalance_final", "state_imbalance_steady",
               "thread_task_spread",
               "tasks_moved", "bytes_restored", "cross_rack_cost", "rack_colocated_tasks", "rebalances",
               "probing_rebalances", "converged")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        values = [f"{r[c] / 1e9:.1f} GB" if c == "bytes_restored" else str(r[c]) for c in columns]
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


def previous_scale() -> Any:
    """With ``--no-scale``, the scale timings of the last full run, kept as they were measured (marked so)."""
    path = RESULTS_DIR / "state_aware.json"
    if not path.exists():
        return []
    previous = json.loads(path.read_text()).get("scale", [])
    if isinstance(previous, dict):  # already carried over once
        return previous
    return {"note": "not re-measured (--no-scale): the timings of the previous full run", "rows": previous}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per scale measurement (medians kept)")
    parser.add_argument("--cases", default="", help="only cases whose name contains this text")
    parser.add_argument("--no-scale", action="store_true",
                        help="skip the 10^4 x 10^3 timing (a written result keeps the previous run's, marked so)")
    parser.add_argument("--no-write", action="store_true", help="print only; do not update results/")
    parser.add_argument("--append-rate", type=int, default=APPEND_RATE,
                        help=f"records/s every changelog grows by (default {APPEND_RATE})")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    before = load_average()
    rows, targets = run_cases(args.cases, args.append_rate, ASSIGNORS)
    frozen_rows, frozen_targets = run_cases(args.cases, 0, ("high_availability", "state_aware"))
    scale: Any = previous_scale() if args.no_scale else scale_rows(
        args.repeat, ("state_aware", "high_availability"), churn_once=("high_availability",))
    print(table(rows), file=sys.stderr)
    report("state_aware", {
        "benchmark": "state_aware vs high_availability and sticky: state balance, movement, traffic, convergence "
                     "(simulator), and assign() at 10^4 tasks x 10^3 clients",
        "command": "PYTHONPATH=src python -m benchmarks.bench_state_aware"
                   + (f" --repeat {args.repeat}" if args.repeat != 5 else "")
                   + (" --no-scale" if args.no_scale else ""),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores shared with other jobs",
        "load_average": {"before": before, "after": load_average()},
        "cases": [{"name": c.name, "description": c.description, "configs": c.configs, "events": list(c.events)}
                  for c in CASES if args.cases in c.name],
        "append_rate": args.append_rate,
        "results": rows,
        "targets": targets,
        "all_targets_met": all(t["met"] for t in targets),
        "table": table(rows).splitlines(),
        "frozen_changelogs": {
            "note": "the same cases with changelogs that do not grow (append_rate 0), high_availability and "
                    "state_aware only: a returning client's old stores are then exactly current",
            "results": frozen_rows, "targets": frozen_targets, "table": table(frozen_rows).splitlines(),
        },
        "scale": scale,
    }, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
