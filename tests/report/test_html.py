from __future__ import annotations

import base64
import re
from pathlib import Path

from taskassign.analysis.metrics import metric_fields
from taskassign.report import build_report, read_simulation


def test_the_page_is_self_contained(report_path: Path) -> None:
    html = report_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"(?:src|href)=\"(?!data:|#)", html), "every resource must be inlined"
    assert "http://" not in html and "https://" not in html and "<script" not in html
    images = re.findall(r'<img id="plot-([a-z_]+)" alt="[^"]+" src="data:image/png;base64,([^"]+)"', html)
    assert [key for key, _ in images] == ["client_load", "rack_traffic"]
    for _, data in images:
        assert base64.b64decode(data).startswith(b"\x89PNG")
    charts = re.findall(r'<div id="plot-([a-z_]+)" class="svg-plot" role="img" aria-label="[^"]+"><svg ', html)
    assert charts == ["movements", "restore_timeline"]
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
    assert build_report(read_simulation(simulation_dir)) == report_path.read_text(encoding="utf-8")
