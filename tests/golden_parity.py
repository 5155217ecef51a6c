"""Comparing taskassign's output with a golden case, key by key as its ``golden.compare`` says.

tests/golden/README.md defines the keys. ``standby_invariants`` is checked on our own output: every
task with a changelog has exactly min(num.standby.replicas, clients - 1) standbys, none on the client
running it as active; tasks without a changelog have none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskassign.formats.scenario import Scenario, read_scenario, with_config_overrides
from taskassign.leader.assign import assign_scenario, result_to_document
from tests.helpers import GOLDEN_DIR


@dataclass(frozen=True)
class GoldenCase:
    name: str
    scenario_path: Path
    expected: dict[str, Any]

    @property
    def compare(self) -> list[str]:
        return list(self.expected["golden"]["compare"])

    def scenario(self) -> Scenario:
        return read_scenario(self.scenario_path)


def golden_cases(folder: str) -> list[GoldenCase]:
    cases = []
    for path in sorted((GOLDEN_DIR / folder).glob("*.scenario.json")):
        name = path.name.removesuffix(".scenario.json")
        expected = json.loads((path.parent / f"{name}.assignment.json").read_text())
        cases.append(GoldenCase(name, path, expected))
    return cases


def internal_rack_info_complete(scenario: Scenario) -> bool:
    """Kafka's ``RackAwareTaskAssignor#canEnableRackAwareAssignor``: every client has a rack, every source partition
    (and, with standbys, every changelog partition) has replica racks."""
    state = scenario.state
    if any(c.rack_id is None for c in state.clients.values()):
        return False
    with_standbys = state.configs.num_standby_replicas > 0
    for info in state.tasks.values():
        for p in info.topic_partitions:
            if (p.is_source or (with_standbys and p.is_changelog)) and not p.rack_ids:
                return False
    return True


def mismatches(case: GoldenCase, document: dict[str, Any], scenario: Scenario) -> Iterator[str]:
    """Every difference between our assignment document and the golden, for the keys it compares."""
    expected = case.expected
    for key in case.compare:
        if key == "probing_rebalance_needed":
            if document[key] != expected[key]:
                yield f"{key}: expected {expected[key]}, got {document[key]}"
        elif key in ("active", "standby"):
            for pid, client in expected["clients"].items():
                got = document["clients"][pid][key]
                if got != client[key]:
                    yield f"{key} of {pid}: expected {client[key]}, got {got}"
        elif key == "standby_invariants":
            yield from standby_invariant_violations(document, scenario)
        else:
            raise AssertionError(f"unknown golden compare key {key!r}")


def standby_invariant_violations(document: dict[str, Any], scenario: Scenario) -> Iterator[str]:
    state = scenario.state
    clients = document["clients"]
    wanted = max(0, min(state.configs.num_standby_replicas, len(clients) - 1))
    for task_id, info in state.tasks.items():
        text = str(task_id)
        actives = [pid for pid, c in clients.items() if text in c["active"]]
        standbys = [pid for pid, c in clients.items() if text in c["standby"]]
        if not info.has_changelog:
            if standbys:
                yield f"task {text} has no changelog but standbys on {standbys}"
            continue
        if len(standbys) != wanted:
            yield f"task {text}: {len(standbys)} standbys, expected {wanted}"
        if set(actives) & set(standbys):
            yield f"task {text}: standby on its active client {sorted(set(actives) & set(standbys))}"


#: The rack optimiser's solver key; Kafka's own solver is what exact parity needs.
RACK_SOLVER_KEY = "taskassign.rack.solver"


def kafka_solver_overrides() -> dict[str, Any]:
    """Configs selecting Kafka's exact min-cost-flow solver: another optimal solver may choose an equally
    cheap but different layout, so exact parity on rack-aware cases needs Kafka's own."""
    return {RACK_SOLVER_KEY: "kafka"}


def run_case(case: GoldenCase, assignor: str, overrides: dict[str, Any] | None = None) -> list[str]:
    scenario = with_config_overrides(case.scenario(), overrides or {})
    document = result_to_document(assign_scenario(scenario, assignor))
    return list(mismatches(case, document, scenario))
