"""Issue 32 point 6: every input is bounded in members (stream threads of all clients, a group's members) as in
tasks (model.MAX_MEMBERS, docs/security.md): past it, a named error (exit 2), never a MemoryError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.errors import ScenarioError
from taskassign.formats import group as group_format
from taskassign.formats.group import parse_group
from taskassign.formats.scenario import parse_scenario
from taskassign.ids import ProcessId
from taskassign.model import MAX_MEMBERS
from taskassign.streams_protocol import format as streams_format
from taskassign.streams_protocol.format import parse_streams_group
from tests.group_helpers import group, member, v
from tests.helpers import EXAMPLES_DIR

SCENARIO = EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json"
STREAMS_GROUP = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"


def _scenario_with_threads(threads: list[int]) -> dict[str, Any]:
    return {"format": "taskassign/scenario/v1", "configs": {}, "tasks": [],
            "clients": [{"process_id": str(ProcessId.of_ints(0, k + 1)), "threads": t}
                        for k, t in enumerate(threads)]}


def test_a_scenario_past_the_members_bound_is_refused_naming_the_client() -> None:
    half = MAX_MEMBERS // 2
    parse_scenario(_scenario_with_threads([half, half]))  # at the bound: fine
    with pytest.raises(ScenarioError, match=rf"\$\.clients\[2\].*{MAX_MEMBERS + 1} threads.*more than the "
                                            rf"{MAX_MEMBERS} members"):
        parse_scenario(_scenario_with_threads([half, half, 1]))


def test_a_group_file_past_the_members_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_format, "MAX_MEMBERS", 1)
    doc = group([member(f"m{k}", v(11, ProcessId.of_ints(0, k + 1))) for k in range(2)])
    with pytest.raises(ScenarioError, match=r"\$\.members: 2 members, more than the 1 taskassign takes"):
        parse_group(doc)


def test_a_streams_group_past_the_members_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams_format, "MAX_MEMBERS", 1)
    doc = json.loads(STREAMS_GROUP.read_text())
    assert len(doc["members"]) > 1
    with pytest.raises(ScenarioError, match=r"\$\.members: \d+ members, more than the 1 taskassign takes"):
        parse_streams_group(doc)


@pytest.mark.parametrize("flags", [["--add-clients", "10000:threads=100000"],
                                   ["--add-clients", "10000:threads=6", "--add-clients", "10000:threads=6"]])
def test_what_if_flags_are_bounded_together(flags: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["assign", str(SCENARIO), *flags, "-o", str(tmp_path / "a.json")])
    assert result.exit_code == 2, result.output
    assert "stream threads (members) in all, more than the 100000" in " ".join(result.output.split())
    assert "MemoryError" not in result.output and not (tmp_path / "a.json").exists()
