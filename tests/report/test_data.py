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


def test_an_older_file_without_thread_state_deals_each_clients_state_evenly(simulation_dir: Path) -> None:
    doc = json.loads((simulation_dir / "simulation.json").read_text())
    for client in doc["final"]["clients"]:
        client["state_load"] = 7
        del client["thread_state"]
    del doc["final"]["state_unit"]
    data = parse_simulation(doc)
    two_threads = next(c for c in data.clients if c.threads == 2)
    assert two_threads.thread_state == (4, 3) and data.state_unit == "bytes"


def test_thread_state_and_state_unit_are_read_and_checked(simulation_dir: Path) -> None:
    data = read_simulation(simulation_dir)
    assert data.state_unit == "stores"  # the test tasks give no state_bytes
    assert all(sum(c.thread_state) == c.state_load and len(c.thread_state) == c.threads for c in data.clients)
    doc = json.loads((simulation_dir / "simulation.json").read_text())
    doc["final"]["state_unit"] = "gallons"
    with pytest.raises(ScenarioError, match=r"\$\.final\.state_unit: expected 'bytes' or 'stores'"):
        parse_simulation(doc)


def test_totals_sum_every_rebalance_and_the_first_metrics_are_the_first_rebalances(simulation_dir: Path) -> None:
    data = read_simulation(simulation_dir)
    totals = data.totals
    assert totals is not None and totals.rebalances == len(data.rebalances)
    assert totals.active_moves == sum(int(r.metrics["active_moves"]) for r in data.rebalances) > 0
    assert data.first_metrics == data.rebalances[0].metrics != data.final_metrics


def test_the_report_reads_the_file_the_simulator_writes() -> None:
    from taskassign.report import data
    from taskassign.simulate import result

    assert (data.SIMULATION_FILE, data.SIMULATION_FORMAT) == (result.SIMULATION_FILE, result.SIMULATION_FORMAT)
