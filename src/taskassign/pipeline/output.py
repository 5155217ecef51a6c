"""Where a run writes: a hidden staging directory beside the output, renamed into place when complete.

A run writes every table and finally ``manifest.json`` into ``.<name>.staging-<run>/`` next to the
output directory, then swaps it in: the old output is renamed aside (``.<name>.old-<run>``), the staging
directory renamed to the output, the old one deleted. Readers therefore see the previous complete output, or
the new complete one, or (if the machine dies between the two renames) no output, never a partial one. An
output is complete exactly when its ``manifest.json`` says ``"complete": true``.

What a run replaces or deletes is provably a pipeline's own, never anything else:

* the output directory is replaced only when it is absent, empty, or a pipeline output: its
  ``manifest.json`` is a ``taskassign/pipeline-manifest/v1`` manifest and it holds nothing but what that
  manifest lists (the output tables). Anything else (another program's ``manifest.json``, a pipeline output
  with files someone added) is refused with the reason and left untouched;
* a leftover staging directory ``.<name>.staging-*`` is deleted only when it holds the run's marker
  ``_taskassign_staging.json`` (``taskassign/pipeline-staging/v1``) and no process holds the marker's lock:
  a run takes an exclusive ``flock`` on its marker when it creates the staging directory and keeps it until
  it commits or gives up, so a live run's staging directory (another run into the same output, on this
  machine or on a filesystem whose locks reach it) is never touched, while a dead run's lock is gone with it;
* a leftover ``.<name>.old-<run>`` is deleted only when it is a pipeline output (as above) and its run's
  staging directory is gone (that run has either committed, or died before it could finish).

The marker is removed just before the commit's renames (it is not part of the output), so a staging
directory left by a run that died at that very moment has no marker and is left for the user to delete,
as is anything else beside the output that does not carry a marker.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from taskassign.errors import UserInputError
from taskassign.formats.json_io import dump_json, load_json_file, prepare_output_dir, to_json_text
from taskassign.formats.output_paths import check_replaceable_directory

__all__ = (
    "MANIFEST_FILE",
    "MANIFEST_FORMAT",
    "STAGING_FORMAT",
    "STAGING_MARKER",
    "OutputDirectory",
    "RunLock",
    "not_a_pipeline_output",
    "read_manifest",
    "remove_leftovers",
)

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "taskassign/pipeline-manifest/v1"
#: The marker of a run's staging directory, and its format tag.
STAGING_MARKER = "_taskassign_staging.json"
STAGING_FORMAT = "taskassign/pipeline-staging/v1"


def read_manifest(output: str | Path) -> dict[str, Any]:
    """The manifest of a complete pipeline output; UserInputError if there is none."""
    path = Path(output) / MANIFEST_FILE
    if not path.is_file():
        raise UserInputError(f"{output}: no {MANIFEST_FILE}, so not a complete pipeline output")
    doc = load_json_file(path)
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT or doc.get("complete") is not True:
        raise UserInputError(f"{path}: not a complete {MANIFEST_FORMAT} manifest")
    return doc


@dataclass(frozen=True)
class OutputDirectory:
    """One run's view of the output directory: the staging path to write into, and the commit. ``lock``
    holds the staging marker open and ``flock``-ed: the sign that the run is alive."""

    final: Path
    staging: Path
    lock: RunLock | None = field(default=None, compare=False)

    @classmethod
    def prepare(cls, output: str | Path) -> OutputDirectory:
        final = Path(output).absolute()
        _check_replaceable(final)
        prepare_output_dir(final.parent, for_file=final)
        remove_leftovers(final)
        staging = final.parent / f".{final.name}.staging-{uuid.uuid4().hex[:12]}"
        staging.mkdir()
        try:
            lock = _mark(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return cls(final, staging, lock)

    def table(self, name: str) -> str:
        """Where table ``name`` is written during the run."""
        return str(self.staging / name)

    def commit(self, manifest: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
        """Write the manifest into the staging directory, then swap it in as the output; returns the
        output directory and the manifest as written."""
        written = {"format": MANIFEST_FORMAT, "complete": True, **manifest}
        dump_json(written, self.staging / MANIFEST_FILE)
        _check_replaceable(self.final)  # again: nothing foreign may have appeared meanwhile
        (self.staging / STAGING_MARKER).unlink()
        old = None
        if self.final.exists():
            old = self.final.parent / f".{self.final.name}.old-{self.staging.name.rsplit('-', 1)[1]}"
            os.rename(self.final, old)
        os.rename(self.staging, self.final)
        self.release()
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.final, written

    def abandon(self) -> None:
        """Remove the staging directory of a failed run (the previous output stays as it was)."""
        shutil.rmtree(self.staging, ignore_errors=True)
        self.release()

    def release(self) -> None:
        """Let go of the run's lock (commit and abandon do; a process that dies lets go of it too)."""
        if self.lock is not None:
            self.lock.release()


