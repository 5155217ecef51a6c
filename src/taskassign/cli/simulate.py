"""``taskassign simulate``: replay rebalances driven by an events file (docs/events.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import (
    EXIT_FAILED,
    handle_errors,
    load_altered,
    new_table,
    stderr_console,
    stdout_console,
    use_plugin_limits,
)
from taskassign.cli._options import (
    DEFAULT_ASSIGNOR,
    AddClients,
    AllowPlugins,
    EventsSeed,
    Force,
    KafkaCompat,
    KafkaVersion,
    PluginMemory,
    PluginTimeout,
    RacksDown,
    RemoveClients,
    SetConfigs,
    assignor_option,
    events_option,
    json_option,
    out_option,
)
from taskassign.cli._what_if import announce_what_if, what_if_from_flags

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from taskassign.simulate import RebalanceRecord, SimulationResult

MAX_ROWS = 200


#: The rebalance table's columns, short so that it fits 80 columns, and what each counts (the key under it).
REBALANCE_COLUMNS = (
    ("#", ""), ("time", ""), ("reasons", ""), ("cl", "clients"), ("prb", "probing rebalance asked for"),
    ("a.mv", "actives moved"), ("s.mv", "standbys moved"),
    ("restore", "records to restore (against the clients' previous assignment)"),
    ("left", "records still restoring"), ("idle", "tasks not running"), ("skew", "active load skew per thread"),
    ("error", ""),
)


def rebalance_table(result: SimulationResult) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    from taskassign.cli._metrics_render import format_value
    from taskassign.cli._render import clock

    rows = result.rebalances
    errors = any(r.error != "NONE" for r in rows[:MAX_ROWS])
    table = new_table(pad_edge=False)
    columns = [column for column, _ in REBALANCE_COLUMNS if errors or column != "error"]
    for column in columns:
        if column == "reasons":
            table.add_column(column, overflow="fold", ratio=1)
        else:
            table.add_column(column, justify="left" if column in ("time", "error") else "right", no_wrap=True)
    for r in rows[:MAX_ROWS]:
        m = r.metrics
        cells: list[str | Text] = [
            str(r.index), clock(r.time_ms - result.start_ms), ", ".join(r.reasons), format_value(m["clients"]),
            "yes" if r.probing_rebalance_needed else "no", format_value(m["active_moves"]),
            format_value(m["standby_moves"]), format_value(m["records_to_restore"]),
            format_value(r.active_records_left + r.standby_records_left), format_value(r.tasks_not_running),
            format_value(m["active_load_skew"]),
        ]
        if errors:
            cells.append(Text(r.error, style="green" if r.error == "NONE" else "bold red"))
        table.add_row(*cells)
    key = "; ".join(f"{column} {meaning}" for column, meaning in REBALANCE_COLUMNS if meaning and column in columns)
    parts: list[RenderableType] = [table, Text(key, style="dim")]
    if len(rows) > MAX_ROWS:
        parts.append(Text(f"… {len(rows) - MAX_ROWS} more rebalances (write them all with --out)", style="dim"))
    return Group(*parts)


def summary_text(result: SimulationResult) -> Text:
    from rich.text import Text

    from taskassign.cli._render import clock
    from taskassign.formats.units import human_duration

    by_reason = ", ".join(f"{k} {v}" for k, v in result.by_reason().items())
    text = Text.assemble(
        ("scenario ", "dim"), (result.scenario_name, "bold"), ("   assignor ", "dim"), (result.assignor, "bold"),
        ("   seed ", "dim"), str(result.seed), ("   protocol ", "dim"), result.protocol, "\n",
        (f"{len(result.rebalances)} rebalances ({by_reason}); ", ""),
        (f"{result.probing_rebalances} probing", "bold"), "; ",
        ("converged", "bold green") if result.converged else ("not converged", "bold yellow"),
        (f" at {clock(result.settled_at_ms)} ({human_duration(result.settled_at_ms)} to settle)"
         if result.settled_at_ms is not None else ""),
        (f"; simulated {human_duration(result.end_ms - result.start_ms)}", "dim"),
    )
    if result.stopped_reason:
        text.append(f"\nstopped: {result.stopped_reason}", style="bold red")
    for note in result.notes:
        text.append(f"\nnote: {note}", style="yellow")
    return text


@app.command("simulate")
@handle_errors
def simulate_command(
    scenario: Path = typer.Argument(..., help="The *.scenario.json the simulation starts from."),
    events: Path = events_option("The EVENTS.json script (docs/events.md).", required=True),
    assignor: Annotated[str | None, assignor_option(
        "Built-in name (see `taskassign assignors`), module:Class, or path/to/file.py:Class. Default: the input's "
        f"task.assignor.class, else {DEFAULT_ASSIGNOR}.")] = None,
    out: Annotated[Path | None, out_option(
        "Write simulation.json, rebalances.csv, final.scenario.json and final.assignment.json here.",
        output_alias=False)] = None,
    seed: EventsSeed = None,
    as_json: Annotated[bool, json_option("Print simulation.json to stdout instead of tables.")] = False,
    kafka_compat: KafkaCompat = False,
    kafka_version: KafkaVersion = None,
    sets: SetConfigs = None,
    add_clients: AddClients = None,
    remove_clients: RemoveClients = None,
    racks_down: RacksDown = None,
    allow_plugins: AllowPlugins = False,
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Replay a sequence of rebalances (joins, crashes, restarts, restores, probing) and report each one."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from taskassign.api.what_if import chosen_assignor
    from taskassign.assignors.registry import resolve
    from taskassign.cli._render import clock
    from taskassign.formats.json_io import to_json_text
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.simulate import OUTPUT_FILES, read_events, simulate

    if out is not None:
        OutputGuard.of(force, scenario, events).directory(out, OUTPUT_FILES)
    resolved = resolve(assignor) if assignor is not None else None
    what_if = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    loaded, notes = load_altered(scenario, what_if, kafka_compat=kafka_compat,
        kafka_version=kafka_version)
    chosen = chosen_assignor(resolved, loaded, what_if, default=DEFAULT_ASSIGNOR, allow_plugins=allow_plugins)
    script = read_events(events)
    errors = stderr_console()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=errors,
                  transient=True) as progress:
        job = progress.add_task("simulating", total=None)

        def on_rebalance(record: RebalanceRecord) -> None:
            progress.update(job, description=f"rebalance {record.index} ({', '.join(record.reasons)}) at "
                                             f"{clock(record.time_ms - loaded.state.now_ms)}")

        result = simulate(loaded, script, chosen, seed=seed, on_rebalance=on_rebalance)
        verdict = None
        if notes:
            from taskassign.api.verdicts import simulate_verdict
            from taskassign.cli._common import load_scenario
            from taskassign.cli._what_if import what_if_flags_text

            progress.update(job, description="the same simulation on the input as it is (the verdict)")
            original = load_scenario(scenario, kafka_compat=kafka_compat, kafka_version=kafka_version)
            verdict = simulate_verdict(original, result, chosen, script, seed=seed, source=str(scenario),
                                       flags=what_if_flags_text(what_if), events_path=str(events))
    console = stdout_console()
    if out is not None:
        written = result.write(out)
    announce_what_if(errors if as_json else console, notes)
    if as_json:
        document = result.to_document()
        if verdict is not None:
            document["verdict"] = verdict.to_dict()
        console.out(to_json_text(document), end="")
    else:
        console.print(rebalance_table(result))
        console.print(summary_text(result))
        console.print(Text.assemble(("kafka ", "dim"), result.last_state.configs.kafka_version))
        if verdict is not None:
            from taskassign.cli._verdict_render import verdict_text

            console.print(verdict_text(verdict))
        if out is not None:
            console.print(f"[dim]wrote {', '.join(escape(str(p)) for p in written)}[/]")
    if result.rebalances and result.rebalances[-1].error != "NONE":
        raise typer.Exit(EXIT_FAILED)
