"""How fast the report's pages render (issue 31: at most 2 s for 200 rebalances on a quiet machine).

Cases: the simulation page of a 238-rebalance run (the report tests' long run: joins, crashes, probing,
revocations over 77 minutes), the compare page of two assignors through the same run, and the fleet page of the
shipped example fleet's pipeline output (``--fleet-output``, written by ``taskassign pipeline run``), of a real
10,000-application run (``--fleet-10000``) and of a synthetic 10,000-application output. Recorded per case: the
command's wall time from its start to the written file (a
fresh process, imports included), the page built in-process, the page's size, and Chromium's load (navigation
start to the load event's end, read back from the page) with the machine's load average. ``--baseline PATH``
times another checkout's ``taskassign`` on the same simulation, side by side (the numbers of one run on a shared
machine compare with each other, not with another run's).

    .venv/bin/python -m benchmarks.bench_report [--write] [--fleet-output OUT] [--baseline OTHER/bin/taskassign]
"""

from __future__ import annotations

import argparse
import functools
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fleet_outputs import write_fleet_output
from tests.helpers import PID_2
from tests.simulate.scenarios import advance, events, join, one_client_owns_everything

from benchmarks._results import load_average, report, timed
from taskassign.api.compare import compare, report_runs
from taskassign.report import build_compare_report, build_fleet_report, build_report, read_simulation
from taskassign.simulate import simulate

CHROMIUM = "/usr/bin/chromium"
TASKASSIGN = str(Path(sys.executable).with_name("taskassign"))
LOAD_PROBE = """<script>window.addEventListener("load", () => setTimeout(() => {
  const t = performance.getEntriesByType("navigation")[0];
  const p = document.createElement("pre"); p.id = "load-ms"; p.textContent = String(t.loadEventEnd);
  document.body.appendChild(p); }, 0));</script>"""


def _long_run() -> tuple[Any, Any]:
    scenario = one_client_owns_everything(12, stateless=2, threads=2, rack="rack-a", max_warmup_replicas=1,
                                          acceptable_recovery_lag=10_000, probing_rebalance_interval_ms=60_000,
                                          num_standby_replicas=1)
    items = [join(PID_2, rack="rack-b", threads=2)]
    for _ in range(70):
        items += [advance(45_000), {"type": "rebalance"}, advance(20_000), {"type": "perturb", "count": 1}]
    return scenario, events(*items, sample_interval_ms=10_000, seed=3)


def _command(args: list[str]) -> dict[str, float]:
    """The command's wall time from its start to its exit (the file written) and its CPU time (user + system,
    what a quiet machine would take about as long as)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def _browser_load_ms(page: Path, work: Path) -> float | None:
    """Chromium's load of ``page`` (ms from navigation start to the load event's end), or None without it."""
    if shutil.which(CHROMIUM) is None:
        return None
    probed = work / f"load-{page.name}"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", LOAD_PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={work / 'profile'}", "--window-size=1200,1400", "--dump-dom",
                          probed.as_uri()], capture_output=True, check=True, timeout=180).stdout.decode("utf-8")
    found = re.search(r'<pre id="load-ms">([\d.]+)</pre>', dom)
    return round(float(found.group(1))) if found else None


def _page(build: Callable[[], str], path: Path, work: Path) -> dict[str, Any]:
    """The page built in-process (median of 3, imports warm), its size and Chromium's load of it."""
    html = build()
    path.write_text(html, encoding="utf-8")
    return {"build": timed(build, 3), "page_kb": round(len(html.encode("utf-8")) / 1024),
            "browser_load_ms": _browser_load_ms(path, work)}


def run(fleet_output: Path | None, fleet_10000: Path | None, baseline: str | None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    scenario, script = _long_run()
    result = simulate(scenario, script, "high_availability")
    result.write(work / "sim")
    cases: dict[str, Any] = {"rebalances": len(result.rebalances)}
    cases["simulation"] = _page(lambda: build_report(read_simulation(work / "sim")), work / "simulation.html", work)
    cases["simulation"]["command"] = _command([TASKASSIGN, "report", str(work / "sim"), "-o",
                                                  str(work / "cmd.html")])
    if baseline:
        cases["simulation"]["baseline_command"] = _command([baseline, "report", str(work / "sim"), "-o",
                                                               str(work / "baseline.html")])
        cases["simulation"]["baseline_browser_load_ms"] = _browser_load_ms(work / "baseline.html", work)
    outcome = compare(scenario, ["high_availability", "state_aware"], events=script)
    runs = report_runs(outcome)
    cases["compare"] = _page(lambda: build_compare_report(runs, outcome.comparison, scenario=scenario.name),
                             work / "compare.html", work)
    fleets = {"fleet_example": fleet_output, "fleet_10000": fleet_10000,
              "fleet_10000_synthetic": write_fleet_output(work / "fleet-10000", 10_000, rejected=300)}
    for name, output in fleets.items():
        if output is not None:
            cases[name] = _page(functools.partial(build_fleet_report, output), work / f"{name}.html", work)
            cases[name]["command"] = _command([TASKASSIGN, "report", str(output), "-o", str(work / "cmd.html")])
    shutil.rmtree(work, ignore_errors=True)
    return {"cases": cases, "load_average": load_average(),
            "note": "wall times on a shared 2-core machine: compare the cases of one run with each other"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/report.json")
    parser.add_argument("--fleet-output", type=Path, help="a `taskassign pipeline run` output of examples/fleet")
    parser.add_argument("--fleet-10000", type=Path, help="a `taskassign pipeline run` output of "
                        "`taskassign fleet generate --apps 10000`")
    parser.add_argument("--baseline", help="another checkout's taskassign executable, timed on the same run")
    args = parser.parse_args()
    report("report", run(args.fleet_output, args.fleet_10000, args.baseline), write=args.write)


if __name__ == "__main__":
    main()
