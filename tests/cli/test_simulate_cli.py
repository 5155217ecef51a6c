from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR
from tests.simulate.assignors import DOUBLE_ACTIVE

runner = CliRunner()
SCENARIO = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
CUSTOM = f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor"


def write_events(tmp_path: Path, *events: dict[str, object], **settings: object) -> Path:
    path = tmp_path / "run.events.json"
    path.write_text(json.dumps({"format": "taskassign/events/v1", **settings, "events": list(events)}))
    return path


JOIN = {"type": "join", "count": 1, "threads": 2, "rack": "rack-a", "tags": {"zone": "eu-west-1a"}}


def test_simulate_prints_one_row_per_rebalance_and_a_summary(tmp_path: Path) -> None:
    events = write_events(tmp_path, {"type": "advance", "ms": 60_000}, JOIN)
    result = runner.invoke(app, ["simulate", str(SCENARIO), "--events", str(events), "-a", CUSTOM])
    assert result.exit_code == 0, result.output
    assert "initial" in result.output and "join" in result.output
    # the example assignor moves tasks at both rebalances: each handover costs a revocation rebalance
    assert "4 rebalances (initial 1, join 1, revocation 2); 0 probing; converged at +0:01:00" in result.output


def test_out_writes_the_result_files_and_json_matches_them(tmp_path: Path) -> None:
    events = write_events(tmp_path, {"type": "perturb", "count": 2}, seed=5)
    out = tmp_path / "out"
    result = runner.invoke(app, ["simulate", str(SCENARIO), "-e", str(events), "-a", CUSTOM, "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["final.assignment.json", "final.scenario.json",
                                                     "rebalances.csv", "simulation.json"]
    assert json.loads(result.stdout) == json.loads((out / "simulation.json").read_text())
    rows = (out / "rebalances.csv").read_text().splitlines()
    assert len(rows) == 1 + len(json.loads(result.stdout)["rebalances"])
    final = runner.invoke(app, ["validate", str(out / "final.scenario.json"), str(out / "final.assignment.json")])
    assert final.exit_code in (0, 1), final.output  # the final files are readable by the other commands


def test_the_same_seed_prints_the_same_document_and_another_seed_may_differ(tmp_path: Path) -> None:
    events = write_events(tmp_path, {"type": "perturb", "count": 3}, {"type": "advance", "ms": 120_000},
                          {"type": "perturb", "count": 3})
    runs = [runner.invoke(app, ["simulate", str(SCENARIO), "-e", str(events), "-a", CUSTOM, "--json",
                                "--seed", str(seed)]).stdout for seed in (1, 1, 2)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_bad_events_exit_2_naming_the_path(tmp_path: Path) -> None:
    events = write_events(tmp_path, {"type": "leave", "client": "00000000-0000-0000-0000-00000000dead"})
    result = runner.invoke(app, ["simulate", str(SCENARIO), "-e", str(events), "-a", CUSTOM])
    assert result.exit_code == 2
    assert "$.events[0]" in result.output and "Traceback" not in result.output
    typo = write_events(tmp_path, {"type": "advance", "ms": 1, "when": 3})
    result = runner.invoke(app, ["simulate", str(SCENARIO), "-e", str(typo), "-a", CUSTOM])
    assert result.exit_code == 2 and "unknown key 'when'" in result.output


def test_an_invalid_assignment_exits_1(tmp_path: Path) -> None:
    events = write_events(tmp_path)
    result = runner.invoke(app, ["simulate", str(SCENARIO), "-e", str(events), "-a", DOUBLE_ACTIVE])
    assert result.exit_code == 1
    assert "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES" in result.output and "stopped" in result.output


def test_report_writes_the_page(tmp_path: Path) -> None:
    events = write_events(tmp_path, JOIN)
    out = tmp_path / "out"
    simulated = runner.invoke(app, ["simulate", str(SCENARIO), "-e", str(events), "-a", CUSTOM, "-o", str(out)])
    assert simulated.exit_code == 0, simulated.output
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(out), "--out", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert 'data:image/png' not in html and html.count('class="svg-plot"') == 4  # every chart drawn as SVG


def test_report_of_a_scenario_is_its_topology_page(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(SCENARIO), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text()
    assert 'id="topology-graph"' in html and 'id="topology-placement"' in html and "<script" not in html


def test_report_of_something_else_exits_2(tmp_path: Path) -> None:
    events = write_events(tmp_path, JOIN)
    result = runner.invoke(app, ["report", str(events), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "taskassign/simulation/v1" in result.output
    assert "taskassign/group/v1" in result.output and not (tmp_path / "r.html").exists()


def test_no_final_scenario_when_no_client_runs_at_the_end(tmp_path: Path) -> None:
    """A scenario with tasks and no clients is not a scenario (assign refuses it), so simulate does not
    write one: what taskassign writes, taskassign reads back."""
    events = write_events(tmp_path, {"type": "crash", "clients": "all"}, {"type": "advance", "ms": 100_000})
    out = tmp_path / "sim"
    result = runner.invoke(app, ["simulate", str(SCENARIO), "--events", str(events), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not (out / "final.scenario.json").exists()
    notes = json.loads((out / "simulation.json").read_text())["summary"]["notes"]
    assert any("final.scenario.json is not written" in n for n in notes)
    assert runner.invoke(app, ["validate", str(SCENARIO), str(out / "final.assignment.json")]).exit_code in (0, 1)


def test_an_append_rate_past_kafkas_range_exits_2_with_the_range(tmp_path: Path) -> None:
    """Issue 18, point 8: 10^18 records/s made simulate write offsets that assign and report refuse."""
    events = write_events(tmp_path, {"type": "append_rate", "records_per_s": 10**18},
                          {"type": "advance", "ms": 600_000}, {"type": "rebalance"})
    result = runner.invoke(app, ["simulate", str(SCENARIO), "--events", str(events), "--out", str(tmp_path / "sim")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "$.events[0].records_per_s: must be between 0 and" in message and "Long.MAX_VALUE" in message
    assert not (tmp_path / "sim").exists()
    events = write_events(tmp_path, {"type": "append_rate", "records_per_s": 10**12},
                          {"type": "advance", "ms": 600_000}, {"type": "rebalance"})
    result = runner.invoke(app, ["simulate", str(SCENARIO), "--events", str(events), "--out", str(tmp_path / "sim")])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["assign", str(tmp_path / "sim" / "final.scenario.json")]).exit_code == 0
    assert runner.invoke(app, ["report", str(tmp_path / "sim"), "--out", str(tmp_path / "r.html")]).exit_code == 0


def test_now_ms_at_the_edge_of_the_range(tmp_path: Path) -> None:
    doc = json.loads(SCENARIO.read_text())
    doc["now_ms"] = 2**63 - 1000
    path = tmp_path / "late.scenario.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["assign", str(path), "-o", str(tmp_path / "a.json")])
    assert result.exit_code == 2 and "$.now_ms: must be between 0 and" in " ".join(result.output.split())
    doc["now_ms"] = 2**63 - 1 - 600_000
    path.write_text(json.dumps(doc))
    assert runner.invoke(app, ["assign", str(path), "-o", str(tmp_path / "a.json")]).exit_code == 0
    assert runner.invoke(app, ["validate", str(path), str(tmp_path / "a.json")]).exit_code == 0
