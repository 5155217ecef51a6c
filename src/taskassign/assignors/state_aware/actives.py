"""The balanced target of the actives: sticky, weighted per thread, spread per subtopology.

In deterministic orders throughout:

1. **Keep.** Every task stays with the client that ran it (or, when nobody runs it, with its caught-up
   copy that restores least: its client left, or its active is between two clients under the
   cooperative protocol) while that client stays within its bounds
   (weighted load per thread, task count, tasks of the subtopology). A client over its bounds keeps the
   tasks that are dearest to move per unit of weight they would take off it, and sheds the rest: a
   heavy task with a caught-up copy elsewhere goes first (nothing to restore, few moves), a light task
   that must be restored elsewhere last.
2. **Place.** Shed and new tasks, heaviest first (LPT), each to the cheapest client that has room:
   cheapest = least to restore (a client holding a caught-up standby restores nothing) and fewest
   partitions read across racks; among equals its previous client, then the least loaded per thread.
   If no client has room, a task shed for weight goes back to its client (it would overload any other
   as much) and a new one to the least loaded client.
3. **Local search** (after the min-cost flow, ``flow.py``). Moves that fix a broken bound, or lift a
   client below its lower bound (typically one that just joined), until none is left.

A previous assignment that leaves no such move is *settled* and kept exactly as it is. The local
search ends in a settled assignment, so once the warm-ups are done the next rebalance changes nothing:
the probing rebalances converge instead of chasing a moving target.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import cast

from taskassign.assignors.state_aware.bins import EPSILON, Bins
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.search import LocalSearch, pull_key

__all__ = ("ActivePlan", "Reason", "plan_actives")

#: How many of a donor's cheapest-to-move tasks the pull pass looks at per step.
_PULL_CANDIDATES = 64
#: How many of the most loaded clients the pull pass takes from.
_PULL_DONORS = 4


class Reason(enum.Enum):
    """Why a task's active is not (or no longer) where it ran before."""

    #: No current member runs it or holds a caught-up copy (a new task, or its client left the group).
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
    #: True when this is the previous assignment, kept because no improving move exists.
    settled: bool = False
    #: Tasks the min-cost flow moved in place of another task of their client: task -> the task kept.
    instead_of: dict[int, int] = field(default_factory=dict)


def active_bins(p: Problem) -> Bins:
    """Bounds of the active load: the active weights, task counts and subtopology sizes."""
    sizes = [0] * p.num_subtopologies
    for g in p.subtopology:
        sizes[g] += 1
    racks = [p.rack_of(c) for c in range(p.num_clients)]
    return Bins(p.share, sum(p.active_weight), p.num_tasks, tolerance=p.settings.balance_tolerance,
                trigger=p.settings.balance_trigger, count_tolerance=p.settings.count_tolerance, group_sizes=sizes,
                group_slack=p.settings.subtopology_slack, racks=racks)


def move_away_costs(p: Problem) -> list[float]:
    """Per task, what the cheapest other client would restore to take it over from its owner, counting
    only copies on clients that ran less than their fair share before (the others will hardly have
    room for it); the whole state when there is no such copy."""
    load = [0.0] * p.num_clients
    for t, o in enumerate(p.sticky_owner):
        if o >= 0:
            load[o] += p.active_weight[t]
    total = sum(p.active_weight)
    roomy = [load[c] < p.share[c] * total for c in range(p.num_clients)]
    costs = []
    for t in range(p.num_tasks):
        owner = p.sticky_owner[t]
        best = p.full_restore(t)
        for c in p.copies[t]:
            if c != owner and roomy[c] and best > 0:
                best = min(best, p.restore(t, c))
        costs.append(best)
    return costs


def plan_actives(p: Problem) -> ActivePlan:
    """The greedy target (keep, then place), or the previous assignment itself when it is settled (every
    task has a previous client and no improving move exists). ``settle_actives`` finishes a greedy target."""
    weight, group = p.active_weight, p.subtopology
    away = move_away_costs(p)
    if all(o >= 0 for o in p.sticky_owner):
        bins = active_bins(p)
        for t, o in enumerate(p.sticky_owner):
            bins.add(o, weight[t], group[t])
        previous = ActivePlan(list(p.sticky_owner), [None] * p.num_tasks, bins, settled=True)
        if not _LocalSearch(p, previous, away).improvable():
            return previous
    bins = active_bins(p)
    owner = [-1] * p.num_tasks
    reason: list[Reason | None] = [None] * p.num_tasks
    unplaced: list[int] = []
    for t in sorted(range(p.num_tasks), key=lambda t: (-away[t], -weight[t], t)):
        o = p.sticky_owner[t]
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
        c = _choose(p, bins, t, reason[t] is Reason.OVER_STATE)
        bins.add(c, weight[t], group[t])
        owner[t] = c
    return ActivePlan(owner, reason, bins)


