"""The balanced target of the actives: sticky, weighted per thread, spread per subtopology.

Three passes over the tasks, all in deterministic orders:

1. **Keep.** Every task stays with the client that ran it while that client stays within its bounds
   (weighted load per thread, task count, tasks of the subtopology). A client over its bounds keeps the
   tasks that are most expensive to move away (the least restorable elsewhere), then the heaviest, and
   sheds the rest: tasks with a caught-up copy elsewhere, and stateless tasks, go first.
2. **Place.** Shed and new tasks, heaviest first (LPT), each to the cheapest client that has room:
   cheapest = least to restore (a client holding a caught-up standby restores nothing) and fewest
   partitions read across racks; among equals, the least loaded per thread. If no client has room, the
   least loaded one takes it.
3. **Pull.** A client still below its bounds (typically one that just joined) takes tasks from the most
   loaded clients, the cheapest to move first, until it is within them.

The same inputs give the same target, and a target that is within every bound is kept as it is: this
is what lets the probing rebalances converge instead of chasing a moving target.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from taskassign.state_aware.bins import EPSILON, Bins
from taskassign.state_aware.problem import Problem

__all__ = ("ActivePlan", "Reason", "plan_actives")

#: How many of a donor's cheapest-to-move tasks the pull pass looks at per step.
_PULL_CANDIDATES = 64
#: How many of the most loaded clients the pull pass takes from.
_PULL_DONORS = 4


class Reason(enum.Enum):
    """Why a task's active is not (or no longer) where it ran before."""

    #: No current member ran it (a new task, or its client left the group).
    NEW = "new"
    #: Its client held more weighted load per thread than its share allows.
    OVER_STATE = "over_state"
    #: Its client ran more tasks per thread than its count share allows.
    OVER_COUNT = "over_count"
    #: Its client ran more tasks of the subtopology than its even share allows.
    OVER_SUBTOPOLOGY = "over_subtopology"
    #: A client below its share of the load took it.
    PULLED = "pulled"
    #: The min-cost flow found a home that restores less or reads fewer partitions across racks.
    REMAPPED = "remapped"


_VIOLATION_REASONS = {"state": Reason.OVER_STATE, "count": Reason.OVER_COUNT,
                      "subtopology": Reason.OVER_SUBTOPOLOGY}


@dataclass(slots=True)
class ActivePlan:
    """The target client of every task's active, and why a task left its previous client."""

    owner: list[int]
    reason: list[Reason | None]
    bins: Bins


def active_bins(p: Problem) -> Bins:
    """Bounds of the active load: the active weights, task counts and subtopology sizes."""
    sizes = [0] * p.num_subtopologies
    for g in p.subtopology:
        sizes[g] += 1
    racks = [p.rack_of(c) for c in range(p.num_clients)]
    return Bins(p.share, sum(p.active_weight), p.num_tasks, tolerance=p.settings.balance_tolerance,
                count_tolerance=p.settings.count_tolerance, group_sizes=sizes,
                group_slack=p.settings.subtopology_slack, racks=racks)


def move_away_cost(p: Problem, task: int) -> float:
    """What the cheapest other client would restore to take ``task`` over from its owner."""
    owner = p.prev_owner[task]
    best = p.full_restore(task)
    for c in p.copies[task]:
        if c != owner and best > 0:
            best = min(best, p.restore(task, c))
    return best


def plan_actives(p: Problem) -> ActivePlan:
    """The balanced target of every task's active (see the module docstring)."""
    weight, group = p.active_weight, p.subtopology
    bins = active_bins(p)
    owner = [-1] * p.num_tasks
    reason: list[Reason | None] = [None] * p.num_tasks
    away = [move_away_cost(p, t) for t in range(p.num_tasks)]
    unplaced: list[int] = []
    for t in sorted(range(p.num_tasks), key=lambda t: (-away[t], -weight[t], t)):
        o = p.prev_owner[t]
        if o < 0:
            reason[t] = Reason.NEW
            unplaced.append(t)
            continue
        broken = bins.violation(o, weight[t], group[t])
        if broken is not None:
            reason[t] = _VIOLATION_REASONS[broken]
            unplaced.append(t)
            continue
        bins.add(o, weight[t], group[t])
        owner[t] = o
    unplaced.sort(key=lambda t: (-weight[t], t))
    for t in unplaced:
        c = _choose(p, bins, t)
        bins.add(c, weight[t], group[t])
        owner[t] = c
    _pull(p, bins, owner, reason, away)
    return ActivePlan(owner, reason, bins)


