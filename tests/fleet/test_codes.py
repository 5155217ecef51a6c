"""fleet.codes: integer codes give the same orders, groups and counts as the values they stand for."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taskassign.fleet.codes import (
    Codes,
    _run_starts,
    _wide_keys,
    dense_ids,
    group_ids,
    int_codes,
    pair_keys,
    repeat_counts,
    sort_order,
)
from taskassign.fleet.marks import duplicate_counts

TEXTS = ["", " ", "a", "b", "B", "ab", "é", "z\u00e9", "\U0001f600", "\uffff", "app-10", "app-9", None]


def _columns(rng: random.Random, rows: int) -> tuple[list[str | None], list[int | None], list[str | None]]:
    texts = [rng.choice(TEXTS) for _ in range(rows)]
    numbers = [rng.choice([None, -(2**31), -1, 0, 1, 2, 7, 2**31 - 1, 2**40]) for _ in range(rows)]
    more = [rng.choice(TEXTS[:5]) for _ in range(rows)]
    return texts, numbers, more


def test_codes_sort_like_their_values_and_keep_nulls_apart() -> None:
    chunks = [pa.array(TEXTS[:6], pa.string()), pa.array([], pa.string()), pa.array(TEXTS[6:], pa.string())]
    codes = Codes.of(pa.chunked_array(chunks))  # an empty chunk and values first seen in a later chunk
    assert codes.values == sorted(t for t in TEXTS if t is not None)
    assert [codes.values[c] if c >= 0 else None for c in codes.codes] == TEXTS
    assert codes.where(lambda t: t.strip(" ") == "").tolist() == [t is not None and t.strip(" ") == "" for t in TEXTS]
    blank = codes.where_all(lambda values: pc.equal(pc.utf8_trim(values, " "), ""))  # all distinct values at once
    assert blank.tolist() == codes.where(lambda t: t.strip(" ") == "").tolist()
    assert Codes(codes.codes, codes.values).where_all(lambda v: pc.equal(v, "a")).tolist() == [t == "a" for t in TEXTS]


def test_groups_counts_and_orders_match_python_on_random_columns() -> None:
    rng = random.Random(5)
    for rows in (0, 1, 7, 300, 5000):
        texts, numbers, more = _columns(rng, rows)
        a = Codes.of(pa.array(texts, pa.string()))
        b = int_codes(pa.array(numbers, pa.int64()))
        c = Codes.of(pa.array(more, pa.string()))
        keys = list(zip(texts, numbers, more, strict=True))
        complete = [None not in k for k in keys]
        ids = group_ids(a.codes, b, c.codes)
        distinct = sorted({k for k, ok in zip(keys, complete, strict=True) if ok})
        assert ids.tolist() == [distinct.index(k) if ok else -1 for k, ok in zip(keys, complete, strict=True)]
        seen = Counter(k for k, ok in zip(keys, complete, strict=True) if ok)
        expected = [seen[k] if ok and seen[k] > 1 else 0 for k, ok in zip(keys, complete, strict=True)]
        assert repeat_counts(a.codes, b, c.codes).tolist() == expected
        if rows > 100:  # numbers from -2**31 to 2**40, twice: too wide for 62 bits, so packed (renumbered)
            assert _wide_keys(a.codes, b, b, c.codes) is None
        assert repeat_counts(a.codes, b, b, c.codes).tolist() == expected
        table = pa.table({"t": pa.array(texts, pa.string()), "n": pa.array(numbers, pa.int64()),
                          "m": pa.array(more, pa.string())})
        assert duplicate_counts(table, ["t", "n", "m"]).tolist() == expected
        if all(complete):
            order = sort_order(a.codes, b, c.codes)
            assert order.tolist() == sorted(range(rows), key=lambda i: keys[i])  # stable: ties in row order
        pairs, found = pair_keys(a, c)
        assert [found[p] if p >= 0 else None for p in pairs.tolist()] == [
            (t, m) if t is not None and m is not None else None for t, m in zip(texts, more, strict=True)]


def test_dense_ids_by_marking_and_by_sorting_agree() -> None:
    values = np.array([5, 3, 5, 0, 10**6, 3], dtype=np.int64)
    for bound in (10**6 + 1, 10**12):  # the first marks which values occur, the second sorts
        ids, distinct = dense_ids(values, bound)
        assert ids.tolist() == [2, 1, 2, 0, 3, 1]
        assert distinct.tolist() == [0, 3, 5, 10**6]


def test_columns_in_runs_are_encoded_from_their_runs_alike() -> None:
    """Codes.of takes a column whose first rows come in runs from its runs' first values: the same codes as
    hashing every value, whatever comes later (runs broken up, nulls, chunks of any size)."""
    rng = random.Random(9)
    checked = 0
    for rows in (2047, 2048, 5000, 20_000):
        for pattern in ("runs", "runs then noise", "noise", "nulls in runs"):
            values: list[str | None] = []
            while len(values) < rows:
                value = rng.choice(TEXTS[:-1])  # nulls: one at a time, below
                noisy = pattern == "noise" or (pattern == "runs then noise" and len(values) > rows // 2)
                values += [value] * (1 if noisy else rng.randint(20, 400))
                if pattern == "nulls in runs" and rng.random() < 0.2:
                    values.append(None)
            values = values[:rows]
            cut = rng.randrange(rows)
            column = pa.chunked_array([pa.array(values[:cut], pa.string()), pa.array(values[cut:], pa.string())])
            if rows >= 2048 and pattern != "noise":
                assert _run_starts(column) is not None  # the runs' path is the one tested
            found, expected = Codes.of(column), Codes._of_values(column)
            assert found.values == expected.values
            assert found.codes.tolist() == expected.codes.tolist()
            assert [found.values[c] if c >= 0 else None for c in found.codes] == values
            checked += 1
    assert checked == 16
