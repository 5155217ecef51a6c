"""The balanced target of the standbys: sticky, spread over tags or racks, evening out state per thread.

Standbys hold state too, so they are placed to balance each client's *state load*: the state of its
actives and standbys per thread. Tasks with a changelog get ``min(num.standby.replicas, clients - 1)``
standbys each. First every task, heaviest first, keeps its previous standbys (and the client that ran
its active before, if the active moves), freshest copy first, while their clients stay within their
trigger bounds; then the missing standbys go, heaviest task first, each to the cheapest client that has
room (a client with a copy of the state restores little or nothing). Replicas of a task are spread over
the values of every ``rack.aware.assignment.tags`` key (or over racks when no tags are configured and
every client has a rack) as long as enough distinct values remain, Kafka's "partial rack awareness"
(KIP-708); when that is impossible the least loaded clients take the rest. Finally a local search
moves standbys off clients over their bounds and onto clients below them, never reducing a task's tag
spread; previous standbys that leave nothing to improve are kept exactly as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import cast

from taskassign.assignors.state_aware.bins import EPSILON, Bins
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.search import LocalSearch, pull_key
from taskassign.standby.client_tag_aware import keeps_tag_diversity

__all__ = ("StandbyPlan", "plan_standbys")

#: Above this many distinct (rack, tags) groups of clients, candidates come from one global heap.
_MAX_GROUPS = 64


@dataclass(slots=True)
class StandbyPlan:
    """The target standby clients of every task (empty without changelog), and the state-load bins."""

    holders: list[tuple[int, ...]]
    bins: Bins
    #: Standbys a client below its share took from a more loaded one: (task, from, to).
    pulled: list[tuple[int, int, int]] = field(default_factory=list)


def standby_count(p: Problem) -> int:
    """Standbys per task with a changelog: ``num.standby.replicas``, at most one per other client."""
    return max(0, min(p.configs.num_standby_replicas, p.num_clients - 1))


def _standby_bins(p: Problem, wanted: int) -> Bins:
    state = p.state_weight
    total = sum(state) + wanted * sum(state[t] for t in p.changelog)
    # Heaps per (rack, standby tags): every member of a group passes or fails the tag spread alike.
    groups: list[Hashable] = [(p.rack_of(c), tuple(sorted(p.tags[c].items()))) for c in range(p.num_clients)]
    if len(set(groups)) > _MAX_GROUPS:
        groups = [None] * p.num_clients
    return Bins(p.share, total, p.num_tasks + wanted * len(p.changelog), tolerance=p.settings.balance_tolerance,
                trigger=p.settings.balance_trigger, count_tolerance=p.settings.count_tolerance, racks=groups)


def plan_standbys(p: Problem, active_owner: Sequence[int]) -> StandbyPlan:
    """Standbys for the target actives ``active_owner`` (see the module docstring). The previous
    standbys are kept as they are when they are settled: every task with a changelog has exactly its
    standbys among the clients that held it as a standby and are caught up on it, and no improving move
    (the local search below) exists."""
    wanted = standby_count(p)
    state = p.state_weight
    holders: list[tuple[int, ...]] = [()] * p.num_tasks
    if wanted == 0:
        bins = _standby_bins(p, wanted)
        for t, c in enumerate(active_owner):
            bins.add(c, state[t])
        return StandbyPlan(holders, bins, [])
    spread = _TagSpread(p)
    previous = _previous_standbys(p, active_owner, wanted)
    if previous is not None:
        bins = _standby_bins(p, wanted)
        for t, c in enumerate(active_owner):
            bins.add(c, state[t])
        for t, hs in enumerate(previous):
            for c in hs:
                bins.add(c, state[t])
        kept = StandbyPlan(previous, bins, [])
        if not _StandbySearch(p, kept, active_owner, spread).improvable():
            return kept
    bins = _standby_bins(p, wanted)
    for t, c in enumerate(active_owner):
        bins.add(c, state[t])
    order = sorted(p.changelog, key=lambda t: (-state[t], t))
    chosen: dict[int, list[int]] = {t: [active_owner[t]] for t in order}
    for t in order:  # keep: previous standbys (and a demoted previous active), freshest first
        mine = chosen[t]
        previous_holders = {*p.prev_standby.get(t, ()), p.prev_owner[t]}
        for c in sorted((c for c in previous_holders if c >= 0 and c not in mine),
                        key=lambda c: (p.restore(t, c), c)):
            if len(mine) > wanted:
                break
            if bins.violation(c, state[t]) is None and spread.allows(c, mine):
                bins.add(c, state[t])
                mine.append(c)
    for t in order:  # place the standbys still missing
        mine = chosen[t]
        while len(mine) <= wanted:
            c = _choose(p, bins, spread, t, mine)
            bins.add(c, state[t])
            mine.append(c)
        holders[t] = tuple(sorted(mine[1:]))
    plan = StandbyPlan(holders, bins, [])
    _StandbySearch(p, plan, active_owner, spread).run()
    return plan


def _previous_standbys(p: Problem, active_owner: Sequence[int], wanted: int) -> list[tuple[int, ...]] | None:
    """Each task's previous standby clients that are caught up and not its target active, if every task
    with a changelog has exactly ``wanted`` of them (else None)."""
    holders: list[tuple[int, ...]] = [()] * p.num_tasks
    for t in p.changelog:
        mine = tuple(sorted(c for c in p.prev_standby.get(t, ()) if c != active_owner[t] and p.is_caught_up(t, c)))
        if len(mine) != wanted:
            return None
        holders[t] = mine
    return holders


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
    """The next standby client of ``t``: cheapest with room and a new tag value; else a previous standby
    client with a new tag value, else the least loaded one; else the same without the tag condition."""
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
    racks = p.changelog_racks
    if racks is not None:  # groups are (rack, tags): look where fewest partitions are read across first
        allowed = [g for _, _, g in sorted(
            (racks.cross_on(t, cast(tuple[int | None, object], g)[0]), i, g) for i, g in enumerate(allowed))]
    best_cross = None
    for group in allowed:
        cross = 0 if racks is None or group is None else racks.cross_on(t, cast(tuple[int | None, object], group)[0])
        if best_cross is not None and cross > best_cross:
            break
        found = bins.least_loaded(fits if group is None else fits_in_group, group, everywhere=group is None)
        if found is not None:
            candidates.append(found)
            best_cross = cross
    before = p.prev_standby.get(t, ())
    feasible = candidates
    if feasible:
        return min(feasible, key=lambda c: (p.standby_cost(t, c), c not in before, bins.relative(c, w), c))
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
        options += [c for c in before if accept(c)]
        if options:
            return min(options, key=lambda c: (c not in before, bins.relative(c, w), p.standby_cost(t, c), c))
    raise AssertionError(f"no client left for a standby of task #{t}")  # wanted <= clients - 1


def _scan(n: int, accept: Callable[[int], bool], bins: Bins, w: float) -> int | None:
    """The least loaded accepted client by a full scan (when the heap's first candidates all refuse)."""
    best = None
    for c in range(n):
        if accept(c) and (best is None or (bins.relative(c, w), c) < (bins.relative(best, w), best)):
            best = c
    return best


class _StandbySearch(LocalSearch):
    """Improving standby moves until none is left, as for the actives (``actives._LocalSearch``):

    * *repair*: a client over its trigger bound on state (with two replicas or more) or over its replica
      count gives standbys, cheapest to move first, to clients with room that do not hold the task, down
      to its upper bound, as long as it stays above its lower bound and the task's replicas keep as many
      distinct tag values;
    * *pull*: a client below its lower trigger bound takes standbys from clients above their fair load,
      up to its lower bound, the cheapest to move per unit of state first, under the same conditions.
    """

    def __init__(self, p: Problem, plan: StandbyPlan, active_owner: Sequence[int], spread: _TagSpread) -> None:
        self.p = p
        self.plan = plan
        self.bins = plan.bins
        self.active_owner = active_owner
        self.spread = spread
        self.on: list[set[int]] = [set() for _ in range(p.num_clients)]
        for t, hs in enumerate(plan.holders):
            for c in hs:
                self.on[c].add(t)
        # pull() re-reads the same donors' standbys and costs move after move: a client's sorted standbys
        # (dropped when they change) and every (task, client) standby cost (fixed for a run) are kept.
        self._sorted_on: dict[int, list[int]] = {}
        self._costs: dict[tuple[int, int], float] = {}

    def _standby_cost(self, t: int, c: int) -> float:
        key = (t, c)
        cost = self._costs.get(key)
        if cost is None:
            cost = self._costs[key] = self.p.standby_cost(t, c)
        return cost

    def _sorted_standbys(self, c: int) -> list[int]:
        found = self._sorted_on.get(c)
        if found is None:
            found = self._sorted_on[c] = sorted(self.on[c])
        return found

    def movable(self, t: int, source: int, dest: int) -> bool:
        """``dest`` may take ``source``'s standby of ``t``: it holds no replica and the tag spread holds."""
        holders = self.plan.holders[t]
        if dest == self.active_owner[t] or dest in holders:
            return False
        if not self.spread.keys:
            return True
        tags = self.spread.tags
        others = [tags[c] for c in (self.active_owner[t], *holders) if c != source]
        return keeps_tag_diversity(tags[source], tags[dest], others)

    def move(self, t: int, source: int, dest: int, pulled: bool) -> None:
        w = self.p.state_weight[t]
        self.bins.remove(source, w)
        self.bins.add(dest, w)
        holders = self.plan.holders
        holders[t] = tuple(sorted((*(c for c in holders[t] if c != source), dest)))
        self.on[source].discard(t)
        self.on[dest].add(t)
        self._sorted_on.pop(source, None)
        self._sorted_on.pop(dest, None)
        if pulled:
            self.plan.pulled.append((t, source, dest))

    def repair(self, dry_run: bool = False) -> int:
        p, bins = self.p, self.bins
        state = p.state_weight
        moved = 0
        for c in range(p.num_clients):
            if bins.count[c] <= bins.count_cap[c] and not (
                    bins.count[c] >= 2 and bins.load[c] > bins.trigger_upper[c] + EPSILON):
                continue  # within its trigger bounds: nothing moves
            while True:
                over_count = bins.count[c] > bins.count_cap[c]
                if not over_count and not (bins.count[c] >= 2 and bins.load[c] > bins.upper[c] + EPSILON):
                    break
                found = None
                for t in sorted(self.on[c], key=lambda t: (p.standby_cost(t, c), state[t], t)):
                    if state[t] <= EPSILON and not over_count:
                        continue  # moving what weighs nothing does not relieve the state bound
                    if state[t] > EPSILON and bins.load[c] - state[t] < bins.lower[c] - EPSILON:
                        continue
                    dest = self.best_fit(t, c)
                    if dest is not None:
                        found = (t, dest)
                        break
                if found is None:
                    break
                if dry_run:
                    return 1
                self.move(found[0], c, found[1], pulled=False)
                moved += 1
        return moved

    def best_fit(self, t: int, source: int) -> int | None:
        """The cheapest client with room that may take ``source``'s standby of ``t``."""
        p, bins = self.p, self.bins
        w = p.state_weight[t]

        def accept(c: int) -> bool:
            return c != source and bins.fits(c, w) and self.movable(t, source, c)

        by_load = set()
        for group in bins.rack_groups():
            found = bins.least_loaded(accept, group, everywhere=group is None)
            if found is not None:
                by_load.add(found)
        if not by_load:
            return None  # the loads alone decide whether a move exists (a copy only makes a cheaper choice)
        candidates = by_load.union(c for c in p.copies[t] if accept(c))
        return min(candidates, key=lambda c: (p.standby_cost(t, c), bins.relative(c, w), c))

    def pull(self, dry_run: bool = False) -> int:
        p, bins = self.p, self.bins
        state = p.state_weight
        moved = 0
        under = sorted((c for c in range(p.num_clients) if bins.load[c] < bins.trigger_lower[c] - EPSILON),
                       key=lambda c: (bins.relative(c), c))
        for u in under:
            while bins.load[u] < bins.lower[u] - EPSILON:
                donors = [c for c in bins.most_loaded(5, 1 + EPSILON) if c != u][:4]
                gap = bins.fair[u] - bins.load[u]
                # every standby of the top donors (whether a pull exists depends on the loads alone)
                pairs = [(t, d) for d in donors for t in self._sorted_standbys(d)]
                best: tuple[tuple[float, int, float, int], int, int] | None = None
                for t, d in pairs:
                    w = state[t]
                    if (w <= EPSILON or bins.load[d] - w < bins.lower[d] - EPSILON or not bins.fits(u, w)
                            or not self.movable(t, d, u)):
                        continue
                    extra = self._standby_cost(t, u) - self._standby_cost(t, d)
                    key = pull_key(extra, w, gap, t)
                    if best is None or key < best[0]:
                        best = (key, t, d)
                if best is None:
                    break
                if dry_run:
                    return 1
                self.move(best[1], best[2], u, pulled=True)
                moved += 1
        return moved
