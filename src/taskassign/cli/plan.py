"""``taskassign plan`` and ``taskassign approve``: propose, review, approve; the service then answers the
application's rebalances with the approved plan for as long as it fits the group (docs/bridge.md)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, new_table, stdout_console, use_plugin_limits
from taskassign.cli._options import Force, PluginMemory, PluginTimeout
from taskassign.errors import UserInputError

if TYPE_CHECKING:
    from taskassign.assignors.registry import ResolvedAssignor
    from taskassign.streams_protocol.model import StreamsGroup


@app.command()
@handle_errors
def plan(
    capture: Path = typer.Argument(..., help="The application: a GROUP.json from `taskassign capture`, or a "
                                   "scenario (a decision replayed from the audit log, too)."),
    assignor: str = typer.Option(..., "--assignor", "-a", help="The assignor that computes the plan."),
    output: Path = typer.Option(..., "--out", "-o", "--output", help="The plan file to write."),
    application_id: str | None = typer.Option(None, "--application-id", help="The application id the plan is for "
                                              "(default: the capture's group id / scenario name)."),
    as_json: bool = typer.Option(False, "--json", help="Print the diff as JSON instead of tables."),
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Compute an assignment for a captured application and show what would move (before -> after)."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape

    from taskassign.analysis.diff import diff_assignments
    from taskassign.analysis.metrics import compute_metrics
    from taskassign.api.application import read_input
    from taskassign.assignors.registry import resolve
    from taskassign.bridge.plans import make_plan
    from taskassign.bridge.request import answer_clients
    from taskassign.cli._diff_render import diff_text
    from taskassign.cli._metrics_render import state_in_bytes
    from taskassign.formats.json_io import dump_json, to_json_text
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.leader.assign import assign_scenario
    from taskassign.model import AssignmentError, KafkaStreamsAssignment
    from taskassign.streams_protocol.model import StreamsGroup

    OutputGuard.of(force, capture).file(output)
    resolved = resolve(assignor)
    source = read_input(capture)
    if isinstance(source, StreamsGroup):
        _streams_plan(source, resolved, output, application_id)
        return
    state = source.state
    result = assign_scenario(source, resolved)
    if result.error is not AssignmentError.NONE:
        raise UserInputError(f"{assignor} made an invalid assignment for {capture} ({result.error.name}); no plan")
    before = {pid: KafkaStreamsAssignment.of_tasks(pid, c.previous_active_tasks, c.previous_standby_tasks)
              for pid, c in state.clients.items()}
    after = dict(result.group.clients)
    diff = diff_assignments(before, after, state=state, before_metrics=compute_metrics(state, before),
                            after_metrics=compute_metrics(state, after))
    document = make_plan(source, application_id or source.name, assignor, answer_clients(after),
                         diff.to_document(), int(time.time() * 1000))
    dump_json(document, output)
    console = stdout_console()
    if as_json:
        console.out(to_json_text(diff.to_document()), end="")
        return
    from taskassign.formats.client_names import names_for_states

    console.print(diff_text(diff, title=f"{document['application_id']}: now -> {assignor}",
                            in_bytes=state_in_bytes(state), names=names_for_states(state), against="now"))
    console.print(f"wrote plan {document['plan_id']} to {escape(str(output))}; approve it with "
                  f"`taskassign approve {escape(str(output))} --service URL`")


def _streams_plan(group: StreamsGroup, assignor: ResolvedAssignor, output: Path, application_id: str | None) -> None:
    """A plan for a streams group (KIP-1071) with a broker-side assignor; the service matches it by fit."""
    from rich.markup import escape

    from taskassign.bridge.plans import make_streams_plan
    from taskassign.formats.json_io import dump_json
    from taskassign.streams_protocol.assignors import run_assignor

    kafka_name = assignor.kafka_name
    if kafka_name is None:
        raise UserInputError(f"{group.name}: a streams group is planned with a streams-protocol assignor "
                             f"(streams_sticky, streams_balanced), not {assignor.spec!r}")
    assignment = run_assignor(group, kafka_name)
    document = make_streams_plan(group, application_id or group.name, assignor.spec, assignment,
                                 int(time.time() * 1000))
    dump_json(document, output)
    console = stdout_console()
    table = new_table()
    for column in ("member", "active before", "active after", "standby after"):
        table.add_column(column)
    for member in group.members:
        after = document["clients"].get(member.member_id, {"active": [], "standby": []})
        before = sorted(f"{sid}:{p}" for sid, ps in member.active_tasks.items() for p in ps)
        table.add_row(escape(member.member_id), escape(" ".join(before)), escape(" ".join(after["active"])),
                      escape(" ".join(after["standby"])))
    console.print(table)
    console.print(f"wrote plan {document['plan_id']} to {escape(str(output))}; approve it with "
                  f"`taskassign approve {escape(str(output))} --service URL`")


@app.command()
@handle_errors
def approve(
    plan_file: Path = typer.Argument(..., help="The plan `taskassign plan` wrote."),
    service: str | None = typer.Option(None, "--service", help="The service's URL (it keeps the plan in its state "
                                       "directory)."),
    state_dir: Path | None = typer.Option(None, "--state-dir", help="Or write the plan straight into the service's "
                                          "state directory."),
    token_file: Path | None = typer.Option(None, "--token-file", help="The service's bearer token (or set "
                                           "TASKASSIGN_TOKEN)."),
    timeout_s: float = typer.Option(10.0, "--timeout", help="Seconds to wait for the service."),
    force: Force = False,
) -> None:
    """Hand a plan to the service: it answers the application's rebalances with it while it fits the group."""
    from rich.markup import escape

    from taskassign.bridge.plans import parse_plan, store_approved
    from taskassign.formats.json_io import load_json_file

    plan_doc = parse_plan(load_json_file(plan_file), source=str(plan_file))
    console = stdout_console()
    if (service is None) == (state_dir is None):
        raise UserInputError("give --service URL or --state-dir DIR (one of them)")
    if state_dir is not None:
        from taskassign.formats.output_paths import OutputGuard

        path = store_approved(state_dir, plan_doc, OutputGuard.of(force, plan_file, token_file))
        console.print(f"approved plan {plan_doc['plan_id']} for {escape(plan_doc['application_id'])}: "
                      f"{escape(str(path))}")
        return
    assert service is not None
    import urllib.error  # here: urllib.request imports http.client and email, which only approving needs
    import urllib.request

    from taskassign.bridge.token import read_token_file, shown_url

    token = read_token_file(token_file) if token_file else os.environ.get("TASKASSIGN_TOKEN")
    request = urllib.request.Request(service.rstrip("/") + "/v1/plans", data=json.dumps(plan_doc).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        raise UserInputError(f"{shown_url(service)}: HTTP {exc.code}: {body.strip()[:300]}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise UserInputError(f"{shown_url(service)}: cannot reach the service "
                             f"({getattr(exc, 'reason', exc)})") from None
    console.print(f"approved plan {answer.get('approved')} for {escape(str(answer.get('application_id')))} at "
                  f"{escape(shown_url(service))}")
