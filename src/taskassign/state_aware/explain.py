"""One sentence per moved task: from which client to which, and why (``taskassign assign --explain``).

The sentences are built from what the planner recorded (why a task left its client), the costs of the
move (what the new client restores, partitions read across racks) and the high-availability step
(whether the active waits for a warm-up). Loads are given per thread, in bytes (or stores when the
scenario gives no ``state_bytes``).
"""

from __future__ import annotations

from collections.abc import Sequence

from taskassign.state_aware.actives import ActivePlan, Reason
from taskassign.state_aware.movement import Transition
from taskassign.state_aware.problem import Problem
from taskassign.state_aware.standbys import StandbyPlan

__all__ = ("explain",)


def explain(p: Problem, plan: ActivePlan, standbys: StandbyPlan, now: Transition) -> list[str]:
    """Sentences for every active that moved or waits for a warm-up, then every standby that moved."""
    previous = _previous_loads(p)
    sentences = [s for t in range(p.num_tasks) if (s := _active_sentence(p, plan, now, previous, t))]
    sentences += _standby_sentences(p, plan, standbys, now)
    return sentences


def _previous_loads(p: Problem) -> list[float]:
    loads = [0.0] * p.num_clients
    for t, o in enumerate(p.prev_owner):
        if o >= 0:
            loads[o] += p.active_weight[t]
    return loads


def _per_thread(p: Problem, units: float, client: int) -> str:
    return p.weights.describe(units / p.threads[client])


def _why(p: Problem, plan: ActivePlan, previous: Sequence[float], t: int, source: int, target: int) -> str:
    bins = plan.bins
    reason = plan.reason[t]
    if reason is Reason.OVER_STATE:
        return (f"{p.pids[source]} held {_per_thread(p, previous[source], source)} of state per thread, over its "
                f"share of {_per_thread(p, bins.fair[source], source)} "
                f"(+{p.settings.balance_tolerance:.0%} allowed): balance of state per thread")
    if reason is Reason.OVER_COUNT:
        return (f"{p.pids[source]} ran more tasks than its {p.threads[source]} thread(s) allow "
                f"(at most {bins.count_cap[source]}): balance of tasks per thread")
    if reason is Reason.OVER_SUBTOPOLOGY:
        g = p.subtopology[t]
        return (f"{p.pids[source]} ran more than its even share of subtopology "
                f"{_subtopology_name(p, t)} (at most {bins.group_cap[g][source]}): subtopology spread")
    if reason is Reason.PULLED:
        return (f"{p.pids[target]} held {_per_thread(p, previous[target], target)} per thread, below its share "
                f"of {_per_thread(p, bins.fair[target], target)}: balance of state per thread")
    if reason is Reason.REMAPPED:
        return "the min-cost flow found a placement that restores less and reads fewer partitions across racks"
    return "its previous client is no longer in the group"


def _subtopology_name(p: Problem, t: int) -> str:
    task = p.task_ids[t]
    return str(task.subtopology) if task.topology_name is None else f"{task.topology_name}__{task.subtopology}"


def _cost_note(p: Problem, t: int, source: int, dest: int) -> str:
    if t not in p.changelog:
        note = "nothing to restore (no changelog)"
    else:
        restore = p.restore(t, dest)
        if restore == 0:
            note = f"{p.pids[dest]} is caught up on it, nothing to restore"
        elif p.is_caught_up(t, dest):
            note = f"{p.pids[dest]} is caught up on it (lag {p.lags.lag(dest, t)} within acceptable.recovery.lag)"
        else:
            note = f"{p.pids[dest]} restores {p.weights.describe(restore)}"
    if source >= 0:
        saved = p.active_cross(t, source) - p.active_cross(t, dest)
        if saved > 0:
            note += f"; it reads {saved} fewer partition(s) across racks"
    return note


def _active_sentence(p: Problem, plan: ActivePlan, now: Transition, previous: Sequence[float], t: int) -> str | None:
    task = p.task_ids[t]
    o, a, h = p.prev_owner[t], plan.owner[t], now.active[t]
    if h == a and h == o:
        return None
    if h == a:
        if o < 0:
            return None  # placed, not moved: nobody ran it before
        return (f"Task {task} (active) moved from {p.pids[o]} to {p.pids[a]}: {_why(p, plan, previous, t, o, a)}; "
                f"{_cost_note(p, t, o, a)}.")
    if t in now.deferred:
        wait = f"its target {p.pids[a]} is caught up but waits until tasks it gives away have left"
    else:
        wait = f"its target {p.pids[a]} is {p.lags.lag(a, t)} records behind (not caught up)"
    warm = (f"a warm-up replica restores on {p.pids[a]}" if t in now.warmups
            else "no warm-up replica left this rebalance (max.warmup.replicas)")
    where = f"stays on {p.pids[h]}" if h == o else (
        f"moved from {p.pids[o]} to caught-up {p.pids[h]}" if o >= 0 else f"runs on caught-up {p.pids[h]}")
    why = _why(p, plan, previous, t, o, a) if o >= 0 else "no previous client runs it"
    return f"Task {task} (active) {where} for now ({why}): {wait}; {warm}; probing rebalance requested."


def _standby_sentences(p: Problem, plan: ActivePlan, standbys: StandbyPlan, now: Transition) -> list[str]:
    pulled = {(t, u): d for t, d, u in standbys.pulled}
    bins = standbys.bins
    out = []
    for t in sorted(p.changelog):
        task = p.task_ids[t]
        before = set(p.prev_standby.get(t, ()))
        after = set(now.standby[t])
        warmup = plan.owner[t] if t in now.warmups else -1
        gained = sorted(c for c in after - before if c not in (p.prev_owner[t], warmup))
        lost = sorted(c for c in before - after if c != now.active[t])
        for i, c in enumerate(gained):
            source = lost[i] if i < len(lost) else -1
            if (t, c) in pulled:
                why = (f"{p.pids[c]} was below its share of state per thread "
                       f"({_per_thread(p, bins.fair[c], c)})")
            elif source >= 0 and source == plan.owner[t]:
                why = f"{p.pids[source]} runs it as active now"
            elif source >= 0:
                why = f"{p.pids[source]} is over its share of state per thread or the replicas are spread anew"
            else:
                why = "a standby replica was missing"
            origin = f"from {p.pids[source]} " if source >= 0 else ""
            out.append(f"Task {task} (standby) moved {origin}to {p.pids[c]}: {why}; {_cost_note(p, t, -1, c)}.")
    return out
