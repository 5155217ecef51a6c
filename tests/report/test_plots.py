"""The charts, drawn as SVG by the report itself: they show the data, stay the same for the same data, keep short
restores and single moves visible on long runs, and keep tied assignors' lines apart."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from taskassign.report import overlay, plots, read_simulation, timeline
from taskassign.report.colours import ACTIVE_COLOUR, STANDBY_COLOUR
from taskassign.report.data import ClientLoad, RebalanceRow, SampleRow


def _rects(svg: str, colour: str, then: str = "><title>") -> list[tuple[float, float, float, float]]:
    """(x, y, width, height) of every rectangle filled with ``colour`` (by default the data's: those with a
    tooltip, not the legend's swatches)."""
    found = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="' + colour
                       + '"' + then, svg)
    return [(float(x), float(y), float(w), float(h)) for x, y, w, h in found]


def test_every_chart_draws_something(report_path: Path) -> None:
    html = report_path.read_text(encoding="utf-8")
    charts = re.findall(r'<div id="plot-([a-z_]+)" class="svg-plot"[^>]*>(<svg .*?</svg>)', html, re.DOTALL)
    assert len(charts) == 4
    for key, svg in charts:
        assert svg.count("<text") >= 5, key  # titles, ticks, legends
        assert "<rect" in svg or "<path" in svg, key


def test_bars_reflect_the_data() -> None:
    heavy = [ClientLoad("a" * 36, None, 1, 9, 0, 0, (9,), (9,)), ClientLoad("b" * 36, None, 1, 1, 0, 0, (1,), (1,))]
    bars = _rects(plots.client_load_svg(heavy), ACTIVE_COLOUR)
    per_client = sorted(h for _, _, _, h in bars[:2])  # the first panel's two bars: 9 and 1 active per thread
    assert 8.8 <= per_client[1] / per_client[0] <= 9.2
    assert plots.client_load_svg(heavy) != plots.client_load_svg(heavy[1:])


def test_same_data_same_bytes(simulation_dir: Path) -> None:
    data = read_simulation(simulation_dir)
    assert timeline.movements_svg(data.rebalances) == timeline.movements_svg(data.rebalances)
    assert plots.client_load_svg(data.clients) == plots.client_load_svg(data.clients)
    assert timeline.restore_timeline_svg(data.samples, data.rebalances) == timeline.restore_timeline_svg(
        data.samples, data.rebalances)


@pytest.mark.parametrize("cells", [[], [("r1", "r1", 2.0), ("r1", "r2", 0.5), ("?", "r2", 1.0)]])
def test_rack_matrix_with_and_without_traffic(cells: list[tuple[str, str, float]]) -> None:
    svg = plots.rack_traffic_svg(cells)
    assert svg.startswith("<svg ") and ("no partitions read" in svg) == (not cells)
    assert svg.count("<title>") == (4 if cells else 0)  # one cell per (client rack, replica rack)


def _row(index: int, offset_ms: int, active_moves: int) -> RebalanceRow:
    return RebalanceRow(index, offset_ms, ("join",), "NONE", False, 0, 0, 0, 0,
                        {"active_moves": active_moves, "standby_moves": 0})


def test_a_single_move_and_a_short_restore_stay_visible_on_a_long_run() -> None:
    # 600 rebalances over 10 hours; one bin moves one task, another a thousand
    rows = [_row(i, i * 60_000, 0) for i in range(600)]
    rows[10] = _row(10, 600_000, 1)
    rows[300] = _row(300, 18_000_000, 1000)
    bars = _rects(timeline.movements_svg(rows), ACTIVE_COLOUR)
    assert len(bars) == 2 and min(h for _, _, _, h in bars) >= 2.0
    # one 10-second sample restoring standbys in a 10-hour run: widened to MIN_RESTORE_PX, not a hairline
    samples = [SampleRow(t * 10_000, 0, 0, 0, 3) for t in range(3600)]
    samples[1800] = replace(samples[1800], standby_records_left=500)
    svg = timeline.restore_timeline_svg(samples, rows)
    widened = _rects(svg, STANDBY_COLOUR, " fill-opacity")
    assert widened and widened[0][2] >= timeline.MIN_RESTORE_PX


def test_tied_assignors_lines_stay_apart(simulation_dir: Path) -> None:
    data = read_simulation(simulation_dir)
    twin = replace(data, assignor="second")
    svg = overlay.movements_overlay_svg([data, twin])
    lines = re.findall(r'<path d="(M[^"]+)" fill="none" stroke="([^"]+)" stroke-width="1.8"[^>]*?'
                       r'(?: stroke-dasharray="([^"]+)")?/>', svg)
    first = [d for d, colour, _ in lines if colour == overlay.assignor_colour(0)]
    second = [(d, dash) for d, colour, dash in lines if colour == overlay.assignor_colour(1)]
    assert first and second and first[0] != second[0][0]  # the same data, drawn a little apart
    assert second[0][1]  # and dashed
    assert svg.count("<circle") > 0 and svg.count("<rect") > 0  # each its own markers
