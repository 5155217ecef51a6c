"""``taskassign rebalance`` on streams-group captures (KIP-1071): the broker's assignor replayed for every
captured target-assignment epoch (``streams_protocol.replay``)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text

from taskassign.errors import UserInputError
from taskassign.formats.json_io import dump_json, load_json_file, to_json_text
from taskassign.streams_protocol.format import is_streams_group_document, parse_streams_group, streams_group_name
from taskassign.streams_protocol.model import StreamsGroup
from taskassign.streams_protocol.replay import EpochReplay, replay_history, replay_step, sort_by_epoch

__all__ = ("is_streams_capture_input", "replay_streams")

MAX_DIFFERENCE_LINES = 40


def classic_history(directory: Path) -> list[Path]:
    """The classic group files of a ``capture --watch`` history directory (``taskassign/group/v1``), by name."""
    from taskassign.formats.group import GROUP_FORMAT

    found = []
    for p in sorted(directory.iterdir()):
        if p.suffix == ".json" and p.is_file():
            try:
                doc = load_json_file(p)
            except UserInputError:
                continue
            if isinstance(doc, dict) and doc.get("format") == GROUP_FORMAT:
                found.append(p)
    return found


def is_streams_capture_input(path: Path) -> bool:
    """A history directory of streams-group files, or one streams-group file."""
    if path.is_dir():
        return not classic_history(path)
    try:
        return is_streams_group_document(load_json_file(path))
    except UserInputError:
        return False


def _read(path: Path) -> StreamsGroup:
    return parse_streams_group(load_json_file(path), source=str(path), default_name=streams_group_name(path))


def _history(directory: Path) -> list[StreamsGroup]:
    files = sorted(p for p in directory.iterdir() if p.suffix == ".json" and p.is_file())
    groups = {}
    for p in files:
        doc = load_json_file(p)
        if is_streams_group_document(doc):
            groups[str(p)] = parse_streams_group(doc, source=str(p), default_name=streams_group_name(p))
    if not groups:
        raise UserInputError(f"{directory}: no streams-group files (taskassign capture --watch -o DIR writes them)")
    names = {g.name for g in groups.values()}
    if len(names) > 1:
        raise UserInputError(f"{directory}: captures of several groups ({', '.join(sorted(names))}); one group's "
                             "history per directory")
    return [g for _, g in sort_by_epoch(groups)]


def replay_streams(path: Path, previous: Path | None, kafka_version: str | None = None) -> list[EpochReplay]:
    """Replay a history directory or one capture (with ``previous``); ``kafka_version`` replays that line instead
    of the captured broker's."""
    if kafka_version is not None:
        from taskassign.api.kafka_line import streams_kafka_line

        streams_kafka_line(kafka_version)  # 3.9 and 4.0: no streams groups, a clear error
    if path.is_dir():
        if previous is not None:
            raise UserInputError("--previous goes with one streams-group file, not a history directory")
        return replay_history(_history(path), kafka_version)
    return [replay_step(None if previous is None else _read(previous), _read(path), kafka_version)]


def _lines(replays: list[EpochReplay]) -> str:
    return ", ".join(dict.fromkeys(r.kafka_version for r in replays))


def replay_document(replays: list[EpochReplay]) -> dict[str, object]:
    return {"kafka_version": _lines(replays), "all_match": all(r.matches for r in replays), "epochs": [
        {"group": r.name, "assignment_epoch": r.epoch, "previous_epoch": r.previous_epoch, "members": r.members,
         "kafka_version": r.kafka_version, "matches": r.matches, "steps": list(r.steps), "error": r.error,
         "notes": list(r.notes),
         "differences": [{"member_id": d.member_id, "kind": d.kind, "broker_only": list(d.missing),
                          "replay_only": list(d.extra)} for d in r.differences]}
        for r in replays]}


def render(replays: list[EpochReplay]) -> RenderableType:
    lines: list[RenderableType] = [Text.assemble(("kafka ", "dim"), (_lines(replays), "bold"),
                                                 (" (the broker-side assignor replayed)", "dim"))]
    for r in replays:
        where = f"epoch {r.epoch}" if r.epoch is not None else r.name
        since = f" from epoch {r.previous_epoch}" if r.previous_epoch is not None else " from nothing"
        if r.error:
            lines.append(Text(f"{where}{since}: the assignor fails: {r.error}", style="bold red"))
        elif r.matches:
            how = "" if r.steps == ("one computation",) else f" through {len(r.steps)} computations: " + "; then ".join(
                r.steps)
            lines.append(Text.assemble((f"{where}{since}: ", "bold"),
                                       (f"{r.members} of {r.members} members match the broker's target", "green"),
                                       (how, "dim")))
        else:
            differing = len({d.member_id for d in r.differences})
            lines.append(Text.assemble((f"{where}{since}: ", "bold"),
                                       (f"{differing} of {r.members} members differ from the broker's target", "red")))
            lines.extend(Text(f"  {escape(str(d))}") for d in r.differences[:MAX_DIFFERENCE_LINES])
            if len(r.differences) > MAX_DIFFERENCE_LINES:
                lines.append(Text(f"  ... {len(r.differences) - MAX_DIFFERENCE_LINES} more", style="dim"))
        lines.extend(Text(f"  note: {n}", style="yellow") for n in r.notes)
    ok = sum(r.matches for r in replays)
    lines.append(Text(f"{ok} of {len(replays)} epoch(s) reproduced", style="bold green" if ok == len(replays)
                      else "bold red"))
    return Group(*lines)


def write_and_render(replays: list[EpochReplay], *, as_json: bool, output: Path | None) -> tuple[str | None,
                                                                                               RenderableType | None]:
    document = replay_document(replays)
    if output is not None:
        dump_json(document, output)
    if as_json:
        return to_json_text(document), None
    return None, render(replays)
