"""``taskassign capture``: read a running Kafka Streams application (or every one of a cluster) from its
cluster into a GROUP.json (or a fleet snapshot). Read-only: it never joins a group or commits."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, new_table, stderr_console, stdout_console
from taskassign.cli._options import DEFAULT_CAPTURE_TIMEOUT_S, Force, out_option
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from rich.console import RenderableType

    from taskassign.api.capture import FleetCapture
    from taskassign.capture.group_capture import CapturedGroup
    from taskassign.formats.output_paths import OutputGuard


def _wall_clock_ms() -> int:
    """The capture's own time: recorded as data (when the cluster was read), never used to decide anything."""
    return time.time_ns() // 1_000_000


@app.command()
@handle_errors
def capture(
    bootstrap_server: str = typer.Option(..., "--bootstrap-server", help="HOST:PORT of a broker (as Kafka's tools)."),
    group: str | None = typer.Option(None, "--group", help="The application.id (its consumer group) to capture."),
    all_groups: bool = typer.Option(False, "--all-groups",
                                    help="Capture every Kafka Streams application into a fleet snapshot (-o DIR)."),
    topology: Path | None = typer.Option(
        None, "--topology", help="The application's Topology#describe() text (it logs it at start); '-' = stdin."),
    topology_dir: Path | None = typer.Option(None, "--topology-dir",
                                             help="With --all-groups: <application.id>.txt per application."),
    infer_topologies: bool = typer.Option(
        False, "--infer-topologies",
        help="With --all-groups: capture groups without a topology file too (topology read off their assignments)."),
    streams_config: Path | None = typer.Option(
        None, "--streams-config", help="The application's Kafka Streams properties file (the leader's configs)."),
    streams_config_dir: Path | None = typer.Option(
        None, "--streams-config-dir", help="With --all-groups: <application.id>.properties per application."),
    command_config: Path | None = typer.Option(
        None, "--command-config", help="Client properties: security.protocol, sasl.*, ssl.* (as Kafka's tools)."),
    timeout: float = typer.Option(DEFAULT_CAPTURE_TIMEOUT_S, "--timeout", min=0.5,
                                  help="Seconds to wait for the cluster before giving up."),
    output: Path = out_option("The GROUP.json to write (a directory with --all-groups).", required=True),
    protocol: str = typer.Option(
        "auto", "--protocol",
        help="auto: a streams group (group.protocol=streams, KIP-1071) when the broker lists it as one, else "
             "classic; streams or classic: insist."),
    watch: bool = typer.Option(
        False, "--watch",
        help="Keep reading the group and record every new assignment (streams: target-assignment epoch; classic: "
             "generation) into the history directory -o, until --until or Ctrl-C."),
    until: str | None = typer.Option(None, "--until",
                                     help="With --watch: stop after N recorded assignments, or after a duration "
                                          "(90s, 10m, 2h)."),
    interval: float = typer.Option(1.0, "--interval", min=0.05, help="With --watch: seconds between two reads."),
    force: Force = False,
) -> None:
    """Read what a Kafka Streams group's leader used at its last rebalance, and the assignment it made.

    A streams group (group.protocol=streams) is read with StreamsGroupDescribe into a streams-group file: the
    broker's topology, every member's current and target assignment, the group's configs.
    """
    from rich.markup import escape

    from taskassign.api.capture import capture_application, capture_fleet, write_group_file
    from taskassign.formats.output_paths import OutputGuard, check_not_input

    if all_groups == (group is not None):
        raise UserInputError("give --group APPLICATION_ID, or --all-groups for every application of the cluster")
    guard = OutputGuard.of(force, topology, streams_config, command_config)
    if all_groups:
        check_not_input(output, [p for p in (topology_dir, streams_config_dir, command_config) if p], contains=True)
    elif not watch:
        guard.file(output)
    errors = stderr_console()
    if (until is not None) and not watch:
        raise UserInputError("--until goes with --watch")
    if watch:
        if group is None:
            raise UserInputError("--watch follows one group: give --group APPLICATION_ID")
        _watch(bootstrap_server, group, output, protocol=protocol, until=until, interval=interval, timeout=timeout,
               command_config=command_config, topology=topology, streams_config=streams_config, guard=guard)
        return
    if group is not None:
        if topology_dir or streams_config_dir or infer_topologies:
            raise UserInputError("--topology-dir, --streams-config-dir and --infer-topologies go with --all-groups")
        from taskassign.api.capture import read_topology
        from taskassign.api.streams_capture import capture_streams_application, write_streams_group_file
        from taskassign.formats.properties import read_properties

        # The user's files are read before any connection: a mistake in them fails first, whatever the group is.
        if topology is not None and str(topology) != "-":
            read_topology(topology)
        if streams_config is not None:
            read_properties(streams_config)
        with errors.status(f"reading group {group} from {bootstrap_server}"):
            streams = capture_streams_application(bootstrap_server, group, protocol=protocol,
                                                  command_config_file=command_config, timeout=timeout,
                                                  now_ms=_wall_clock_ms)
        if streams is not None:
            if topology or streams_config:
                errors.print("[yellow]note:[/] a streams group's topology and configs are the broker's; --topology "
                             "and --streams-config are not used")
            write_streams_group_file(streams.document, output, guard)
            stdout_console().print(_streams_summary(streams.document, streams.notes, output))
            return
        with errors.status(f"reading group {group} from {bootstrap_server}"):
            result = capture_application(bootstrap_server, group, topology_file=topology,
                                         streams_config_file=streams_config, command_config_file=command_config,
                                         timeout=timeout, now_ms=_wall_clock_ms)
        write_group_file(result.document, output, guard)
        stdout_console().print(_group_summary(result, output))
        return
    if topology or streams_config:
        raise UserInputError("with --all-groups give --topology-dir and --streams-config-dir (one file per "
                             "application)")
    from taskassign.api.streams_capture import capture_streams_groups

    with errors.status(f"reading the groups of {bootstrap_server}") as status:
        # The snapshot first: writing it replaces the whole directory; the streams groups then go into its folder.
        fleet = None if protocol == "streams" else capture_fleet(
            bootstrap_server, output, topology_dir=topology_dir, streams_config_dir=streams_config_dir,
            command_config_file=command_config, infer_topologies=infer_topologies, timeout=timeout,
            now_ms=_wall_clock_ms, progress=lambda g: status.update(f"reading group {g} from {bootstrap_server}"))
        streams_written, streams_skipped = ([], []) if protocol == "classic" else capture_streams_groups(
            bootstrap_server, output, command_config_file=command_config, timeout=timeout, now_ms=_wall_clock_ms,
            progress=lambda g: status.update(f"reading streams group {g} from {bootstrap_server}"))
    streams_names = {g for g, _ in streams_written} | {g for g, _ in streams_skipped}
    if fleet is not None:
        stdout_console().print(_fleet_summary(fleet, hide=streams_names))
    if streams_written or streams_skipped:
        table = new_table()
        table.add_column("streams group")
        table.add_column("captured")
        for g, path in streams_written:
            table.add_row(escape(g), f"yes: {escape(str(path))}")
        for g, reason in streams_skipped:
            table.add_row(escape(g), f"[red]no[/]: {escape(reason)}")
        stdout_console().print(table)