def _choose(p: Problem, bins: Bins, t: int) -> int:
    """The cheapest client with room for ``t`` (ties: least loaded per thread, then ProcessId order);
    the least loaded after taking it when nobody has room."""
    w, g = p.active_weight[t], p.subtopology[t]

    def accept(c: int) -> bool:
        return bins.fits(c, w, g)

    candidates = set(p.copies[t])
    if p.source_racks is not None:
        for rack in bins.rack_groups():
            found = bins.least_loaded(accept, rack)
            if found is not None:
                candidates.add(found)
    else:
        found = bins.least_loaded(accept, everywhere=True)
        if found is not None:
            candidates.add(found)
    feasible = [c for c in candidates if accept(c)]
    if feasible:
        return min(feasible, key=lambda c: (p.active_cost(t, c), bins.relative(c, w), c))
    fallback = candidates.union(bins.least_loaded_clients(8))
    return min(fallback, key=lambda c: (bins.relative(c, w), p.active_cost(t, c), c))


def _pull(p: Problem, bins: Bins, owner: list[int], reason: list[Reason | None], away: list[float]) -> None:
    """Clients below their lower bound take tasks from the most loaded clients (module docstring, 3)."""
    weight, group = p.active_weight, p.subtopology
    under = [c for c in range(p.num_clients) if bins.load[c] < bins.lower[c] - EPSILON]
    if not under:
        return
    on: list[list[int]] = [[] for _ in range(p.num_clients)]
    for t in sorted(range(p.num_tasks), key=lambda t: (away[t], weight[t], t)):
        on[owner[t]].append(t)
    for u in sorted(under, key=lambda c: (bins.relative(c), c)):
        while bins.load[u] < bins.lower[u] - EPSILON:
            picked = _pick_for(p, bins, owner, on, u)
            if picked is None:
                break
            t, d = picked
            bins.remove(d, weight[t], group[t])
            bins.add(u, weight[t], group[t])
            owner[t] = u
            reason[t] = Reason.PULLED
            on[d].remove(t)
            on[u].append(t)


def _pick_for(p: Problem, bins: Bins, owner: list[int], on: list[list[int]], u: int) -> tuple[int, int] | None:
    """The task (and its client) ``u`` should take next: from a client above its fair load that stays
    above its lower bound; cheapest to move per unit of weight, then the largest that fills ``u``'s gap."""
    weight, group = p.active_weight, p.subtopology
    donors = [c for c in bins.most_loaded(_PULL_DONORS + 1, 1 + EPSILON) if c != u][:_PULL_DONORS]
    if not donors:
        return None
    gap = bins.fair[u] - bins.load[u]
    own_copies = set(p.lags.reported_by_client[u])
    best: tuple[tuple[float, int, float, int], int, int] | None = None
    for d in donors:
        candidates = on[d][:_PULL_CANDIDATES] + [t for t in own_copies if owner[t] == d]
        for t in candidates:
            w = weight[t]
            if w <= EPSILON or bins.load[d] - w < bins.lower[d] - EPSILON or not bins.fits(u, w, group[t]):
                continue
            extra = p.active_cost(t, u) - p.active_cost(t, d)
            fills = w <= gap + EPSILON
            key = (round(extra / w, 9), 0 if fills else 1, -w if fills else w, t)
            if best is None or key < best[0]:
                best = (key, t, d)
    return None if best is None else (best[1], best[2])
