"""The fleet page in headless Chromium: its charts laid out with no label on another, every section there, and
the long tables paged, filtered and sorted by the page's own script, at 10,000 applications too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskassign.report import build_fleet_report
from taskassign.report.fleet_html import PAGE_ROWS
from tests.fleet_outputs import write_fleet_output
from tests.report.browser import BROWSER_MARKS, OVERLAPS_JS, probe, screenshot, share

pytestmark = BROWSER_MARKS

#: Reads the page once loaded, then clicks "next" on the applications table, filters the attention table, sorts
#: the applications by tasks; what each step shows goes into <pre id="probe">.
PROBE = """<script>
window.addEventListener("load", () => {
  /*OVERLAPS*/
  const charts = Array.from(document.querySelectorAll(".svg-plot")).map(div => {
    const labels = Array.from(div.querySelectorAll("svg text")).filter(t => t.textContent.trim())
      .map(t => t.getBoundingClientRect());
    const box = div.querySelector("svg").getBoundingClientRect();
    return {id: div.id, width: box.width, height: box.height, labels: labels.length,
            overlaps: overlapping(labels).length};
  });
  const apps = document.getElementById("applications"), wrap = apps.parentElement;
  const firstCells = () => Array.from(apps.tBodies[0].rows).map(r => r.cells[0].textContent);
  const before = firstCells();
  wrap.querySelector(".next").click();
  const after = firstCells(), info = wrap.querySelector(".info").textContent;
  const tasks = Array.from(apps.tHead.rows[0].cells).findIndex(c => c.textContent === "tasks");
  apps.tHead.rows[0].cells[tasks].click(); apps.tHead.rows[0].cells[tasks].click();  // descending
  const sorted = Array.from(apps.tBodies[0].rows).map(r => Number(r.cells[tasks].textContent.replace(/,/g, "")));
  const attention = document.getElementById("attention"), filter = attention.parentElement.querySelector("input");
  filter.value = "END_OFFSETS_UNKNOWN"; filter.dispatchEvent(new Event("input"));
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({
    charts, before, after, info, sorted,
    attention: Array.from(attention.tBodies[0].rows).map(r => r.cells[0].textContent),
    headings: Array.from(document.querySelectorAll("h2")).map(h => h.textContent),
    overflowing: document.documentElement.scrollWidth > window.innerWidth + 1,
  });
  document.body.appendChild(probe);
});
</script>""".replace("/*OVERLAPS*/", OVERLAPS_JS)


def _page(tmp_path: Path, apps: int, **kwargs: Any) -> Path:
    page = tmp_path / "fleet.html"
    page.write_text(build_fleet_report(write_fleet_output(tmp_path / "out", apps, **kwargs)), encoding="utf-8")
    return page


def _check(found: dict[str, Any], apps: int, passes: int = 1) -> None:
    """``apps`` applications, each with a row per assignor (``passes``), ordered by application."""
    rows = apps * passes
    assert len(found["charts"]) >= 9
    for chart in found["charts"]:
        assert chart["width"] >= 300 and chart["labels"] >= 4, chart
        assert chart["overlaps"] == 0, chart
    assert [h.split(" (")[0] for h in found["headings"]][:3] == ["Outcomes", "Applications that need attention",
                                                                 "Distributions of the main metrics"]
    assert len(found["before"]) == PAGE_ROWS and len(found["after"]) == min(PAGE_ROWS, rows - PAGE_ROWS)
    assert found["after"][0] == f"app-{PAGE_ROWS // passes:05d}"  # the second page follows the first
    assert found["info"].startswith(f"rows {PAGE_ROWS + 1}-") and f"of {rows:,}" in found["info"]
    assert found["sorted"] == sorted(found["sorted"], reverse=True)
    assert found["attention"] == ["app-00000"] * passes
    assert not found["overflowing"]  # nothing wider than the window: no sideways scrolling


def test_the_fleet_page_works_in_chromium(tmp_path: Path) -> None:
    page = _page(tmp_path, 120, assignors=("high_availability", "state_aware"))
    _check(probe(page, tmp_path, PROBE), 120, passes=2)
    pixels = screenshot(page, tmp_path, 1400)
    assert share(pixels, (0x2C, 0xA0, 0x2C)) > 0.005  # the outcome bars' ASSIGNED green


@pytest.mark.slow
def test_ten_thousand_applications_in_chromium(tmp_path: Path) -> None:
    page = _page(tmp_path, 10_000, rejected=300)
    assert page.stat().st_size < 10 * 1024 * 1024
    _check(probe(page, tmp_path, PROBE), 10_000)
