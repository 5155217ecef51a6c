"""``taskassign assign``: one scenario, or a directory of scenarios, through an assignor; a streams-group file,
or any input with a streams-protocol assignor, through Kafka's broker-side assignors (``_streams.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskassign.cli._app import app
from taskassign.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    case_name,
    config_overrides,
    escape,
    handle_errors,
    new_table,
    print_traceback,
    stderr_console,
    stdout_console,
    use_plugin_limits,
)
from taskassign.cli._options import (
    DEFAULT_ASSIGNOR,
    AddClients,
    AllowPlugins,
    AssignmentJson,
    AssignmentOut,
    Force,
    KafkaCompat,
    KafkaVersion,
    PluginMemory,
    PluginTimeout,
    RacksDown,
    RemoveClients,
    SetConfigs,
    assignor_option,
    debug_option,
    strict_option,
)
from taskassign.cli._what_if import announce_what_if, what_if_flags_text, what_if_from_flags
from taskassign.errors import (
    AssignorNotFoundError,
    PluginAssignorError,
    PluginNotAllowedError,
    TaskassignError,
    UserInputError,
)

if TYPE_CHECKING:
    from taskassign.api.what_if import WhatIf
    from taskassign.assignors.registry import ResolvedAssignor
    from taskassign.leader.run import RebalanceResult

_STRICT_HELP = ("Exit 1 when the completeness report finds unassigned tasks or missing standbys (Kafka's validation "
                "lets both through).")
_DEBUG_HELP = "Print the traceback of an error (e.g. the exception a plug-in assignor raised) under its message."

@app.command()
@handle_errors
def assign(
    scenario: Path = typer.Argument(
        ..., help="A *.scenario.json file, a GROUP.json, a streams-group file, or a directory of scenarios."),
    assignor: Annotated[str | None, assignor_option(
        f"Built-in name (see `taskassign assignors`), module:Class, or path/to/file.py:Class. Default: "
        f"{DEFAULT_ASSIGNOR}; a streams-group file's own assignor.")] = None,
    output: AssignmentOut = None,
    out_dir: Path | None = typer.Option(None, "--out-dir", help="With a directory: write <case>.assignment.json here."),
    as_json: AssignmentJson = False,
    kafka_compat: KafkaCompat = False,
    kafka_version: KafkaVersion = None,
    with_metrics: bool = typer.Option(
        False, "--metrics", help="Print the assignment's metrics (docs/metrics.md) and add them to the file."
    ),
    explain: bool = typer.Option(
        False, "--explain",
        help="Say, for every task that moved, from which client to which and why (the assignor's own reasons "
             "when it gives them, e.g. state_aware; otherwise the moves are listed without a reason).",
    ),
    sets: SetConfigs = None,
    add_clients: AddClients = None,
    remove_clients: RemoveClients = None,
    racks_down: RacksDown = None,
    allow_plugins: AllowPlugins = False,
    strict: Annotated[bool, strict_option(_STRICT_HELP)] = False,
    debug: Annotated[bool, debug_option(_DEBUG_HELP)] = False,
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Assign every task of a scenario (or of every scenario in a directory) to its clients."""
    from taskassign.formats.output_paths import OutputGuard

    use_plugin_limits(plugin_timeout, plugin_memory)
    what_if = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    cases = sorted(scenario.glob("*.scenario.json")) if scenario.is_dir() else []
    guard = OutputGuard.of(force, scenario, *cases)
    if output is not None:
        guard.file(output)
    if out_dir is not None and scenario.is_dir():
        guard.directory(out_dir, [f"{case_name(p)}.assignment.json" for p in cases])
    try:
        _assign(scenario, assignor, output, out_dir, as_json, config_overrides(kafka_compat, kafka_version),
                with_metrics, explain, what_if, allow_plugins, strict, debug)
    except TaskassignError as exc:
        if debug:
            print_traceback(exc)
        raise


def strict_findings(result: RebalanceResult) -> list[str]:
    """What ``--strict`` fails on: the completeness report's unassigned tasks and missing standbys."""
    from taskassign.api.check_assignor import completeness_findings

    return [message for _, message in completeness_findings(result)]


