"""A bucket's key columns as integer codes: the checks and derivations sort, group and join on numbers.

Sorting or grouping a column of ~10^5 strings (app ids, topics, consumer ids) with pyarrow compute costs a
pass over every string per call, and a bucket made several such calls per table. A column is encoded once
(its distinct values sorted, each row its value's rank); after that every sort (one ``np.argsort`` of the
keys packed into one integer), grouping and lookup is on integers, and text is read once per distinct
value. Ranks follow the values' sorted order (strings: UTF-8 byte order, which is code-point order:
Python's and Arrow's), so sorting by codes sorts by values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ("Codes", "TableCodes", "dense_ids", "first_rows", "group_ids", "int_codes", "packed_keys", "pair_keys",
           "repeat_counts", "sort_order")

IntArray = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Codes:
    """``codes[i]``: row i's rank among ``values`` (its distinct non-null values, sorted); -1 for null."""

    codes: IntArray
    values: list[Any]
    #: ``values`` as an Arrow array, when encoded from a column (for tests run on all of them at once).
    distinct: pa.Array | None = None

    @classmethod
    def of(cls, column: pa.ChunkedArray | pa.Array) -> Codes:
        """The column encoded; a column whose values come in runs (a bucket's rows arrive grouped by
        application, and by topic within it) has only its runs' first values hashed."""
        runs = _run_starts(column)
        if runs is None:
            return cls._of_values(column)
        heads = cls._of_values(column.take(pa.array(runs, pa.int64())))
        return cls(np.repeat(heads.codes, np.diff(np.append(runs, len(column)))), heads.values, heads.distinct)

    @classmethod
    def _of_values(cls, column: pa.ChunkedArray | pa.Array) -> Codes:
        # A chunked column is encoded as it is (no copy into one chunk): its chunks share one dictionary.
        encoded = pc.dictionary_encode(column)
        chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
        if not chunks:
            return cls(np.zeros(0, dtype=np.int64), [], pa.array([], column.type))
        dictionary = chunks[-1].dictionary
        if any(not c.dictionary.equals(dictionary) for c in chunks[:-1]):  # not shared after all: one chunk
            chunks = [pc.dictionary_encode(column.combine_chunks())]
            dictionary = chunks[0].dictionary
        order = np.asarray(pc.sort_indices(dictionary).to_numpy(), dtype=np.int64)
        rank = np.empty(len(order) + 1, dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        rank[-1] = -1  # a null's index (-1 below) picks this
        indices = np.concatenate([np.asarray(pc.fill_null(c.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
                                  for c in chunks])
        assert len(indices) == len(column)
        distinct = dictionary.take(pa.array(order, pa.int64()))
        return cls(rank[indices], distinct.to_pylist(), distinct)

    @property
    def valid(self) -> Mask:
        mask: Mask = self.codes >= 0
        return mask

    def where(self, test: Callable[[Any], bool]) -> Mask:
        """Rows whose (non-null) value passes ``test``, asked once per distinct value."""
        hit = np.array([*(bool(test(v)) for v in self.values), False], dtype=np.bool_)
        found: Mask = hit[self.codes]
        return found

    def where_all(self, test: Callable[[pa.Array], pa.Array]) -> Mask:
        """``where`` with ``test`` given every distinct value at once (an Arrow array; its answers a boolean
        Arrow array, null: false)."""
        distinct = self.distinct if self.distinct is not None else pa.array(self.values)
        answers = pc.fill_null(test(distinct), False).to_numpy(zero_copy_only=False)
        hit = np.append(np.asarray(answers, dtype=np.bool_), False)
        found: Mask = hit[self.codes]
        return found

    def take(self, rows: Mask | IntArray) -> Codes:
        return Codes(self.codes[rows], self.values, self.distinct)


#: Rows of a column sampled to tell whether it comes in runs, and the share of them that must start a run for the
#: whole column to be compared row to row (one comparison pass, cheaper than hashing every value).
_SAMPLE, _RUN_SHARE = 1024, 8


def _run_starts(column: pa.ChunkedArray | pa.Array) -> IntArray | None:
    """The rows where a new run of equal values starts (a null starts a run of its own), or None when the
    column's first rows change value too often for runs to pay."""
    size = len(column)
    if size < 2 * _SAMPLE:
        return None
    if _changes(column.slice(0, _SAMPLE)).sum() * _RUN_SHARE > _SAMPLE:
        return None
    return np.flatnonzero(_changes(column))


def _changes(column: pa.ChunkedArray | pa.Array) -> Mask:
    """Per row: whether it differs from the row before (the first row, and any row next to a null: True)."""
    size = len(column)
    different = pc.fill_null(pc.not_equal(column.slice(1), column.slice(0, size - 1)), True)
    found: Mask = np.ones(size, dtype=np.bool_)
    found[1:] = np.asarray(different.to_numpy(zero_copy_only=False), dtype=np.bool_)
    return found


class TableCodes:
    """A table's columns as ``Codes``, each encoded at most once."""

    def __init__(self, table: pa.Table, known: Mapping[str, Codes] | None = None) -> None:
        self.table = table
        self._found: dict[str, Codes] = dict(known or {})
        self._integers: dict[tuple[str, int], tuple[IntArray, Mask]] = {}
        self._pairs: dict[tuple[str, str], tuple[IntArray, list[tuple[Any, Any]]]] = {}
        self._flat: dict[str, tuple[Codes, IntArray]] = {}

    def __getitem__(self, name: str) -> Codes:
        found = self._found.get(name)
        if found is None:
            found = self._found[name] = Codes.of(self.table.column(name))
        return found

    def pairs(self, first: str, second: str) -> tuple[IntArray, list[tuple[Any, Any]]]:
        """``pair_keys`` of two columns over every row, made once per table (a subset of rows takes its rows'
        ids; a pair none of them has is simply not among them)."""
        found = self._pairs.get((first, second))
        if found is None:
            found = self._pairs[(first, second)] = pair_keys(self[first], self[second])
        return found

    def flat(self, name: str) -> tuple[Codes, IntArray]:
        """A list column's items as ``Codes`` and each item's row, encoded once per table (the checks and the
        derivations both read replica_racks item by item)."""
        found = self._flat.get(name)
        if found is None:
            column = self.table.column(name)
            parents = np.asarray(pc.list_parent_indices(column).to_numpy(zero_copy_only=False), dtype=np.int64)
            found = self._flat[name] = (Codes.of(pc.list_flatten(column)), parents)
        return found

    def integers(self, name: str, fill: int = 0) -> tuple[IntArray, Mask]:
        """A nullable integer column as (values with nulls as ``fill``, validity), read once per fill: the
        checks and derivations read the same columns (partition, offsets) several times."""
        found = self._integers.get((name, fill))
        if found is None:
            column = self.table.column(name)
            valid = np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=np.bool_)
            values = np.asarray(pc.fill_null(column, fill).to_numpy(zero_copy_only=False), dtype=np.int64)
            found = self._integers[(name, fill)] = (values, valid)
        return found



def int_codes(column: pa.ChunkedArray | pa.Array) -> IntArray:
    """An integer column's values as codes for ``group_ids`` without encoding them: value - smallest value
    (order kept, not dense), -1 for null."""
    valid = np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=np.bool_)
    values = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    if not valid.any():
        return np.full(len(values), -1, dtype=np.int64)
    low, high = int(values[valid].min()), int(values[valid].max())
    if high - low >= 2**62:  # the difference would overflow: number the distinct values instead
        found = np.full(len(values), -1, dtype=np.int64)
        found[valid] = np.unique(values[valid], return_inverse=True)[1].reshape(-1)
        return found
    return np.where(valid, values - low, -1)


def dense_ids(values: IntArray, bound: int) -> tuple[IntArray, IntArray]:
    """``values`` (each in [0, bound)) as dense ids in their order, and the distinct values: by marking
    which occur when ``bound`` is not much larger than the values, else by sorting."""
    if bound <= max(4 * len(values), 1 << 16):
        seen = np.zeros(bound, dtype=np.bool_)
        seen[values] = True
        ranks = np.cumsum(seen, dtype=np.int64) - 1
        return ranks[values], np.flatnonzero(seen)
    order = np.argsort(values)
    ordered = values[order]
    starts = np.ones(len(values), dtype=np.bool_)
    starts[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts, dtype=np.int64) - 1
    return inverse, ordered[starts]


def packed_keys(*codes: IntArray) -> tuple[IntArray, Mask, int]:
    """The rows' code tuples (codes >= 0; -1: null) packed into one integer each, in the tuples' order: the
    integers of the rows without a null code, those rows, and a bound of the integers (renumbering on the way
    keeps it small)."""
    size = len(codes[0])
    valid = np.ones(size, dtype=np.bool_)
    for c in codes:
        valid &= c >= 0
    count = int(valid.sum())
    limit = max(4 * count, 1 << 16)
    combined = np.zeros(count, dtype=np.int64)
    bound = 1
    for c in codes:
        part = c[valid]
        width = int(part.max()) + 1 if count else 1
        if width > limit:
            part, distinct = dense_ids(part, width)
            width = len(distinct)
        if bound * width > limit:
            combined, distinct = dense_ids(combined, bound)
            bound = len(distinct)
        combined = combined * width + part
        bound *= width
    return combined, valid, bound


def _wide_keys(*codes: IntArray) -> tuple[IntArray, Mask] | None:
    """``packed_keys`` without renumbering, for a sort (which needs no small bound): each tuple as one integer
    (codes times the widths of the codes after them), when they fit in 62 bits; else None."""
    valid = np.ones(len(codes[0]), dtype=np.bool_)
    for c in codes:
        valid &= c >= 0
    parts = [c[valid] for c in codes]
    widths = [int(p.max()) + 1 if len(p) else 1 for p in parts]
    if math.prod(widths) >= 2**62:
        return None
    combined = np.zeros(len(parts[0]), dtype=np.int64)
    for part, width in zip(parts, widths, strict=True):
        combined = combined * width + part
    return combined, valid


def group_ids(*codes: IntArray) -> IntArray:
    """Dense ids of the rows' code tuples (codes >= 0), numbered in the tuples' sorted order; -1 where any
    code is -1."""
    combined, valid, bound = packed_keys(*codes)
    ids = np.full(len(valid), -1, dtype=np.int64)
    ids[valid] = dense_ids(combined, bound)[0]
    return ids


def repeat_counts(*codes: IntArray) -> IntArray:
    """How many rows share each row's code tuple where more than one does, else 0 (and 0 where a code is
    -1): one sort, and nothing more when no tuple repeats."""
    wide = _wide_keys(*codes)
    combined, valid = wide if wide is not None else packed_keys(*codes)[:2]
    counts = np.zeros(len(valid), dtype=np.int64)
    ordered = np.sort(combined)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if len(repeated):
        values, extra = np.unique(repeated, return_counts=True)
        found = np.zeros(len(combined), dtype=np.int64)
        hit = np.isin(combined, values)
        found[hit] = extra[np.searchsorted(values, combined[hit])] + 1
        counts[valid] = found
    return counts


def pair_keys(first: Codes, second: Codes) -> tuple[IntArray, list[tuple[Any, Any]]]:
    """Per row the id of its (first, second) values (-1 where either is null) and the distinct pairs, sorted."""
    width = max(len(second.values), 1)
    valid = first.valid & second.valid
    ids = np.full(len(valid), -1, dtype=np.int64)
    inverse, distinct = dense_ids((first.codes * width + second.codes)[valid], max(len(first.values), 1) * width)
    ids[valid] = inverse
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
    found: IntArray = np.argsort(packed)
    ordered = packed[found]
    if (ordered[1:] == ordered[:-1]).any():  # ties: keep their rows in order
        found = np.argsort(packed, kind="stable")
    return found


def first_rows(ids: IntArray, count: int) -> IntArray:
    """The first row of each of ``count`` dense ids (every id in [0, count) occurs)."""
    first = np.zeros(count, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1, dtype=np.int64)
    return first
