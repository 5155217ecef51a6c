"""The report in a real browser: Debian's headless Chromium must load and show every plot, with no two labels of a
chart on top of each other, also at 200+ rebalances and on the page overlaying several assignors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskassign.report import read_simulation
from taskassign.report.plots import REASON_COLOURS
from tests.report.browser import BROWSER_MARKS, OVERLAPS_JS, probe, screenshot, share

pytestmark = BROWSER_MARKS
#: Measures the page once loaded and appends the findings as JSON in <pre id="probe">: every image's natural size,
#: every SVG chart's size and how many pairs of its text labels overlap (bounding boxes sharing more than a pixel
#: each way), the legends' entries, the totals box.
PROBE = """<script>
window.addEventListener("load", () => {
  /*OVERLAPS*/
  const charts = Array.from(document.querySelectorAll(".svg-plot")).map(div => {
    const svg = div.querySelector("svg"), box = svg.getBoundingClientRect();
    const labels = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim())
      .map(t => t.getBoundingClientRect());
    return {id: div.id, width: box.width, height: box.height, labels: labels.length,
            overlaps: overlapping(labels).length};
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
</script>""".replace("/*OVERLAPS*/", OVERLAPS_JS)


def _probe(page: Path, tmp_path: Path) -> dict[str, Any]:
    return probe(page, tmp_path, PROBE)


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
    pixels = screenshot(report_path, tmp_path, 1400)
    # the active bars' blue covers a visible part of the first screen; a page with broken images has none
    assert share(pixels, (0x1F, 0x77, 0xB4)) > 0.002


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
    pixels = screenshot(long_report_path, tmp_path, 4200)
    assert pixels.std() > 30  # not a blank page
    # the restore chart's stacked areas (actives blue, standbys orange) are drawn, not hidden under 238 lines
    assert share(pixels, (0x1F, 0x77, 0xB4)) > 0.005 and share(pixels, (0xFF, 0x7F, 0x0E)) > 0.001


def test_the_compare_page_overlays_the_assignors(compare_report_path: Path, tmp_path: Path) -> None:
    found = _probe(compare_report_path, tmp_path)
    assert [c["id"] for c in found["charts"]] == ["plot-thread_state_overlay", "plot-restore_overlay",
                                                  "plot-movements_overlay"]
    for chart in found["charts"]:
        assert chart["overlaps"] == 0, chart
    assert found["legend"] == ["high_availability", "state_aware"]
    pixels = screenshot(compare_report_path, tmp_path, 2400)
    assert share(pixels, (0x1F, 0x77, 0xB4)) > 0.0005 and share(pixels, (0xD6, 0x27, 0x28)) > 0.0005
