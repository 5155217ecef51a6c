"""Clients as bins: weighted load and task counts against per-thread bounds (mutable scratch state).

A client's *share* is its fraction of the application's threads. Its fair load is that share of the
total weight; the bounds are the fair load +- ``tolerance`` (where new placements and balancing moves
bring a client) and +- ``trigger`` (outside which a client's tasks move at all: the gap between the two
keeps small drifts, such as state growing, from moving anything), a cap on its number of tasks (the
even count share + ``count_tolerance``) and, per subtopology, the even share rounded up + ``slack``. A
client with nothing on it always accepts one task, whatever its weight: a task larger than a client's
bound must still run somewhere, and refusing it everywhere would make the result depend on ties.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable, Sequence

__all__ = ("EPSILON", "MOVE_OVERHEAD", "Bins")

#: Float slack for bound checks (weights are sums of floats).
EPSILON = 1e-9
#: When a client below its share picks what to take, every move also counts this much (in units of
#: state), so that it fills its gap with few substantial tasks rather than with many tiny ones.
MOVE_OVERHEAD = 0.25


class Bins:
    """Per-client load, counts and bounds, plus least-loaded lookups per rack."""

    def __init__(
        self,
        share: Sequence[float],
        total_weight: float,
        total_count: int,
        *,
        tolerance: float,
        trigger: float | None = None,
        count_tolerance: float,
        group_sizes: Sequence[int] = (),
        group_slack: int = 0,
        racks: Sequence[Hashable] | None = None,
    ) -> None:
        n = len(share)
        self.share = list(share)
        self.fair = [s * total_weight for s in share]
        self.upper = [f * (1 + tolerance) for f in self.fair]
        self.lower = [f * (1 - tolerance) for f in self.fair]
        loose = tolerance if trigger is None else max(trigger, tolerance)
        #: Outside these, tasks move (for balance); a move then brings the client within upper / lower.
        self.trigger_upper = [f * (1 + loose) for f in self.fair]
        self.trigger_lower = [f * (1 - loose) for f in self.fair]
        self.count_cap = [max(1, math.ceil(s * total_count * (1 + count_tolerance) - EPSILON)) for s in share]
        self.group_cap = [[math.ceil(s * size - EPSILON) + group_slack for s in share] for size in group_sizes]
        self.load = [0.0] * n
        #: ``relative(c)`` of every client, kept current (the heaps' keys).
        self.rel = [0.0] * n
        self.count = [0] * n
        self.group_count: list[dict[int, int]] = [{} for _ in range(n)]
        rack_of: list[Hashable] = list(racks) if racks is not None else [None] * n
        #: Client groups with a heap of (relative load, c) each: racks for actives, (rack, tags) for standbys.
        self._members: dict[Hashable, list[int]] = {}
        for c, r in enumerate(rack_of):
            self._members.setdefault(r, []).append(c)
        self._rack_of = rack_of
        self._group_order = sorted(self._members, key=lambda r: self._members[r][0])
        # The heaps are built at the first lookup (loads filled before that cost no heap work) and kept
        # current from then on; entries whose key no longer matches are stale and skipped.
        self._live = False
        self._heaps: dict[Hashable, list[tuple[float, int]]] = {}
        self._global: list[tuple[float, int]] = []
        #: Max-heap of (-relative load, c) over every client, full or not.
        self._most: list[tuple[float, int]] = []

    # -- state ------------------------------------------------------------------------------------

    def relative(self, c: int, extra: float = 0.0) -> float:
        """(load + extra) / fair load; a client with no fair load counts as infinitely loaded once used."""
        fair = self.fair[c]
        load = self.load[c] + extra
        if fair > 0:
            return load / fair
        return 0.0 if load <= EPSILON else math.inf

    def fits(self, c: int, weight: float, group: int | None = None) -> bool:
        """Whether ``c`` may take one more task of ``weight`` (and of subtopology ``group``)."""
        if self.count[c] == 0:
            return True
        if self.count[c] + 1 > self.count_cap[c]:
            return False
        if weight > EPSILON and self.load[c] + weight > self.upper[c] + EPSILON:
            return False
        return group is None or not self.group_cap or \
            self.group_count[c].get(group, 0) + 1 <= self.group_cap[group][c]

    def violation(self, c: int, weight: float, group: int | None = None) -> str | None:
        """Which bound ``c`` would break by keeping one more task ("state": its trigger bound, "count",
        "subtopology"), or None."""
        if self.count[c] == 0:
            return None
        if weight > EPSILON and self.load[c] + weight > self.trigger_upper[c] + EPSILON:
            return "state"
        if self.count[c] + 1 > self.count_cap[c]:
            return "count"
        if group is not None and self.group_cap and self.group_count[c].get(group, 0) + 1 > self.group_cap[group][c]:
            return "subtopology"
        return None

    def add(self, c: int, weight: float, group: int | None = None) -> None:
        self.load[c] += weight
        self.count[c] += 1
        if group is not None:
            counts = self.group_count[c]
            counts[group] = counts.get(group, 0) + 1
        self._touch(c)

    def remove(self, c: int, weight: float, group: int | None = None) -> None:
        self.load[c] -= weight
        self.count[c] -= 1
        if group is not None:
            self.group_count[c][group] -= 1
        self._touch(c)

    def _touch(self, c: int) -> None:
        rel = self.rel[c] = self.relative(c)
        if not self._live:
            return
        heapq.heappush(self._most, (-rel, c))
        if self.count[c] >= self.count_cap[c]:
            return  # full: it refuses every task, so the lookups need not see it (entries left go stale)
        key = (rel, c)
        heapq.heappush(self._heaps[self._rack_of[c]], key)
        heapq.heappush(self._global, key)

    # -- lookups ----------------------------------------------------------------------------------

    def _heapify(self) -> None:
        """Build the heaps from the current loads (once, at the first lookup)."""
        rel, count, cap = self.rel, self.count, self.count_cap
        open_keys = [(rel[c], c) for c in range(len(rel)) if count[c] < cap[c] or count[c] == 0]
        self._global = list(open_keys)
        heapq.heapify(self._global)
        self._heaps = {r: [] for r in self._members}
        for key in open_keys:
            self._heaps[self._rack_of[key[1]]].append(key)
        for heap in self._heaps.values():
            heapq.heapify(heap)
        self._most = [(-rel[c], c) for c in range(len(rel))]
        heapq.heapify(self._most)
        self._live = True

    def rack_groups(self) -> Sequence[Hashable]:
        """The client groups, in a deterministic order (by their first member)."""
        return self._group_order

    def members(self, group: Hashable) -> Sequence[int]:
        return self._members[group]

    def least_loaded(
        self, accept: Callable[[int], bool], rack: Hashable = None, *, everywhere: bool = False, limit: int = 16
    ) -> int | None:
        """The least relatively loaded client of ``rack`` (of every rack with ``everywhere``) that
        ``accept``s, looking at no more than ``limit`` candidates (None if none of them accepts)."""
        if not self._live:
            self._heapify()
        heap = self._global if everywhere else self._heaps[rack]
        rel_of = self.rel
        rejected: list[tuple[float, int]] = []
        seen: set[int] = set()
        found = None
        while heap and len(rejected) < limit:
            rel, c = heap[0]
            if c in seen or rel != rel_of[c] or (self.count[c] >= self.count_cap[c] and self.count[c] > 0):
                heapq.heappop(heap)  # stale, a duplicate, or full: never useful again as it stands
                continue
            if accept(c):
                found = c
                break
            seen.add(c)
            rejected.append(heapq.heappop(heap))
        for key in rejected:
            heapq.heappush(heap, key)
        return found

    def most_loaded(self, count: int, above: float) -> list[int]:
        """Up to ``count`` distinct clients whose relative load exceeds ``above``, most loaded first."""
        if not self._live:
            self._heapify()
        heap = self._most
        taken: list[tuple[float, int]] = []
        result: list[int] = []
        seen: set[int] = set()
        while heap and len(result) < count:
            neg, c = heap[0]
            if c in seen or -neg != self.rel[c]:
                heapq.heappop(heap)
                continue
            if -neg <= above:
                break
            seen.add(c)
            taken.append(heapq.heappop(heap))
            result.append(c)
        for key in taken:
            heapq.heappush(heap, key)
        return result

    def least_loaded_clients(self, count: int) -> list[int]:
        """Up to ``count`` distinct clients, least relatively loaded first."""
        if not self._live:
            self._heapify()
        taken: list[tuple[float, int]] = []
        result: list[int] = []
        seen: set[int] = set()
        heap = self._global
        while heap and len(result) < count:
            key = heapq.heappop(heap)
            rel, c = key
            if c in seen or rel != self.rel[c]:
                continue
            seen.add(c)
            taken.append(key)
            result.append(c)
        for key in taken:
            heapq.heappush(heap, key)
        return result
