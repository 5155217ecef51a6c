"""The broker-side streams ``sticky`` assignor side by side with Kafka's own class, in one run (issue 33, point 3).

Kafka's ``org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor`` is called through a small Java
driver compiled at run time against a Kafka's ``libs/`` (``benchmarks/java/streams44/StreamsSticky.java`` for
the API of 4.4 and trunk, ``benchmarks/java/streams42/StreamsSticky.java`` for 4.2 and 4.3's; which one is chosen
by the jars), on the same streams-group files taskassign reads. Per case, Java and taskassign take turns
(``--rounds`` rounds): Java reads the file once, calls ``assign`` ``--warmup`` times for the JIT, then times
``--repeat`` calls; then taskassign does the same in this process with ``run_assignor(group, kafka_line=LINE)``
(the assignor function: no file reading, no CLI). Both sides record each call's wall time and CPU time (Java:
the calling thread's and the whole JVM's, GC and JIT threads included; Python: ``time.process_time``). On a
shared machine CPU time is the figure compared; ``ratio`` = Java's median / taskassign's median (above 1:
taskassign faster). Outputs are compared member by member (actives and standbys).

Cases: ``bench_streams_protocol``'s per-line shapes (10 stateful subtopologies, one standby, processes of 4
members, 10 tasks per member) at 10^3, 3 x 10^3 and 10^4 members, each cold and with a previous assignment
(every member's target is the cold answer but one member restarted as a new member id on its process,
reporting its former tasks' offsets). The command's own fixed cost is measured apart: ``taskassign assign
GROUP.json --kafka-version LINE`` in a fresh process (CPU of the child) against the in-process call.

    python -m benchmarks.bench_streams_java --kafka-home /root/kafka/4.4 --kafka-home /root/kafka/4.2 --write

``--kafka-home`` defaults to ``KAFKA_HOME``. Without a JDK or a Kafka with KIP-1071's assignor (4.2 or later)
it prints why and exits 0. A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._results import load_average, report
from benchmarks.bench_streams_protocol import Shape, cold_group, previous_group
from taskassign.streams_protocol import StreamsGroup, StreamsGroupAssignment, run_assignor
from taskassign.streams_protocol.format import write_streams_group

JAVA_DIR = Path(__file__).parent / "java"
SHAPES = (
    Shape("10000 tasks x 1000 members", 10_000, 1_000, 4, (0.0, 0.0)),
    Shape("30000 tasks x 3000 members", 30_000, 3_000, 4, (0.0, 0.0)),
    Shape("100000 tasks x 10000 members", 100_000, 10_000, 4, (0.0, 0.0)),
)
Canonical = dict[str, dict[str, dict[str, list[int]]]]


@dataclass(frozen=True)
class Kafka:
    """A Kafka build: its release line and which driver its API takes."""

    home: Path
    line: str
    driver: Path


def detect(home: Path) -> Kafka | str:
    """The Kafka at ``home``, or why it cannot be used."""
    jars = sorted((home / "libs").glob("kafka-group-coordinator-[0-9]*.jar"))
    if not jars:
        return f"no kafka-group-coordinator jar in {home / 'libs'}"
    line = ".".join(jars[0].name.removeprefix("kafka-group-coordinator-").split(".")[:2])
    with zipfile.ZipFile(jars[0]) as jar:
        names = set(jar.namelist())
    api = sorted((home / "libs").glob("kafka-group-coordinator-api-*.jar"))
    if api:
        with zipfile.ZipFile(api[0]) as jar:
            names |= set(jar.namelist())
    sticky = "org/apache/kafka/coordinator/group/streams/assignor/StickyTaskAssignor.class"
    if sticky not in names:
        return f"Kafka {line} at {home} has no streams StickyTaskAssignor (KIP-1071's assignors: 4.1 and later)"
    if "org/apache/kafka/coordinator/group/api/streams/assignor/GroupSpec.class" in names:
        return Kafka(home, line, JAVA_DIR / "streams44" / "StreamsSticky.java")
    if "org/apache/kafka/coordinator/group/streams/assignor/GroupSpecImpl.class" in names:
        return Kafka(home, line, JAVA_DIR / "streams42" / "StreamsSticky.java")
    return f"Kafka {line} at {home}: an assignor API this benchmark has no driver for"


class JavaSide:
    """The driver, compiled into ``workdir`` and running; one request per timed block."""

    def __init__(self, kafka: Kafka, workdir: Path) -> None:
        classes = workdir / f"classes-{kafka.line}"
        classes.mkdir(parents=True, exist_ok=True)
        path = f"{classes}:{kafka.home / 'libs'}/*"
        subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", path, str(kafka.driver)], check=True,
                       capture_output=True, text=True)
        self.stderr = (workdir / f"java-{kafka.line}.log").open("wb")
        self.process = subprocess.Popen(["java", "-Xmx4g", "-cp", path, "StreamsSticky"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, text=True)

    def run(self, group: Path, warmup: int, repeat: int, output: Path) -> tuple[dict[str, list[float]], Canonical]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{group} {warmup} {repeat} {output}\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"Java failed on {group}: {answer['error']}")
        return answer, json.loads(output.read_text())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()


def canonical(assignment: StreamsGroupAssignment) -> Canonical:
    """taskassign's answer as the driver writes Kafka's: per member, non-empty partition lists, sorted."""
    def tasks(per: Any) -> dict[str, list[int]]:
        return {sid: sorted(parts) for sid, parts in sorted(per.items()) if parts}
    return {m: {"activeTasks": tasks(a.active_tasks), "standbyTasks": tasks(a.standby_tasks)}
            for m, a in sorted(assignment.members.items())}


def time_python(group: StreamsGroup, line: str, warmup: int, repeat: int) -> tuple[dict[str, list[float]], Canonical]:
    result = None
    for _ in range(warmup):
        result = run_assignor(group, kafka_line=line)
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = run_assignor(group, kafka_line=line)
        cpu.append((time.process_time() - c) * 1000.0)
        wall.append((time.perf_counter() - w) * 1000.0)
    assert result is not None
    return {"wall_ms": wall, "cpu_ms": cpu}, canonical(result)


def cli_cost(path: Path, line: str, repeat: int, workdir: Path) -> dict[str, float]:
    """``taskassign assign GROUP.json --kafka-version LINE -o OUT`` in fresh processes: medians of the child's
    wall and CPU (user + system) time."""
    walls, cpus = [], []
    for k in range(repeat):
        out = workdir / f"cli-{path.stem}-{line}-{k}.json"  # a new file each time: the command never overwrites
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "taskassign", "assign", str(path), "--kafka-version", line, "-o",
                        str(out)], check=True, capture_output=True)
        walls.append((time.perf_counter() - started) * 1000.0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0)
    return {"wall_ms": round(statistics.median(walls), 1), "cpu_ms": round(statistics.median(cpus), 1)}


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka-home", action="append", type=Path,
                        help="a Kafka (4.2 or later) to compare with (repeatable; default: KAFKA_HOME)")
    parser.add_argument("--members", default="", help="comma-separated member counts (default: every shape)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed calls before each timed block, both sides")
    parser.add_argument("--repeat", type=int, default=15, help="timed calls per block")
    parser.add_argument("--rounds", type=int, default=2, help="Java, then taskassign, this many times per case")
    parser.add_argument("--cli-repeat", type=int, default=3, help="CLI runs per case for the fixed cost (0: none)")
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/streams_java.json")
    args = parser.parse_args(argv)
    homes = args.kafka_home or ([Path(os.environ["KAFKA_HOME"])] if os.environ.get("KAFKA_HOME") else [])
    if shutil.which("javac") is None or shutil.which("java") is None:
        print("bench_streams_java skipped: needs a JDK (`javac` and `java` on PATH)")
        return 0
    if not homes:
        print("bench_streams_java skipped: needs a Kafka with KIP-1071's assignor: set KAFKA_HOME or --kafka-home")
        return 0
    kafkas: list[Kafka] = []
    for home in homes:
        found = detect(home)
        if isinstance(found, str):
            print(f"bench_streams_java: skipping {home}: {found}", file=sys.stderr)
        else:
            kafkas.append(found)
    if not kafkas:
        print("bench_streams_java skipped: no usable Kafka")
        return 0
    logging.disable(logging.WARNING)
    wanted = {int(m) for m in args.members.split(",") if m}
    shapes = [s for s in SHAPES if not wanted or s.members in wanted]
    load_at_start = load_average()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-streams-java-") as tmp:
        workdir = Path(tmp)
        for kafka in kafkas:
            java = JavaSide(kafka, workdir)
            try:
                for shape in shapes:
                    cold = cold_group(shape, "sticky")
                    previous = previous_group(cold, run_assignor(cold, kafka_line=kafka.line))
                    for round_name, group in (("cold", cold), ("previous", previous)):
                        rows.append(_case(java, kafka, shape, round_name, group, workdir, args))
            finally:
                java.close()
    document = {
        "benchmark": "the streams-group sticky assignor: taskassign against Kafka's StickyTaskAssignor, side by side "
                     "in one run (benchmarks/bench_streams_java.py)",
        "command": "python -m benchmarks.bench_streams_java " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "java": _java_version(),
                    "load_average_at_start": load_at_start, "load_average_at_end": load_average()},
        "note": "per call, in process: Java's assign(GroupSpec, TopologyDescriber) after its warm-up calls, "
                "taskassign's run_assignor(group, kafka_line=LINE); Java and taskassign alternate block by block "
                "(rounds); ratio_cpu = Java's median thread CPU / taskassign's median CPU (above 1: taskassign "
                "faster); ratio_process_cpu_mean: the JVM's whole CPU (GC, JIT) per call against taskassign's, "
                "means; cli: `taskassign assign GROUP.json --kafka-version LINE` in a fresh process",
        "results": rows,
    }
    report("streams_java", document, write=args.write)
    return 0


def _case(java: JavaSide, kafka: Kafka, shape: Shape, round_name: str, group: StreamsGroup, workdir: Path,
          args: argparse.Namespace) -> dict[str, Any]:
    path = workdir / f"{shape.members}-{round_name}.streams-group.json"
    write_streams_group(group, path)
    big = shape.members >= 10_000
    warmup, repeat = (max(3, args.warmup // 3), max(5, args.repeat // 2)) if big else (args.warmup, args.repeat)
    java_runs: dict[str, list[float]] = {"wall_ms": [], "thread_cpu_ms": []}
    java_process_cpu = 0.0
    python_runs: dict[str, list[float]] = {"wall_ms": [], "cpu_ms": []}
    loads = []
    java_out: Canonical = {}
    python_out: Canonical = {}
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        answer, java_out = java.run(path, warmup, repeat, workdir / "java-out.json")
        for key in java_runs:
            java_runs[key] += answer[key]
        java_process_cpu += answer["process_cpu_total_ms"]
        timing, python_out = time_python(group, kafka.line, warmup, repeat)
        for key in python_runs:
            python_runs[key] += timing[key]
    agree = java_out == python_out
    row: dict[str, Any] = {
        "kafka_line": kafka.line, "kafka_home": str(kafka.home), "shape": shape.name, "members": shape.members,
        "tasks": shape.tasks, "round": round_name, "warmup_calls": warmup, "timed_calls": repeat * args.rounds,
        "java_wall_ms": _median(java_runs["wall_ms"]), "java_cpu_ms": _median(java_runs["thread_cpu_ms"]),
        "java_process_cpu_mean_ms": round(java_process_cpu / (repeat * args.rounds), 2),
        "taskassign_wall_ms": _median(python_runs["wall_ms"]), "taskassign_cpu_ms": _median(python_runs["cpu_ms"]),
        "taskassign_cpu_mean_ms": round(statistics.fmean(python_runs["cpu_ms"]), 2),
        "outputs_agree": agree, "load_1min": [round(x, 2) for x in loads],
    }
    row["ratio_cpu"] = round(row["java_cpu_ms"] / row["taskassign_cpu_ms"], 2)
    row["ratio_wall"] = round(row["java_wall_ms"] / row["taskassign_wall_ms"], 2)
    row["ratio_process_cpu_mean"] = round(row["java_process_cpu_mean_ms"] / row["taskassign_cpu_mean_ms"], 2)
    if args.cli_repeat and round_name == "cold":
        cli = cli_cost(path, kafka.line, args.cli_repeat, workdir)
        row["cli"] = {**cli, "fixed_cpu_ms": round(cli["cpu_ms"] - row["taskassign_cpu_ms"], 1)}
    print(f"{kafka.line} {shape.name:30} {round_name:8} java {row['java_cpu_ms']:9.2f} ms cpu "
          f"({row['java_wall_ms']:.2f} wall)  taskassign {row['taskassign_cpu_ms']:9.2f} ms cpu "
          f"({row['taskassign_wall_ms']:.2f} wall)  x{row['ratio_cpu']:<6} {'same' if agree else 'DIFFERENT'}",
          file=sys.stderr, flush=True)
    return row


def _java_version() -> str:
    done = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return (done.stderr.splitlines() or [""])[0]


if __name__ == "__main__":
    raise SystemExit(main())
