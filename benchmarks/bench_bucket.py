"""The pipeline's worker side without Spark: a fleet's buckets through the Python call a worker makes, in CPU time.

``bench_pipeline`` runs the whole command, whose wall time on a shared 2-core machine says as much about the other
jobs as about the code. This runs what a Spark Python worker runs for each bucket
(``engine_udf.bucket_file_processor``: the bucket's file read, the row checks and derivations, the scenarios
built, the engine, the metrics, the output rows as Arrow IPC streams) in this process, on the bucket files the
driver of a local run writes (``local_scatter.write_bucket_files``, same buckets as ``pipeline run --master
local[2]``: 32 for 1,000 applications), with the workers' own clock (``time.perf_counter`` in the pipeline's
modules) replaced by this process's CPU time: every split the run reports (check, build, engine, metrics,
Python) comes out in CPU seconds, which other jobs disturb far less than wall time.

    python -m benchmarks.bench_bucket --fleet uniform-1000x1000 [--buckets 0-31] [--dump OUT.json]

``--dump`` writes every output row of the buckets run (timing columns left out) to compare two revisions: the
same file means the same output tables. ``--profile FILE`` writes a cProfile of the buckets.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks._results import load_average
from benchmarks.bench_pipeline import CASES, SEED, _snapshot

#: What each figure of the result counts (CPU seconds of this process, summed over the buckets run).
SPLIT = {
    "cpu_seconds": "this process's CPU over the buckets' calls, the reading of their files included",
    "python_seconds": "the worker call's own account of its time (engine_udf: reading and splitting the bucket's "
                      "files, the checks, every application's building, engine and metrics, the output rows as "
                      "Arrow IPC streams): what a Spark worker spends in taskassign's code (bench_bucket's files "
                      "carry no driver reading time, which a real run adds as read_seconds)",
    "check_seconds": "fleet.bucket steps 1-4: row checks, subscription_info decoding, derivations, clients' reports "
                     "merged, each application's record",
    "build_seconds": "fleet.build.build_scenario per application: TaskInfos, partitions, client states, "
                     "ApplicationState, Scenario",
    "engine_seconds": "leader.assign.assign_scenario per application: the assignor, the leader's validation and "
                      "its spreading over threads (what `taskassign assign` runs); nothing of the pipeline's own",
    "metrics_seconds": "per application: analysis.metrics.compute_metrics and the result rows' values (task ids "
                       "as text, per-client and per-consumer lists)",
    "outside_engine_seconds": "python_seconds - engine_seconds: every other part of the worker's time",
    "outside_engine_share_of_python": "outside_engine_seconds / python_seconds (issue 33 point 5 asks for at most "
                                      "a third)",
}
#: Columns that hold times (they differ between any two runs).
TIMING_COLUMNS = frozenset({"build_seconds", "engine_seconds", "metrics_seconds", "check_seconds", "python_seconds",
                            "read_seconds"})
BUCKETS = 32  # pipeline run on local[2] for 1,000 applications: min(16 per core x 2, apps / 16)


def _cpu_clock() -> None:
    """The pipeline's modules read ``time.perf_counter``; give them this process's CPU time instead."""
    from taskassign.fleet import application, bucket
    from taskassign.pipeline import engine_udf

    shim = types.SimpleNamespace(**{name: getattr(time, name) for name in dir(time) if not name.startswith("_")})
    shim.perf_counter = time.process_time
    for module in (application, bucket, engine_udf):
        module.time = shim  # type: ignore[attr-defined]


def bucket_files(snapshot: Path, buckets: int, directory: Path) -> None:
    from taskassign.pipeline.local_scatter import write_bucket_files
    from taskassign.pipeline.read import locate_snapshot
    from taskassign.pipeline.scatter import plan_scatter

    sources = {name: (str(found[0]), found[1]) if found else (None, None)
               for name, found in locate_snapshot(snapshot).items()}
    tasks = plan_scatter(sources, 8)
    assert tasks is not None, "the snapshot needs Spark's reader"
    write_bucket_files(tasks, buckets, directory)


def run_buckets(directory: Path, numbers: list[int], dump: list[dict[str, Any]] | None) -> dict[str, float]:
    from pyspark.sql.types import StructType

    from taskassign.pipeline.engine_udf import DEFAULT_SETTINGS, bucket_file_processor
    from taskassign.pipeline.ipc import from_ipc
    from taskassign.pipeline.schemas import KIND_BUCKET, PROCESSED

    schema: StructType = PROCESSED
    process = bucket_file_processor(schema, str(directory), DEFAULT_SETTINGS)
    totals = dict.fromkeys(("cpu_seconds", "python_seconds", "check_seconds", "build_seconds", "engine_seconds",
                            "metrics_seconds", "apps"), 0.0)
    for number in numbers:
        started = time.process_time()
        batches = list(process(iter([pa.RecordBatch.from_pydict({"id": pa.array([number], pa.int64())})])))
        totals["cpu_seconds"] += time.process_time() - started
        for batch in batches:
            for row in batch.to_pylist():
                if row["kind"] == KIND_BUCKET:
                    totals["python_seconds"] += row["python_seconds"]
                    totals["check_seconds"] += row["check_seconds"]
                    continue
                rows = from_ipc(row["payload"]).to_pylist()
                if row["kind"] == "app":
                    for app in rows:
                        totals["apps"] += 1
                        for key in ("build_seconds", "engine_seconds", "metrics_seconds"):
                            totals[key] += app[key] or 0.0
                if dump is not None:
                    dump.extend({"kind": row["kind"], **{k: v for k, v in r.items() if k not in TIMING_COLUMNS}}
                                for r in rows)
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fleet", default="uniform-1000x1000", choices=[c.name for c in CASES])
    parser.add_argument("--snapshot", type=Path, default=None, help="a snapshot directory instead of --fleet")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "taskassign-bench-pipeline")
    parser.add_argument("--buckets", default=f"0-{BUCKETS - 1}", help="which buckets to run: 0-31, or 0,5,9")
    parser.add_argument("--total-buckets", type=int, default=BUCKETS)
    parser.add_argument("--dump", type=Path, default=None, help="write the output rows (no timings) here")
    parser.add_argument("--profile", type=Path, default=None, help="write a cProfile of the buckets here")
    args = parser.parse_args(argv)
    if args.snapshot is not None:
        snapshot = args.snapshot
    else:
        args.workdir.mkdir(parents=True, exist_ok=True)
        snapshot, _ = _snapshot(next(c for c in CASES if c.name == args.fleet), args.workdir)
    files = args.workdir / f"buckets-{snapshot.name}-{args.total_buckets}"
    if not (files / "done").exists():
        bucket_files(snapshot, args.total_buckets, files)
        (files / "done").write_text("")
    if "-" in args.buckets:
        first, last = map(int, args.buckets.split("-"))
        numbers = list(range(first, last + 1))
    else:
        numbers = [int(n) for n in args.buckets.split(",")]
    _cpu_clock()
    run_buckets(files, numbers[:1], None)  # warm: imports, first pyarrow calls (a worker's first bucket pays them)
    load_before = load_average()
    dump: list[dict[str, Any]] | None = [] if args.dump else None
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    totals = run_buckets(files, numbers, dump)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    outside = totals["python_seconds"] - totals["engine_seconds"]
    result = {"snapshot": str(snapshot), "seed": SEED, "buckets": len(numbers), "apps": int(totals["apps"]),
              **{k: round(v, 3) for k, v in totals.items() if k != "apps"},
              "outside_engine_seconds": round(outside, 3),
              "outside_engine_share_of_python": round(outside / totals["python_seconds"], 3),
              "load_before": load_before, "load_after": load_average(), "pid": os.getpid(), "split": SPLIT}
    if dump is not None:
        text = json.dumps(sorted(dump, key=lambda r: json.dumps(r, sort_keys=True, default=str)), sort_keys=True,
                          default=str)
        args.dump.write_text(text)
        result["dump_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
