"""One application from whichever file describes it: a scenario file, or a GROUP.json (hand-written or
captured from a live cluster), so that ``assign``, ``simulate``, ``validate`` and ``optimize`` take both.
``read_input`` also takes a streams-group file (KIP-1071), which only ``assign`` runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError
from taskassign.formats.group import GROUP_FORMAT, parse_group
from taskassign.formats.json_io import load_json_file
from taskassign.formats.scenario import Scenario, parse_scenario
from taskassign.internals.gc_pause import gc_paused
from taskassign.leader.group import group_scenario
from taskassign.streams_protocol.format import is_streams_group_document, parse_streams_group, streams_group_name
from taskassign.streams_protocol.model import StreamsGroup

__all__ = ("read_application", "read_input")


def read_application(path: str | Path) -> Scenario:
    """The scenario of ``path``: a scenario file as it is, a group file as its leader sees it."""
    with gc_paused():  # millions of objects, none of them garbage (internals.gc_pause)
        return _read_application(Path(path))


def _read_application(p: Path) -> Scenario:
    doc = load_json_file(p)
    if is_streams_group_document(doc):
        raise UserInputError(f"{p}: a streams-group file (KIP-1071); this command reads a scenario or a group file "
                             "(`taskassign assign` runs streams groups)")
    return _application(doc, p)


def read_input(path: str | Path) -> Scenario | StreamsGroup:
    """A scenario or group file as ``read_application`` reads it, or a streams-group file as its group."""
    p = Path(path)
    with gc_paused():  # as read_application: the collector would rescan the whole document for nothing
        doc = load_json_file(p)
        if is_streams_group_document(doc):
            return parse_streams_group(doc, source=str(p), default_name=streams_group_name(p))
        return _application(doc, p)


def _application(doc: Any, p: Path) -> Scenario:
    if isinstance(doc, dict) and doc.get("format") == GROUP_FORMAT:
        name = p.name.removesuffix(".json").removesuffix(".group")
        return group_scenario(parse_group(doc, source=str(p), default_name=name))
    return parse_scenario(doc, source=str(p), default_name=p.name.removesuffix(".json").removesuffix(".scenario"))
