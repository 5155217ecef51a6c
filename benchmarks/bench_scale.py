"""The whole CLI at 10^5 tasks x 10^3 clients, and scaling curves per assignor and rack strategy (issue 20).

Applications come from benchmarks/scale_app.py (subtopologies of 100 partitions, half stateful, clients
of two threads over three racks, one standby, churned previous owners; clients = tasks / 100). Every
measurement is one ``taskassign assign FILE -o OUT`` in a fresh process: reading the scenario, the
leader's rebalance (assignor, validation, threads), writing the assignment file and printing the
summary table, as a user runs it. Recorded per run: wall time, CPU time (user + system of that process:
less disturbed by other jobs on this shared machine) and peak RSS; medians over ``--repeat`` runs.

Runs: high_availability with rack strategy none, min_traffic and balance_subtopology, state_aware,
legacy_sticky, fallback_prior and the KIP-924 sticky assignor, in the default mode; under
``taskassign.kafka.compat`` high_availability with strategy none (Kafka's heap replayed,
docs/kafka-differences.md H9) and, at the sizes Kafka's exact rack solver can do, with min_traffic.
Runs labelled ``tags`` use issue 33's shape (``scale_app --zones 3``: client tags over 3 zones and
``rack.aware.assignment.tags=zone``, so standbys go through the client-tag-aware standby assignor), in
the default mode and under kafka_compat (Kafka's pile-up replayed, docs/kafka-differences.md H10).
The curve fits ``time = a * tasks^k`` by least squares on log-log (``k`` = the growth exponent; 1 is
linear) over 10^3 .. 10^5 tasks: for the whole CLI (CPU and wall; at 10^3 tasks its ~0.5 s of start-up
dominates, which flattens the curve) and, measured in another fresh process, for reading the file plus
the leader's rebalance and for the rebalance alone (CPU), which show the engine's own growth.

    python -m benchmarks.bench_scale [--repeat 5] [--sizes 1000,3000,10000,30000,100000] [--runs TEXT] [--write]
    python -m benchmarks.bench_scale --table      # the stored results as docs/performance.md's tables

With ``--write`` the runs measured replace their earlier rows in benchmarks/results/scale.json; the
others are kept.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._results import load_average, report, wait_for_quiet
from benchmarks.scale_app import scenario, write

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results" / "scale.json"
SIZES = (1_000, 3_000, 10_000, 30_000, 100_000)
#: (label, assignor, rack strategy, kafka_compat, largest size it runs at)
RUNS: tuple[tuple[str, str, str, bool, int], ...] = (
    ("high_availability/none", "high_availability", "none", False, 100_000),
    ("high_availability/tags", "high_availability", "none", False, 100_000),
    ("high_availability/tags kafka_compat", "high_availability", "none", True, 100_000),
    ("high_availability/min_traffic", "high_availability", "min_traffic", False, 100_000),
    ("high_availability/balance_subtopology", "high_availability", "balance_subtopology", False, 100_000),
    ("state_aware", "state_aware", "none", False, 100_000),
    ("high_availability/none kafka_compat", "high_availability", "none", True, 100_000),
    ("high_availability/min_traffic kafka_compat", "high_availability", "min_traffic", True, 10_000),
    ("legacy_sticky", "legacy_sticky", "none", False, 100_000),
    ("fallback_prior", "fallback_prior", "none", False, 100_000),
    ("sticky", "sticky", "none", False, 100_000),
)


def _taskassign() -> str:
    return str(Path(sys.executable).with_name("taskassign"))


TIME = Path("/usr/bin/time")


def child_environment() -> dict[str, str]:
    """The environment the measured commands run in: this one, but Python writes and reads its bytecode
    caches as it does for an installed program. With ``PYTHONDONTWRITEBYTECODE`` set (this machine's shells
    set it) every run recompiled every taskassign module it imported: ~0.15 s CPU of a command's start-up that
    no user pays twice. The first run of each case is untimed, so the caches exist."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_cli(path: Path, assignor: str, out: Path) -> dict[str, float]:
    """One ``taskassign assign`` in its own process: wall s, CPU s, peak RSS MB.

    The command runs under ``/usr/bin/time -f %M`` where it exists: Linux carries a forked child's peak
    RSS over from its parent (this process, which holds the generated applications), so the child's own
    peak is only seen from a small parent."""
    command = [_taskassign(), "assign", str(path), "-a", assignor, "-o", str(out)]
    timed = TIME.exists()
    start = time.perf_counter()
    process = subprocess.Popen([str(TIME), "-f", "%M", *command] if timed else command,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_environment())
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    errors = process.stderr.read() if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise RuntimeError(f"taskassign assign {path} failed: {errors}")
    peak_kb = int(errors.strip().splitlines()[-1]) if timed else usage.ru_maxrss
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": peak_kb / 1024}


