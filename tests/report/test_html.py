from __future__ import annotations

import re
from pathlib import Path

from taskassign.analysis.metrics import metric_fields
from taskassign.report import build_report, read_simulation
from taskassign.report.plots import REASON_COLOURS


def test_the_page_is_self_contained(report_path: Path) -> None:
    html = report_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"(?:src|href)=\"(?!data:|#)", html), "every resource must be inlined"
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert "<img" not in html  # every chart is SVG the report draws itself
    charts = re.findall(r'<div id="plot-([a-z_]+)" class="svg-plot" role="img" aria-label="[^"]+"><svg ', html)
    assert charts == ["client_load", "movements", "restore_timeline", "rack_traffic"]
    assert html.index('id="plot-client_load"') < html.index('id="plot-movements"') < html.index(
        'id="plot-restore_timeline"') < html.index('id="plot-rack_traffic"')


def test_the_page_has_the_metrics_and_every_rebalance(simulation_dir: Path, report_path: Path) -> None:
    data = read_simulation(simulation_dir)
    html = report_path.read_text(encoding="utf-8")
    for f in metric_fields():
        assert f"<code>{f.name}</code>" in html
    body = html.split("<h2>Rebalances</h2>", 1)[1]
    assert body.count("<tr>") == len(data.rebalances) + 1
    assert "converged" in html and "WarmupAssignor" in html
    assert html.endswith("</html>\n")


def test_the_same_result_gives_the_same_page(simulation_dir: Path, report_path: Path) -> None:
    from taskassign.report.topology_sections import simulation_section

    section = simulation_section(simulation_dir)
    assert 'id="topology-placement"' in section
    assert build_report(read_simulation(simulation_dir), section) == report_path.read_text(encoding="utf-8")


def test_the_page_sets_the_first_assignment_against_the_last_and_totals_the_run(
        simulation_dir: Path, report_path: Path) -> None:
    data = read_simulation(simulation_dir)
    html = report_path.read_text(encoding="utf-8")
    table = html.split("<h2>Metrics of the first and the last assignment</h2>", 1)[1].split("</table>", 1)[0]
    assert "<th>first assignment</th><th>last assignment</th>" in table
    first, last = data.first_metrics["active_moves"], data.final_metrics["active_moves"]
    row = re.search(r"<code>active_moves</code></td>(<td[^>]*>[^<]*</td>)(<td[^>]*>[^<]*</td>)", table)
    assert row is not None and f">{first:,}<" in row.group(1) and f">{last:,}<" in row.group(2)
    assert ('class="best"' in row.group(1)) == (first < last) and ('class="best"' in row.group(2)) == (last < first)
    totals = html.split('id="totals"', 1)[1].split("</div></div>", 1)[0]
    assert f"<b>{data.totals.active_moves:,}</b><span>active tasks moved</span>" in totals  # type: ignore[union-attr]
    legend = html.split('id="reason-legend"', 1)[1].split("</div>", 1)[0]
    firsts = {r.reasons[0] for r in data.rebalances}
    assert re.findall(r"</i>([a-z]+)</span>", legend) == [r for r in REASON_COLOURS if r in firsts]
    assert len(firsts) >= 3


def test_a_long_run_bins_its_movements(long_simulation_dir: Path) -> None:
    from taskassign.report import timeline

    data = read_simulation(long_simulation_dir)
    svg = timeline.movements_svg(data.rebalances)
    assert "movements per 4 rebalances, and in all" in svg
    assert len(timeline.thin(data.samples, 100)) == 100 and timeline.thin(data.samples, 100)[-1] == data.samples[-1]
