"""Spark's hash partitioning of an int column, reproduced, so that a shuffle puts bucket ``b`` in partition ``b``.

``DataFrame.repartition(n, column)`` sends a row to partition ``pmod(murmur3(value, seed 42), n)``
(Spark's ``HashPartitioning``). Shuffling rows keyed by their bucket number itself would let two buckets
share a partition and leave another empty: a core idles while one task does two buckets' work.
``partition_keys`` gives, per bucket, the smallest non-negative int Spark sends to that bucket's
partition. Were Spark's hash ever to differ, only the balance would suffer: a partition processes
whatever buckets it receives (tests/pipeline/test_scatter.py checks the keys against Spark).
"""

from __future__ import annotations

__all__ = ("murmur3_int", "partition_keys")

_MASK = 0xFFFFFFFF
#: Spark's seed for hash partitioning (Murmur3Hash's default).
SPARK_SEED = 42


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def murmur3_int(value: int, seed: int = SPARK_SEED) -> int:
    """Murmur3_x86_32 of one 4-byte int, as Spark's ``Murmur3_x86_32.hashInt`` (a signed 32-bit result)."""
    k1 = _rotl((value & _MASK) * 0xCC9E2D51 & _MASK, 15) * 0x1B873593 & _MASK
    h1 = _rotl((seed & _MASK) ^ k1, 13)
    h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 = ((h1 ^ (h1 >> 16)) * 0x85EBCA6B) & _MASK
    h1 = ((h1 ^ (h1 >> 13)) * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def partition_keys(partitions: int) -> list[int]:
    """For each partition ``b`` of ``partitions``, the smallest int ``k >= 0`` that Spark's
    ``repartition(partitions, k)`` sends to partition ``b``."""
    keys: dict[int, int] = {}
    candidate = 0
    while len(keys) < partitions:
        keys.setdefault(murmur3_int(candidate) % partitions, candidate)  # Python's % is Spark's pmod
        candidate += 1
    return [keys[b] for b in range(partitions)]
