"""Printing and saving a benchmark's result document (benchmarks/results/<name>.json)."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parent / "results"


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages: how busy the (shared) machine was."""
    return [round(x, 2) for x in os.getloadavg()]


def wait_for_quiet(threshold: float, max_wait_s: float) -> list[float]:
    """Wait (at most ``max_wait_s``) until the 1-minute load average is below ``threshold``; returns the
    load averages when done waiting. The machine is shared: final figures are taken when it is quiet."""
    deadline = time.monotonic() + max_wait_s
    while os.getloadavg()[0] >= threshold and time.monotonic() < deadline:
        time.sleep(5.0)
    return load_average()


def report(name: str, result: dict[str, Any], *, write: bool) -> None:
    """Print ``result`` as JSON and, with ``write``, save it as results/<name>.json."""
    text = json.dumps(result, indent=2) + "\n"
    print(text, end="")
    if write:
        (RESULTS_DIR / f"{name}.json").write_text(text)


def timed(fn: Callable[[], Any], repeats: int) -> dict[str, Any]:
    """Median wall-clock and CPU ms (this process only, less disturbed by other jobs) over ``repeats``
    runs of ``fn``, plus the wall-clock runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        cpus.append((time.process_time() - cpu) * 1000.0)
        walls.append((time.perf_counter() - wall) * 1000.0)
    return {"ms": round(statistics.median(walls), 2), "cpu_ms": round(statistics.median(cpus), 2),
            "runs_ms": [round(w, 2) for w in walls]}
