"""``taskassign pipeline export``: a run's tables as CSV or JSON lines, for spreadsheets and scripts.

One file per table (``<table>.csv`` or ``<table>.jsonl``), columns in the table's order (docs/pipeline.md,
"Outputs"), rows in the order the run wrote them (sorted by the table's keys), so the same output exports to
the same bytes. In CSV a list cell (task ids) is a JSON array and a null an empty cell; in JSON lines every row
is one object with every column. The directory gets a marker, ``_taskassign_export.json``, listing what was
written: a later export replaces those files, and refuses any other file in its way unless forced.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from taskassign.errors import OutputFileError, UserInputError
from taskassign.formats.json_io import dump_json, load_json_file, prepare_output_dir
from taskassign.formats.output_paths import check_not_input
from taskassign.pipeline.results import FleetOutput

__all__ = ("EXPORT_FORMATS", "EXPORT_MARKER", "EXPORT_MARKER_FORMAT", "export_tables")

EXPORT_FORMATS = ("csv", "jsonl")
EXPORT_MARKER = "_taskassign_export.json"
EXPORT_MARKER_FORMAT = "taskassign/pipeline-export/v1"
_BATCH = 16_384


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("NaN" if math.isnan(value) else str(value))
    return str(value)


def _csv_lines(columns: Sequence[str], batches: Iterator[pa.RecordBatch]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for rows in (batch.to_pylist() for batch in batches):
        writer.writerows([_csv_cell(v) for v in row.values()] for row in rows)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def _jsonl_lines(columns: Sequence[str], batches: Iterator[pa.RecordBatch]) -> Iterator[str]:
    del columns  # every row object names its columns
    for rows in (batch.to_pylist() for batch in batches):
        yield "".join(json.dumps({k: _json_value(v) for k, v in row.items()}, ensure_ascii=False,
                                 separators=(",", ":")) + "\n" for row in rows)


def _write(chunks: Iterator[str], target: Path) -> None:
    """Write ``chunks`` to a temporary file beside ``target``, then rename it into place: a batch at a time, so
    a table of millions of rows never sits in memory as text, and a crash leaves no half-written file."""
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputFileError(str(target), f"cannot write the file: {exc.strerror or exc}") from None


def _written_before(directory: Path) -> set[str]:
    """The files an earlier export listed in the directory's marker (none without a marker)."""
    marker = directory / EXPORT_MARKER
    if not marker.is_file():
        return set()
    doc = load_json_file(marker)
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_MARKER_FORMAT:
        raise OutputFileError(str(marker), f"is not a taskassign export marker ({EXPORT_MARKER_FORMAT})")
    return {str(name) for name in doc.get("files", ())}


def export_tables(output: FleetOutput, directory: str | Path, fmt: str, tables: Sequence[str] = (), *,
                  force: bool = False, progress: Callable[[str, int], None] | None = None) -> list[Path]:
    """Write ``tables`` (default: every table of the run) of ``output`` into ``directory`` as ``fmt``
    (``csv`` or ``jsonl``); returns the files written. A file in the way that no earlier export wrote is an
    OutputFileError unless ``force``. ``progress(table, rows)`` is called before each table is written."""
    if fmt not in EXPORT_FORMATS:
        raise UserInputError(f"--format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    names = list(dict.fromkeys(tables)) or list(output.tables)
    for name in names:
        if name not in output.tables:
            raise UserInputError(f"--table {name!r}: {output.path} has {', '.join(output.tables)}")
    check_not_input(Path(directory), (output.path,))
    if output.path.resolve() in Path(directory).resolve().parents:
        raise OutputFileError(str(directory), f"is inside the pipeline output {output.path} being exported: "
                                              "choose a directory outside it")
    target = prepare_output_dir(directory)
    ours = _written_before(target)
    files = [target / f"{name}.{fmt}" for name in names]
    if not force:
        foreign = [f for f in files if (f.exists() or f.is_symlink()) and f.name not in ours]
        if foreign:
            raise OutputFileError(str(foreign[0]), "exists and was not written by taskassign pipeline export "
                                                   "(pass --force to replace it)")
    lines = _csv_lines if fmt == "csv" else _jsonl_lines
    for name, file in zip(names, files, strict=True):
        if progress is not None:
            progress(name, output.rows(name))
        _write(lines(output.columns(name), output.batches(name, _BATCH)), file)
        ours.add(file.name)
    dump_json({"format": EXPORT_MARKER_FORMAT, "source": str(output.path), "files": sorted(ours)},
              target / EXPORT_MARKER)
    return files
