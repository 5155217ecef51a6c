"""Where a command may write: the one check every writer runs before it writes (docs/commands.md, "Output files").

A command writes a file only where none is, or over a file taskassign wrote, or (``--force``) over any file;
into a directory it writes only the file names it owns, each under the same rule, and deletes nothing else.
An output that is one of the command's inputs (the same file after resolving symbolic links, hard links
included) is refused even with ``--force``: ``assign X -o X`` would destroy its input.

An empty file holds nothing to lose and is written over too (what ``mktemp`` makes). A file is taskassign's
when its first bytes are one of taskassign's headers: a JSON document or JSON-lines log whose first key is
``"format": "taskassign/..."``, the CSV header of ``simulate``'s ``rebalances.csv``, an HTML page carrying
``<meta name="generator" content="taskassign">``, or a jar holding the bridge's classes (``dev/taskassign/``).
Raw Kafka bytes (``encode -o``) carry no header: an existing file needs ``--force``.
Whole directories that a command replaces (snapshots, pipeline outputs) go through
``check_replaceable_directory``: absent, empty, or one taskassign wrote, as the caller's marker check
(fleet.snapshot_dir, pipeline.output) says; ``--force`` does not apply to them, since replacing one deletes
everything in it.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from taskassign.errors import OutputFileError

__all__ = ("FORCE_HINT", "HTML_GENERATOR", "OutputGuard", "check_not_input", "check_replaceable_directory",
           "replaceable", "same_file", "written_by_taskassign")

#: The ``<meta>`` element every HTML page taskassign writes carries in its head.
HTML_GENERATOR = '<meta name="generator" content="taskassign">'
#: What a refusal tells the user to do.
FORCE_HINT = "choose another path, or give --force to replace it"

_HEAD_BYTES = 4096
_JSON_HEADER = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"taskassign/')
_CSV_HEADER = b"index,time_ms,offset_ms,reasons,leader,error,"
_JAR_ENTRY = "dev/taskassign/"


def replaceable(path: Path) -> bool:
    """Whether ``path`` may be written over without ``--force``: an empty regular file (nothing to lose: what
    ``mktemp`` makes) or one taskassign wrote."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and (info.st_size == 0 or written_by_taskassign(path))


def written_by_taskassign(path: Path) -> bool:
    """True when ``path`` is a regular file that starts with one of taskassign's headers (module docstring).
    A FIFO or device is never opened (opening a FIFO would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return False
    if _JSON_HEADER.match(head) or head.startswith(_CSV_HEADER):
        return True
    if head.lstrip().lower().startswith(b"<!doctype html") and HTML_GENERATOR.encode() in head:
        return True
    if head.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as archive:
                return any(name.startswith(_JAR_ENTRY) for name in archive.namelist())
        except (OSError, zipfile.BadZipFile, ValueError):
            return False
    return False


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file (symbolic links resolved, hard links included); False when
    either is missing."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_not_input(output: Path, inputs: Iterable[Path], *, contains: bool = False) -> None:
    """Refuse an output that is one of ``inputs`` (``--force`` or not). With ``contains`` (a directory the
    command replaces as a whole), an input inside ``output`` is refused too."""
    for source in inputs:
        if str(source) == "-":
            continue
        if same_file(output, source):
            raise OutputFileError(str(output), f"is the input {source}: refusing to write over it (even with "
                                               "--force); choose another path")
        if contains and _inside(source, output):
            raise OutputFileError(str(output), f"holds the input {source}: refusing to replace it (even with "
                                               "--force); choose another path")


def check_replaceable_directory(target: Path, what: str, not_ours: Callable[[Path], str | None],
                                inputs: Iterable[Path] = ()) -> None:
    """A directory a command replaces as a whole must be absent, empty, or ``what`` (``not_ours(target)``: why it
    is not one, or None), never a symbolic link, never an input or holding one. UserInputError otherwise."""
    check_not_input(target, inputs, contains=True)
    if target.is_symlink():
        raise OutputFileError(str(target), "is a symbolic link; give the directory itself")
    if target.exists() and not target.is_dir():
        raise OutputFileError(str(target), "exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        problem = not_ours(target)
        if problem is not None:
            raise OutputFileError(str(target), f"exists, is not empty and is not {what} ({problem}); refusing to "
                                               "replace it")


def _inside(path: Path, directory: Path) -> bool:
    try:
        resolved, parent = Path(path).resolve(), Path(directory).resolve()
    except (OSError, RuntimeError):
        return False
    return parent in resolved.parents


@dataclass(frozen=True)
class OutputGuard:
    """One command's rule for its outputs: its inputs (never written over) and whether ``--force`` was given.
    Commands build one and call ``file`` or ``directory`` before writing anything."""

    force: bool = False
    inputs: tuple[Path, ...] = ()

    @classmethod
    def of(cls, force: bool, *inputs: Path | str | None) -> OutputGuard:
        return cls(force, tuple(Path(p) for p in inputs if p is not None and str(p) != "-"))

    def file(self, path: Path | str) -> Path:
        """Check that ``path`` may be written (module docstring); returns it. OutputFileError otherwise."""
        target = Path(path)
        check_not_input(target, self.inputs)
        if target.is_dir():
            raise OutputFileError(str(target), "is a directory; give the path of a file to write")
        if (target.exists() or target.is_symlink()) and not self.force and not replaceable(target):
            raise OutputFileError(str(target), f"exists and taskassign did not write it: not overwritten "
                                               f"({FORCE_HINT})")
        return target

    def directory(self, path: Path | str, names: Sequence[str]) -> Path:
        """Check that the files ``names`` may be written into the directory ``path`` (absent, or a directory
        where each of them is absent or taskassign's, unless ``--force``); returns ``path``."""
        target = Path(path)
        check_not_input(target, self.inputs)
        if (target.exists() or target.is_symlink()) and not target.is_dir():
            raise OutputFileError(str(target), "exists and is not a directory")
        for name in names:
            self.file(target / name)
        return target
