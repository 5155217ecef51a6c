"""``taskassign rebalance GROUP.json``: Kafka's group leader end to end, from subscription bytes to
every member's assignment bytes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import (
    EXIT_FAILED,
    config_overrides,
    handle_errors,
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
    assignor_option,
    json_option,
    out_option,
)
from taskassign.cli._what_if import announce_what_if, what_if_from_flags
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import RenderableType

    from taskassign.analysis.recorded_outcome import OutcomeComparison
    from taskassign.formats.group import GroupSpec
    from taskassign.ids import ProcessId
    from taskassign.leader.group import GroupRebalanceResult

MAX_MEMBER_ROWS = 80


@app.command()
@handle_errors
def rebalance(
    group: Path = typer.Argument(..., help="A GROUP.json file (docs/group-file.md)."),
    assignor: Annotated[str | None, assignor_option(
        "Built-in name (see `taskassign assignors`), module:Class or file.py:Class. Default: the assignor a captured "
        f"file names (the one Kafka ran), else {DEFAULT_ASSIGNOR}; --set task.assignor.class=... names one "
        "too.")] = None,
    output: Annotated[Path | None, out_option("Write the group assignment document here.")] = None,
    as_json: Annotated[bool, json_option("Print the group assignment document instead of a table.")] = False,
    kafka_compat: KafkaCompat = False,
    kafka_version: KafkaVersion = None,
    sets: SetConfigs = None,
    add_clients: AddClients = None,
    remove_clients: RemoveClients = None,
    racks_down: RacksDown = None,
    previous: Path | None = typer.Option(
        None, "--previous",
        help="Streams groups: the capture of the epoch before GROUP (its targets are the assignor's input)."),
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Run Kafka Streams' group leader on GROUP.json: every member's assignment bytes and what it does next.

    On a captured file (taskassign capture) the result is compared with what Kafka's leader sent, member by
    member: exit code 0 only when every member's bytes match.

    On a streams group's captures (a history directory of `capture --watch`, or one streams-group file,
    with --previous the capture before it) the broker's assignor is replayed for every target-assignment
    epoch and compared with the broker's targets: exit code 0 only when every epoch matches.
    """
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape
    from rich.text import Text

    from taskassign.analysis.recorded_outcome import SETS_NOTE
    from taskassign.api.rebalance import group_result_to_document, rebalance_group_file
    from taskassign.api.what_if import apply_what_if_to_group
    from taskassign.assignors.registry import resolve
    from taskassign.cli._streams_replay import is_streams_capture_input, replay_streams, write_and_render
    from taskassign.formats.group import group_with_config_overrides, read_group
    from taskassign.formats.json_io import dump_json, to_json_text
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.wire.versions import AssignorError

    if output is not None:  # a history directory's captures are inputs, each of them
        OutputGuard.of(force, group, previous, *(sorted(group.glob("*.json")) if group.is_dir() else ())).file(output)
    what_if = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    if not what_if.is_empty and (is_streams_capture_input(group) or group.is_dir()):
        raise UserInputError("--set, --add-clients, --remove-client and --rack-down alter one group file; a streams "
                             "group's capture or a history directory is replayed as captured, so they cannot apply")
    if is_streams_capture_input(group):
        replays = replay_streams(group, previous, kafka_version)
        text, rendered = write_and_render(replays, as_json=as_json, output=output)
        if text is not None:
            stdout_console().out(text, end="")
        if rendered is not None:
            stdout_console().print(rendered)
        if not all(r.matches for r in replays):
            raise typer.Exit(EXIT_FAILED)
        return
    if previous is not None:
        raise UserInputError("--previous goes with a streams group's capture")
    if group.is_dir():
        _classic_history(group, assignor)
        return
    user = resolve(assignor) if assignor is not None else None
    if user is not None:
        user.classic_class()  # a streams-protocol name: no place here
    spec = read_group(group)
    if user is None and what_if.assignor is not None:  # --set task.assignor.class: the user's choice, like -a
        user = resolve(what_if.assignor)
    chosen = user or resolve(spec.capture.assignor if spec.capture is not None else DEFAULT_ASSIGNOR)
    chosen.classic_class()
    if overrides := config_overrides(kafka_compat, kafka_version):
        spec = group_with_config_overrides(spec, overrides)
    what_if = what_if_from_flags(sets, add_clients, remove_clients, racks_down)
    unaltered = spec
    spec, notes = apply_what_if_to_group(spec, what_if)
    with stderr_console().status(f"rebalancing {len(spec.members)} members"):
        run = rebalance_group_file(spec, chosen)
    result, comparison = run.result, run.comparison
    document = group_result_to_document(result, comparison, kafka_version=spec.configs.kafka_version)
    verdict = None
    if notes:
        from taskassign.api.verdicts import group_what_if_verdict
        from taskassign.cli._what_if import what_if_flags_text

        verdict = group_what_if_verdict(unaltered, spec, chosen, source=str(group), flags=what_if_flags_text(what_if))
    if output is not None:
        dump_json(document, output)
    console = stdout_console()
    announce_what_if(stderr_console() if as_json else console, notes)
    if comparison is not None and comparison.by_client:
        (stderr_console() if as_json else console).print(Text(f"note: {SETS_NOTE}", style="yellow"))
    if as_json:
        console.out(to_json_text(document if verdict is None else {**document, "verdict": verdict.to_dict()}),
                    end="")
    else:
        console.print(summary(spec, result))
        if comparison is not None:
            console.print(comparison_text(comparison))
        if verdict is not None:
            from taskassign.cli._verdict_render import verdict_text

            console.print(verdict_text(verdict))
        if output is not None:
            console.print(f"[dim]wrote {escape(str(output))}[/]")
    if result.failure is not None or result.error_code is not AssignorError.NONE:
        raise typer.Exit(EXIT_FAILED)
    if comparison is not None and not comparison.all_match:
        raise typer.Exit(EXIT_FAILED)


