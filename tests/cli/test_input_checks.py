"""Every file a command reads is checked before it is used (issue 32, point 2): ``diff`` refuses an assignment
``validate`` refuses (exit 2, the error named), and a metric or any number that is not a finite number is a
named error in every file, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.errors import ScenarioError
from taskassign.formats.json_io import load_json_text
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
SCENARIO = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
EVENTS = EXAMPLES_DIR / "events" / "scale-out.events.json"


def _run(argv: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, argv, env={"COLUMNS": "2000"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture(scope="module")
def assignment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("a") / "a.json"
    assert _run(["assign", str(SCENARIO), "--metrics", "-o", str(out)])[0] == 0
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _clients(doc: dict[str, Any]) -> list[str]:
    return sorted(doc["clients"])


def _write(tmp: Path, name: str, doc: dict[str, Any] | str) -> Path:
    path = tmp / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    return path


def _broken(doc: dict[str, Any], how: str) -> dict[str, Any]:
    broken = json.loads(json.dumps(doc))
    first, second = _clients(broken)[:2]
    task = broken["clients"][first]["active"][0]
    if how == "active and standby":
        broken["clients"][first]["standby"].append(task)
    elif how == "active twice":
        broken["clients"][second]["active"].append(task)
    else:
        broken["clients"][second]["active"].append("9_9")
    return broken


@pytest.mark.parametrize(("how", "error"), [
    ("active and standby", "ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS"),
    ("active twice", "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"),
])
@pytest.mark.parametrize("side", ["before", "after"])
def test_diff_refuses_what_validate_refuses(how: str, error: str, side: str, assignment: dict[str, Any],
                                            tmp_path: Path) -> None:
    good = _write(tmp_path, "good.json", assignment)
    bad = _write(tmp_path, "bad.json", _broken(assignment, how))
    files = [str(good), str(bad)] if side == "after" else [str(bad), str(good)]
    code, output = _run(["diff", *files])
    assert code == 2, output
    assert f"{bad}: not a valid assignment ({error}" in output, output
    code, output = _run(["validate", str(SCENARIO), str(bad)])
    assert code == 1 and error in output, output


def test_diff_with_the_application_refuses_an_unknown_task(assignment: dict[str, Any], tmp_path: Path) -> None:
    good = _write(tmp_path, "good.json", assignment)
    bad = _write(tmp_path, "bad.json", _broken(assignment, "unknown task"))
    code, output = _run(["diff", str(good), str(bad), "--scenario", str(SCENARIO)])
    assert code == 2 and "UNKNOWN_TASK_ID: task 9_9" in output, output
    assert _run(["diff", str(good), str(good), "--scenario", str(SCENARIO)])[0] == 0


@pytest.mark.parametrize(("value", "said"), [
    ('"abc"', "a metric must be a number, got the string 'abc'"),
    ("true", "a metric must be a number, got a boolean"),
    ("null", "a metric must be a number, got null"),
    ("NaN", "NaN is not a number JSON allows"),
    ("Infinity", "Infinity is not a number JSON allows"),
    ("-Infinity", "-Infinity is not a number JSON allows"),
    ("1e999", "1e999 is not a number JSON allows"),
    ("1" + "0" * 5000, "too many digits"),
])
def test_a_metric_that_is_not_a_number(value: str, said: str, assignment: dict[str, Any], tmp_path: Path) -> None:
    good = _write(tmp_path, "good.json", assignment)
    text = re.sub(r'("tasks": )\d+', lambda m: m[1] + value, json.dumps(assignment, indent=2), count=1)
    bad = _write(tmp_path, "bad.json", text)
    code, output = _run(["diff", str(good), str(bad)])
    assert code == 2 and str(bad) in output and said in output, output
    assert "Traceback" not in output


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999", '"soon"', "1.5"])
def test_an_events_file_with_a_number_that_is_not_one(value: str, tmp_path: Path) -> None:
    events = _write(tmp_path, "e.json", EVENTS.read_text().replace('"ms": 60000', f'"ms": {value}'))
    code, output = _run(["simulate", str(SCENARIO), "--events", str(events)])
    assert code == 2 and f"{events}: $.events[0].ms" in output, output


def test_a_scenario_with_nan(tmp_path: Path) -> None:
    text = SCENARIO.read_text()
    assert '"num.standby.replicas": 1' in text
    scenario = _write(tmp_path, "s.json", text.replace('"num.standby.replicas": 1', '"num.standby.replicas": NaN'))
    code, output = _run(["assign", str(scenario)])
    assert code == 2 and "NaN is not a number JSON allows" in output, output


def test_the_reader_names_the_path_of_a_non_finite_number() -> None:
    with pytest.raises(ScenarioError, match=r"\$\.a\[1\]\.b: NaN is not a number JSON allows"):
        load_json_text('{"a": [1, {"b": NaN}]}', "x")
    with pytest.raises(ScenarioError, match=r"\$\.x: -Infinity"):
        load_json_text('{"x": -Infinity}', "x")
    assert load_json_text('{"x": 1.5, "y": "NaN"}', "x") == {"x": 1.5, "y": "NaN"}


def test_an_audit_log_line_with_nan_is_named(tmp_path: Path) -> None:
    log = _write(tmp_path, "audit.jsonl", '{"format": "taskassign/bridge-audit/v1", "deadline_ms": NaN}\n')
    code, output = _run(["bridge", "replay", str(log), "--out-dir", str(tmp_path / "out")])
    assert code == 2 and f"{log}:1: $.deadline_ms: NaN" in output, output
