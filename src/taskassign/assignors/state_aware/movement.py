"""From the balanced target to this rebalance's assignment, with the high-availability safety rules.

* An active moves only to a client that is caught up on it (within ``acceptable.recovery.lag``), and
  runs on a caught-up client whenever one exists. While its target is not caught up, the active stays
  with a caught-up client -- its previous owner, else a caught-up replica in the target, else the least
  loaded caught-up client; when nobody is caught up, the most caught-up client if it is strictly ahead
  of the target, else the target itself (Kafka's HA rules). The target then restores a *warm-up*
  replica.
* A warm-up that would add a replica beyond ``1 + standbys`` counts against ``max.warmup.replicas``;
  one that takes the place of the target's own replica (the target and the current holder swap roles)
  does not. Warm-ups go first to targets that must restore before the move can happen (TaskId order),
  then to targets that are caught up but wait for room (their copy stays fresh): every rebalance thus
  advances a move that others may wait for, and no set of moves can wait on each other for ever.
* A move onto a caught-up client waits while that client would exceed its trigger band because tasks it is
  giving away are still waiting for their own warm-ups. This keeps every intermediate assignment on the
  way to the same target, so the target computed at the next rebalance is the same one.
* A probing rebalance is requested while any active is not at its target.

Standbys go to their target clients at once (they restore in the background); only actives wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from taskassign.assignors.state_aware.bins import EPSILON, Bins
from taskassign.assignors.state_aware.problem import Problem

__all__ = ("Transition", "plan_transition")


@dataclass(slots=True)
class Transition:
    """This rebalance's placement, and how far it is from the target."""

    #: The client running each task's active now.
    active: list[int]
    #: The standby clients of each task now (warm-ups included).
    standby: list[tuple[int, ...]]
    #: Tasks whose active is not at its target yet.
    pending: list[int]
    #: Tasks whose target got a warm-up replica this rebalance.
    warmups: set[int]
    #: Pending tasks whose target is caught up but had no room yet.
    deferred: set[int]

    @property
    def probing_rebalance_needed(self) -> bool:
        return bool(self.pending)


def plan_transition(p: Problem, target: Sequence[int], standbys: Sequence[tuple[int, ...]], bins: Bins) -> Transition:
    """Where every task runs now, given its target (see the module docstring)."""
    holder = list(target)
    moving: list[int] = []
    for t in range(p.num_tasks):
        a, o = target[t], p.prev_owner[t]
        if p.is_caught_up(t, a):
            if o >= 0 and o != a and p.is_caught_up(t, o):
                moving.append(t)  # both caught up: the move may wait for room (below)
        else:
            holder[t] = _safe_holder(p, t, a, standbys[t], bins)
    waiting = _deferred_moves(p, target, holder, moving, bins)
    for t in waiting:
        holder[t] = p.prev_owner[t]
    deferred = waiting
    pending = [t for t in range(p.num_tasks) if holder[t] != target[t]]
    standby_now, warmups = _standbys_now(p, target, standbys, holder, pending, deferred)
    return Transition(holder, standby_now, pending, warmups, deferred)


def _deferred_moves(
    p: Problem, target: Sequence[int], holder: Sequence[int], moving: Sequence[int], bins: Bins
) -> set[int]:
    """The caught-up moves that must wait: with every other move made, their destination would still
    exceed its bounds (and its target load) because tasks it gives away wait for warm-ups. A waiting
    task stays on its previous client, which may make that client refuse arrivals in turn, so this
    repeats until nothing changes; moves that only wait for each other are all made."""
    weight = p.active_weight
    load = [0.0] * p.num_clients
    for t, c in enumerate(holder):
        load[c] += weight[t]
    limit = [max(bins.trigger_upper[c], bins.load[c]) + EPSILON for c in range(p.num_clients)]
    arrivals: dict[int, list[int]] = {}
    for t in sorted(moving, reverse=True):
        arrivals.setdefault(target[t], []).append(t)
    deferred: set[int] = set()
    over = sorted(c for c in arrivals if load[c] > limit[c])
    while over:
        next_over: set[int] = set()
        for c in over:
            for t in arrivals[c]:
                if load[c] <= limit[c]:
                    break
                if t in deferred:
                    continue
                deferred.add(t)
                source = p.prev_owner[t]
                load[c] -= weight[t]
                load[source] += weight[t]
                if source in arrivals and load[source] > limit[source]:
                    next_over.add(source)
        over = sorted(next_over)
    return deferred


def _safe_holder(p: Problem, t: int, a: int, standbys: tuple[int, ...], bins: Bins) -> int:
    """Who runs ``t`` while its target ``a`` is not caught up (see the module docstring)."""
    o = p.prev_owner[t]
    if o >= 0 and p.is_caught_up(t, o):
        return o
    if not p.copies[t]:
        return a  # nobody reported it, so every client is as far behind as the target
    task_lags = p.lags[t]
    caught = task_lags.caught_up_clients
    candidates = sorted(caught) if caught is not None else [c for c in range(p.num_clients) if p.is_caught_up(t, c)]
    if candidates:
        in_target = [c for c in candidates if c in standbys]
        return min(in_target or candidates, key=lambda c: (bins.relative(c), c))
    behind = p.restore(t, a)
    best = min(p.copies[t], key=lambda c: (p.restore(t, c), c), default=None)
    if best is not None and p.restore(t, best) < behind:
        return best
    return a


def _standbys_now(
    p: Problem, target: Sequence[int], standbys: Sequence[tuple[int, ...]], holder: Sequence[int],
    pending: Sequence[int], deferred: set[int],
) -> tuple[list[tuple[int, ...]], set[int]]:
    """Each task's standbys: the target replicas other than the current holder, plus a warm-up on a
    pending target while ``max.warmup.replicas`` lasts when it would be one replica too many."""
    now: list[tuple[int, ...]] = []
    for t in range(p.num_tasks):
        replicas = {target[t], *standbys[t]} if t in p.changelog else set()
        replicas.discard(holder[t])
        now.append(tuple(sorted(replicas)) if holder[t] in {target[t], *standbys[t]} else tuple(sorted(standbys[t])))
    budget = p.configs.max_warmup_replicas
    warmups: set[int] = set()
    for t in sorted(pending, key=lambda t: (t in deferred, t)):
        if t not in p.changelog:
            continue
        h = holder[t]
        if h in standbys[t]:
            warmups.add(t)  # the target took the holder's standby place: no extra replica
            continue
        if budget > 0:
            budget -= 1
            now[t] = tuple(sorted((*now[t], target[t])))
            warmups.add(t)
    return now, warmups
