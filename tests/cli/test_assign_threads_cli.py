from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app

runner = CliRunner()
PID_1, PID_2 = "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"
SCENARIO = {
    "format": "taskassign/scenario/v1", "now_ms": 10,
    "tasks": [{"id": f"0_{p}", "partitions": [{"topic": "t", "partition": p, "source": True}]} for p in range(2)],
    "clients": [{"process_id": PID_1, "consumers": ["a"], "previous_active": ["0_0", "0_1"]},
                {"process_id": PID_2, "consumers": ["b"]}],
}


def test_assign_writes_consumers_and_reports_withheld_tasks(tmp_path: Path) -> None:
    path = tmp_path / "s.scenario.json"
    path.write_text(json.dumps(SCENARIO))
    result = runner.invoke(app, ["assign", str(path), "-a", "tests.group_helpers:RoundRobinAssignor"])
    assert result.exit_code == 0, result.output
    assert "withheld" in result.stdout
    as_json = runner.invoke(app, ["assign", str(path), "-a", "tests.group_helpers:RoundRobinAssignor", "--json"])
    clients = json.loads(as_json.stdout)["clients"]
    assert clients[PID_2]["active"] == ["0_1"]
    assert clients[PID_2]["consumers"]["b"] == {"active": [], "standby": [], "withheld": ["0_1"],
                                                "followup_rebalance_deadline_ms": 0}
    eager = {**SCENARIO, "configs": {"taskassign.rebalance.protocol": "eager"}}
    path.write_text(json.dumps(eager))
    as_json = runner.invoke(app, ["assign", str(path), "-a", "tests.group_helpers:RoundRobinAssignor", "--json"])
    assert json.loads(as_json.stdout)["clients"][PID_2]["consumers"]["b"]["active"] == ["0_1"]
