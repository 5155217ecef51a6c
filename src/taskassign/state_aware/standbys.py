"""The balanced target of the standbys: sticky, spread over tags or racks, evening out state per thread.

Standbys hold state too, so they are placed to balance each client's *state load*: the state of its
actives and standbys per thread. Tasks with a changelog get ``min(num.standby.replicas, clients - 1)``
standbys each, heaviest task first, every standby on the cheapest client that has room (a client with a
copy of the state restores little or nothing, so previous standbys stay where they are while their
client is within bounds). Replicas of a task are spread over the values of every
``rack.aware.assignment.tags`` key (or over racks when no tags are configured and every client has a
rack) as long as enough distinct values remain, Kafka's "partial rack awareness" (KIP-708); when that
is impossible the least loaded clients take the rest. Finally clients still below their share take
standbys from the most loaded ones, never reducing a task's tag spread.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from taskassign.standby.client_tag_aware import keeps_tag_diversity
from taskassign.state_aware.bins import EPSILON, Bins
from taskassign.state_aware.problem import Problem

__all__ = ("StandbyPlan", "plan_standbys")

#: Above this many distinct (rack, tags) groups of clients, candidates come from one global heap.
_MAX_GROUPS = 64


@dataclass(slots=True)
class StandbyPlan:
    """The target standby clients of every task (empty without changelog), and the state-load bins."""

    holders: list[tuple[int, ...]]
    bins: Bins
    #: Standbys a client below its share took from a more loaded one: (task, from, to).
    pulled: list[tuple[int, int, int]]


def standby_count(p: Problem) -> int:
    """Standbys per task with a changelog: ``num.standby.replicas``, at most one per other client."""
    return max(0, min(p.configs.num_standby_replicas, p.num_clients - 1))


def plan_standbys(p: Problem, active_owner: Sequence[int]) -> StandbyPlan:
    """Standbys for the target actives ``active_owner`` (see the module docstring)."""
    wanted = standby_count(p)
    state = p.state_weight
    changelog = sorted(p.changelog, key=lambda t: (-state[t], t))
    total = sum(state) + wanted * sum(state[t] for t in changelog)
    # Heaps per (rack, standby tags): every member of a group passes or fails the tag spread alike.
    groups: list[Hashable] = [(p.rack_of(c), tuple(sorted(p.tags[c].items()))) for c in range(p.num_clients)]
    if len(set(groups)) > _MAX_GROUPS:
        groups = [None] * p.num_clients
    bins = Bins(p.share, total, p.num_tasks + wanted * len(changelog), tolerance=p.settings.balance_tolerance,
                count_tolerance=p.settings.count_tolerance, racks=groups)
    for t, c in enumerate(active_owner):
        bins.add(c, state[t])
    holders: list[tuple[int, ...]] = [()] * p.num_tasks
    if wanted == 0:
        return StandbyPlan(holders, bins, [])
    spread = _TagSpread(p)
    for t in changelog:
        chosen = [active_owner[t]]
        for _ in range(wanted):
            c = _choose(p, bins, spread, t, chosen)
            bins.add(c, state[t])
            chosen.append(c)
        holders[t] = tuple(sorted(chosen[1:]))
    pulled = _pull(p, bins, active_owner, holders, spread)
    return StandbyPlan(holders, bins, pulled)


class _TagSpread:
    """Kafka's partial rack awareness over the standby tags of the problem (``Problem.tags``)."""

    def __init__(self, p: Problem) -> None:
        self.tags = p.tags
        self.keys = p.tag_keys
        self.values = {k: {t[k] for t in p.tags if k in t} for k in self.keys}

    def allows(self, client: int, chosen: Sequence[int]) -> bool:
        """True if ``client`` repeats no tag value of ``chosen`` for a key that still has unused values."""
        if not self.keys:
            return True
        mine = self.tags[client]
        for key in self.keys:
            if len(self.values[key]) > len(chosen) and key in mine:
                value = mine[key]
                if any(self.tags[r].get(key) == value for r in chosen):
                    return False
        return True