_ENGINE_CHILD = """
import json, sys, time
from taskassign.api.application import read_application
from taskassign.leader.assign import assign_scenario
t0 = time.process_time()
scenario = read_application(sys.argv[1])
t1 = time.process_time()
assign_scenario(scenario, sys.argv[2])
t2 = time.process_time()
print(json.dumps({"read_cpu_s": t1 - t0, "rebalance_cpu_s": t2 - t1}))
"""


def run_engine(path: Path, assignor: str) -> dict[str, float]:
    """Reading and the leader's rebalance alone, CPU s, in a fresh process (no CLI start-up or output)."""
    done = subprocess.run([sys.executable, "-c", _ENGINE_CHILD, str(path), assignor], capture_output=True,
                          text=True, check=True, env=child_environment())
    parsed: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) on log(tasks)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
                 / sum((x - mx) ** 2 for x in xs), 3)


def curve(label: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The growth exponents of one run over its sizes."""
    def points(value: Any) -> list[tuple[int, float]]:
        return [(r["tasks"], value(r)) for r in rows]
    return {"run": label, "sizes": [r["tasks"] for r in rows],
            "exponent_cli_cpu": exponent(points(lambda r: r["cpu_s"])),
            "exponent_cli_wall": exponent(points(lambda r: r["wall_s"])),
            "exponent_read_and_rebalance_cpu": exponent(points(lambda r: r["read_cpu_s"] + r["rebalance_cpu_s"])),
            "exponent_rebalance_cpu": exponent(points(lambda r: r["rebalance_cpu_s"]))}


def markdown(document: dict[str, Any]) -> str:
    """The stored results as docs/performance.md's tables: one row per run and size, then the exponents."""
    lines = ["| run | tasks x clients | wall | CPU | peak RSS | read + rebalance CPU | rebalance CPU | load before |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in document["results"]:
        loads = r["load_1min_before_runs"]
        lines.append(f"| {r['run']} | {r['tasks']:,} x {r['clients']:,} | {r['wall_s']:.2f} s | {r['cpu_s']:.2f} s | "
                     f"{r['peak_rss_mb']:.0f} MB | {r['read_cpu_s'] + r['rebalance_cpu_s']:.2f} s | "
                     f"{r['rebalance_cpu_s']:.2f} s | {min(loads):.1f}-{max(loads):.1f} |")
    lines += ["", "| run | sizes | exponent: CLI CPU | CLI wall | read + rebalance CPU | rebalance CPU |",
              "|---|---|---:|---:|---:|---:|"]
    for c in document["curves"]:
        sizes = f"{min(c['sizes']):,}..{max(c['sizes']):,}"
        lines.append(f"| {c['run']} | {sizes} | {c['exponent_cli_cpu']} | {c['exponent_cli_wall']} | "
                     f"{c['exponent_read_and_rebalance_cpu']} | {c['exponent_rebalance_cpu']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", action="store_true",
                        help="print the stored results as markdown tables (docs/performance.md) and exit")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--runs", default="", help="only runs whose label contains one of these comma-separated texts")
    parser.add_argument("--skip", default="", help="leave out runs whose label contains one of these texts")
    parser.add_argument("--quiet-load", type=float, default=None,
                        help="before each run, wait until the 1-minute load average is below this")
    parser.add_argument("--max-wait", type=float, default=600.0, help="longest wait for --quiet-load, s")
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/scale.json")
    args = parser.parse_args(argv)
    if args.table:
        print(markdown(json.loads(RESULTS.read_text())), end="")
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    load_at_start = load_average()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        workdir = Path(tmp)
        for label, assignor, strategy, compat, largest in RUNS:
            if args.runs and not any(text in label for text in args.runs.split(",")):
                continue
            if args.skip and any(text in label for text in args.skip.split(",")):
                continue
            for tasks in sizes:
                if tasks > largest:
                    continue
                clients = max(2, tasks // 100)
                zones = 3 if "tags" in label else 0
                path = workdir / f"app-{tasks}-{strategy}-{compat}-zones{zones}.scenario.json"
                if not path.exists():
                    write(path, scenario(tasks, clients, strategy=strategy, kafka_compat=compat, zones=zones))
                run_cli(path, assignor, workdir / "out.assignment.json")  # untimed: writes the bytecode caches
                runs, loads_before = [], []
                for _ in range(args.repeat):
                    if args.quiet_load is not None:
                        loads_before.append(wait_for_quiet(args.quiet_load, args.max_wait)[0])
                    else:
                        loads_before.append(load_average()[0])
                    runs.append(run_cli(path, assignor, workdir / "out.assignment.json"))
                engine = [run_engine(path, assignor) for _ in range(args.repeat)]
                loads = load_average()
                row = {"run": label, "assignor": assignor, "strategy": strategy, "kafka_compat": compat,
                       "zones": zones, "tasks": tasks, "clients": clients,
                       "wall_s": round(statistics.median(r["wall_s"] for r in runs), 3),
                       "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 3),
                       "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
                       "read_cpu_s": round(statistics.median(e["read_cpu_s"] for e in engine), 3),
                       "rebalance_cpu_s": round(statistics.median(e["rebalance_cpu_s"] for e in engine), 3),
                       "wall_runs_s": [round(r["wall_s"], 3) for r in runs],
                       "cpu_runs_s": [round(r["cpu_s"], 3) for r in runs],
                       "load_1min_before_runs": loads_before, "load_average_after": loads}
                rows.append(row)
                print(f"{label:45s} {tasks:>7} x {clients:<5} wall {row['wall_s']:7.2f} s  cpu {row['cpu_s']:7.2f} s  "
                      f"rss {row['peak_rss_mb']:6.0f} MB  load {loads[0]}", file=sys.stderr, flush=True)

    previous = json.loads(RESULTS.read_text()) if args.write and RESULTS.exists() else {}
    measured = {(r["run"], r["tasks"]) for r in rows}
    rows = [r for r in previous.get("results", []) if (r["run"], r["tasks"]) not in measured] + rows
    rows.sort(key=lambda r: ([label for label, *_ in RUNS].index(r["run"]), r["tasks"]))
    curves = [curve(label, [r for r in rows if r["run"] == label]) for label in dict.fromkeys(r["run"] for r in rows)]
    document = {
        "benchmark": "taskassign assign at scale (benchmarks/bench_scale.py, applications from scale_app.py)",
        "command": "python -m benchmarks.bench_scale " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_start": load_at_start, "load_average_at_end": load_average()},
        "note": "each row: medians of the runs of the whole CLI in a fresh process (wall, CPU = user + system), "
                "peak RSS the largest; read_cpu_s / rebalance_cpu_s: the same file read and rebalanced in another "
                "fresh process (CPU); exponents fit time = a * tasks^k over the sizes run (clients = tasks / 100); "
                "bytecode caches written and read (PYTHONDONTWRITEBYTECODE unset for the commands, one untimed run "
                "first), as for an installed program",
        "curves": curves,
        "results": rows,
    }
    report("scale", document, write=args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
