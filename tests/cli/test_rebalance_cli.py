from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.wire import Assignment, AssignmentInfo
from tests.group_helpers import group, member, v
from tests.helpers import EXAMPLES_DIR, PID_1

runner = CliRunner()
EXAMPLE = EXAMPLES_DIR / "groups" / "orders-app.group.json"


def test_rebalance_prints_members_and_writes_bytes(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["rebalance", str(EXAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    # members by their client's name and stream thread (the member ids are in the file)
    assert any(line.split()[:2] == ["orders-app-1b6f", "StreamThread-1"] for line in result.stdout.splitlines())
    assert "next join" in result.stdout
    doc = json.loads(out.read_text())
    assert doc["format"] == "taskassign/group-assignment/v1" and doc["error"] == "NONE"
    first = doc["members"]["orders-app-1b6f-StreamThread-1-consumer"]
    assignment = Assignment.decode(bytes.fromhex(first["assignment_hex"]))
    info = AssignmentInfo.decode(assignment.user_data or b"")
    assert [str(t) for t in info.active_tasks] == first["assignment"]["user_data"]["active_tasks"]
    assert doc["assignment"]["format"] == "taskassign/assignment/v1"


def test_error_assignment_exits_1_and_bad_file_exits_2(tmp_path: Path) -> None:
    doc = group([member("a", v(11, PID_1, error_code=4))])
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["rebalance", str(path), "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["error"] == "SHUTDOWN_REQUESTED"
    path.write_text("{}")
    bad = runner.invoke(app, ["rebalance", str(path)])
    assert bad.exit_code == 2 and "format" in bad.output
