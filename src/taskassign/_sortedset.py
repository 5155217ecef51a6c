"""An immutable set that iterates in sorted order, like Java's TreeSet seen read-only.

Kafka hands assignors ``SortedSet``s and iterates them in natural order; a plain ``frozenset`` would
iterate in hash order, which depends on ``PYTHONHASHSEED`` for some keys. This keeps O(1) membership
and a deterministic, sorted iteration.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from typing import Any, Generic, Protocol, TypeVar


class _Comparable(Protocol):
    def __lt__(self, other: Any, /) -> bool: ...


T = TypeVar("T", bound=_Comparable)

__all__ = ("SortedFrozenSet",)


class SortedFrozenSet(Set[T], Generic[T]):
    """Immutable set with sorted iteration. Build with ``SortedFrozenSet(iterable)``."""

    __slots__ = ("_items", "_members")

    def __init__(self, items: Iterable[T] = ()) -> None:
        members = frozenset(items)
        self._members: frozenset[T] = members
        self._items: tuple[T, ...] = tuple(sorted(members))

    @classmethod
    def from_sorted_unique(cls, items: tuple[T, ...]) -> SortedFrozenSet[T]:
        """Wrap a tuple the caller guarantees is sorted and duplicate-free (no re-sort)."""
        new = cls.__new__(cls)
        object.__setattr__(new, "_items", items)
        object.__setattr__(new, "_members", frozenset(items))
        return new

    def __contains__(self, item: object) -> bool:
        return item in self._members

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> T:
        return self._items[index]

    def __hash__(self) -> int:
        return hash(self._members)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SortedFrozenSet):
            return self._members == other._members
        if isinstance(other, Set):
            return self._members == frozenset(other)
        return NotImplemented

    def __repr__(self) -> str:
        return "{" + ", ".join(str(x) for x in self._items) + "}"

    @property
    def items(self) -> tuple[T, ...]:
        """The elements as a sorted tuple."""
        return self._items
