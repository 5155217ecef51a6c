"""Marking rows with the first reason they cannot be used: the row checks' one mechanism.

A ``Marks`` belongs to one table of one bucket. Checks run in a fixed order and call ``reject`` with a
mask; a row keeps the first rule it fails and later rules never overwrite it, so rows in = rows used +
rows rejected holds by construction. Reasons are text built from the row's values, and only rejected
rows (usually few) ever have theirs built: a rule carries a function, not a column of strings.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from taskassign.fleet.codes import TableCodes, int_codes, repeat_counts
from taskassign.fleet.tables import TableSpec

__all__ = ("Marks", "Mask", "Reason", "Rejection", "Row", "duplicate_counts", "row_json")

Row = Mapping[str, Any]
#: Builds a rejected row's reason from its position and values.
Reason = Callable[[int, Row], str]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Rejection:
    """One rejected row: its position in its table, its values, the code and the reason."""

    index: int
    row: Row
    code: str
    reason: str


class Marks:
    """The first failing rule of every row of one table (-1: none yet)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rule = np.full(size, -1, dtype=np.int32)
        self._rules: list[tuple[str | Sequence[str | None], Reason]] = []

    def reject(self, mask: Mask | Sequence[bool], code: str | Sequence[str | None], reason: Reason) -> None:
        """Mark the unmarked rows where ``mask`` holds; ``code`` is one code or one per row."""
        selected = np.asarray(mask, dtype=np.bool_) & (self.rule < 0)
        if selected.any():
            self.rule[selected] = len(self._rules)
        self._rules.append((code, reason))

    @property
    def usable(self) -> Mask:
        mask: Mask = self.rule < 0
        return mask

    def usable_indices(self) -> npt.NDArray[np.intp]:
        return np.flatnonzero(self.rule < 0)

    def rejected_indices(self) -> npt.NDArray[np.intp]:
        return np.flatnonzero(self.rule >= 0)

    def code_of(self, index: int) -> str:
        code = self._rules[self.rule[index]][0]
        found = code if isinstance(code, str) else code[index]
        assert found is not None, "a row was rejected by a rule without a code for it"
        return found

    def rejections(self, rows: Callable[[Sequence[int]], Sequence[Row]]) -> list[Rejection]:
        """Every rejected row with its code and reason; ``rows`` gives the values of rows by position."""
        indices = [int(i) for i in self.rejected_indices()]
        values = rows(indices) if indices else []
        found = []
        for index, row in zip(indices, values, strict=True):
            found.append(Rejection(index, row, self.code_of(index), self._rules[self.rule[index]][1](index, row)))
        return found


#: Tables up to this many rows have their duplicates counted in Python.
_SMALL = 4096


def duplicate_counts(
    table: pa.Table, keys: Sequence[str], codes: TableCodes | None = None,
    columns: Mapping[str, Sequence[Any]] | None = None,
) -> npt.NDArray[np.int64]:
    """How many rows share each row's key, where more than one does (else 0). A key with a null part
    matches nothing, as in a SQL join. ``codes``: the table's columns already encoded (fleet.codes);
    ``columns``: the key columns already as Python values (a small table's)."""
    counts = np.zeros(table.num_rows, dtype=np.int64)
    if table.num_rows == 0:
        return counts
    if table.num_rows <= _SMALL and codes is None:  # fewer pyarrow calls than encoding: count in Python
        keyed = list(zip(*(columns[k] if columns is not None else table.column(k).to_pylist() for k in keys),
                         strict=True))
        whole = [None not in key for key in keyed]
        seen = Counter(key for key, ok in zip(keyed, whole, strict=True) if ok)
        counts[:] = [seen[key] if ok and seen[key] > 1 else 0 for key, ok in zip(keyed, whole, strict=True)]
        return counts
    source = codes if codes is not None else TableCodes(table)
    return repeat_counts(*(int_codes(table.column(k)) if pa.types.is_integer(table.schema.field(k).type)
                           else source[k].codes for k in keys))


def _jsonable(value: Any, is_map: bool) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if is_map and value is not None:  # Arrow gives a map as (key, value) pairs
        return dict(value.items() if isinstance(value, Mapping) else value)
    return value


def row_json(row: Row, spec: TableSpec) -> str:
    """A readable row as the errors table shows it: its columns as compact JSON (nulls kept, binary as
    base64, maps as objects)."""
    return json.dumps({c.name: _jsonable(row.get(c.name), c.type.startswith("map<")) for c in spec.columns},
                      separators=(",", ":"), ensure_ascii=False)
