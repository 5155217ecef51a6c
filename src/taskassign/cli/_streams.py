"""``taskassign assign`` under the streams protocol: run a broker-side assignor, print or write its answer."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text

from taskassign.api.streams import StreamsOutcome, assign_streams
from taskassign.assignors.registry import ResolvedAssignor
from taskassign.cli._common import EXIT_FAILED, EXIT_OK, new_table, stdout_console
from taskassign.cli._metrics_render import metrics_table, state_in_bytes
from taskassign.cli._render import MAX_CLIENT_ROWS, name_width, task_preview
from taskassign.errors import UserInputError
from taskassign.formats.client_names import client_names, facts_from_streams_group, names_for_states
from taskassign.formats.json_io import dump_json, to_json_text
from taskassign.formats.scenario import Scenario
from taskassign.streams_protocol.configs import balanced_configs, sticky_num_standby
from taskassign.streams_protocol.coverage import coverage
from taskassign.streams_protocol.model import StreamsGroup, TaskMap, task_name

__all__ = ("assign_streams_command",)


def assign_streams_command(
    source: Scenario | StreamsGroup, assignor: ResolvedAssignor | None, *, output: Path | None, as_json: bool,
    with_metrics: bool, explain: bool, kafka_version: str | None = None,
) -> int:
    """Run, print (``--json``: the output document) and write (``-o``); returns the exit code."""
    if explain:
        raise UserInputError("--explain is for the classic assignors; under the streams protocol the broker's "
                             "assignors give no reasons (compare with --metrics or `taskassign streams-migration`)")
    outcome = assign_streams(source, assignor, with_metrics=with_metrics, kafka_version=kafka_version)
    console = stdout_console()
    if output is not None:
        dump_json(outcome.document, output)
    if as_json:
        console.out(to_json_text(outcome.document), end="")
    else:
        console.print(streams_summary(outcome))
        if outcome.metrics is not None:
            names = names_for_states(outcome.scenario.state) if outcome.scenario is not None else None
            in_bytes = outcome.scenario is not None and state_in_bytes(outcome.scenario.state)
            console.print(metrics_table(outcome.metrics, names=names, in_bytes=in_bytes))
        if output is not None:
            console.print(f"[dim]wrote {escape(str(output))}[/]")
    return EXIT_OK if outcome.error is None else EXIT_FAILED


def _tasks(tasks: TaskMap) -> list[str]:
    return [task_name(s, p) for s, partitions in tasks.items() for p in partitions]


def _process_names(outcome: StreamsOutcome) -> dict[str, str]:
    """Each process's name (``formats.client_names``): from the scenario a classic input came from, else from
    what the streams-group file's capture saw of its members (client ids, endpoints, hosts)."""
    if outcome.scenario is not None:
        return {str(pid): name for pid, name in names_for_states(outcome.scenario.state).items()}
    return client_names(facts_from_streams_group(outcome.group.members, outcome.group.capture))


def streams_summary(outcome: StreamsOutcome) -> RenderableType:
    """A header, one row per member, and what the answer left uncovered."""
    group = outcome.group
    kafka = outcome.document["assignor"]
    header = Text.assemble(
        ("group ", "dim"), (group.name, "bold"), ("   assignor ", "dim"), (outcome.assignor, "bold"),
        (f" (Kafka's broker-side {kafka!r}, streams protocol)", "dim"),
        ("   kafka ", "dim"), (str(outcome.document.get("kafka_version")), "bold"), ("   error ", "dim"),
        (outcome.error.java_type, "bold red") if outcome.error else ("none", "bold green"), "\n",
        (f"{group.task_count} tasks ({group.stateful_task_count} stateful) in {len(group.subtopologies)} "
         f"subtopologies, {len(group.process_ids)} processes, {len(group.members)} members, "
         f"configs {dict(group.configs)}", "dim"),
    )
    parts: list[RenderableType] = [header]
    if any(m.rack_id is not None or m.client_tags for m in group.members):
        parts.append(Text("racks and client tags are not read by these assignor revisions (KAFKA-20999 adds "
                          "tag-aware standbys)", style="dim"))
    if outcome.error is not None:
        parts.append(Text(f"{outcome.error.java_type}: {outcome.error.message} (Kafka's assignor throws here; the "
                          "group's target assignment stays as it was)", style="bold red"))
        return Group(*parts)
    assert outcome.assignment is not None
    names = _process_names(outcome)
    members = sorted(group.members, key=lambda m: (m.process_id, m.member_id))
    threads = {m.member_id: (t.group(0) if (t := re.search(r"StreamThread-\d+", m.member_id)) else m.member_id)
               for m in members}
    table = new_table(pad_edge=False)
    table.add_column("client", overflow="fold", min_width=name_width(names.values()))
    table.add_column("member", overflow="fold", min_width=name_width(threads.values()))
    table.add_column("rack", overflow="fold")
    for column in ("active", "standby"):
        table.add_column(column, justify="right", no_wrap=True)
    for column in ("active tasks", "standby tasks"):
        table.add_column(column, overflow="fold", ratio=1)
    for member in members[:MAX_CLIENT_ROWS]:
        answer = outcome.assignment.members[member.member_id]
        active, standby = _tasks(answer.active_tasks), _tasks(answer.standby_tasks)
        table.add_row(names.get(member.process_id, member.process_id), threads[member.member_id],
                      member.rack_id or "-", str(len(active)), str(len(standby)), task_preview(active),
                      task_preview(standby))
    parts.append(table)
    if len(members) > MAX_CLIENT_ROWS:
        parts.append(Text(f"… {len(members) - MAX_CLIENT_ROWS} more members (write the full result with -o)",
                          style="dim"))
    standbys = sticky_num_standby(group.configs) if kafka == "sticky" else \
        balanced_configs(group.configs).num_standby_replicas
    covered = coverage(group, outcome.assignment, standbys)
    processes = len(group.process_ids)
    if group.stateful_task_count and standbys > max(processes - 1, 0):
        parts.append(Text(f"num.standby.replicas={standbys} but {processes} processes: at most {max(processes - 1, 0)} "
                          "standby per task fits (one copy per process); Kafka drops the rest without a word",
                          style="yellow"))
    if covered.is_complete:
        parts.append(Text("complete: every task has an active, every stateful task its standbys", style="green"))
    else:
        if covered.unassigned_tasks:
            parts.append(Text(f"unassigned: {task_preview(covered.unassigned_tasks)}", style="yellow"))
        if covered.standby_shortfalls:
            short = [f"{s.task} ({s.placed}/{s.wanted})" for s in covered.standby_shortfalls]
            parts.append(Text(f"standbys short: {task_preview(short)}", style="yellow"))
    return Group(*parts)
