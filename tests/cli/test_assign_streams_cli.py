"""``taskassign assign`` under the streams protocol: streams-group files (Kafka's goldens through the
command, byte for byte in content), scenarios and GROUP.json with -a streams_sticky|streams_balanced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.configs import DEFAULT_KAFKA_LINE
from taskassign.streams_protocol.format import PROPOSALS
from tests.helpers import EXAMPLES_DIR, GOLDEN_DIR

runner = CliRunner()
FOLDER = GOLDEN_DIR / "streams_group"
CASES = sorted(p.name.removesuffix(".input.json") for p in FOLDER.glob("*.input.json"))
SCENARIO = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"


def expected_document(case: str) -> dict[str, object]:
    """The golden's output as the command writes it on the default Kafka line (4.4: its own output where it
    differs from the pinned one), the balanced proposal labelled as one."""
    line_output = GOLDEN_DIR / "streams_group_lines" / "4.4" / f"{case}.output.json"
    path = line_output if line_output.exists() else FOLDER / f"{case}.output.json"
    expected = json.loads(path.read_text(encoding="utf-8"))
    if expected["assignor"] == "balanced":
        expected = {"assignor": "balanced", "proposal": PROPOSALS["balanced"], **expected}
    return {**expected, "kafka_version": DEFAULT_KAFKA_LINE}


@pytest.mark.parametrize("line", ["4.2", "4.3", "trunk"])
def test_the_output_names_the_kafka_line_it_ran(line: str) -> None:
    path = FOLDER / "sticky_chain_join.input.json"
    result = runner.invoke(app, ["assign", str(path), "--kafka-version", line, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kafka_version"] == line
    text = runner.invoke(app, ["assign", str(path), "--kafka-version", line])
    assert f"kafka {line} " in " ".join(text.output.split()), text.output


@pytest.mark.parametrize("case", CASES)
def test_goldens_through_the_command(case: str) -> None:
    result = runner.invoke(app, ["assign", str(FOLDER / f"{case}.input.json"), "--json"])
    expected = expected_document(case)
    assert result.exit_code == (1 if expected["error"] else 0), result.output
    assert json.loads(result.stdout) == expected


def test_the_named_assignor_overrides_the_files_own() -> None:
    path = FOLDER / "sticky_cold_more_members_than_tasks.input.json"
    result = runner.invoke(app, ["assign", str(path), "-a", "streams_balanced", "--json"])
    expected = expected_document("balanced_cold_more_members_than_tasks")
    assert result.exit_code == 0 and json.loads(result.stdout) == expected


def test_a_classic_assignor_on_a_streams_group_is_an_input_error() -> None:
    result = runner.invoke(app, ["assign", str(FOLDER / "sticky_chain_join.input.json"), "-a", "high_availability"])
    assert result.exit_code == 2
    assert "streams_sticky" in result.output and "Traceback" not in result.output


def test_plain_text_lists_members_and_coverage() -> None:
    result = runner.invoke(app, ["assign", str(FOLDER / "sticky_cold_standby2_2proc.input.json")])
    assert result.exit_code == 0, result.output
    assert "streams_sticky" in result.output and "m0" in result.output
    assert "at most 1 standby per task fits" in result.output  # 2 standbys wanted, only 2 processes
    assert "complete: every task has an active" in result.output


def test_an_assignor_error_prints_the_error_document_and_exits_1(tmp_path: Path) -> None:
    doc = json.loads((FOLDER / "sticky_configs_without_standby_key.input.json").read_text(encoding="utf-8"))
    doc["configs"] = {"num.standby.replicas": "one"}  # 4.4 reads a missing key as 0, but still parses a value
    path = tmp_path / "bad.input.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = runner.invoke(app, ["assign", str(path)])
    assert result.exit_code == 1
    assert 'NumberFormatException: For input string: "one"' in result.output


@pytest.mark.parametrize("assignor", ["streams_sticky", "streams_balanced"])
def test_a_scenario_under_the_streams_protocol(assignor: str, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["assign", str(SCENARIO), "-a", assignor, "--json", "-o", str(out), "--metrics"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == json.loads(out.read_text(encoding="utf-8"))
    proposal = {"proposal"} if assignor == "streams_balanced" else set()
    assert set(doc) == {"assignor", "kafka_version", "error", "members", "metrics"} | proposal
    assert doc["assignor"] == assignor.removeprefix("streams_") and doc["error"] is None
    assert len(doc["members"]) == 6  # three clients of two threads
    assert doc["metrics"]["unassigned_tasks"] == 0 and doc["metrics"]["threads"] == 6
    actives = sorted(f"{s}_{p}" for m in doc["members"].values() for s, ps in m["activeTasks"].items() for p in ps)
    assert actives == ["0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "1_3"]


def test_a_group_file_under_the_streams_protocol() -> None:
    result = runner.invoke(app, ["assign", str(GROUP), "-a", "streams_balanced"])
    assert result.exit_code == 0, result.output
    # each member: its client's name and its stream thread
    assert any(line.split()[:2] == ["orders-app-1b6f", "StreamThread-1"] for line in result.output.splitlines())
    assert "complete" in result.output


def test_metrics_and_explain_need_a_classic_input() -> None:
    golden = str(FOLDER / "sticky_chain_join.input.json")
    metrics = runner.invoke(app, ["assign", golden, "--metrics"])
    assert metrics.exit_code == 2 and "--metrics" in metrics.output
    explain = runner.invoke(app, ["assign", str(SCENARIO), "-a", "streams_sticky", "--explain"])
    assert explain.exit_code == 2 and "--explain" in explain.output


def test_other_commands_name_the_streams_group_they_cannot_read() -> None:
    result = runner.invoke(app, ["optimize", str(FOLDER / "sticky_chain_join.input.json"), "--active"])
    assert result.exit_code == 2
    assert "a streams-group file" in " ".join(result.output.split())  # rich wraps at the path's length


def test_the_assignors_listing_names_the_streams_assignors() -> None:
    result = runner.invoke(app, ["assignors"])
    assert result.exit_code == 0
    assert "streams_sticky" in result.output and "streams_balanced" in result.output
