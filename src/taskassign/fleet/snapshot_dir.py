"""A snapshot directory that taskassign wrote, and how a writer replaces one without destroying anything else.

Both writers of fleet snapshots (``taskassign capture --all-groups``, capture.snapshot, and ``taskassign
fleet generate``, fleet.generate) put ``_taskassign_snapshot.json`` into what they write: its ``format`` is
``taskassign/fleet-snapshot/v1`` and its ``tables`` list the table files it wrote. A writer replaces a
target directory only when it is absent, empty, or such a snapshot holding nothing but what its marker lists
(so each writer recognises the other's snapshots, and nothing else); anything else is refused with the
reason and left untouched. The pipeline's reader ignores the marker (it looks for the table files only).

The new snapshot is written into a hidden staging directory beside the target and swapped in by two renames,
so a reader sees the old snapshot or the new one, never a mix. A writer killed mid-way leaves
``.NAME.<writer>-staging-*``: never read, safe to delete, never deleted automatically (a writer does not know
whether another writer is still filling it).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from taskassign.errors import UserInputError
from taskassign.formats.json_io import load_json_file, prepare_output_dir
from taskassign.formats.output_paths import check_replaceable_directory
from taskassign.streams_protocol.format import STREAMS_GROUP_FORMAT

__all__ = ("MARKER_FILE", "SNAPSHOT_FORMAT", "STREAMS_GROUPS_DIR", "check_snapshot_target", "marker_document",
           "not_a_snapshot", "replace_snapshot")

T = TypeVar("T")

SNAPSHOT_FORMAT = "taskassign/fleet-snapshot/v1"
MARKER_FILE = "_taskassign_snapshot.json"
#: ``capture --all-groups`` writes the streams groups (KIP-1071), which a snapshot does not hold, as files under
#: this folder of the snapshot directory; a snapshot directory may hold it, with taskassign's files only.
STREAMS_GROUPS_DIR = "streams-groups"
STREAMS_GROUP_SUFFIX = ".streams-group.json"


def check_snapshot_target(target: Path) -> None:
    """The target must be absent, an empty directory, or a snapshot taskassign wrote (nothing else in it);
    else UserInputError naming it and saying why."""
    check_replaceable_directory(target, "a snapshot taskassign wrote", _why_not_a_snapshot)
    if not target.exists():
        prepare_output_dir(target.parent, for_file=target)


def _why_not_a_snapshot(target: Path) -> str | None:
    """Why ``target`` is not a snapshot taskassign wrote, or None; its streams-groups folder (written by the same
    capture) does not count against it while it holds only streams-group files."""
    entries = sorted(p.name for p in target.iterdir())
    if STREAMS_GROUPS_DIR in entries and _only_streams_groups(target / STREAMS_GROUPS_DIR):
        entries.remove(STREAMS_GROUPS_DIR)
    if not entries:
        return None
    return not_a_snapshot(target, entries)


def _only_streams_groups(folder: Path) -> bool:
    """``folder`` holds nothing but streams-group files taskassign wrote (its format tag in each)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    for entry in folder.iterdir():
        if not entry.is_file() or entry.is_symlink() or not entry.name.endswith(STREAMS_GROUP_SUFFIX):
            return False
        try:
            doc = load_json_file(entry)
        except UserInputError:
            return False
        if not isinstance(doc, dict) or doc.get("format") != STREAMS_GROUP_FORMAT:
            return False
    return True


def not_a_snapshot(target: Path, entries: Sequence[str]) -> str | None:
    """Why ``target`` (holding ``entries``) is not a snapshot taskassign wrote, or None if it is one."""
    marker = target / MARKER_FILE
    if not marker.is_file():
        return f"no {MARKER_FILE}"
    try:
        doc = load_json_file(marker)
    except UserInputError:
        return f"{MARKER_FILE} does not read"
    tables = doc.get("tables") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("format") != SNAPSHOT_FORMAT or not isinstance(tables, dict):
        return f"{MARKER_FILE} is not a {SNAPSHOT_FORMAT} marker"
    listed = {MARKER_FILE} | {t.get("file") for t in tables.values() if isinstance(t, dict)}
    if STREAMS_GROUPS_DIR in entries and _only_streams_groups(target / STREAMS_GROUPS_DIR):
        listed.add(STREAMS_GROUPS_DIR)
    foreign = [e for e in entries if e not in listed or not (target / e).is_file()]
    if foreign:
        return f"it also holds {', '.join(foreign[:5])}"
    return None


def replace_snapshot(target: Path, writer: str, write: Callable[[Path], T]) -> T:
    """Write a snapshot into ``target``: ``write(staging)`` writes the tables and, last, the marker into a
    fresh staging directory path (which it creates); the target is checked before and again just before the
    swap (nothing may have appeared meanwhile). ``writer`` names the writer in the staging directory's name.
    Returns what ``write`` returned."""
    check_snapshot_target(target)
    staging = target.parent / f".{target.name}.{writer}-staging-{uuid.uuid4().hex[:12]}"
    try:
        written = write(staging)
        check_snapshot_target(target)
        _swap_in(staging, target, writer)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return written


def marker_document(writer: str, table_format: str, files: Mapping[str, str], rows: Mapping[str, int],
                    **details: Any) -> dict[str, Any]:
    """A marker: the format tag, who wrote it, and every table file with its row count (``details`` after
    them). No clock in it: the same input gives the same bytes."""
    return {
        "format": SNAPSHOT_FORMAT,
        "written_by": writer,
        "taskassign_version": _version(),
        "table_format": table_format,
        "tables": {name: {"file": files[name], "rows": rows[name]} for name in files},
        **details,
    }


def _version() -> str:
    try:
        return metadata.version("taskassign")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _swap_in(staging: Path, target: Path, writer: str) -> None:
    """Rename the finished snapshot into place: the old one (ours, or an empty directory) aside first, then
    deleted. A reader sees the old snapshot or the new one, never a mix."""
    if not target.exists():
        os.rename(staging, target)
        return
    old = target.parent / f".{target.name}.{writer}-old-{staging.name.rsplit('-', 1)[1]}"
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old)
