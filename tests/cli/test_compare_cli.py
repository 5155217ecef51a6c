"""``taskassign compare``: tables, JSON, the report directory, clean refusals."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
SCENARIO = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
EVENTS = EXAMPLES_DIR / "events" / "rolling-restart.events.json"
STREAMS_GROUP = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"
CUSTOM = f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor"


def test_the_table_has_metrics_as_rows_assignors_as_columns_and_marks() -> None:
    # on 4.3 (KAFKA-20198's quota not yet in): 4.4's sticky reads as little across racks as state_aware here
    result = runner.invoke(app, ["compare", str(SCENARIO), "-a", "high_availability,state_aware,sticky",
                                 "--kafka-version", "4.3"])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "high_availability" in line and "sticky" in line
                  and "assignors" not in line)
    assert header.index("high_availability") < header.index("state_aware") < header.rindex("sticky")
    row = next(line for line in result.output.splitlines() if line.strip().startswith("cross_rack_cost"))
    assert row.count("*") == 1  # state_aware reads least across racks on this scenario
    assert "run totals" not in result.output


def test_json_matches_the_documented_shape_and_totals_only_when_simulated() -> None:
    once = runner.invoke(app, ["compare", str(SCENARIO), "-a", "high_availability,state_aware", "--json"])
    assert once.exit_code == 0, once.output
    doc = json.loads(once.output)
    assert set(doc["assignors"]) == {"high_availability", "state_aware"}
    assert all(entry["totals"] is None and entry["metrics"]["tasks"] == 8 for entry in doc["assignors"].values())
    simulated = runner.invoke(app, ["compare", str(SCENARIO), "-a", "high_availability,state_aware", "--events",
                                    str(EVENTS), "--json"])
    assert simulated.exit_code == 0, simulated.output
    totals = json.loads(simulated.output)["assignors"]["state_aware"]["totals"]
    assert totals["rebalances"] > 1 and totals["converged"] is True and totals["settled_at_ms"] > 0


def test_simulated_text_has_the_run_totals() -> None:
    result = runner.invoke(app, ["compare", str(SCENARIO), "-a", "high_availability,state_aware", "-e", str(EVENTS)])
    assert result.exit_code == 0, result.output
    for label in ("rebalances", "time to settle", "active tasks moved", "records restored"):
        assert label in result.output


def test_out_writes_one_report_and_the_json(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    result = runner.invoke(app, ["compare", str(GROUP), "-a", f"high_availability,{CUSTOM}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "report.html"]
    assert CUSTOM in json.loads((out / "compare.json").read_text())["assignors"]
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_file_in_the_way_of_out_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "cmp"
    blocker.write_text("mine")
    result = runner.invoke(app, ["compare", str(SCENARIO), "-a", "high_availability", "--out", str(blocker)])
    assert result.exit_code == 2 and "not a directory" in result.output
    assert blocker.read_text() == "mine"


def test_bad_input_is_refused_cleanly() -> None:
    unknown = runner.invoke(app, ["compare", str(SCENARIO), "-a", "high_availability,nope"])
    assert unknown.exit_code == 2 and "nope" in unknown.output and "Traceback" not in unknown.output
    twice = runner.invoke(app, ["compare", str(SCENARIO), "-a", "sticky,sticky"])
    assert twice.exit_code == 2 and "the same assignor" in twice.output
    seed = runner.invoke(app, ["compare", str(SCENARIO), "-a", "sticky", "--seed", "3"])
    assert seed.exit_code == 2 and "--seed goes with --events" in seed.output
    streams_file = runner.invoke(app, ["compare", str(STREAMS_GROUP), "-a", "streams_sticky,streams_balanced"])
    assert streams_file.exit_code == 2 and "streams-group file" in streams_file.output


def test_an_invalid_assignment_exits_1_and_says_whose() -> None:
    from tests.simulate.assignors import DOUBLE_ACTIVE

    result = runner.invoke(app, ["compare", str(SCENARIO), "-a", f"high_availability,{DOUBLE_ACTIVE}"])
    assert result.exit_code == 1, result.output
    assert f"{DOUBLE_ACTIVE}: the assignment is invalid" in result.output.replace("\n", "")
