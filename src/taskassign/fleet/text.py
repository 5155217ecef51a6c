"""Strings that are not valid UTF-8, caught as the bucket receives its rows, before anything reads them.

Spark hands a Parquet string column's bytes to Python as they are in the file; a value that is not valid
UTF-8 would end the whole bucket in a UnicodeDecodeError (or be replaced by U+FFFD somewhere). A row holding
one is made malformed instead (``MALFORMED_ROW``, naming the column), its bad values become null, and its
``_source_row`` shows its strings with the invalid bytes escaped (``\\xff``). The reader catches CSV and
JSON-lines rows itself, from their raw bytes (pipeline.raw_text); this is the same rule for every format.

The check is one validation pass per column chunk (pyarrow's, in C++); only a chunk that fails it is looked
at row by row.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taskassign.fleet.checks import MALFORMED, SOURCE_ROW
from taskassign.fleet.tables import TableSpec

__all__ = ("quarantine_invalid_text",)


def quarantine_invalid_text(table: pa.Table, spec: TableSpec) -> pa.Table:
    """``table`` with every row that holds invalid UTF-8 malformed (see the module); the same table when
    there is none."""
    bad_columns: dict[str, np.ndarray[Any, np.dtype[np.bool_]]] = {}
    for name in spec.column_names:
        column = table.column(name)
        if not _has_text(column.type):
            continue
        rows = _invalid_rows(column)
        if rows.any():
            bad_columns[name] = rows
    if not bad_columns:
        return table
    any_bad = np.logical_or.reduce(list(bad_columns.values()))
    reasons = table.column(MALFORMED).to_pylist()
    shown = table.column(SOURCE_ROW).to_pylist()
    for i in np.flatnonzero(any_bad):
        first = next(name for name in spec.column_names if name in bad_columns and bad_columns[name][i])
        if reasons[i] is None:
            reasons[i] = f"column {first}: not valid UTF-8 (source_row shows the row with its bytes escaped)"
        if shown[i] is None:
            shown[i] = _escaped_row(table, spec, int(i))
    columns = {name: table.column(name) for name in table.column_names}
    for name, rows in bad_columns.items():
        columns[name] = pc.if_else(pa.array(rows), pa.nulls(table.num_rows, columns[name].type), columns[name])
    columns[MALFORMED] = pa.array(reasons, pa.string())
    columns[SOURCE_ROW] = pa.array(shown, pa.string())
    return pa.table(columns, schema=table.schema)


def _has_text(t: pa.DataType) -> bool:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_text(t.value_type)
    if pa.types.is_map(t):
        return _has_text(t.key_type) or _has_text(t.item_type)
    if pa.types.is_struct(t):
        return any(_has_text(t.field(i).type) for i in range(t.num_fields))
    return False


def _invalid_rows(column: pa.ChunkedArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which rows of ``column`` hold a string (at any depth) that is not valid UTF-8."""
    rows = np.zeros(len(column), dtype=np.bool_)
    offset = 0
    for chunk in column.chunks:
        try:
            chunk.validate(full=True)
        except pa.ArrowInvalid:
            # A sliced nested array still validates all of its child values: look at each row's bytes.
            for i, value in enumerate(chunk.cast(_as_binary(chunk.type)).to_pylist()):
                rows[offset + i] = not _decodes(value)
        offset += len(chunk)
    return rows


def _decodes(value: Any) -> bool:
    """Whether every bytes value inside ``value`` is valid UTF-8."""
    if isinstance(value, bytes):
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    if isinstance(value, (list, tuple)):
        return all(_decodes(v) for v in value)
    if isinstance(value, dict):
        return all(_decodes(k) and _decodes(v) for k, v in value.items())
    return True


def _escaped_row(table: pa.Table, spec: TableSpec, index: int) -> str:
    """The row as JSON, every string decoded with its invalid bytes escaped as ``\\xNN``."""
    row = {}
    for name in spec.column_names:
        value = table.column(name).slice(index, 1)
        row[name] = _plain(value.cast(_as_binary(value.type)).to_pylist()[0])
    return json.dumps(row, ensure_ascii=False, default=str)


def _as_binary(t: pa.DataType) -> pa.DataType:
    """``t`` with every string type replaced by binary (so values come back as bytes, undecoded)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.binary()
    if pa.types.is_list(t):
        return pa.list_(_as_binary(t.value_type))
    if pa.types.is_large_list(t):
        return pa.large_list(_as_binary(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(_as_binary(t.key_type), _as_binary(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _as_binary(t.field(i).type)) for i in range(t.num_fields)])
    return t


def _plain(value: Any) -> Any:
    """A value of ``_escaped_row`` as JSON-ready Python: bytes decoded with ``\\xNN`` escapes, map entries
    as pairs."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    return value
