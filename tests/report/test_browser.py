"""The report in a real browser: Debian's headless Chromium must load and show every plot, with no two labels of a
chart on top of each other, also at 200+ rebalances and on the page overlaying several assignors."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from taskassign.report import read_simulation
from taskassign.report.plots import REASON_COLOURS

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which(CHROMIUM) is None,
                       reason=f"{CHROMIUM} is not installed (Debian package 'chromium'; .ci/run installs it)"),
]
#: Measures the page once loaded and appends the findings as JSON in <pre id="probe">: every image's natural size,
#: every SVG chart's size and how many pairs of its text labels overlap (bounding boxes sharing more than a pixel
#: each way), the legends' entries, the totals box.
PROBE = """<script>
window.addEventListener("load", () => {
  const overlaps = (boxes) => {
    let n = 0;
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
          Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) n++;
    }
    return n;
  };
  const charts = Array.from(document.querySelectorAll(".svg-plot")).map(div => {
    const svg = div.querySelector("svg"), box = svg.getBoundingClientRect();
    const labels = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim())
      .map(t => t.getBoundingClientRect());
    return {id: div.id, width: box.width, height: box.height, labels: labels.length, overlaps: overlaps(labels)};
  });
  const totals = document.querySelector("#totals");
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({
    images: Array.from(document.images).map(i => i.complete ? [i.naturalWidth, i.naturalHeight] : null),
    charts,
    legend: Array.from(document.querySelectorAll(".legend-item")).map(e => e.textContent),
    totals: totals ? totals.textContent : null,
  });
  document.body.appendChild(probe);
});
</script>"""


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               "--virtual-time-budget=10000", *args]
    return subprocess.run(command, capture_output=True, timeout=120, check=True)


def _probe(page: Path, tmp_path: Path) -> dict[str, Any]:
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _chromium(tmp_path / "profile-dom", "--window-size=1200,1400", "--dump-dom",
                    probe.as_uri()).stdout.decode("utf-8")
    found = re.search(r'<pre id="probe">([^<]*)</pre>', dom)
    assert found is not None, dom[-500:]
    result: dict[str, Any] = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return result


def _screenshot(page: Path, tmp_path: Path, height: int) -> np.ndarray:
    shot = tmp_path / "shot.png"
    _chromium(tmp_path / "profile-shot", f"--window-size=1200,{height}", f"--screenshot={shot}", page.as_uri())
    return np.asarray(Image.open(io.BytesIO(shot.read_bytes())).convert("RGB"), dtype=int)


def _share(pixels: np.ndarray, rgb: tuple[int, int, int]) -> float:
    return float((np.abs(pixels - np.array(rgb)) < 16).all(axis=2).mean())


def test_chromium_shows_every_plot(report_path: Path, tmp_path: Path) -> None:
    found = _probe(report_path, tmp_path)
    assert len(found["images"]) == 2
    for size in found["images"]:
        assert size is not None and size[0] >= 400 and size[1] >= 250
    assert [c["id"] for c in found["charts"]] == ["plot-movements", "plot-restore_timeline"]
    for chart in found["charts"]:
        assert chart["width"] >= 600 and chart["height"] >= 200 and chart["labels"] >= 10
        assert chart["overlaps"] == 0, chart
    assert {"initial", "join"} <= set(found["legend"])
    assert "records restored" in found["totals"] and "time to settle" in found["totals"]


def test_the_screenshot_shows_the_plots(report_path: Path, tmp_path: Path) -> None:
    pixels = _screenshot(report_path, tmp_path, 1400)
    # the active bars' blue covers a visible part of the first screen; a page with broken images has none
    assert _share(pixels, (0x1F, 0x77, 0xB4)) > 0.002


def test_200_rebalances_stay_readable(long_simulation_dir: Path, long_report_path: Path, tmp_path: Path) -> None:
    found = _probe(long_report_path, tmp_path)
    charts = {c["id"]: c for c in found["charts"]}
    timeline, movements = charts["plot-restore_timeline"], charts["plot-movements"]
    for chart in (timeline, movements):
        assert chart["overlaps"] == 0, chart  # no label on top of another, however many rebalances
        assert chart["labels"] < 80  # tick labels thinned, not one per rebalance
    data = read_simulation(long_simulation_dir)
    firsts = {r.reasons[0] for r in data.rebalances}
    assert found["legend"] == [reason for reason in REASON_COLOURS if reason in firsts] and len(firsts) >= 5
    pixels = _screenshot(long_report_path, tmp_path, 4200)
    assert pixels.std() > 30  # not a blank page
    # the restore chart's stacked areas (actives blue, standbys orange) are drawn, not hidden under 238 lines
    assert _share(pixels, (0x1F, 0x77, 0xB4)) > 0.005 and _share(pixels, (0xFF, 0x7F, 0x0E)) > 0.001


def test_the_compare_page_overlays_the_assignors(compare_report_path: Path, tmp_path: Path) -> None:
    found = _probe(compare_report_path, tmp_path)
    assert [c["id"] for c in found["charts"]] == ["plot-thread_state_overlay", "plot-restore_overlay",
                                                  "plot-movements_overlay"]
    for chart in found["charts"]:
        assert chart["overlaps"] == 0, chart
    assert found["legend"] == ["high_availability", "state_aware"]
    pixels = _screenshot(compare_report_path, tmp_path, 2400)
    assert _share(pixels, (0x1F, 0x77, 0xB4)) > 0.0005 and _share(pixels, (0xD6, 0x27, 0x28)) > 0.0005
