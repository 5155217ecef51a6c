"""``java.util.Random``, bit for bit, so Kafka's randomized convergence scenarios replay from their seeds.

Kafka's TaskAssignorConvergenceTest prints "Reproduce with: runRandomizedScenario(<seed>)"; with this
generator the same seed draws the same cluster sizes, task counts and events here. The generator is
the JDK's 48-bit linear congruential one: multiplier 0x5DEECE66D, addend 0xB, the seed scrambled by
XOR with the multiplier, and ``nextInt(bound)`` with its rejection loop.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

from taskassign.ids import to_int32

__all__ = ("JavaRandom",)

T = TypeVar("T")
_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
_DOUBLE_UNIT = 1.0 / (1 << 53)


def _to_int64(value: int) -> int:
    v = value & 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= 1 << 63 else v


class JavaRandom:
    """A port of ``java.util.Random`` (JDK 17): same seed, same sequence."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ _MULTIPLIER) & _MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK
        return to_int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` (any int) or ``nextInt(bound)`` (0 <= result < bound)."""
        if bound is None:
            return self._next(32)
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:  # a power of two
            return to_int32((bound * r) >> 31)
        u = r
        r = u % bound
        while to_int32(u - r + m) < 0:
            u = self._next(31)
            r = u % bound
        return r

    def next_long(self) -> int:
        return _to_int64((self._next(32) << 32) + self._next(32))

    def next_boolean(self) -> bool:
        return self._next(1) != 0

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * _DOUBLE_UNIT

    def shuffle(self, items: MutableSequence[T]) -> None:
        """``Collections.shuffle(list, random)``."""
        for i in range(len(items) - 1, 0, -1):
            j = self.next_int(i + 1)
            items[i], items[j] = items[j], items[i]