def _classic_history(directory: Path, assignor: str | None) -> None:
    """A classic group's watch history: every generation's file rebalanced and compared with Kafka's bytes."""
    from rich.text import Text

    from taskassign.api.rebalance import rebalance_group_file
    from taskassign.assignors.registry import resolve
    from taskassign.cli._streams_replay import classic_history
    from taskassign.formats.group import read_group

    console = stdout_console()
    files = classic_history(directory)
    user = resolve(assignor) if assignor is not None else None
    matched = 0
    for path in files:
        spec = read_group(path)
        chosen = user or resolve(spec.capture.assignor if spec.capture is not None else DEFAULT_ASSIGNOR)
        comparison = rebalance_group_file(spec, chosen).comparison
        ok = comparison is not None and comparison.all_match
        matched += ok
        console.print(Text.assemble((f"{path.name}: ", "bold"), (
            "no recorded outcome" if comparison is None else
            f"{comparison.matching} of {len(comparison.members)} members match byte for byte",
            "green" if ok else "red")))
        if comparison is not None and not ok:
            console.print(comparison_text(comparison))
    console.print(Text(f"{matched} of {len(files)} generation(s) reproduced",
                       style="bold green" if matched == len(files) else "bold red"))
    if matched != len(files):
        raise typer.Exit(EXIT_FAILED)


def comparison_text(comparison: OutcomeComparison) -> RenderableType:
    """Kafka's recorded outcome against taskassign's: a verdict line, then what differs per member."""
    from rich.console import Group
    from rich.text import Text
    n, ok = len(comparison.members), comparison.matching
    style = "bold green" if comparison.all_match else "bold red"
    if comparison.by_client:  # the reason (SETS_NOTE) was said before the summary
        clients = [m for m in comparison.members if m.member_id.startswith("client ")]
        group_wide = [m for m in comparison.members if not m.member_id.startswith("client ")]
        standbys = ("" if not group_wide else ", and the standbys over the group" if all(m.matches for m in group_wide)
                    else ", but not the standbys over the group")
        lines: list[RenderableType] = [Text.assemble(
            ("Kafka's recorded outcome: ", "dim"),
            (f"{sum(m.matches for m in clients)} of {len(clients)} clients match as sets{standbys}", style))]
    else:
        lines = [Text.assemble(
            ("Kafka's recorded outcome: ", "dim"), (f"{ok} of {n} members match byte for byte", style),
            (" (follow-up time aside)", "dim"))]
    timed = [m.member_id for m in comparison.members if m.followup_time_differs and m.matches]
    if timed:
        lines.append(Text(f"  {len(timed)} member(s) ask for the same follow-up at another time (the leader's clock)",
                          style="dim"))
    for m in comparison.members:
        if not m.matches:
            lines.append(Text(f"  {m.member_id}:", style="bold"))
            lines.extend(Text(f"    {d}") for d in m.differences)
    return Group(*lines)


