"""Where a run writes: a hidden staging directory beside the output, renamed into place when complete.

A run writes every table and finally ``manifest.json`` into ``.<name>.staging-<run>/`` next to the
output directory, then swaps it in: the old output is renamed aside, the staging directory renamed to
the output, the old one deleted. Readers therefore see the previous complete output, or the new
complete one, or (if the machine dies between the two renames) no output, never a partial one. An
output is complete exactly when its ``manifest.json`` says ``"complete": true``. Leftovers of runs
that died are removed by the next run. A directory that is not a pipeline output is never replaced.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError
from taskassign.formats.json_io import dump_json, load_json_file, prepare_output_dir

__all__ = ("MANIFEST_FILE", "MANIFEST_FORMAT", "OutputDirectory", "read_manifest")

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "taskassign/pipeline-manifest/v1"


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
    """One run's view of the output directory: the staging path to write into, and the commit."""

    final: Path
    staging: Path

    @classmethod
    def prepare(cls, output: str | Path) -> OutputDirectory:
        final = Path(output).absolute()
        if final.exists() and not final.is_dir():
            raise UserInputError(f"{final}: exists and is not a directory")
        if final.is_dir() and any(final.iterdir()) and not (final / MANIFEST_FILE).is_file():
            raise UserInputError(f"{final}: exists, is not empty and is not a pipeline output (no {MANIFEST_FILE}); "
                                 "refusing to replace it")
        prepare_output_dir(final.parent, for_file=final)
        for leftover in final.parent.glob(f".{final.name}.staging-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        for leftover in final.parent.glob(f".{final.name}.old-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        staging = final.parent / f".{final.name}.staging-{uuid.uuid4().hex[:12]}"
        staging.mkdir()
        return cls(final, staging)

    def table(self, name: str) -> str:
        """Where table ``name`` is written during the run."""
        return str(self.staging / name)

    def commit(self, manifest: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
        """Write the manifest into the staging directory, then swap it in as the output; returns the
        output directory and the manifest as written."""
        written = {"format": MANIFEST_FORMAT, "complete": True, **manifest}
        dump_json(written, self.staging / MANIFEST_FILE)
        old = None
        if self.final.exists():
            old = self.final.parent / f".{self.final.name}.old-{self.staging.name.rsplit('-', 1)[1]}"
            os.rename(self.final, old)
        os.rename(self.staging, self.final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.final, written

    def abandon(self) -> None:
        """Remove the staging directory of a failed run (the previous output stays as it was)."""
        shutil.rmtree(self.staging, ignore_errors=True)
