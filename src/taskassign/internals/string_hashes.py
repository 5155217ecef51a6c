"""``String.hashCode`` of many strings at once: the broker-side streams assignors hash every member and process
id of a group (10^4 and more) on every call, and one vectorised pass over all their bytes costs what a few
hundred one-at-a-time hashes do. Same values as ``ids.java_string_hash`` (tests/internals/test_string_hashes.py);
strings with non-ASCII text take that function, one by one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from taskassign.ids import java_string_hash

__all__ = ("java_string_hashes",)

_MASK = np.uint64(0xFFFFFFFF)


def _powers(n: int) -> np.ndarray:
    """31**k mod 2**32 for k < n."""
    powers = np.ones(max(n, 1), dtype=np.uint64)
    for k in range(1, n):
        powers[k] = (powers[k - 1] * np.uint64(31)) & _MASK
    return powers


_POWERS = _powers(256)


def java_string_hashes(texts: Sequence[str]) -> list[int]:
    """``[java_string_hash(t) for t in texts]`` (signed 32-bit ints)."""
    global _POWERS
    if not texts:
        return []
    if not all(map(str.isascii, texts)):
        return [java_string_hash(text) for text in texts]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    longest = int(lengths.max())
    if longest == 0:
        return [0] * len(texts)
    if longest > len(_POWERS):
        _POWERS = _powers(longest)
    units = np.frombuffer("".join(texts).encode("ascii"), dtype=np.uint8).astype(np.uint64)
    ends = np.cumsum(lengths)
    # each unit's weight: 31 ** (units after it in its own string)
    after = np.repeat(ends, lengths) - 1 - np.arange(len(units), dtype=np.int64)
    terms = units * _POWERS[after]  # < 2**7 * 2**32: a sum of 2**20 of them still fits 64 bits
    starts = ends - lengths
    nonempty = lengths > 0
    sums = np.zeros(len(texts), dtype=np.uint64)
    sums[nonempty] = np.add.reduceat(terms, starts[nonempty])
    hashes = (sums & _MASK).astype(np.int64)
    signed: list[int] = np.where(hashes >= 1 << 31, hashes - (1 << 32), hashes).tolist()
    return signed
