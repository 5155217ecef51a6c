"""Kafka's TaskPairs heuristic of the sticky assignors (``LegacyStickyTaskAssignor.TaskPairs``), without n^2 pairs.

Kafka records the pair (t, x) for every task x a client holds when t is placed on it, in a HashSet
of up to n(n-1)/2 pairs, and asks ``hasNewPair(t, tasks of c)``: is some x on c not yet paired
with t? Its "all pairs recorded" shortcut never changes an answer (a client asked about t never
holds t), so only the pair relation matters, and that relation has a compact exact form.

While a client's task set only grows, the tasks placed on it pairwise form a clique: the later of
two placements records the pair. A rack optimisation that rewrites a client's set starts a new
*epoch* for it with the rewritten set as its *base*: a task placed later pairs with the base and
with the epoch's placements, base tasks do not pair among themselves. So t is paired with x iff in
some epoch either t was placed and x is in base | placed, or t is in the base and x was placed.
Each epoch keeps two bitmasks (Python ints, bit i = task i); a query ORs the few epochs t belongs
to and tests the candidate's mask against it: O(n/64) words instead of O(n^2) stored pairs.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ("TaskPairs",)


class TaskPairs:
    """Pairs of co-located tasks over tasks ``0..n-1`` and clients ``0..C-1`` (both dense indices)."""

    __slots__ = ("_added", "_base", "_base_of", "_current", "_held", "_placed_in")

    def __init__(self, num_tasks: int, num_clients: int) -> None:
        self._base: list[int] = [0] * num_clients  # per epoch: mask of the base set
        self._added: list[int] = [0] * num_clients  # per epoch: mask of the tasks placed in it
        self._current: list[int] = list(range(num_clients))  # client -> its open epoch
        self._held: list[int] = [0] * num_clients  # client -> mask of the tasks it holds now
        self._placed_in: list[list[int]] = [[] for _ in range(num_tasks)]  # task -> epochs it was placed in
        self._base_of: list[list[int]] = [[] for _ in range(num_tasks)]  # task -> epochs it is a base of

    def add(self, task: int, client: int) -> None:
        """Record that ``task`` is placed on ``client``: it pairs with everything the client holds."""
        bit = 1 << task
        epoch = self._current[client]
        self._added[epoch] |= bit
        self._held[client] |= bit
        self._placed_in[task].append(epoch)

    def restart(self, client: int, tasks: Iterable[int]) -> None:
        """The client's set was rewritten (rack optimisation) to ``tasks``: open a new epoch based on it.

        Pairs recorded so far stay recorded, as in Kafka.
        """
        mask = 0
        for task in tasks:
            mask |= 1 << task
        if mask == self._held[client]:
            return  # unchanged: the open epoch still describes the client exactly
        epoch = len(self._base)
        self._base.append(mask)
        self._added.append(0)
        self._current[client] = epoch
        self._held[client] = mask
        for task in tasks:
            self._base_of[task].append(epoch)

    def partners(self, task: int) -> int:
        """Mask of every task paired with ``task`` (it may include ``task`` itself)."""
        base, added = self._base, self._added
        mask = 0
        for epoch in self._placed_in[task]:
            mask |= base[epoch] | added[epoch]
        for epoch in self._base_of[task]:
            mask |= added[epoch]
        return mask

    def has_new_pair(self, client: int, partners: int) -> bool:
        """Kafka's ``hasNewPair(t, tasks of client)`` given ``partners(t)``; the client must not hold t."""
        return bool(self._held[client] & ~partners)
