"""``taskassign report`` on a group file, a scenario or a streams group: the topology page; bad input exits 2
naming the field."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
STREAMS = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"


def test_a_group_file_gives_the_topology_page(tmp_path: Path) -> None:
    page = tmp_path / "topology.html"
    result = runner.invoke(app, ["report", str(GROUP), "--out", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert "taskassign topology: orders-app" in html and "high_availability&#x27;s assignment" in html
    assert 'data-node="store" data-name="counts"' in html


def test_the_assignor_option_picks_what_is_drawn(tmp_path: Path) -> None:
    page = tmp_path / "t.html"
    assert runner.invoke(app, ["report", str(STREAMS), "-a", "balanced", "--out", str(page)]).exit_code == 0
    assert "the broker&#x27;s balanced assignor" in page.read_text(encoding="utf-8")
    assert runner.invoke(app, ["report", str(GROUP), "-a", "legacy_sticky", "--out", str(page)]).exit_code == 0
    assert "legacy_sticky&#x27;s assignment" in page.read_text(encoding="utf-8")
    bad = runner.invoke(app, ["report", str(STREAMS), "-a", "nope", "--out", str(tmp_path / "x.html")])
    assert bad.exit_code == 2 and "nope" in bad.output and not (tmp_path / "x.html").exists()


def test_a_broken_group_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    doc = json.loads(GROUP.read_text(encoding="utf-8"))
    doc["topology"]["subtopologies"][0]["source_topics"] = []
    broken = tmp_path / "broken.group.json"
    broken.write_text(json.dumps(doc), encoding="utf-8")
    result = runner.invoke(app, ["report", str(broken), "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and "$.topology.subtopologies[0].source_topics" in result.output
    assert "Traceback" not in result.output


def test_a_plan_is_drawn_against_the_files_assignment(tmp_path: Path) -> None:
    """Kafka -> a plan: `taskassign plan` writes it, `report --plan` draws what it would move."""
    for source, assignor in ((GROUP, "state_aware"), (STREAMS, "streams_balanced")):
        plan = tmp_path / f"{source.stem}.plan.json"
        made = runner.invoke(app, ["plan", str(source), "-a", assignor, "-o", str(plan)])
        assert made.exit_code == 0, made.output
        page = tmp_path / f"{source.stem}.html"
        result = runner.invoke(app, ["report", str(source), "--plan", str(plan), "--out", str(page)])
        assert result.exit_code == 0, result.output
        plan_id = json.loads(plan.read_text(encoding="utf-8"))["plan_id"]
        assert f"the plan {plan_id} ({assignor})" in page.read_text(encoding="utf-8")
    other = EXAMPLES_DIR / "scenarios" / "rack-traffic.scenario.json"
    result = runner.invoke(app, ["report", str(other), "--plan", str(tmp_path / f"{GROUP.stem}.plan.json"),
                                 "--out", str(tmp_path / "x.html")])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "the plan is not for" in said and "tasks differ (2 new, 0 gone)" in said
