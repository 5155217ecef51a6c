"""``taskassign bridge``: the Java side of the bridge (build it, print the properties that turn it on) and
the audit log's decisions replayed as files (docs/bridge.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from taskassign.cli._app import CommandGroup, app
from taskassign.cli._common import handle_errors, stderr_console, stdout_console
from taskassign.cli._options import Force

if TYPE_CHECKING:
    pass

bridge_app = typer.Typer(
    rich_markup_mode=None, help="Run taskassign's assignors in real applications (docs/bridge.md).",
    no_args_is_help=True, cls=CommandGroup)
app.add_typer(bridge_app, name="bridge")


@bridge_app.command("build")
@handle_errors
def build(
    kafka_libs: Path = typer.Option(..., "--kafka-libs", help="Kafka's libs/ directory (the application's Kafka "
                                    "3.8+ jars; a 4.4 broker's for the streams-protocol plug-in)."),
    output: Path = typer.Option(..., "--out", "-o", "--output", help="The jar to write."),
    protocol: str = typer.Option("auto", "--protocol", help="classic, streams, both, or auto (classic, and streams "
                                 "when the broker's group-coordinator jars are there)."),
    force: Force = False,
) -> None:
    """Compile the bridge's Java with javac against your Kafka jars into one jar (no Kafka code is shipped)."""
    from rich.markup import escape

    from taskassign.bridge.build import build_jar
    from taskassign.formats.output_paths import OutputGuard

    OutputGuard.of(force, kafka_libs).file(output)
    result = build_jar(kafka_libs, output, protocol)
    console = stdout_console()
    console.print(f"wrote {escape(str(result.jar))} ({', '.join(result.protocols)})")
    for note in result.skipped:
        stderr_console().print(f"[yellow]skipped:[/] {escape(note)}")


@bridge_app.command("properties")
@handle_errors
def properties(
    url: str = typer.Option(..., "--url", help="The service's URL, e.g. http://127.0.0.1:8787."),
    token: str | None = typer.Option(None, "--token", help="The bearer token, written into the properties "
                                     "(prefer --token-file)."),
    token_file: Path | None = typer.Option(None, "--token-file", help="A file holding the token, read by the "
                                           "application (or broker) at every rebalance."),
    timeout_ms: int | None = typer.Option(None, "--timeout-ms", min=1, max=60_000,
                                          help="The most the Java side waits (default 500; streams 200)."),
    protocol: str = typer.Option("classic", "--protocol", help="classic (the application's properties) or streams "
                                 "(a 4.4 broker's server.properties)."),
) -> None:
    """Print the properties that turn the bridge on: task.assignor.class and the taskassign.* keys."""
    from taskassign.bridge.build import properties_text

    stdout_console().out(properties_text(url, protocol=protocol, token=token, token_file=token_file,
                                         timeout_ms=timeout_ms), end="")


@bridge_app.command("replay")
@handle_errors
def replay(
    audit_log: Path = typer.Argument(..., help="The service's audit log (audit.jsonl)."),
    decision: str | None = typer.Option(None, "--decision", "-d", help="The decision id (or a unique prefix); "
                                        "default: the last decision."),
    out_dir: Path = typer.Option(Path("."), "--out-dir", help="Where to write the files."),
    force: Force = False,
) -> None:
    """Turn one decision of the audit log back into its scenario (or streams group) and assignment files:
    `taskassign assign SCENARIO -a ASSIGNOR` reproduces the assignment byte for byte."""
    from rich.markup import escape

    from taskassign.bridge.audit import find_record, record_files
    from taskassign.formats.output_paths import OutputGuard

    record = find_record(audit_log, decision)
    written = record_files(record, out_dir, OutputGuard.of(force, audit_log))
    console = stdout_console()
    for path in written:
        console.print(f"wrote {escape(str(path))}")
    scenario = next((p for p in written if not p.name.endswith(".assignment.json")), None)
    if scenario is not None and record.get("source") == "computed":
        console.print(f"replay: taskassign assign {escape(str(scenario))} -a {escape(str(record.get('assignor')))}"
                      f" -o replayed.assignment.json")
    elif record.get("source") == "plan":
        console.print(f"answered with approved plan {escape(str(record.get('plan_id')))} (assignor "
                      f"{escape(str(record.get('assignor')))})")
