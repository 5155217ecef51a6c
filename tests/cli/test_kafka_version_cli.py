"""``--kafka-version`` through the CLI: ``taskassign assign FILE -a sticky --kafka-version LINE --json`` equals Kafka's
output of that line (KAFKA-20198 changed the public StickyTaskAssignor in 4.4)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.golden_parity import GoldenCase, golden_cases, mismatches

runner = CliRunner()
PAIRS_44 = golden_cases("versions/sticky_kip924/4.4")
PINNED = {c.name: c for c in golden_cases("sticky_kip924")}


def _assign(case: GoldenCase, line: str | None) -> dict[str, object]:
    args = ["assign", str(case.scenario_path), "-a", "sticky", "--json", "--set", "taskassign.rack.solver=kafka"]
    if line is not None:
        args += ["--kafka-version", line]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    document: dict[str, object] = json.loads(result.stdout)
    return document


@pytest.mark.parametrize("case", PAIRS_44, ids=lambda c: c.name)
def test_4_4_and_the_default_give_kafka_4_4s_output(case: GoldenCase) -> None:
    for line in ("4.4", None):
        document = _assign(case, line)
        assert document["kafka_version"] == "4.4"
        assert not list(mismatches(case, document, case.scenario()))


@pytest.mark.parametrize("line", ["3.9", "4.3"])
def test_earlier_lines_give_the_pinned_output(line: str) -> None:
    for case in PAIRS_44[:3]:
        pinned = PINNED[case.name]
        document = _assign(pinned, line)
        assert document["kafka_version"] == line
        assert not list(mismatches(pinned, document, pinned.scenario()))
        assert list(mismatches(case, document, case.scenario()))  # and not 4.4's


def test_help_says_the_default_and_a_bad_line_exits_2() -> None:
    help_text = runner.invoke(app, ["assign", "--help"], terminal_width=200).output
    assert "--kafka-version" in help_text and "4.4" in help_text
    bad = runner.invoke(app, ["assign", str(PAIRS_44[0].scenario_path), "--kafka-version", "4.5"])
    assert bad.exit_code == 2 and "unknown Kafka release line '4.5'" in bad.output


def test_streams_protocol_assignors_need_4_1_or_later(tmp_path: object) -> None:
    from tests.helpers import EXAMPLES_DIR

    group = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"
    refused = runner.invoke(app, ["assign", str(group), "--kafka-version", "4.0"])
    assert refused.exit_code == 2 and "KIP-1071" in refused.output
    assert runner.invoke(app, ["assign", str(group), "--kafka-version", "4.1"]).exit_code == 0