def _group_summary(result: CapturedGroup, output: Path) -> RenderableType:
    from rich.console import Group
    from rich.text import Text
    doc = result.document
    members = doc["members"]
    clients = {m["subscription"]["decoded"]["user_data"]["process_id"] for m in members}
    subs = doc["topology"]["subtopologies"]
    lines: list[RenderableType] = [Text.assemble(
        ("captured ", "dim"), (doc["name"], "bold"), ("  ", ""),
        (f"{len(members)} members in {len(clients)} clients, {len(subs)} subtopologies, {len(doc['topics'])} topics",
         ""),
    )]
    lines.extend(Text(f"note: {n}", style="yellow") for n in result.notes)
    lines.append(Text(f"wrote {output}; check Kafka's assignment with: taskassign rebalance {output}", style="dim"))
    return Group(*lines)


def _watch(bootstrap: str, group: str, output: Path, *, protocol: str, until: str | None, interval: float,
           timeout: float, command_config: Path | None, topology: Path | None, streams_config: Path | None,
           guard: OutputGuard) -> None:
    from rich.markup import escape
    from rich.text import Text

    from taskassign.api.watch import parse_until, watch_group

    console = stdout_console()
    limit = parse_until(until)
    errors = stderr_console()
    errors.print(f"[dim]watching group {escape(group)} at {escape(bootstrap)} (Ctrl-C stops; every file written "
                 "stays)[/]")
    result = watch_group(bootstrap, group, output, protocol=protocol, limit=limit, interval=interval,
                         timeout=timeout, command_config_file=command_config, topology_file=topology,
                         streams_config_file=streams_config, now_ms=_wall_clock_ms, guard=guard,
                         on_written=lambda p: console.print(f"recorded {escape(str(p))}"))
    how = "interrupted" if result.interrupted else "stopped"
    console.print(Text(f"{how}: {len(result.written)} {result.protocol} assignment(s) recorded in {output}; replay "
                       f"them with: taskassign rebalance {output}", style="dim"))


def _streams_summary(doc: dict[str, object], notes: tuple[str, ...], output: Path) -> RenderableType:
    from rich.console import Group
    from rich.text import Text
    members = doc["members"]
    capture = doc["capture"]
    assert isinstance(members, list) and isinstance(capture, dict)
    processes = {m["processId"] for m in members}
    line = capture.get("brokerReleaseLine")
    lines: list[RenderableType] = [Text.assemble(
        ("captured streams group ", "dim"), (str(doc["name"]), "bold"), ("  ", ""),
        (f"{len(members)} members in {len(processes)} processes, {len(doc['subtopologies'])} subtopologies "  # type: ignore[arg-type]
         f"(target assignment epoch {capture['assignmentEpoch']}, group epoch {capture['groupEpoch']}, "
         f"{capture['groupState']}; Kafka {line or 'older than 3.9'})", ""),
    )]
    lines.extend(Text(f"note: {n}", style="yellow") for n in notes)
    lines.append(Text(f"wrote {output}; replay the broker's assignor with: taskassign rebalance {output}",
                      style="dim"))
    return Group(*lines)


def _fleet_summary(fleet: FleetCapture, *, hide: set[str] | frozenset[str] = frozenset()) -> RenderableType:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text
    table = new_table()
    table.add_column("group")
    table.add_column("captured")
    table.add_column("reason")
    for g in fleet.captured:
        table.add_row(escape(g), "yes", "")
    for s in fleet.skipped:
        if s.app_id in hide:  # a streams group: captured (or reported) by the streams side
            continue
        table.add_row(escape(s.app_id), "[red]no[/]", escape(s.reason))
    written = fleet.written
    rows = ", ".join(f"{name} {count:,}" for name, count in sorted(written.rows.items()))
    return Group(table, Text(f"wrote {len(written.applications)} application(s) to {written.directory} ({rows}); "
                             f"run it with: taskassign pipeline run --input {written.directory} --output OUT",
                             style="dim"))