def settle_actives(p: Problem, plan: ActivePlan) -> ActivePlan:
    """``plan`` after the local search: moves that fix a broken bound or lift a client below its share,
    until none is left. Its result is exactly what ``plan_actives`` recognises as settled next time."""
    if plan.settled:
        return plan
    search = _LocalSearch(p, plan, move_away_costs(p))
    search.run()
    return plan


def _best_fit(p: Problem, bins: Bins, t: int, exclude: int = -1) -> int | None:
    """The cheapest client other than ``exclude`` with room for ``t`` (ties: its previous client, then the
    least loaded per thread, then ProcessId order), or None. For a repair (``exclude`` given) the least
    loaded clients alone decide whether any has room -- a copy elsewhere only makes a cheaper choice --
    so that the answer depends on the loads alone (see ``settle_actives``)."""
    w, g = p.active_weight[t], p.subtopology[t]

    def accept(c: int) -> bool:
        return c != exclude and bins.fits(c, w, g)

    candidates = {c for c in p.copies[t] if accept(c)}
    prev = p.sticky_owner[t]
    if prev >= 0 and accept(prev):
        candidates.add(prev)
    found_by_load = False
    racks = p.source_racks
    if racks is not None:
        # A client without a copy costs the whole state plus its rack's cross reads: look in the racks
        # reading fewest partitions across first, and stop once a rack with room has been found.
        best_cross = None
        by_cross = sorted((racks.cross_on(t, cast(int | None, r)), i, r) for i, r in enumerate(bins.rack_groups()))
        for cross, _, rack in by_cross:
            if best_cross is not None and cross > best_cross:
                break
            found = bins.least_loaded(accept, rack)
            if found is not None:
                candidates.add(found)
                best_cross = cross
                found_by_load = True
    else:
        found = bins.least_loaded(accept, everywhere=True)
        if found is not None:
            candidates.add(found)
            found_by_load = True
    if not candidates or (exclude >= 0 and not found_by_load):
        return None
    return min(candidates, key=lambda c: (p.active_cost(t, c), c != prev, bins.relative(c, w), c))


def _choose(p: Problem, bins: Bins, t: int, shed_for_weight: bool = False) -> int:
    """``_best_fit``; when nobody has room: back to its previous client if that one shed it for weight
    (any other client would go over its bound as much, and moving it would undo itself at the next
    rebalance), else the least loaded after taking it (ties: the cheapest, then its previous client)."""
    found = _best_fit(p, bins, t)
    if found is not None:
        return found
    prev = p.sticky_owner[t]
    if shed_for_weight and prev >= 0:
        return prev
    w = p.active_weight[t]
    fallback = set(p.copies[t]).union(bins.least_loaded_clients(8))
    if prev >= 0:
        fallback.add(prev)
    return min(fallback, key=lambda c: (bins.relative(c, w), p.active_cost(t, c), c != prev, c))


