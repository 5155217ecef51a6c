"""Reading a finished run's output without Spark: its manifest and its Parquet tables through pyarrow, for the
fleet page (``taskassign report FLEET_OUTPUT``) and ``pipeline export``, which must work where Spark is not
installed or would take seconds to start."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from taskassign.errors import UserInputError
from taskassign.pipeline.output import MANIFEST_FILE, read_manifest

__all__ = ("OUTPUT_TABLES", "FleetOutput", "read_fleet_output")

#: Every table a run can write, in the order docs/pipeline.md describes them ("Outputs");
#: ``assignor_comparison`` only in a comparison run.
OUTPUT_TABLES = ("client_assignments", "consumer_assignments", "app_metrics", "fleet_metrics", "needs_attention",
                 "errors", "assignor_comparison")


@dataclass(frozen=True)
class FleetOutput:
    """A complete pipeline output: where it is, its manifest, and the tables it lists."""

    path: Path
    manifest: dict[str, Any]

    @property
    def tables(self) -> tuple[str, ...]:
        """The output tables the manifest lists, in ``OUTPUT_TABLES`` order."""
        listed = self.manifest.get("outputs") or {}
        return tuple(name for name in OUTPUT_TABLES if name in listed)

    @property
    def assignors(self) -> tuple[str, ...]:
        """The assignors of a comparison run (the baseline first); empty for a single run."""
        return tuple(self.manifest.get("options", {}).get("assignors") or ())

    def files(self, name: str) -> list[Path]:
        """The Parquet files of table ``name``, in name order (the order the run wrote its rows in)."""
        if name not in self.tables:
            raise UserInputError(f"{self.path}: no table {name!r} (it has {', '.join(self.tables)})")
        entry = self.manifest["outputs"][name]
        directory = self.path / str(entry.get("path", name) if isinstance(entry, dict) else name)
        if directory.is_file():
            return [directory]
        if not directory.is_dir():
            raise UserInputError(f"{directory}: table {name!r} is listed in {MANIFEST_FILE} but missing")
        return sorted(directory.glob("*.parquet"))

    def read(self, name: str, columns: Sequence[str] | None = None) -> pa.Table:
        """Table ``name`` (only ``columns``, when given) in the order the run wrote it; a file that does not
        read is a UserInputError naming it."""
        parts = []
        for file in self.files(name):
            try:
                parts.append(pq.read_table(file, columns=list(columns) if columns is not None else None))
            except (OSError, pa.ArrowException) as exc:
                raise UserInputError(f"{file}: table {name!r} does not read as Parquet: {exc}") from None
        if not parts:
            raise UserInputError(f"{self.path / name}: table {name!r} has no Parquet file")
        try:
            return pa.concat_tables(parts)
        except pa.ArrowInvalid as exc:
            raise UserInputError(f"{self.path / name}: its part files disagree on the schema: {exc}") from None

    def batches(self, name: str, batch_size: int) -> Iterator[pa.RecordBatch]:
        """Table ``name`` a batch of at most ``batch_size`` rows at a time, in the order the run wrote it: what a
        writer of millions of rows reads, instead of the whole table at once."""
        for file in self.files(name):
            try:
                yield from pq.ParquetFile(file).iter_batches(batch_size=batch_size)
            except (OSError, pa.ArrowException) as exc:
                raise UserInputError(f"{file}: table {name!r} does not read as Parquet: {exc}") from None

    def columns(self, name: str) -> list[str]:
        """Table ``name``'s column names, from its first file's footer (no data read)."""
        files = self.files(name)
        return list(pq.read_schema(files[0]).names) if files else []

    def rows(self, name: str) -> int:
        """The rows of table ``name`` from its files' footers (no data read)."""
        return sum(pq.read_metadata(file).num_rows for file in self.files(name))


def read_fleet_output(path: str | Path) -> FleetOutput:
    """The complete pipeline output at ``path``; UserInputError if it is not one (no manifest, or a run that did
    not finish)."""
    return FleetOutput(Path(path), read_manifest(path))
