"""``taskassign streams-migration``: one application under the classic protocol and under the streams protocol
(KIP-1071), side by side (api/migration.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import (
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
    Force,
    KafkaCompat,
    KafkaVersion,
    PluginMemory,
    PluginTimeout,
    RacksDown,
    RemoveClients,
    SetConfigs,
    json_option,
    out_option,
)
from taskassign.cli._what_if import announce_what_if, what_if_from_flags

if TYPE_CHECKING:
    from rich.table import Table

    from taskassign.api.migration import MigrationWhatIf


def comparison_table(what_if: MigrationWhatIf) -> Table:
    """One row per highlighted metric, one column per assignor (letters and a key when the names do not fit)."""
    from taskassign.api.migration import HIGHLIGHTS
    from taskassign.cli._metrics_render import format_value
    from taskassign.cli._render import column_labels

    names = tuple(f"{run.assignor} ({run.protocol})" for run in what_if.runs)
    labels, key = column_labels(names, stdout_console().width)
    title = f"{what_if.scenario}: classic protocol vs streams protocol (movement counts against the clients' " \
        "previous assignment)" + (f"\n{key}" if key else "")
    table = new_table(pad_edge=False, title=title, title_justify="left")
    table.add_column("metric")
    for label in labels:
        table.add_column(label, justify="right", no_wrap=True, min_width=len(label))
    table.add_row("error", *[run.error or (run.result.error.name if run.result else "-") for run in what_if.runs])
    table.add_row("probing rebalance", *["yes" if run.result and run.result.probing_rebalance_needed else "no"
                                         for run in what_if.runs])
    values = [run.metrics.to_dict() if run.metrics is not None else None for run in what_if.runs]
    for section, names in HIGHLIGHTS:
        table.add_row(f"[bold dim]{section}[/]", *[""] * len(what_if.runs))
        for name in names:
            table.add_row(f"  {name}", *[format_value(v[name]) if v is not None else "-" for v in values])
    return table


@app.command("streams-migration")
@handle_errors
def streams_migration(
    application: Path = typer.Argument(..., help="A *.scenario.json or a GROUP.json."),
    classic: str | None = typer.Option(
        None, "--classic", help=f"The classic protocol's assignor (a KIP-924 one). Default: the one --set "
                                f"task.assignor.class=... names, else {DEFAULT_ASSIGNOR} (Kafka's default)."),
    output: Annotated[Path | None, out_option("Write the comparison document here.")] = None,
    as_json: Annotated[bool, json_option("Print the comparison document instead of a table.")] = False,
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
    """What moving an application to the streams protocol (KIP-1071) would change: the classic assignor against
    Kafka's broker-side sticky and balanced assignors, on the same application."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape
    from rich.text import Text

    from taskassign.api.migration import migration_what_if
    from taskassign.api.verdicts import migration_verdict
    from taskassign.assignors.registry import resolve
    from taskassign.cli._verdict_render import verdict_text
    from taskassign.formats.json_io import dump_json, to_json_text
    from taskassign.formats.output_paths import OutputGuard

    if output is not None:
        OutputGuard.of(force, application).file(output)
    what_if_flags = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    resolved = resolve(classic or what_if_flags.assignor or DEFAULT_ASSIGNOR)  # --set task.assignor.class is honoured
    loaded, notes = load_altered(application, what_if_flags, kafka_compat=kafka_compat, kafka_version=kafka_version)
    what_if = migration_what_if(loaded, resolved)
    verdict = migration_verdict(what_if, loaded, resolved, source=str(application))
    console = stdout_console()
    announce_what_if(stderr_console() if as_json else console, notes)
    document = {**what_if.to_document(), "verdict": verdict.to_dict()}
    if output is not None:
        dump_json(document, output)
    if as_json:
        console.out(to_json_text(document), end="")
        return
    console.print(comparison_table(what_if))
    console.print(Text.assemble(("classic run on kafka ", "dim"), str(what_if.kafka_version)))
    for note in what_if.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    console.print(Text("every metric is defined in docs/metrics.md; the protocols in docs/streams-protocol.md",
                       style="dim"))
    console.print(verdict_text(verdict))
    if output is not None:
        console.print(f"[dim]wrote {escape(str(output))}[/]")
