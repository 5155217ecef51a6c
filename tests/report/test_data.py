from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskassign.errors import ScenarioError, UserInputError
from taskassign.report import parse_simulation, read_simulation


def test_reads_the_directory_or_the_file(simulation_dir: Path) -> None:
    from_dir = read_simulation(simulation_dir)
    from_file = read_simulation(simulation_dir / "simulation.json")
    assert from_dir == from_file
    assert from_dir.assignor.endswith(":WarmupAssignor") and from_dir.rebalances[0].reasons == ("initial",)
    assert len(from_dir.clients) == 2 and from_dir.clients[1].threads == 2
    assert from_dir.final_metrics["tasks"] == 8
    assert {(r, c) for r, c, _ in from_dir.rack_traffic} <= {(a, b) for a in ("rack-a", "rack-b")
                                                               for b in ("rack-a", "rack-b", "?")}


def test_a_directory_without_a_simulation_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match=r"no simulation\.json"):
        read_simulation(tmp_path)


def test_other_documents_and_broken_fields_name_the_path(simulation_dir: Path) -> None:
    doc = json.loads((simulation_dir / "simulation.json").read_text())
    with pytest.raises(ScenarioError, match=r"\$\.format: expected 'taskassign/simulation/v1'"):
        parse_simulation({**doc, "format": "taskassign/assignment/v1"})
    doc["rebalances"][1]["metrics"]["tasks"] = "eight"
    with pytest.raises(ScenarioError, match=r"\$\.rebalances\[1\]\.metrics\.tasks: expected a number"):
        parse_simulation(doc)
