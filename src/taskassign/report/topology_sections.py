"""The topology section of the simulation and compare pages: the application's topology with the tasks where
the run left them (a simulation's last assignment) or where each compared assignor puts them, against the
input's own previous tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from html import escape
from pathlib import Path

from taskassign.errors import UserInputError
from taskassign.formats.assignment import read_assignment
from taskassign.formats.scenario import Scenario, read_scenario
from taskassign.model import GroupAssignment, KafkaStreamsAssignment
from taskassign.report.topology_inputs import scenario_view
from taskassign.report.topology_page import topology_section

__all__ = ("compare_sections", "simulation_section")


def simulation_section(result: str | Path) -> str:
    """The section of a ``taskassign simulate --out`` directory: the last assignment (``final.assignment.json``)
    over the application (``final.scenario.json``); "" when the run wrote neither (a simulation.json alone)."""
    folder = Path(result)
    folder = folder if folder.is_dir() else folder.parent
    scenario_file, assignment_file = folder / "final.scenario.json", folder / "final.assignment.json"
    if not scenario_file.is_file() or not assignment_file.is_file():
        return ""
    try:
        document = read_assignment(assignment_file)
        scenario = read_scenario(scenario_file)
    except UserInputError as exc:  # the run's own results still make a page
        return f'<h2>Topology and the last assignment</h2><p class="bad">left out: {escape(str(exc))}</p>'
    clients: dict[object, KafkaStreamsAssignment] = {}
    for entry in document.assignment.assignments:
        clients.setdefault(entry.process_id, entry)
    view = scenario_view(scenario, _group(clients), after_label=f"the last assignment ({document.assignor})")
    return topology_section(replace(view, before=None, notes=()), heading="Topology and the last assignment")


def _group(clients: dict[object, KafkaStreamsAssignment]) -> GroupAssignment:
    return GroupAssignment(clients={entry.process_id: entry for entry in clients.values()})


def compare_sections(scenario: Scenario, runs: Sequence[tuple[str, GroupAssignment | None]], *,
                     last: Scenario | None = None) -> str:
    """One section per assignor: the input's previous tasks -> its assignment (the topology drawn once, with
    the first). ``last``: for a simulated comparison, the scenario the runs' last assignments are drawn over
    (nothing moves then)."""
    parts = []
    drawn = False
    for i, (name, assignment) in enumerate(runs):
        if assignment is None:
            parts.append(f'<p class="meta">{escape(name)}: no assignment to draw.</p>')
            continue
        view = scenario_view(last or scenario, assignment, after_label=f"{name}'s assignment")
        if last is not None:
            view = replace(view, before=None, notes=())
        heading = f"Tasks with {name}" if drawn else f"Topology, and the tasks with {name}"
        parts.append(topology_section(view, prefix=f"topology-{i}", heading=heading, graph=not drawn))
        drawn = True
    return "".join(parts)
