"""Writing fleet snapshot tables as Parquet, CSV or JSON lines with pyarrow (no Spark needed).

Files are named ``<table>.parquet``, ``<table>.csv`` or ``<table>.jsonl`` inside the snapshot directory;
rows are streamed in batches, so a fleet of 10^4 applications never sits in memory as Python objects.
In CSV, array and map cells hold JSON text; an empty cell is null. Binary values (subscription_info) are
base64 text in CSV and JSON.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO

from taskassign.errors import UserInputError
from taskassign.fleet.tables import INPUT_TABLES, TableSpec
from taskassign.formats.json_io import prepare_output_dir

__all__ = ("FORMATS", "SnapshotWriter", "arrow_schema", "arrow_type", "table_file_name")

Format = Literal["parquet", "csv", "json"]
FORMATS: tuple[Format, ...] = ("parquet", "csv", "json")
_EXTENSIONS: Mapping[str, str] = {"parquet": "parquet", "csv": "csv", "json": "jsonl"}
_ARRAY = re.compile(r"^array<(.+)>$")
_MAP = re.compile(r"^map<([a-z]+),(.+)>$")


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - depends on the installation
        raise UserInputError("writing fleet snapshots needs pyarrow: pip install 'taskassign[spark]'") from None
    return pyarrow


def arrow_type(ddl: str) -> Any:
    """The pyarrow type of a Spark DDL type string used in the table specs."""
    pa = _pyarrow()
    simple = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "boolean": pa.bool_(),
              "double": pa.float64(), "binary": pa.binary()}
    if ddl in simple:
        return simple[ddl]
    if m := _ARRAY.match(ddl):
        return pa.list_(arrow_type(m.group(1)))
    if m := _MAP.match(ddl):
        return pa.map_(arrow_type(m.group(1)), arrow_type(m.group(2)))
    raise ValueError(f"unsupported column type {ddl!r}")


def arrow_schema(spec: TableSpec) -> Any:
    pa = _pyarrow()
    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=True) for c in spec.columns])


def table_file_name(table: str, fmt: Format) -> str:
    return f"{table}.{_EXTENSIONS[fmt]}"


class SnapshotWriter:
    """Streams rows into one file per table; use as a context manager, ``write(table, rows)`` many times."""

    def __init__(self, directory: str | Path, fmt: Format = "parquet", batch_rows: int = 50_000) -> None:
        if fmt not in FORMATS:
            raise UserInputError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
        self.directory = Path(directory)
        self.format = fmt
        self.batch_rows = batch_rows
        self.rows_written: dict[str, int] = dict.fromkeys(INPUT_TABLES, 0)
        self._pending: dict[str, list[Mapping[str, Any]]] = {name: [] for name in INPUT_TABLES}
        self._writers: dict[str, Any] = {}
        self._text: dict[str, TextIO] = {}

    def __enter__(self) -> SnapshotWriter:
        prepare_output_dir(self.directory)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            for name in INPUT_TABLES:
                self._flush(name, final=True)
        for writer in self._writers.values():
            writer.close()
        for fh in self._text.values():
            fh.close()

    def write(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        pending = self._pending[table]
        pending.extend(rows)
        if len(pending) >= self.batch_rows:
            self._flush(table)

    def _flush(self, table: str, final: bool = False) -> None:
        rows = self._pending[table]
        if not rows and not (final and self.rows_written[table] == 0 and table not in self._writers):
            return
        spec = INPUT_TABLES[table]
        path = self.directory / table_file_name(table, self.format)
        if self.format == "json":
            fh = self._text.get(table)
            if fh is None:
                fh = self._text[table] = path.open("w", encoding="utf-8")
            for row in rows:
                record = {c: _json_value(row.get(c)) for c in spec.column_names}
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            self._write_arrow(spec, path, rows)
        self.rows_written[table] += len(rows)
        self._pending[table] = []

    def _write_arrow(self, spec: TableSpec, path: Path, rows: list[Mapping[str, Any]]) -> None:
        pa = _pyarrow()
        if self.format == "parquet":
            schema = arrow_schema(spec)
            columns = {c.name: [_arrow_value(row.get(c.name), c.type) for row in rows] for c in spec.columns}
        else:
            schema = pa.schema([pa.field(c.name, pa.string() if c.is_complex or c.type == "binary"
                                         else arrow_type(c.type)) for c in spec.columns])
            columns = {c.name: [_csv_value(row.get(c.name), c.is_complex) for row in rows] for c in spec.columns}
        table = pa.Table.from_pydict(columns, schema=schema)
        writer = self._writers.get(spec.name)
        if writer is None:
            if self.format == "parquet":
                import pyarrow.parquet as pq

                writer = pq.ParquetWriter(path, schema)
            else:
                import pyarrow.csv as pcsv

                writer = pcsv.CSVWriter(path, schema)
            self._writers[spec.name] = writer
        writer.write_table(table)


def _arrow_value(value: Any, ddl: str) -> Any:
    if value is not None and ddl.startswith("map<"):
        return list(value.items())
    return value


def _json_value(value: Any) -> Any:
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value


def _csv_value(value: Any, complex_: bool) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if value is None or not complex_:
        return value
    return json.dumps(value, ensure_ascii=False)
