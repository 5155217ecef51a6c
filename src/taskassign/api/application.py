"""One application from whichever file describes it: a scenario file, or a GROUP.json (hand-written or
captured from a live cluster), so that ``assign``, ``simulate``, ``validate`` and ``optimize`` take both."""

from __future__ import annotations

from pathlib import Path

from taskassign.formats.group import GROUP_FORMAT, parse_group
from taskassign.formats.json_io import load_json_file
from taskassign.formats.scenario import Scenario, parse_scenario
from taskassign.internals.gc_pause import gc_paused
from taskassign.leader.group import group_scenario

__all__ = ("read_application",)


def read_application(path: str | Path) -> Scenario:
    """The scenario of ``path``: a scenario file as it is, a group file as its leader sees it."""
    with gc_paused():  # millions of objects, none of them garbage (internals.gc_pause)
        return _read_application(Path(path))


def _read_application(p: Path) -> Scenario:
    doc = load_json_file(p)
    if isinstance(doc, dict) and doc.get("format") == GROUP_FORMAT:
        name = p.name.removesuffix(".json").removesuffix(".group")
        return group_scenario(parse_group(doc, source=str(p), default_name=name))
    return parse_scenario(doc, source=str(p), default_name=p.name.removesuffix(".json").removesuffix(".scenario"))