def _choose(p: Problem, bins: Bins, spread: _TagSpread, t: int, chosen: list[int]) -> int:
    """The next standby client of ``t``: cheapest with room and a new tag value; else the least loaded
    with a new tag value; else the least loaded not holding ``t``."""
    w = p.state_weight[t]
    held = set(chosen)

    def spreads(c: int) -> bool:
        return c not in held and spread.allows(c, chosen)

    def fits(c: int) -> bool:
        return spreads(c) and bins.fits(c, w)

    def fits_in_group(c: int) -> bool:  # the group passed the tag spread already
        return c not in held and bins.fits(c, w)

    candidates = [c for c in p.copies[t] if fits(c)]
    groups = bins.rack_groups()
    allowed = groups if not spread.keys else [
        g for g in groups if g is None or spread.allows(bins.members(g)[0], chosen)]
    for group in allowed:
        found = bins.least_loaded(fits if group is None else fits_in_group, group, everywhere=group is None)
        if found is not None:
            candidates.append(found)
    feasible = candidates
    if feasible:
        return min(feasible, key=lambda c: (p.standby_cost(t, c), bins.relative(c, w), c))
    for accept, where in ((spreads, allowed), (lambda c: c not in held, groups)):
        options = [c for c in p.copies[t] if accept(c)]
        for group in where:
            found = bins.least_loaded(accept, group, everywhere=group is None)
            if found is not None:
                options.append(found)
        if not options:
            found = _scan(p.num_clients, accept, bins, w)
            if found is not None:
                options.append(found)
        if options:
            return min(options, key=lambda c: (bins.relative(c, w), p.standby_cost(t, c), c))
    raise AssertionError(f"no client left for a standby of task #{t}")  # wanted <= clients - 1


def _scan(n: int, accept: Callable[[int], bool], bins: Bins, w: float) -> int | None:
    """The least loaded accepted client by a full scan (when the heap's first candidates all refuse)."""
    best = None
    for c in range(n):
        if accept(c) and (best is None or (bins.relative(c, w), c) < (bins.relative(best, w), best)):
            best = c
    return best


def _pull(
    p: Problem, bins: Bins, active_owner: Sequence[int], holders: list[tuple[int, ...]], spread: _TagSpread
) -> list[tuple[int, int, int]]:
    """Clients below their lower bound take standbys from the most loaded clients (cheapest first)."""
    state = p.state_weight
    under = sorted((c for c in range(p.num_clients) if bins.load[c] < bins.lower[c] - EPSILON),
                   key=lambda c: (bins.relative(c), c))
    pulled: list[tuple[int, int, int]] = []
    if not under:
        return pulled
    standbys_on: list[set[int]] = [set() for _ in range(p.num_clients)]
    for t, hs in enumerate(holders):
        for c in hs:
            standbys_on[c].add(t)
    for u in under:
        while bins.load[u] < bins.lower[u] - EPSILON:
            donors = [c for c in bins.most_loaded(5, 1 + EPSILON) if c != u][:4]
            gap = bins.fair[u] - bins.load[u]
            best: tuple[tuple[float, int, float, int], int, int] | None = None
            for d in donors:
                for t in sorted(standbys_on[d]):
                    w = state[t]
                    if (w <= EPSILON or u == active_owner[t] or u in holders[t]
                            or bins.load[d] - w < bins.lower[d] - EPSILON or not bins.fits(u, w)):
                        continue
                    others = [spread.tags[c] for c in (active_owner[t], *holders[t]) if c != d]
                    if not keeps_tag_diversity(spread.tags[d], spread.tags[u], others):
                        continue
                    extra = p.standby_cost(t, u) - p.standby_cost(t, d)
                    fills = w <= gap + EPSILON
                    key = (round(extra / w, 9), 0 if fills else 1, -w if fills else w, t)
                    if best is None or key < best[0]:
                        best = (key, t, d)
            if best is None:
                break
            _, t, d = best
            bins.remove(d, state[t])
            bins.add(u, state[t])
            holders[t] = tuple(sorted((*(c for c in holders[t] if c != d), u)))
            standbys_on[d].discard(t)
            standbys_on[u].add(t)
            pulled.append((t, d, u))
    return pulled
