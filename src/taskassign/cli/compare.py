"""``taskassign compare``: one application through several assignors, side by side (docs/compare.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    handle_errors,
    load_scenario,
    new_table,
    stderr_console,
    stdout_console,
    use_plugin_limits,
)
from taskassign.cli._options import (
    AddClients,
    EventsSeed,
    Force,
    KafkaCompat,
    KafkaVersion,
    PluginMemory,
    PluginTimeout,
    RacksDown,
    RemoveClients,
    SetConfigs,
    events_option,
    json_option,
    out_option,
)
from taskassign.cli._what_if import announce_what_if, what_if_flags_text, what_if_from_flags
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import RenderableType
    from rich.table import Table
    from rich.text import Text

    from taskassign.analysis.compare import Comparison
    from taskassign.assignors.registry import ResolvedAssignor
    from taskassign.formats.scenario import Scenario
    from taskassign.simulate import RebalanceRecord

__all__ = ("comparison_tables", "run_compare")

def _total_text(key: str, value: int | bool | None) -> str:
    from taskassign.cli._metrics_render import format_value
    from taskassign.cli._render import clock

    if key == "settled_at_ms":
        return "never" if value is None else clock(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else format_value(value)


def _cell(text: str, best: bool) -> Text:
    from rich.text import Text
    return Text(text + " *", style="bold green") if best else Text(text + "  ")


def _table(title: str, labels: tuple[str, ...]) -> Table:
    table = new_table(pad_edge=False, title=title, title_justify="left")
    table.add_column("")  # section titles wrap at words; metric names are never cut
    for label in labels:
        table.add_column(label, justify="right", no_wrap=True, min_width=len(label))
    return table


def comparison_tables(comparison: Comparison, errors: dict[str, str] | None = None, *,
                      in_bytes: bool = False) -> RenderableType:
    """Metrics as rows and assignors as columns (``*``: the better value of the row), and the run totals when
    the input was simulated."""
    from rich.console import Group
    from rich.text import Text

    from taskassign.analysis.compare import TOTAL_FIELDS
    from taskassign.analysis.metrics import SECTION_STARTS, metric_fields
    from taskassign.cli._metrics_render import metric_text

    names = comparison.names
    from taskassign.cli._render import column_labels

    labels, key = column_labels(names, stdout_console().width)
    parts: list[RenderableType] = [Text(key, style="dim")] if key else []
    if comparison.totals:
        totals = _table("run totals (each counts over the whole run)", labels)
        best = comparison.best_totals()
        for total in TOTAL_FIELDS:
            totals.add_row(total.label, *(_cell(_total_text(total.name, getattr(comparison.totals[n], total.name)),
                                                n in best[total.name]) for n in names))
        parts.append(totals)
    metrics = _table("metrics of the last assignment" if comparison.totals else
                     "metrics (movement counts against the clients' previous assignment)", labels)
    best = comparison.best_metrics()
    for f in metric_fields():
        if f.name in SECTION_STARTS:
            metrics.add_row(f"[bold dim]{SECTION_STARTS[f.name]}[/]", *("" for _ in names))
        metrics.add_row(f"  {f.name}", *(
            _cell(metric_text(f.name, comparison.metrics[n][f.name], in_bytes=in_bytes), n in best[f.name])
            if f.name in comparison.metrics[n]
            else Text("-") for n in names))
    parts.append(metrics)
    parts.append(Text("* the better value of the row (lower or higher as the metric says; none when all are equal "
                      "or neither is better)", style="dim"))
    for name, error in (errors or {}).items():
        if error != "NONE":
            parts.append(Text(f"{name}: the assignment is invalid ({error})", style="bold red"))
    return Group(*parts)


def run_compare(scenario: Scenario, assignors: str | Sequence[ResolvedAssignor], *, events: Path | None = None,
                seed: int | None = None, out: Path | None = None, as_json: bool = False,
                source: str = "APP.json") -> int:
    """Compare ``assignors`` (``-a`` text) on a ready ``scenario``; print, write ``out``; returns the exit code.
    The one place compare's options are acted on, whatever built the scenario; ``source`` is the input as the
    verdict's next commands name it."""
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from taskassign.api.compare import compare, parse_assignor_list, write_compare_report
    from taskassign.api.verdicts import compare_verdict
    from taskassign.cli._metrics_render import state_in_bytes
    from taskassign.cli._verdict_render import verdict_text
    from taskassign.formats.json_io import to_json_text
    from taskassign.simulate import read_events

    specs = parse_assignor_list(assignors) if isinstance(assignors, str) else tuple(assignors)
    if seed is not None and events is None:
        raise UserInputError("--seed goes with --events (it seeds the simulation's random choices)")
    script = read_events(events) if events is not None else None
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=stderr_console(),
                  transient=True) as progress:
        job = progress.add_task("comparing", total=None)

        def on_assignor(name: str) -> None:
            progress.update(job, description=f"{name}: assigning")

        def on_rebalance(name: str, record: RebalanceRecord) -> None:
            progress.update(job, description=f"{name}: rebalance {record.index} ({', '.join(record.reasons)})")

        outcome = compare(scenario, specs, events=script, seed=seed, on_assignor=on_assignor,
                                          on_rebalance=on_rebalance)
        progress.update(job, description="weighing the assignors (probing rebalances ahead)")
        verdict = compare_verdict(outcome, specs, source=source, events=None if events is None else str(events))
        written = []
        if out is not None:
            progress.update(job, description="drawing the report")
            written = write_compare_report(outcome, out, events=None if events is None else str(events))
    console = stdout_console()
    if as_json:
        console.out(to_json_text({**outcome.to_document(), "verdict": verdict.to_dict()}), end="")
    else:
        console.print(Text.assemble(("scenario ", "dim"), (scenario.name, "bold"), ("   assignors ", "dim"),
                                    ", ".join(outcome.comparison.names),
                                    ("   kafka ", "dim"), scenario.state.configs.kafka_version,
                                    ("   simulated with ", "dim") if script else "", str(events) if script else ""))
        console.print(comparison_tables(outcome.comparison, {run.name: run.error for run in outcome.runs},
                                        in_bytes=state_in_bytes(scenario.state)))
        console.print(verdict_text(verdict))
        if written:
            console.print(f"[dim]wrote {', '.join(escape(str(p)) for p in written)}[/]")
    return EXIT_FAILED if outcome.failed else EXIT_OK


