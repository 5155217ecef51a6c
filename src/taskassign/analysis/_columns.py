"""Integer columns for the metrics of every client at once (``compute_metrics(..., rack_traffic=False)``).

An assignment's placements are numbered once (task number in TaskId order, client number in ProcessId order)
and every per-client count or sum is a numpy operation over those columns instead of a Python call per client
and per task set: a fleet measures 10^3 applications of 10^3 tasks per worker. Sums stay exact: a column holds
int64 only when no sum over it can leave int64, else Python ints (numpy's object arrays).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from taskassign.internals.lags import compute_lags
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM

__all__ = ("Column", "distinct", "exact_column", "keys_in", "restored_records", "run_sums")

#: Largest magnitude a sum over an int64 column may reach (kept below 2^63 with room for one subtraction).
_INT64_ROOM = 1 << 62


Column = npt.NDArray[np.int64] | npt.NDArray[np.object_]


def exact_column(values: Sequence[int] | Column, terms: int) -> Column:
    """``values`` as a column any sum of ``terms`` of whose entries (or a difference of two) is exact: int64
    when that fits, else Python ints. ``values`` may be a column already (an int64 one kept when it fits)."""
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    if isinstance(values, np.ndarray):
        top = max(int(values.max()), -int(values.min()))
        if top * max(terms, 1) < _INT64_ROOM:
            return values.astype(np.int64, copy=False)
        return values if values.dtype == object else np.array(values.tolist(), dtype=object)
    try:
        column = np.array(values, dtype=np.int64)  # (one pass in C; Python's max and min are two more)
    except OverflowError:  # some value beyond int64
        return np.array(values, dtype=object)
    return exact_column(column, terms)


def run_sums(values: Column, lengths: Sequence[int] | npt.NDArray[np.int64]) -> Column:
    """Sums of consecutive runs of ``values``, run ``i`` being ``lengths[i]`` long (0 for an empty run)."""
    counts = np.asarray(lengths, dtype=np.int64)
    sums: Column = np.zeros(len(counts), dtype=values.dtype)  # type: ignore[assignment]
    if len(values):
        filled = counts > 0
        sums[filled] = np.add.reduceat(values, (np.cumsum(counts) - counts)[filled])
    return sums


def keys_in(tasks: npt.NDArray[np.int64], clients: npt.NDArray[np.int64], pairs: npt.NDArray[np.int64],
            width: int) -> npt.NDArray[np.bool_]:
    """Whether each (task, client) placement is among ``pairs`` (keys ``task * width + client``)."""
    keys = tasks * width + clients
    if not len(pairs) or not len(keys):
        return np.zeros(len(keys), dtype=np.bool_)
    ordered = np.sort(pairs)
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    found: npt.NDArray[np.bool_] = ordered[at] == keys
    return found


def distinct(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``keys`` sorted, each once (``np.unique`` by a sort: numpy's hashing ``unique`` is slower on these sizes)."""
    ordered = np.sort(keys)
    if len(ordered) < 2:
        return ordered
    kept: npt.NDArray[np.int64] = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    return kept


def restored_records(ends: Column, offsets: Column) -> tuple[Column, npt.NDArray[np.bool_]]:
    """Per placement of a changelog task, the records its client restores and whether its lag was unknown: Kafka's
    lag (``ClientState#computeTaskLags``: -2 and -3 stay, a client ahead of the changelog lags by the whole end
    offset sum) with -2 counting 0 and -3 the end offset sum (0 when that is negative), the rules of
    ``metrics._restore`` for every placement at once."""
    lags = compute_lags(ends, offsets)
    unknown: npt.NDArray[np.bool_] = np.asarray(lags == UNKNOWN_OFFSET_SUM, dtype=np.bool_)
    records: Column = np.where(lags == LATEST_OFFSET, 0, np.where(unknown, np.maximum(ends, 0), lags))
    return records, unknown