def _assign(
    scenario: Path, assignor: str | None, output: Path | None, out_dir: Path | None, as_json: bool,
    overrides: dict[str, Any], with_metrics: bool, explain: bool, what_if: WhatIf, allow_plugins: bool, strict: bool,
    debug: bool,
) -> None:
    from taskassign.api.application import read_input
    from taskassign.api.assign import assign as api_assign
    from taskassign.api.kafka_line import source_kafka_line, streams_kafka_line
    from taskassign.api.verdicts import assign_verdict
    from taskassign.api.what_if import apply_what_if, chosen_assignor
    from taskassign.assignors.registry import resolve
    from taskassign.cli._metrics_render import metrics_table, state_in_bytes
    from taskassign.cli._render import explanation_text, result_summary
    from taskassign.cli._streams import assign_streams_command
    from taskassign.cli._verdict_render import verdict_text
    from taskassign.configs import KAFKA_VERSION
    from taskassign.formats.assignment import WHAT_IF
    from taskassign.formats.client_names import names_for_states
    from taskassign.formats.json_io import dump_json, to_json_text
    from taskassign.formats.scenario import with_config_overrides
    from taskassign.model import AssignmentError
    from taskassign.streams_protocol.model import StreamsGroup

    resolved = resolve(assignor) if assignor is not None else None  # fail fast on a bad name, before reading
    if scenario.is_dir():
        if out_dir is None:
            raise UserInputError(f"{scenario} is a directory: give --out-dir for the assignment files")
        raise typer.Exit(_assign_directory(scenario, out_dir, resolved, overrides, with_metrics, what_if,
                                           allow_plugins, strict, debug))
    if out_dir is not None:
        raise UserInputError("--out-dir goes with a directory of scenarios; for one file use -o")
    source = read_input(scenario)
    if isinstance(source, StreamsGroup) and not what_if.is_empty:
        raise UserInputError(f"{scenario}: a streams-group file (KIP-1071): the what-if flags take a scenario or a "
                             "group file")
    notes: tuple[str, ...] = ()
    original = source
    if not isinstance(source, StreamsGroup):
        source, notes = apply_what_if(source, what_if)
    if isinstance(source, StreamsGroup) or (resolved is not None and resolved.is_streams):
        if strict:
            raise UserInputError("--strict checks the group leader's completeness report, which a streams-protocol "
                                 "assignor has no part in; its summary's 'unassigned' and 'standbys short' lines "
                                 "say what it leaves uncovered")
        configs = source.configs if isinstance(source, StreamsGroup) else source.raw_configs
        streams_kafka_line(source_kafka_line(configs, overrides.get(KAFKA_VERSION)))  # 3.9 and 4.0: no KIP-1071
        raise typer.Exit(assign_streams_command(source, resolved, output=output, as_json=as_json,
                                                with_metrics=with_metrics, explain=explain,
                                                kafka_version=overrides.get(KAFKA_VERSION)))
    loaded = with_config_overrides(source, overrides)
    chosen = chosen_assignor(resolved, loaded, what_if, default=DEFAULT_ASSIGNOR, allow_plugins=allow_plugins)
    outcome = api_assign(loaded, chosen, with_metrics=with_metrics, explain=explain)
    verdict = None
    if notes and not isinstance(original, StreamsGroup):
        outcome.document[WHAT_IF] = list(notes)
        verdict = assign_verdict(with_config_overrides(original, overrides), loaded, chosen, outcome.result,
                                 outcome.metrics, source=str(scenario), flags=what_if_flags_text(what_if))
        outcome.document["verdict"] = verdict.to_dict()
    result = outcome.result
    console = stdout_console()
    if output is not None:
        dump_json(outcome.document, output)
    if as_json:
        announce_what_if(stderr_console(), notes)
        console.out(to_json_text(outcome.document), end="")
    else:
        announce_what_if(console, notes)
        names = names_for_states(loaded.state)
        console.print(result_summary(loaded, result, names))
        if outcome.metrics is not None:
            console.print(metrics_table(outcome.metrics, in_bytes=state_in_bytes(loaded.state), names=names))
        if outcome.explanations is not None:
            console.print(explanation_text(outcome.explanations))
        if verdict is not None:
            console.print(verdict_text(verdict))
        if output is not None:
            console.print(f"[dim]wrote {escape(str(output))}[/]")
    if result.error is not AssignmentError.NONE:
        raise typer.Exit(EXIT_FAILED)
    if strict and (found := strict_findings(result)):
        stderr_console().print(f"[bold red]incomplete (--strict):[/] {escape('; '.join(found))}")
        raise typer.Exit(EXIT_FAILED)


