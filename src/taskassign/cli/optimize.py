"""``taskassign optimize``: rack-aware optimisation of a scenario's current assignment (KIP-925)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, load_altered, new_table, stderr_console, stdout_console
from taskassign.cli._options import (
    AddClients,
    AssignmentJson,
    AssignmentOut,
    Force,
    KafkaCompat,
    KafkaVersion,
    RacksDown,
    RemoveClients,
    SetConfigs,
)
from taskassign.cli._what_if import announce_what_if, what_if_from_flags
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from rich.console import RenderableType

    from taskassign.api.optimize import ScenarioOptimization
    from taskassign.formats.scenario import Scenario


class ApiChoice(enum.StrEnum):
    """``api.optimize.Api``'s values (that module loads the solvers; the options must not)."""

    INTERNAL = "internal"
    PUBLIC = "public"


class TasksChoice(enum.StrEnum):
    """``api.optimize.TaskSelection``'s values."""

    ALL = "all"
    STATEFUL = "stateful"
    STATELESS = "stateless"


class SolverChoice(enum.StrEnum):
    AUTO = "auto"
    KAFKA = "kafka"
    MIN_COST_FLOW = "min_cost_flow"


@app.command()
@handle_errors
def optimize(
    scenario: Path = typer.Argument(..., help="A *.scenario.json file with a current_assignment."),
    active: bool = typer.Option(False, "--active", help="Optimise the active tasks."),
    standby: bool = typer.Option(False, "--standby", help="Optimise the standby tasks (pairwise exchanges)."),
    output: AssignmentOut = None,
    api: ApiChoice = typer.Option(
        ApiChoice.INTERNAL, "--api",
        help="internal: Kafka's RackAwareTaskAssignor (what high_availability/legacy_sticky run; unset costs "
             "default to 10/1); public: TaskAssignmentUtils.optimizeRackAware*Tasks (costs must be set).",
    ),
    tasks: TasksChoice = typer.Option(TasksChoice.ALL, "--tasks", help="Public API: which tasks to optimise."),
    solver: SolverChoice | None = typer.Option(
        None, "--solver",
        help="kafka = Kafka's own solver (bit-for-bit), min_cost_flow = fast, auto = kafka under --kafka-compat. "
             "Default: the scenario's taskassign.rack.solver.",
    ),
    traffic_cost: int | None = typer.Option(None, "--traffic-cost", min=0, help="Override the traffic cost."),
    non_overlap_cost: int | None = typer.Option(None, "--non-overlap-cost", min=0,
                                                help="Override the non-overlap (movement) cost."),
    as_json: AssignmentJson = False,
    kafka_compat: KafkaCompat = False,
    kafka_version: KafkaVersion = None,
    sets: SetConfigs = None,
    add_clients: AddClients = None,
    remove_clients: RemoveClients = None,
    racks_down: RacksDown = None,
    force: Force = False,
) -> None:
    """Improve the scenario's current_assignment for cross-rack traffic, keeping every client's task count."""
    from rich.markup import escape

    from taskassign.api.optimize import Api, Role, TaskSelection, optimization_document, optimize_scenario
    from taskassign.configs import RACK_SOLVER
    from taskassign.formats.json_io import dump_json, to_json_text
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.formats.scenario import with_config_overrides

    if active == standby:
        raise UserInputError("give exactly one of --active or --standby")
    if output is not None:
        OutputGuard.of(force, scenario).file(output)
    what_if = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    loaded, notes = load_altered(scenario, what_if, kafka_compat=kafka_compat, kafka_version=kafka_version)
    if solver is not None:
        loaded = with_config_overrides(loaded, {RACK_SOLVER: solver.value})
    role = Role.ACTIVE if active else Role.STANDBY
    with stderr_console().status(f"optimising {role.value} tasks of {escape(loaded.name)}"):
        result = optimize_scenario(loaded, role, Api(api.value), tasks=TaskSelection(tasks.value),
                                   traffic_cost=traffic_cost, non_overlap_cost=non_overlap_cost)
    document = optimization_document(result)
    verdict = None
    if notes:
        from taskassign.api.verdicts import optimize_verdict
        from taskassign.cli._common import load_scenario
        from taskassign.cli._what_if import what_if_flags_text

        original = load_scenario(scenario, kafka_compat=kafka_compat, kafka_version=kafka_version)
        if solver is not None:
            original = with_config_overrides(original, {RACK_SOLVER: solver.value})
        as_is = optimize_scenario(original, role, Api(api.value), tasks=TaskSelection(tasks.value),
                                  traffic_cost=traffic_cost, non_overlap_cost=non_overlap_cost)
        verdict = optimize_verdict(original, loaded, as_is, result, source=str(scenario),
                                   flags=what_if_flags_text(what_if))
        document = {**document, "verdict": verdict.to_dict()}
    console = stdout_console()
    if output is not None:
        dump_json(document, output)
    announce_what_if(stderr_console() if as_json else console, notes)
    if as_json:
        console.out(to_json_text(document), end="")
        return
    console.print(_summary(loaded, result))
    if verdict is not None:
        from taskassign.cli._verdict_render import verdict_text

        console.print(verdict_text(verdict))
    if output is not None:
        console.print(f"[dim]wrote {escape(str(output))}[/]")


def _summary(scenario: Scenario, result: ScenarioOptimization) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    from taskassign.api.optimize import Role
    from taskassign.cli._render import client_labels, task_preview
    from taskassign.formats.client_names import names_for_states

    header = Text.assemble(
        ("scenario ", "dim"), (result.scenario, "bold"), ("   ", ""), (f"{result.role.value} tasks", "bold"),
        ("   api ", "dim"), (result.api.value, "bold"), ("   solver ", "dim"), (result.solver, "bold"),
        ("   strategy ", "dim"), (result.strategy, "bold"),
    )
    if result.skipped_reason is not None:
        return Group(header, Text(f"skipped, as Kafka would: {result.skipped_reason}; assignment unchanged",
                                  style="yellow"))
    costs = Text.assemble(
        ("costs ", "dim"), (f"traffic {result.traffic_cost}, non-overlap {result.non_overlap_cost}", ""),
        ("   initial cost ", "dim"), (str(result.initial_cost), "bold"),
        ("   optimizer cost ", "dim"), (str(result.cost), "bold green"),
        ("   moved tasks ", "dim"), (str(len(result.moved_tasks)), "bold"),
    )
    table = new_table(pad_edge=False)
    for column in ("client", "rack", "tasks", "gave", "received"):
        table.add_column(column, no_wrap=column in ("client", "rack", "tasks"), overflow="fold")
    current = scenario.current_assignment or {}
    short = client_labels(names_for_states(scenario.state), result.assignments)
    for pid, after in result.assignments.items():
        pick = after.active_tasks if result.role is Role.ACTIVE else after.standby_tasks
        before = current.get(pid)
        was = set() if before is None else set(
            before.active_tasks() if result.role is Role.ACTIVE else before.standby_tasks()
        )
        now = set(pick())
        if was == now:
            continue
        client = scenario.state.clients.get(pid)
        table.add_row(short[pid], (client.rack_id if client else None) or "-", str(len(now)),
                      task_preview(sorted(was - now)), task_preview(sorted(now - was)))
    parts: list[RenderableType] = [header, costs]
    if table.row_count:
        parts.append(table)
    else:
        parts.append(Text("nothing moved: the current assignment is already optimal", style="green"))
    return Group(*parts)
