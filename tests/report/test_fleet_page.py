"""``taskassign report FLEET_OUTPUT``: the fleet page from a pipeline output, read with pyarrow."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.report import build_fleet_report
from taskassign.report.fleet_html import PAGE_ROWS
from tests.fleet_outputs import write_fleet_output


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fleet_output(tmp_path_factory.mktemp("fleet") / "out", 40)


def _json_rows(html: str, table_id: str) -> list[list[object]]:
    found = re.search(rf'<script type="application/json" id="{table_id}-rows">(.*?)</script>', html, re.DOTALL)
    assert found is not None, table_id
    rows: list[list[object]] = json.loads(found.group(1).replace("<\\/", "</"))
    return rows


def test_the_command_writes_the_fleet_page_for_a_pipeline_output(fleet_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "fleet.html"
    result = CliRunner().invoke(app, ["report", str(fleet_dir), "-o", str(target)])
    assert result.exit_code == 0, result.output
    html = target.read_text(encoding="utf-8")
    assert "taskassign fleet: 40 applications" in html
    assert '<table id="outcomes">' in html and "REJECTED" in html
    # every application of the output is in the page's data, with its status
    apps = _json_rows(html, "applications")
    assert sorted(row[0] for row in apps) == [f"app-{i:05d}" for i in range(40)]
    assert sum(1 for row in apps if row[1] == "REJECTED") == 2
    # each distribution has its chart; no script or stylesheet is fetched
    assert html.count('class="svg-plot" id="hist-0-') == 9
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_attention_lists_every_reason_and_the_command_to_look_closer(fleet_dir: Path) -> None:
    html = build_fleet_report(fleet_dir)
    rows = _json_rows(html, "attention")
    by_app = {row[0]: row for row in rows}
    assert "END_OFFSETS_UNKNOWN: a changelog partition has no end offset" in str(by_app["app-00000"][2])
    worst = [row for row in rows if "(worst #1)" in str(row[2])]
    assert worst and rows[0] in worst  # the worst first
    command = str(by_app["app-00000"][3])
    assert command.startswith("taskassign pipeline export-scenario --input /data/snapshot --app app-00000 ")
    assert "taskassign assign app-00000.scenario.json -a high_availability --metrics --explain" in command


def test_rejected_rows_are_counted_and_listed_with_their_reason(fleet_dir: Path) -> None:
    html = build_fleet_report(fleet_dir)
    assert "Rejected input rows (2)" in html
    rows = _json_rows(html, "rejected")
    assert [(r[1], r[2]) for r in rows] == [("app-00038", "INVALID_CONFIG"), ("app-00039", "INVALID_CONFIG")]
    assert re.search(r"<td class=\"text\">applications</td><td class=\"text\">INVALID_CONFIG</td><td>2</td>", html)


def test_a_comparison_run_shows_each_assignor_and_the_comparison(tmp_path: Path) -> None:
    out = write_fleet_output(tmp_path / "out", 12, assignors=("high_availability", "state_aware"))
    html = build_fleet_report(out)
    assert '<table id="comparison">' in html and "Assignor comparison" in html
    assert html.count('class="svg-plot" id="hist-1-') == 9  # the second assignor's distributions
    assert {row[1] for row in _json_rows(html, "applications")} == {"high_availability", "state_aware"}
    # rejected rows are the baseline pass's: not counted twice
    assert "Rejected input rows (2)" in html


@pytest.mark.slow
def test_ten_thousand_applications_stay_small_and_paged(tmp_path: Path) -> None:
    out = write_fleet_output(tmp_path / "out", 10_000, rejected=300)
    html = build_fleet_report(out)
    assert len(html.encode("utf-8")) < 10 * 1024 * 1024
    assert len(_json_rows(html, "applications")) == 10_000
    # the HTML carries one page of each long table; the rest is JSON the script pages through
    table = html[html.index('<table class="paged" id="applications"'):]
    assert table[:table.index("</table>")].count("<tr>") == PAGE_ROWS + 1
    assert "of 10,000" in html


def test_an_unfinished_output_is_refused_with_exit_2(tmp_path: Path) -> None:
    out = write_fleet_output(tmp_path / "out", 3)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    result = CliRunner().invoke(app, ["report", str(out), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2
    assert "not a complete taskassign/pipeline-manifest/v1 manifest" in result.output
    assert not (tmp_path / "x.html").exists()


def test_a_huge_rejected_row_is_cut_on_the_page(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from taskassign.report.fleet_data import MAX_SOURCE_CHARS

    out = write_fleet_output(tmp_path / "out", 4)
    errors = pq.read_table(out / "errors" / "part-00000.parquet")
    rows = errors.to_pylist()
    next(r for r in rows if r["effect"] == "rejected")["source_row"] = "x" * 100_000
    pq.write_table(errors.from_pylist(rows, schema=errors.schema), out / "errors" / "part-00000.parquet")
    cells = [row[4] for row in _json_rows(build_fleet_report(out), "rejected")]
    assert any(str(c).startswith("x" * MAX_SOURCE_CHARS + "… (99,400 more characters)") for c in cells)
