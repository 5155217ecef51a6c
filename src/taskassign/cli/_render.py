"""Rich renderables for results; commands print them on their one console."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from itertools import chain

from rich.console import Group, RenderableType
from rich.text import Text

from taskassign.cli._common import new_table
from taskassign.formats.client_names import names_for_states
from taskassign.formats.scenario import Scenario
from taskassign.formats.units import human_bytes, relative_deadline, short_ids
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.run import RebalanceResult
from taskassign.model import AssignmentError
from taskassign.validation import CompletenessReport

MAX_CLIENT_ROWS = 60
MAX_TASKS_SHOWN = 12


#: Room a value column needs (``"8.3 GB *"``, ``"12.3 M *"``), and the metric names' column.
VALUE_WIDTH = 10
LABEL_WIDTH = 30


def column_labels(names: tuple[str, ...], width: int) -> tuple[tuple[str, ...], str | None]:
    """The columns' headers: the names when they fit ``width``, else letters (A, B, ...) and the key saying
    which assignor each letter is (a name is never cut)."""
    needed = LABEL_WIDTH + sum(2 + max(len(n), VALUE_WIDTH) for n in names)
    if needed <= width or len(names) > 26:
        return names, None
    letters = tuple(chr(ord("A") + i) for i in range(len(names)))
    return letters, "columns: " + "; ".join(f"{k} = {n}" for k, n in zip(letters, names, strict=True))


def clock(ms: int) -> str:
    """A time since the start: ``+h:mm:ss`` (``.mmm`` when not a whole second)."""
    seconds, millis = divmod(ms, 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"+{hours}:{minutes:02d}:{seconds:02d}" + (f".{millis:03d}" if millis else "")


def task_preview(tasks: Iterable[TaskId | str], limit: int = MAX_TASKS_SHOWN, total: int | None = None) -> str:
    """The first ``limit`` task names, then how many more (of ``total`` when ``tasks`` holds only the first)."""
    items = list(tasks)  # only the shown ones become text (a preview of 10^5 tasks shows a dozen)
    count = len(items) if total is None else total
    shown = " ".join([str(t) for t in items[:limit]])
    return shown if count <= limit else f"{shown} … (+{count - limit})"


def error_text(error: AssignmentError) -> Text:
    return Text(error.name, style="bold green" if error is AssignmentError.NONE else "bold red")


def completeness_text(report: CompletenessReport) -> Text:
    if report.is_complete:
        return Text("complete: every task has an active, every stateful task its standbys", style="green")
    return Text("\n".join(report.lines()), style="yellow")


def explanation_text(sentences: list[str]) -> RenderableType:
    """The ``--explain`` section: one line per moved task."""
    if not sentences:
        return Text("explain: no task moved", style="dim")
    lines = [Text(f"explain: {len(sentences)} move(s)", style="bold")]
    lines += [Text(f"  {sentence}") for sentence in sentences]
    return Group(*lines)


def client_labels(names: Mapping[ProcessId, str] | None, pids: Iterable[ProcessId]) -> Mapping[ProcessId, str]:
    """``names`` (``formats.client_names``) for ``pids``, short process ids for any it lacks."""
    wanted = list(pids)
    short = short_ids(wanted)
    return {pid: (names or {}).get(pid) or short[pid] for pid in wanted}


#: A client column is at least as wide as its longest name up to this; longer names wrap (never cut).
MAX_NAME_WIDTH = 24


def name_width(names: Iterable[str]) -> int:
    """The width a column of client names asks for: the longest name, at most ``MAX_NAME_WIDTH``."""
    return min(max((len(n) for n in names), default=6), MAX_NAME_WIDTH)


def result_summary(scenario: Scenario, result: RebalanceResult,
                   names: Mapping[ProcessId, str] | None = None) -> RenderableType:
    """A header (assignor, error, probing, completeness) and one row per client (named as the operator knows
    it: ``formats.client_names``)."""
    state = scenario.state
    sizes = [info.state_bytes for info in state.tasks.values() if info.state_bytes is not None]
    state_bytes = sum(sizes) if sizes else None
    header = Text.assemble(
        ("scenario ", "dim"), (scenario.name, "bold"),
        ("   assignor ", "dim"), (result.assignor, "bold"),
        ("   error ", "dim"), error_text(result.error),
        ("   probing rebalance ", "dim"), ("yes" if result.probing_rebalance_needed else "no", "bold"),
        ("   kafka ", "dim"), (state.configs.kafka_version, "bold"),
        ("\n"),
        (f"{len(state.tasks)} tasks ({len(state.stateful_task_ids)} with changelogs), "
         f"{len(state.clients)} clients, {sum(c.num_processing_threads for c in state.clients.values())} "
         f"threads, num.standby.replicas={state.configs.num_standby_replicas}"
         + (f", {human_bytes(state_bytes)} of state" if state_bytes is not None else ""), "dim"),
    )
    parts: list[RenderableType] = [header]
    if result.fallback_reason:
        parts.append(Text(f"assignor raised TaskAssignmentException ({result.fallback_reason}): previous "
                          "assignment kept, immediate follow-up rebalance scheduled", style="yellow"))
    table = new_table(pad_edge=False)
    rows = list(result.group.clients.items())
    short = client_labels(names if names is not None else names_for_states(state), (pid for pid, _ in rows))
    table.add_column("client", overflow="fold", min_width=name_width(short.values()))
    table.add_column("rack", overflow="fold")
    for column in ("threads", "active", "standby"):
        table.add_column(column, justify="right", no_wrap=True)
    for column in ("active tasks", "standby tasks"):
        table.add_column(column, overflow="fold", ratio=1)
    table.add_column("follow-up", no_wrap=True)
    for pid, assignment in rows[:MAX_CLIENT_ROWS]:
        client = state.clients.get(pid)
        active, standby = assignment.active_tasks(), assignment.standby_tasks()
        deadline = assignment.followup_rebalance_deadline
        table.add_row(
            short[pid], (client.rack_id or "-") if client else "?",
            str(client.num_processing_threads) if client else "?",
            str(len(active)), str(len(standby)), task_preview(active), task_preview(standby),
            relative_deadline(deadline, state.now_ms),
        )
    parts.append(table)
    if len(rows) > MAX_CLIENT_ROWS:
        parts.append(Text(f"… {len(rows) - MAX_CLIENT_ROWS} more clients (write the full result with -o)",
                          style="dim"))
    parts.append(completeness_text(result.completeness))
    withheld = [a.withheld for cs in (result.group.consumers or {}).values() for a in cs.values() if a.withheld]
    if withheld:
        count = sum(map(len, withheld))
        parts.append(Text(f"{count} task(s) withheld from their new threads until the previous owner "
                          "revokes their partitions; those threads rejoin at once (cooperative rebalancing): "
                          + task_preview(heapq.nsmallest(MAX_TASKS_SHOWN, chain.from_iterable(withheld)), total=count),
                          style="yellow"))
    return Group(*parts)