def summary(spec: GroupSpec, result: GroupRebalanceResult) -> RenderableType:
    """Header (assignor, versions, error, stability), one row per member, warnings."""
    from rich.console import Group
    from rich.text import Text

    from taskassign.wire.versions import AssignorError

    v = result.versions
    error_style = "bold green" if result.error_code is AssignorError.NONE else "bold red"
    header = Text.assemble(
        ("group ", "dim"), (result.group, "bold"), ("   assignor ", "dim"), (result.assignor, "bold"),
        ("   error ", "dim"), (result.error_code.name, error_style),
        ("   kafka ", "dim"), (spec.configs.kafka_version, "bold"),
        ("\n"),
        (f"{len(spec.members)} members; AssignmentInfo version {v.min_received}, commonly supported "
         f"{v.min_supported}", "dim"),
        (f"; version probing (a member speaks v{v.future_version})" if v.version_probing else "", "yellow"),
        ("\nstable" if result.stable else "\nnot stable: members rejoin (see 'next join')",
         "green" if result.stable else "yellow"),
    )
    parts: list[RenderableType] = [header]
    if result.failure:
        parts.append(Text(f"Kafka's leader fails: {result.failure}", style="bold red"))
    if result.members:
        from taskassign.formats.client_names import client_names, facts_from_group

        parts.append(_member_table(result, spec.now_ms, client_names(facts_from_group(spec))))
    parts.extend(Text(f"warning: {w}", style="yellow") for w in result.warnings)
    return Group(*parts)


def _member_table(result: GroupRebalanceResult, now_ms: int, names: Mapping[ProcessId, str]) -> RenderableType:
    import re

    from taskassign.cli._render import client_labels, name_width, task_preview

    rows = list(result.members.values())
    short = client_labels(names, (m.process_id for m in rows))
    table = new_table(pad_edge=False)
    threads = {m.member_id: (t.group(0) if (t := re.search(r"StreamThread-\d+", m.member_id)) else m.member_id)
               for m in rows}
    table.add_column("client", overflow="fold", min_width=name_width(short.values()))
    table.add_column("member", overflow="fold", min_width=name_width(threads.values()))
    table.add_column("parts", justify="right")
    joins = {m.member_id: _next_join(m.reaction.reason, m.reaction.next_rebalance_ms, now_ms) for m in rows}
    same_join = len(set(joins.values())) == 1
    for column in ("active tasks", "standby tasks"):
        table.add_column(column, overflow="fold", ratio=1)
    table.add_column("bytes", justify="right", no_wrap=True, min_width=5)
    for m in rows[:MAX_MEMBER_ROWS]:
        info = m.info
        active = sorted(set(info.active_tasks))
        standby = sorted(t for t, _ in info.standby_tasks)
        cells = [short[m.process_id], threads[m.member_id], str(len(m.assignment.topic_partitions())),
                 task_preview(active), task_preview(standby)]
        cells += [str(len(m.assignment_bytes))]
        table.add_row(*cells)
    if len(rows) > MAX_MEMBER_ROWS:
        table.add_row(f"… {len(rows) - MAX_MEMBER_ROWS} more (write them all with -o)",
                      *([""] * (len(table.columns) - 1)))
    notes = ("parts: partitions assigned; bytes: the AssignmentInfo's size; member: the member's stream "
                     "thread (-o writes the member ids)"
                     + (f"\nnext join, every member: {next(iter(joins.values()))}" if same_join and joins else "")
                     + "".join(f"\nnext join, {short[m.process_id]} {threads[m.member_id]}: {joins[m.member_id]}"
                               for m in rows[:MAX_MEMBER_ROWS] if not same_join)
                     + "".join(f"\nwithheld, {short[m.process_id]} {threads[m.member_id]}: "
                               f"{task_preview(m.consumer.withheld)} (until their previous owner revokes them)"
                               for m in rows[:MAX_MEMBER_ROWS] if m.consumer.withheld))
    from rich.console import Group
    from rich.text import Text

    return Group(table, Text(notes))


def _next_join(reason: str, deadline_ms: int | None, now_ms: int) -> str:
    """The member's next join as text: an epoch-ms deadline in the reason becomes a time from the leader's clock."""
    from taskassign.formats.units import relative_deadline

    if not deadline_ms:
        return reason
    return reason.replace(f"at {deadline_ms}", relative_deadline(deadline_ms, now_ms))