class RunLock:
    """The open, ``flock``-ed staging marker of a live run. Released by ``release`` (idempotent), when it is
    garbage-collected, or when the process ends, however it ends."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def release(self) -> None:
        self._file.close()


def not_a_pipeline_output(directory: Path) -> str | None:
    """Why the non-empty ``directory`` is not a pipeline output, or None: a pipeline output's manifest is a
    ``taskassign/pipeline-manifest/v1`` manifest and the directory holds nothing but what it lists."""
    manifest = directory / MANIFEST_FILE
    if not manifest.is_file():
        return f"no {MANIFEST_FILE}"
    try:
        doc = load_json_file(manifest)
    except UserInputError:
        return f"its {MANIFEST_FILE} does not read as JSON"
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        return f"its {MANIFEST_FILE} is not a taskassign pipeline manifest ({MANIFEST_FORMAT})"
    outputs = doc.get("outputs")
    listed = {MANIFEST_FILE} | ({o.get("path") for o in outputs.values() if isinstance(o, dict)}
                                if isinstance(outputs, dict) else set())
    foreign = sorted(p.name for p in directory.iterdir() if p.name not in listed)
    if foreign:
        return f"it also holds {', '.join(foreign[:5])}, which its manifest does not list"
    return None


def remove_leftovers(final: Path) -> list[Path]:
    """Delete what dead runs into ``final`` left beside it (see the module): staging directories with a
    marker nobody holds locked, and old outputs whose run is over. Returns what was deleted."""
    removed = []
    for staging in sorted(final.parent.glob(f".{final.name}.staging-*")):
        if _remove_if_dead(staging):
            removed.append(staging)
    for old in sorted(final.parent.glob(f".{final.name}.old-*")):
        run = old.name.rsplit("-", 1)[1]
        staging = final.parent / f".{final.name}.staging-{run}"
        if (old.is_dir() and not old.is_symlink() and not (staging.exists() or staging.is_symlink())
                and not_a_pipeline_output(old) is None):
            shutil.rmtree(old, ignore_errors=True)
            removed.append(old)
    return removed


def _check_replaceable(final: Path) -> None:
    check_replaceable_directory(final, "a pipeline output", not_a_pipeline_output)


def _mark(staging: Path) -> RunLock:
    """Write the staging marker and take its lock, held until the run commits or gives up."""
    fd = os.open(staging / STAGING_MARKER, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    file = os.fdopen(fd, "r+b", buffering=0)
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        doc = {"format": STAGING_FORMAT, "pid": os.getpid(), "host": socket.gethostname()}
        file.write(to_json_text(doc).encode("utf-8"))
    except BaseException:
        file.close()
        raise
    return RunLock(file)


def _remove_if_dead(staging: Path) -> bool:
    """Delete ``staging`` if it is a dead run's: it carries the marker and nobody holds the marker's lock
    (checked while holding it, so no run can take it over meanwhile). True if it was deleted."""
    if staging.is_symlink() or not staging.is_dir():
        return False
    marker = staging / STAGING_MARKER
    try:
        fd = os.open(marker, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live run holds it
        try:
            doc = json.loads(os.read(fd, 4096).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return False
        if not isinstance(doc, dict) or doc.get("format") != STAGING_FORMAT:
            return False
        shutil.rmtree(staging, ignore_errors=True)
        return True
    finally:
        os.close(fd)