@app.command("compare")
@handle_errors
def compare_command(
    scenario: Path = typer.Argument(..., help="A *.scenario.json file or a GROUP.json."),
    assignors: str = typer.Option(
        ..., "--assignors", "--assignor", "-a",
        help="Assignors separated by commas: built-in names (see `taskassign assignors`), module:Class or "
             "path/to/file.py:Class, e.g. -a high_availability,state_aware.",
    ),
    events: Annotated[Path | None, events_option(
        "Simulate this EVENTS.json (docs/events.md) with each assignor instead of assigning once; adds the run "
        "totals.")] = None,
    seed: EventsSeed = None,
    out: Annotated[Path | None, out_option(
        "Write report.html (one page overlaying the assignors) and compare.json here.", output_alias=False)] = None,
    as_json: Annotated[bool, json_option("Print the comparison as JSON instead of tables.")] = False,
    kafka_compat: KafkaCompat = False,
    kafka_version: KafkaVersion = None,
    sets: SetConfigs = None,
    add_clients: AddClients = None,
    remove_clients: RemoveClients = None,
    racks_down: RacksDown = None,
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """The same application through each assignor (one rebalance, or a simulation with --events), side by side:
    metrics as rows, assignors as columns, the better value of each row marked. With one assignor and a what-if:
    the input as it is against the altered input, as a before -> after diff."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from taskassign.api.compare import parse_assignor_list
    from taskassign.api.what_if import apply_what_if
    from taskassign.formats.output_paths import OutputGuard

    if out is not None:
        OutputGuard.of(force, scenario, events).directory(out, ("report.html", "compare.json"))
    original = load_scenario(scenario, kafka_compat=kafka_compat, kafka_version=kafka_version)
    what_if = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    altered, notes = apply_what_if(original, what_if)
    specs = parse_assignor_list(assignors)
    if notes and len(specs) == 1:
        if out is not None:
            raise UserInputError("--out (the overlaying report) goes with several assignors; with one assignor and a "
                                 "what-if compare prints the before -> after diff (--json for its data)")
        raise typer.Exit(run_what_if_compare(original, altered, notes, specs[0], events=events, seed=seed,
                                             as_json=as_json, source=str(scenario),
                                             flags=what_if_flags_text(what_if)))
    announce_what_if(stderr_console() if as_json else stdout_console(), notes)
    raise typer.Exit(run_compare(altered, specs, events=events, seed=seed, out=out, as_json=as_json,
                                 source=str(scenario)))


def run_what_if_compare(original: Scenario, altered: Scenario, notes: tuple[str, ...], spec: ResolvedAssignor, *,
                        events: Path | None, seed: int | None, as_json: bool, source: str = "APP.json",
                        flags: str = "") -> int:
    """One assignor on the input as it is and on the altered input: the diff, then both runs side by side, then
    the verdict."""
    from rich.text import Text

    from taskassign.api.verdicts import what_if_compare_verdict
    from taskassign.api.what_if_compare import compare_what_if
    from taskassign.cli._diff_render import diff_text
    from taskassign.cli._metrics_render import state_in_bytes
    from taskassign.cli._verdict_render import verdict_text
    from taskassign.formats.client_names import names_for_states
    from taskassign.formats.json_io import to_json_text
    from taskassign.simulate import read_events

    if seed is not None and events is None:
        raise UserInputError("--seed goes with --events (it seeds the simulation's random choices)")
    script = read_events(events) if events is not None else None
    with stderr_console().status("running the input as it is and with the what-if"):
        outcome = compare_what_if(original, altered, notes, spec, events=script, seed=seed)
        verdict = what_if_compare_verdict(outcome, original, altered, spec, source=source, flags=flags)
    console = stdout_console()
    if as_json:
        announce_what_if(stderr_console(), notes)
        console.out(to_json_text({**outcome.to_document(), "verdict": verdict.to_dict()}), end="")
    else:
        announce_what_if(console, notes)
        title = f"{original.name}, {outcome.assignor}" + (f", simulated with {events}" if events else "") + \
            ": the input as it is -> with the what-if"
        console.print(diff_text(outcome.diff, title=title, in_bytes=state_in_bytes(outcome.after_state),
                                names=names_for_states(original.state, altered.state), against="the as-is run"))
        if outcome.comparison.totals:  # the runs' totals side by side (the metrics' changes are in the diff)
            console.print(comparison_tables(outcome.comparison, {"as is": outcome.before.error,
                                                                 "what-if": outcome.after.error},
                                            in_bytes=state_in_bytes(outcome.after_state)))
        else:
            for name, run in (("as is", outcome.before), ("what-if", outcome.after)):
                if run.error != "NONE":
                    console.print(Text(f"{name}: the assignment is invalid ({run.error})", style="bold red"))
        console.print(verdict_text(verdict))
    return EXIT_FAILED if outcome.failed else EXIT_OK
