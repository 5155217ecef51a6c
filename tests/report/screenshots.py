"""Regenerates docs/images/report-*.png, the screenshots docs/report.md shows, from the shipped examples: the
simulation page and the compare page of examples/scenarios/two-racks-one-standby through
examples/events/rolling-restart, and the fleet page of examples/fleet's pipeline output (run
``taskassign pipeline run --input examples/fleet --output OUT`` first: that needs Spark).

    .venv/bin/python -m tests.report.screenshots OUT

Each is the top of the page as headless Chromium paints it at 1200 px, reduced to a 64-colour palette so the
PNG stays small (test_docs_images checks the size).
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

from PIL import Image

from taskassign.api.application import read_application
from taskassign.api.compare import compare, write_compare_report
from taskassign.report import write_report
from taskassign.simulate import read_events, simulate
from tests.helpers import EXAMPLES_DIR
from tests.report.browser import screenshot_png

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
#: (file, height in pixels of the page's top kept)
SHOTS = {"report-simulation.png": 2000, "report-compare.png": 1500, "report-fleet.png": 1700}


def _save(png: bytes, target: Path) -> None:
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    image.save(target, optimize=True)


def main(fleet_output: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="screenshots-"))
    scenario = read_application(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
    script = read_events(EXAMPLES_DIR / "events" / "rolling-restart.events.json")
    simulate(scenario, script, "high_availability").write(work / "sim")
    pages = {
        "report-simulation.png": write_report(work / "sim", work / "simulation.html"),
        "report-compare.png": write_compare_report(compare(scenario, ["high_availability", "state_aware"],
                                                           events=script), work / "compare")[0],
        "report-fleet.png": write_report(fleet_output, work / "fleet.html"),
    }
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name, page in pages.items():
        _save(screenshot_png(page, work, height=SHOTS[name]), IMAGES / name)
        print(f"wrote {IMAGES / name} ({(IMAGES / name).stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
