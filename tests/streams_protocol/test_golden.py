"""Kafka's own outputs (tests/golden/streams_group/, 74 cases): each input through its assignor, the output
document compared whole (every member's actives and standbys, or the error's type and message). The sticky
ones are the outputs of the unmerged KAFKA-20719 revision, run here as ``kafka-20719-proposed``; each release
line's are in test_lines.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskassign.errors import StreamsAssignorError
from taskassign.streams_protocol import assignment_document, read_streams_group, run_assignor
from taskassign.streams_protocol.lines import KAFKA_20719_PROPOSED
from tests.helpers import GOLDEN_DIR

CASES = sorted(p.name.removesuffix(".input.json") for p in (GOLDEN_DIR / "streams_group").glob("*.input.json"))


def output_of(path: Path) -> dict[str, object]:
    group = read_streams_group(path)
    try:
        result = run_assignor(group, kafka_line=KAFKA_20719_PROPOSED)
    except StreamsAssignorError as exc:
        return assignment_document(group.assignor, exc)
    return assignment_document(group.assignor, result)


def test_every_golden_is_here() -> None:
    assert len(CASES) == 74
    assert {c.split("_")[0] for c in CASES} == {"sticky", "balanced"}


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    folder = GOLDEN_DIR / "streams_group"
    expected = json.loads((folder / f"{case}.output.json").read_text(encoding="utf-8"))
    got = output_of(folder / f"{case}.input.json")
    assert got["assignor"] == expected["assignor"]
    assert got["error"] == expected["error"]
    if expected["members"] is None:
        assert got["members"] is None
        return
    assert list(got["members"]) == sorted(expected["members"])
    for member, assignment in expected["members"].items():
        assert got["members"][member] == assignment, member
