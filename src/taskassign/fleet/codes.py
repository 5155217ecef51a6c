"""A bucket's key columns as integer codes: the checks and derivations sort, group and join on numbers.

Sorting or grouping a column of ~10^5 strings (app ids, topics, consumer ids) with pyarrow compute costs a
pass over every string per call, and a bucket made several such calls per table. A column is encoded once
(its distinct values sorted, each row its value's rank); after that every sort (``np.lexsort``), grouping
and lookup is on integers, and text is read once per distinct value. Ranks follow the values' sorted order
(strings: UTF-8 byte order, which is code-point order: Python's and Arrow's), so sorting by codes sorts
by values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ("Codes", "TableCodes", "group_ids", "pair_keys", "sort_order")

IntArray = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Codes:
    """``codes[i]``: row i's rank among ``values`` (its distinct non-null values, sorted); -1 for null."""

    codes: IntArray
    values: list[Any]

    @classmethod
    def of(cls, column: pa.ChunkedArray | pa.Array) -> Codes:
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        encoded = pc.dictionary_encode(array)
        dictionary = encoded.dictionary
        order = np.asarray(pc.sort_indices(dictionary).to_numpy(), dtype=np.int64)
        rank = np.empty(len(order) + 1, dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        rank[-1] = -1  # a null's index (-1 below) picks this
        indices = np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
        return cls(rank[indices], dictionary.take(pa.array(order, pa.int64())).to_pylist())

    @property
    def valid(self) -> Mask:
        mask: Mask = self.codes >= 0
        return mask

    def where(self, test: Callable[[Any], bool]) -> Mask:
        """Rows whose (non-null) value passes ``test``, asked once per distinct value."""
        hit = np.array([*(bool(test(v)) for v in self.values), False], dtype=np.bool_)
        found: Mask = hit[self.codes]
        return found

    def mask_of(self, per_value: Mask) -> Mask:
        """Rows whose value's entry of ``per_value`` (one per value) holds; null rows: False."""
        found: Mask = np.append(np.asarray(per_value, dtype=np.bool_), False)[self.codes]
        return found

    def take(self, rows: Mask | IntArray) -> Codes:
        return Codes(self.codes[rows], self.values)


class TableCodes:
    """A table's columns as ``Codes``, each encoded at most once."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self._found: dict[str, Codes] = {}

    def __getitem__(self, name: str) -> Codes:
        found = self._found.get(name)
        if found is None:
            found = self._found[name] = Codes.of(self.table.column(name))
        return found

    def filtered(self, rows: Mask) -> TableCodes:
        """The codes of ``table.filter(rows)``, those already encoded taken from these."""
        found = TableCodes(self.table.filter(pa.array(rows, pa.bool_())))
        found._found = {name: c.take(rows) for name, c in self._found.items()}
        return found


def group_ids(*codes: IntArray) -> IntArray:
    """Dense ids of the rows' code tuples, numbered in the tuples' sorted order; -1 where any code is -1."""
    size = len(codes[0])
    valid = np.ones(size, dtype=np.bool_)
    for c in codes:
        valid &= c >= 0
    combined = np.zeros(int(valid.sum()), dtype=np.int64)
    bound = 1
    for c in codes:
        part = c[valid]
        width = int(part.max()) + 1 if len(part) else 1
        if bound * width >= 2**62:  # renumber before the product would overflow
            _, combined = np.unique(combined, return_inverse=True)
            bound = int(combined.max()) + 1 if len(combined) else 1
        combined = combined * width + part
        bound *= width
    ids = np.full(size, -1, dtype=np.int64)
    if len(combined):
        _, dense = np.unique(combined, return_inverse=True)
        ids[valid] = dense.reshape(-1)
    return ids


def pair_keys(first: Codes, second: Codes) -> tuple[IntArray, list[tuple[Any, Any]]]:
    """Per row the id of its (first, second) values (-1 where either is null) and the distinct pairs, sorted."""
    width = max(len(second.values), 1)
    valid = first.valid & second.valid
    combined = first.codes * width + second.codes
    distinct, inverse = np.unique(combined[valid], return_inverse=True)
    ids = np.full(len(combined), -1, dtype=np.int64)
    ids[valid] = inverse.reshape(-1)
    keys = [(first.values[a], second.values[b]) for a, b in zip((distinct // width).tolist(),
                                                                 (distinct % width).tolist(), strict=True)]
    return ids, keys


def sort_order(*keys: IntArray) -> IntArray:
    """The stable order of rows by several non-negative integer keys (codes, small numbers), first key first:
    one sort of the keys packed into one integer when they fit, else ``np.lexsort``."""
    size = len(keys[0])
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    packed = np.zeros(size, dtype=np.int64)
    bound = 1
    for key in keys:
        low, width = int(key.min()), int(key.max()) + 1
        bound *= width
        if low < 0 or bound >= 2**62:
            order: IntArray = np.lexsort(keys[::-1])
            return order
        packed = packed * width + key
    found: IntArray = np.argsort(packed, kind="stable")
    return found
