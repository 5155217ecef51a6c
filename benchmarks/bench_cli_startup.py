"""How quickly the ``taskassign`` command answers what needs no engine (issue 26, point 5): ``--help``,
``assign -h`` and ``--version``, against the floor, ``python -c "import typer, rich"``, and against what any typer
application's rich help costs (a one-command app's ``--help``: typer's help renderer imports rich's console,
tables, markdown and tracebacks, which ``import rich`` does not).

Each call is a fresh process; the calls take turns (one of each per round, so a busy moment of the shared machine
falls on all of them alike), and the median of the rounds is kept: wall-clock ms, and CPU ms (user + system of the
child, less disturbed by other jobs). Ratios are to the floor. ``--also PATH`` times another ``taskassign``
executable beside this one (e.g. main's, for a before/after).

    .venv/bin/python -m benchmarks.bench_cli_startup [--repeat 5] [--also /work/main/.venv/bin/taskassign] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._results import load_average, report, wait_for_quiet

FLOOR = "python -c 'import typer, rich'"
TYPER_HELP = "one-command typer app --help"
_TYPER_APP = """
import typer
app = typer.Typer(rich_markup_mode="rich", add_completion=False)
@app.command()
def hello(name: str = typer.Option("world", help="Who to greet.")) -> None:
    \"\"\"Say hello.\"\"\"
app()
"""


def _taskassign() -> list[str]:
    """This environment's ``taskassign`` script (what users run), else ``python -m taskassign``."""
    script = Path(sys.executable).parent / "taskassign"
    return [str(script)] if script.exists() else [sys.executable, "-m", "taskassign"]


def calls(also: str | None) -> dict[str, list[str]]:
    ours = _taskassign()
    found = {FLOOR: [sys.executable, "-c", "import typer, rich"],
             TYPER_HELP: [sys.executable, "-c", _TYPER_APP, "--help"],
             "taskassign --help": [*ours, "--help"],
             "taskassign assign -h": [*ours, "assign", "-h"],
             "taskassign --version": [*ours, "--version"]}
    if also is not None:
        found.update({f"{also} --help": [also, "--help"], f"{also} assign -h": [also, "assign", "-h"],
                      f"{also} --version": [also, "--version"]})
    return found


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU ms of one run of ``argv`` (output discarded; it must exit 0)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter() - start) * 1000.0
    after = os.times()
    cpu = (after.children_user - before.children_user + after.children_system - before.children_system) * 1000.0
    return wall, cpu


def measure(named: dict[str, list[str]], repeat: int) -> dict[str, Any]:
    for argv in named.values():  # warm the file cache; untimed
        run_once(argv)
    walls: dict[str, list[float]] = {name: [] for name in named}
    cpus: dict[str, list[float]] = {name: [] for name in named}
    for _ in range(repeat):
        for name, argv in named.items():
            wall, cpu = run_once(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    floor_wall, floor_cpu = statistics.median(walls[FLOOR]), statistics.median(cpus[FLOOR])
    return {name: {"ms": round(statistics.median(walls[name]), 1), "cpu_ms": round(statistics.median(cpus[name]), 1),
                   "ratio": round(statistics.median(walls[name]) / floor_wall, 2),
                   "cpu_ratio": round(statistics.median(cpus[name]) / floor_cpu, 2),
                   "runs_ms": [round(w, 1) for w in walls[name]]}
            for name in named}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (medians kept)")
    parser.add_argument("--also", default=None, help="another taskassign executable to time beside this one")
    parser.add_argument("--quiet-load", type=float, default=None,
                        help="first wait until the 1-minute load average is below this")
    parser.add_argument("--max-wait", type=float, default=600.0, help="longest wait for --quiet-load, s")
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/cli_startup.json")
    args = parser.parse_args(argv)
    load_at_start = (wait_for_quiet(args.quiet_load, args.max_wait) if args.quiet_load is not None
                     else load_average())
    results = measure(calls(args.also), args.repeat)
    report("cli_startup", {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "repeat": args.repeat, "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_average_at_start": load_at_start, "load_average_at_end": load_average(),
        "calls": results,
    }, write=args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