def _assign_directory(directory: Path, out_dir: Path, assignor: ResolvedAssignor | None, overrides: dict[str, Any],
                      with_metrics: bool, what_if: WhatIf, allow_plugins: bool, strict: bool = False,
                      debug: bool = False) -> int:
    """Assign every ``*.scenario.json`` of ``directory`` in one process; returns the exit code."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from taskassign.api.application import read_application
    from taskassign.api.assign import assign as api_assign
    from taskassign.api.what_if import apply_what_if, chosen_assignor
    from taskassign.cli._render import error_text
    from taskassign.formats.assignment import WHAT_IF
    from taskassign.formats.json_io import dump_json, prepare_output_dir
    from taskassign.formats.scenario import with_config_overrides
    from taskassign.model import AssignmentError

    files = sorted(directory.glob("*.scenario.json"))
    if not files:
        raise UserInputError(f"{directory}: no *.scenario.json files")
    prepare_output_dir(out_dir)
    console, errors = stdout_console(), stderr_console()
    summary = new_table()
    for column in ("case", "tasks", "clients", "error", "probing", "complete"):
        summary.add_column(column)
    bad_input = failed = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=errors, transient=True) as progress:
        job = progress.add_task("assigning", total=len(files))
        for path in files:
            case = case_name(path)
            progress.update(job, description=f"assigning {case}")
            try:
                loaded, notes = apply_what_if(with_config_overrides(read_application(path), overrides), what_if)
                chosen = chosen_assignor(assignor, loaded, what_if, default=DEFAULT_ASSIGNOR,
                                         allow_plugins=allow_plugins)
            except UserInputError as exc:
                if isinstance(exc, AssignorNotFoundError) and not isinstance(exc, PluginNotAllowedError):
                    raise  # an unknown or unloadable assignor fails the whole command, not one file
                errors.print(f"[bold red]error:[/] {escape(str(exc))}")
                bad_input += 1
                progress.advance(job)
                continue
            try:
                outcome = api_assign(loaded, chosen, with_metrics=with_metrics)
            except PluginAssignorError as exc:
                if debug:
                    print_traceback(exc)
                errors.print(f"[bold red]failed:[/] {escape(case)}: {escape(str(exc))}")
                failed += 1
                summary.add_row(case, str(len(loaded.state.tasks)), str(len(loaded.state.clients)), "raised", "-",
                                "-")
                progress.advance(job)
                continue
            if notes:
                outcome.document[WHAT_IF] = list(notes)
            result = outcome.result
            dump_json(outcome.document, out_dir / f"{case}.assignment.json")
            failed += result.error is not AssignmentError.NONE or bool(strict and strict_findings(result))
            summary.add_row(case, str(len(loaded.state.tasks)), str(len(loaded.state.clients)),
                            error_text(result.error), "yes" if result.probing_rebalance_needed else "no",
                            "yes" if result.completeness.is_complete else "no")
            progress.advance(job)
    console.print(summary)
    console.print(f"{len(files) - bad_input} of {len(files)} scenarios assigned into {escape(str(out_dir))}"
                  + (f"; {bad_input} unreadable" if bad_input else "")
                  + (f"; {failed} invalid" + (" or incomplete (--strict)" if strict else "") if failed else ""))
    if bad_input:
        return EXIT_BAD_INPUT
    return EXIT_FAILED if failed else 0
