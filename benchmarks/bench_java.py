"""taskassign side by side with Kafka's real Java assignors, on the same scenario files (issue 20, item 3).

Cases: Kafka's StreamsAssignmentScaleTest shapes (benchmarks/scale_cases.py: 1,000-6,000 tasks, 2-1,000
clients, 1-1,000 threads, 1-50 standbys) and, in the same fixture, issue 20's 10,000 tasks x 1,000 clients
for high_availability (``ha-10k-tasks-1k-clients``), each cold and churned (the churned round reports what
taskassign's cold round assigned), and the rack optimisation at 600 tasks x 50 clients
(benchmarks/bench_rack.py's instance: TaskAssignmentUtils' active optimisation with min_traffic and
balance_subtopology, and its standby optimisation), the latter in the default mode and under
``taskassign.kafka.compat`` (Kafka's exact solver).

Every case is written as a ``taskassign/scenario/v1`` file. ``benchmarks/java/SideBySide.java`` (compiled
at run time with ``javac -cp "$KAFKA_HOME/libs/*"``; KAFKA_HOME must be set: no default) reads the
same file and runs Kafka's ``HighAvailabilityTaskAssignor``, ``LegacyStickyTaskAssignor`` or
``FallbackPriorTaskAssignor`` through their internal API (ClientStates with lags), the KIP-924
``StickyTaskAssignor`` on an ApplicationState, or ``TaskAssignmentUtils.optimizeRackAware*Tasks``. Per case,
in one run: Java warms up (``--warmup`` calls, for the JIT) and times ``--repeat`` calls, then taskassign
does the same in this process (the assignor's ``assign`` on the parsed ApplicationState, or
``rack.public.optimize_*``); neither side's time includes reading the file. The result per case: both
medians, their ratio (Java / taskassign: above 1 means taskassign is faster), and whether the
assignments agree (actives and standbys per client; the KIP-924 sticky assignor's standbys follow Java
identity hashes, docs/kafka-differences.md S2, so only its actives are expected to agree).

    python -m benchmarks.bench_java [--cases ha-] [--warmup 60] [--repeat 20] [--write]

With ``--write`` the cases run replace their rows in benchmarks/results/java_side_by_side.json and the
others are kept; the file keeps its first full run's command and lists each later one under ``reruns``.
Without Java or Kafka's jars it prints why and exits 0. A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks._results import RESULTS_DIR, load_average, report, wait_for_quiet
from benchmarks.bench_rack import instance
from benchmarks.scale_cases import SCALE_CASES, ScaleCase, churn_state, cold_state
from taskassign.assignors.registry import create_assignor
from taskassign.configs import KAFKA_COMPAT, AssignmentConfigs
from taskassign.formats.scenario import Scenario, write_scenario
from taskassign.leader.run import rebalance
from taskassign.model import ApplicationState, KafkaStreamsAssignment
from taskassign.rack.public import RackAwareOptimizationParams, optimize_active, optimize_standby

REPO = Path(__file__).resolve().parents[1]
JAVA_SOURCE = Path(__file__).parent / "java" / "SideBySide.java"
KAFKA_NAMES = {"sticky": "sticky"}
#: Beyond Kafka's table: the issue's 10^4 tasks x 10^3 clients, Kafka's fixture otherwise.
EXTRA_CASES = (ScaleCase("ha-10k-tasks-1k-clients", "high_availability", 10_000, 1_000, 1, 1),)
Clients = dict[str, tuple[list[str], list[str]]]


@dataclass(frozen=True)
class Case:
    """One comparison: ``kind`` is the assignor name or optimize_active / optimize_standby."""

    name: str
    kind: str
    scenario: Scenario
    compat: bool = False

    @property
    def state(self) -> ApplicationState:
        return self.scenario.state


def _scenario(name: str, state: ApplicationState, current: dict[Any, KafkaStreamsAssignment] | None = None,
              compat: bool = False) -> Scenario:
    if compat:
        state = replace(state, configs=replace(state.configs, extensions={**state.configs.extensions,
                                                                          KAFKA_COMPAT: True}))
    return Scenario(name, state, state.configs.to_properties(), current_assignment=current)


def scale_cases(name_filter: str) -> list[Case]:
    cases = []
    for case in SCALE_CASES + EXTRA_CASES:
        if name_filter not in case.name:
            continue
        cold = cold_state(case)
        round_one = rebalance(cold, create_assignor(case.assignor), distribute_threads=False).group
        churn = churn_state(case, round_one)
        for compat in (False, True) if case.assignor == "high_availability" else (False,):  # H9: HA alone differs
            suffix = "-compat" if compat else ""
            cases.append(Case(f"{case.name}-cold{suffix}", case.assignor, _scenario(case.name, cold, compat=compat),
                              compat))
            cases.append(Case(f"{case.name}-churn{suffix}", case.assignor, _scenario(case.name, churn, compat=compat),
                              compat))
    return cases


def rack_cases(name_filter: str) -> list[Case]:
    cases = []
    for kind, strategy in (("optimize_active", "min_traffic"), ("optimize_active", "balance_subtopology"),
                           ("optimize_standby", "min_traffic")):
        state, active, standby = instance(600, 50, strategy, "auto")
        configs = AssignmentConfigs(num_standby_replicas=1, rack_aware_assignment_strategy=strategy,
                                    rack_aware_traffic_cost=10, rack_aware_non_overlap_cost=1)
        state = replace(state, configs=configs)
        current = {pid: KafkaStreamsAssignment.of_tasks(pid, active[pid], standby[pid]) for pid in state.process_ids}
        for compat in (False, True):
            name = f"rack-{kind.removeprefix('optimize_')}-{strategy}-600x50{'-compat' if compat else ''}"
            if name_filter in name:
                cases.append(Case(name, kind, _scenario(name, state, current, compat), compat))
    return cases


def python_call(case: Case) -> Callable[[], Clients]:
    """taskassign's call for the case, returning each client's sorted (active, standby) task ids."""
    state = case.state
    if case.kind.startswith("optimize_"):
        params = RackAwareOptimizationParams.of(state).for_stateful_tasks()
        optimize = optimize_active if case.kind == "optimize_active" else optimize_standby
        current = dict(case.scenario.current_assignment or {})

        def run_optimizer() -> Clients:
            result = optimize(params, current).assignments
            return {str(pid): ([str(t) for t in a.active_tasks()], [str(t) for t in a.standby_tasks()])
                    for pid, a in result.items()}
        return run_optimizer

    def run_assignor() -> Clients:
        result = create_assignor(case.kind).assign(state)
        return {str(a.process_id): ([str(t) for t in a.active_tasks()], [str(t) for t in a.standby_tasks()])
                for a in result.assignments}
    return run_assignor


def time_python(call: Callable[[], Clients], warmup: int, repeat: int) -> tuple[list[float], Clients]:
    result: Clients = {}
    for _ in range(warmup):
        result = call()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        runs.append((time.perf_counter() - start) * 1000.0)
    return runs, result


class JavaSide:
    """SideBySide.java, compiled into ``workdir`` and running; one request per case."""

    def __init__(self, kafka_home: Path, workdir: Path) -> None:
        classes = workdir / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        path = f"{classes}:{kafka_home / 'libs'}/*"
        subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", path, str(JAVA_SOURCE)], check=True,
                       capture_output=True, text=True)
        self.stderr = (workdir / "java-stderr.log").open("wb")
        self.process = subprocess.Popen(["java", "-Xmx4g", "-cp", path, "SideBySide"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, text=True)

    def run(self, kind: str, scenario: Path, warmup: int, repeat: int, output: Path) -> tuple[list[float], Clients]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{kind} {scenario} {warmup} {repeat} {output}\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"Java failed on {scenario}: {answer['error']}")
        clients = json.loads(output.read_text())["clients"]
        return answer["ms"], {pid: (c["active"], c["standby"]) for pid, c in clients.items()}

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
        self.stderr.close()


def agreement(java: Clients, python: Clients) -> dict[str, bool]:
    return {"actives_agree": {p: a for p, (a, _) in java.items()} == {p: a for p, (a, _) in python.items()},
            "standbys_agree": {p: s for p, (_, s) in java.items()} == {p: s for p, (_, s) in python.items()}}


def why_skipped(kafka_home: Path | None) -> str | None:
    if shutil.which("javac") is None or shutil.which("java") is None:
        return "needs a JDK (`javac` and `java` on PATH)"
    if kafka_home is None:
        return "needs Kafka's jars: set KAFKA_HOME=/path/to/kafka (a Kafka distribution with libs/)"
    if not list((kafka_home / "libs").glob("kafka-streams-*.jar")):
        return f"needs Kafka's jars in {kafka_home / 'libs'} (set KAFKA_HOME)"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="", help="only cases whose name contains this text")
    parser.add_argument("--skip", default="", help="comma-separated texts: leave out cases whose name contains one")
    parser.add_argument("--warmup", type=int, default=60, help="untimed calls before timing, on both sides")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls (medians kept)")
    parser.add_argument("--slow-repeat", type=int, default=3,
                        help="timed calls where Kafka needs more than a second per call")
    parser.add_argument("--quiet-load", type=float, default=None,
                        help="before each case, wait until the 1-minute load average is below this")
    parser.add_argument("--max-wait", type=float, default=600.0, help="longest wait for --quiet-load, s")
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/java_side_by_side.json")
    args = parser.parse_args(argv)
    kafka_home = Path(os.environ["KAFKA_HOME"]) if os.environ.get("KAFKA_HOME") else None
    skipped = why_skipped(kafka_home)
    if skipped or kafka_home is None:
        print(f"bench_java skipped: {skipped}")
        return 0
    logging.disable(logging.WARNING)
    load_at_start = load_average()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-java-") as tmp:
        workdir = Path(tmp)
        java = JavaSide(kafka_home, workdir)
        try:
            skipped_cases = [text for text in args.skip.split(",") if text]
            for case in scale_cases(args.cases) + rack_cases(args.cases):
                if any(text in case.name for text in skipped_cases):
                    continue
                path = workdir / f"{case.name}.scenario.json"
                write_scenario(case.scenario, path)
                load_before = (wait_for_quiet(args.quiet_load, args.max_wait) if args.quiet_load is not None
                               else load_average())[0]
                # a first call says whether Kafka is slow on this case (> 1 s: it was the warm-up, and
                # --slow-repeat calls are timed; > 20 s: one call)
                probe, _ = java.run(case.kind, path, 0, 1, workdir / "java.json")
                if probe[0] > 1000.0:
                    warmup, repeat = 0, args.slow_repeat if probe[0] < 20_000.0 else 1
                    python_warmup = 1
                else:
                    warmup = python_warmup = args.warmup
                    repeat = args.repeat
                java_ms, java_result = java.run(case.kind, path, warmup, repeat, workdir / "java.json")
                python_ms, python_result = time_python(python_call(case), python_warmup, repeat)
                java_median, python_median = statistics.median(java_ms), statistics.median(python_ms)
                row = {"case": case.name, "kind": case.kind, "kafka_compat": case.compat,
                       "tasks": len(case.state.tasks), "clients": len(case.state.clients),
                       "warmup_calls": warmup, "timed_calls": repeat,
                       "java_ms": round(java_median, 2), "taskassign_ms": round(python_median, 2),
                       "ratio": round(java_median / python_median, 2),
                       **agreement(java_result, python_result), "load_1min_before": load_before,
                       "java_runs_ms": [round(x, 2) for x in java_ms],
                       "taskassign_runs_ms": [round(x, 2) for x in python_ms]}
                rows.append(row)
                print(f"{case.name:55s} java {java_median:10.2f} ms  taskassign {python_median:10.2f} ms  "
                      f"x{row['ratio']:<8} actives {'=' if row['actives_agree'] else '!='}  "
                      f"standbys {'=' if row['standbys_agree'] else '!='}", file=sys.stderr, flush=True)
        finally:
            java.close()
    command = "python -m benchmarks.bench_java " + " ".join(argv if argv is not None else sys.argv[1:])
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
               "java": _java_version(), "load_average_at_start": load_at_start, "load_average_at_end": load_average()}
    stored = RESULTS_DIR / "java_side_by_side.json"
    previous = json.loads(stored.read_text()) if args.write and stored.exists() else {}
    reruns = previous.get("reruns", [])
    if previous:  # the cases run now replace their rows; the others keep theirs (in case order)
        measured = {r["case"] for r in rows}
        order = [case.name for case in scale_cases("") + rack_cases("")]
        rows = sorted([r for r in previous.get("results", []) if r["case"] not in measured] + rows,
                      key=lambda r: order.index(r["case"]) if r["case"] in order else len(order))
        reruns = [*reruns, {"command": command, "cases": sorted(measured), "machine": machine}]
        command, machine = previous["command"], previous["machine"]
    document = {
        "benchmark": "taskassign vs Kafka's Java assignors on the same scenario files (benchmarks/bench_java.py)",
        "command": command,
        "machine": machine,
        **({"reruns": reruns} if reruns else {}),
        "note": "ratio = Java median / taskassign median (above 1: taskassign faster); wall-clock medians of "
                "the timed calls after the warm-up calls, Java and taskassign alternating case by case",
        "results": rows,
    }
    report("java_side_by_side", document, write=args.write)
    return 0


def _java_version() -> str:
    done = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return (done.stderr.splitlines() or [""])[0]


if __name__ == "__main__":
    raise SystemExit(main())