class _LocalSearch(LocalSearch):
    """Improving moves over a target until none is left (see ``settle_actives``):

    * *repair*: a client breaking a bound (over its weighted trigger bound with two tasks or more, over
      its task count, over a subtopology's share) gives its cheapest-to-move tasks to clients with room,
      down to its upper bound, as long as it stays above its lower bound;
    * *pull*: a client below its lower trigger bound takes tasks from clients above their fair load, up
      to its lower bound, the cheapest to move per unit of weight first, the donors staying above their
      lower bound.

    Every move lowers the total distance of the clients to their bounds, so the search ends.
    """

    def __init__(self, p: Problem, plan: ActivePlan, away: list[float]) -> None:
        self.p = p
        self.plan = plan
        self.bins = plan.bins
        self.away = away
        self.on: list[set[int]] = [set() for _ in range(p.num_clients)]
        for t, c in enumerate(plan.owner):
            self.on[c].add(t)
        self._sorted: dict[int, list[int]] = {}

    def tasks_of(self, c: int) -> list[int]:
        """The tasks on ``c``, cheapest to move first (cached until ``c`` changes)."""
        cached = self._sorted.get(c)
        if cached is None:
            away, weight = self.away, self.p.active_weight
            cached = self._sorted[c] = sorted(self.on[c], key=lambda t: (away[t], weight[t], t))
        return cached

    def move(self, t: int, source: int, dest: int, reason: Reason) -> None:
        p, bins, plan = self.p, self.bins, self.plan
        bins.remove(source, p.active_weight[t], p.subtopology[t])
        bins.add(dest, p.active_weight[t], p.subtopology[t])
        plan.owner[t] = dest
        plan.reason[t] = None if dest == p.sticky_owner[t] else reason
        self.on[source].discard(t)
        self.on[dest].add(t)
        self._sorted.pop(source, None)
        self._sorted.pop(dest, None)

    # -- repair -------------------------------------------------------------------------------------

    def broken(self, c: int) -> str | None:
        """The bound ``c`` breaks: "state" (over its trigger bound with two tasks or more), "count",
        "subtopology", or None."""
        bins = self.bins
        if bins.count[c] >= 2 and bins.load[c] > bins.trigger_upper[c] + EPSILON:
            return "state"
        if bins.count[c] > bins.count_cap[c]:
            return "count"
        if bins.group_cap and any(n > bins.group_cap[g][c] for g, n in bins.group_count[c].items()):
            return "subtopology"
        return None

    def still_broken(self, c: int, kind: str) -> bool:
        """Whether repairing ``c`` goes on: down to its (tight) upper bound once it broke its trigger."""
        bins = self.bins
        if kind == "state":
            return bins.count[c] >= 2 and bins.load[c] > bins.upper[c] + EPSILON
        return self.broken(c) == kind

    def repair(self, dry_run: bool = False) -> int:
        p, bins = self.p, self.bins
        weight, group = p.active_weight, p.subtopology
        moved = 0
        for c in range(p.num_clients):
            first = self.broken(c)
            kind = first
            while kind is not None:
                for t in self.tasks_of(c):
                    if kind == "subtopology" and bins.group_count[c][group[t]] <= bins.group_cap[group[t]][c]:
                        continue
                    if kind == "state" and weight[t] <= EPSILON:
                        continue  # moving what weighs nothing does not relieve the weighted bound
                    if weight[t] > EPSILON and bins.load[c] - weight[t] < bins.lower[c] - EPSILON:
                        continue
                    dest = _best_fit(p, bins, t, exclude=c)
                    if dest is not None:
                        break
                else:
                    break  # nothing on c can go anywhere
                if dry_run:
                    return 1
                self.move(t, c, dest, _VIOLATION_REASONS[kind])
                moved += 1
                kind = kind if self.still_broken(c, kind) else self.broken(c)
        return moved

    # -- pull ---------------------------------------------------------------------------------------

    def pull(self, dry_run: bool = False) -> int:
        p, bins = self.p, self.bins
        moved = 0
        under = [c for c in range(p.num_clients) if bins.load[c] < bins.trigger_lower[c] - EPSILON]
        for u in sorted(under, key=lambda c: (bins.relative(c), c)):
            while bins.load[u] < bins.lower[u] - EPSILON:
                picked = self.pick_for(u)
                if picked is None:
                    break
                if dry_run:
                    return 1
                t, d = picked
                self.move(t, d, u, Reason.PULLED)
                moved += 1
        return moved

    def pick_for(self, u: int) -> tuple[int, int] | None:
        """The task (and its client) ``u`` should take next, from one of the most loaded clients above their
        fair load, which stays above its lower bound: a task ``u`` holds a copy of, or one of the cheapest
        to move; cheapest to move per unit of weight, then the largest that fills the gap. When none of
        those fits, every task of those clients is tried: whether a pull exists depends on the loads alone,
        which is what makes a settled assignment recognisable at the next rebalance."""
        p, bins = self.p, self.bins
        donors = [c for c in bins.most_loaded(_PULL_DONORS + 1, 1 + EPSILON) if c != u][:_PULL_DONORS]
        owner = self.plan.owner
        # the tasks of the top donors u holds a copy of, and the cheapest to move of the others
        donor_set = set(donors)
        pairs = [(t, owner[t]) for t in sorted(p.lags.reported_by_client[u]) if owner[t] in donor_set]
        for d in donors:
            pairs += [(t, d) for t in self.tasks_of(d)[:_PULL_CANDIDATES]]
        best = self._best_pull(u, pairs)
        if best is None:
            rest = [(t, d) for d in donors for t in self.tasks_of(d)[_PULL_CANDIDATES:]]
            best = self._best_pull(u, rest)
        return best

    def _best_pull(self, u: int, pairs: list[tuple[int, int]]) -> tuple[int, int] | None:
        p, bins = self.p, self.bins
        weight, group = p.active_weight, p.subtopology
        gap = bins.fair[u] - bins.load[u]
        best: tuple[tuple[float, int, float, int], int, int] | None = None
        for t, d in pairs:
            w = weight[t]
            if w <= EPSILON or bins.load[d] - w < bins.lower[d] - EPSILON or not bins.fits(u, w, group[t]):
                continue
            key = pull_key(p.active_cost(t, u) - p.active_cost(t, d), w, gap, t)
            if best is None or key < best[0]:
                best = (key, t, d)
        return None if best is None else (best[1], best[2])
