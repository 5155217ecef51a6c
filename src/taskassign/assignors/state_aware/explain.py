"""One sentence per moved task: from which client to which, and why (``taskassign assign --explain``).

The sentences are built from what the planner recorded (why a task left its client), the costs of the
move (what the new client restores, partitions read across racks) and the high-availability step
(whether the active waits for a warm-up). Loads are given per thread, in bytes (or stores when the
scenario gives no ``state_bytes``).
"""

from __future__ import annotations

from collections.abc import Sequence

from taskassign.assignors.state_aware.actives import ActivePlan, Reason
from taskassign.assignors.state_aware.movement import Transition
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.standbys import StandbyPlan

__all__ = ("explain",)


def explain(p: Problem, plan: ActivePlan, standbys: StandbyPlan, now: Transition) -> list[str]:
    """Sentences for every active that moved or waits for a warm-up, then every standby that moved."""
    previous = _previous_loads(p)
    sentences = [s for t in range(p.num_tasks) if (s := _active_sentence(p, plan, now, previous, t))]
    sentences += _standby_sentences(p, plan, standbys, now)
    return sentences


def _previous_loads(p: Problem) -> list[float]:
    """Each client's weighted load before the rebalance: what it ran, and what nobody runs any more but
    it holds a caught-up copy of (the tasks it would keep, ``Problem.sticky_owner``)."""
    loads = [0.0] * p.num_clients
    for t, o in enumerate(p.sticky_owner):
        if o >= 0:
            loads[o] += p.active_weight[t]
    return loads


def _per_thread(p: Problem, units: float, client: int) -> str:
    return p.weights.describe(units / p.threads[client])


def _why(p: Problem, plan: ActivePlan, previous: Sequence[float], t: int, source: int, target: int) -> str:
    bins = plan.bins
    reason = plan.reason[t]
    if reason is Reason.OVER_STATE:
        return (f"{p.pids[source]} would hold {_per_thread(p, previous[source], source)} of state per thread, more "
                f"than its share of {_per_thread(p, bins.fair[source], source)} "
                f"+{p.settings.balance_trigger:.0%}: balance of state per thread")
    if reason is Reason.OVER_COUNT:
        return (f"{p.pids[source]} ran more tasks than its {p.threads[source]} thread(s) allow "
                f"(at most {bins.count_cap[source]}): balance of tasks per thread")
    if reason is Reason.OVER_SUBTOPOLOGY:
        g = p.subtopology[t]
        return (f"{p.pids[source]} ran more than its even share of subtopology "
                f"{_subtopology_name(p, t)} (at most {bins.group_cap[g][source]}): subtopology spread")
    if reason is Reason.PULLED:
        return (f"{p.pids[target]} would hold {_per_thread(p, previous[target], target)} of state per thread, less "
                f"than its share of {_per_thread(p, bins.fair[target], target)} "
                f"-{p.settings.balance_trigger:.0%}: balance of state per thread")
    if reason is Reason.REMAPPED:
        return "the min-cost flow found a placement that restores less or reads fewer partitions across racks"
    if p.prev_owner[t] < 0:
        return "no client runs it any more"
    return "the balanced target places it there"


def _instead(p: Problem, plan: ActivePlan, t: int) -> str:
    other = plan.instead_of.get(t)
    if other is None:
        return ""
    return (f" (the min-cost flow moves it rather than {p.task_ids[other]}: that restores less or reads fewer "
            "partitions across racks)")


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
        return (f"Task {task} (active) moved from {p.pids[o]} to {p.pids[a]}: {_why(p, plan, previous, t, o, a)}"
                f"{_instead(p, plan, t)}; {_cost_note(p, t, o, a)}.")
    if a == o:
        return (f"Task {task} (active) moved from {p.pids[o]} to caught-up {p.pids[h]} for now: {p.pids[o]} is "
                f"{p.lags.lag(o, t)} records behind (not caught up) and a caught-up client runs it meanwhile; it "
                f"moves back once {p.pids[o]} has caught up; probing rebalance requested.")
    if t in now.deferred:
        wait = f"its target {p.pids[a]} is caught up but waits until tasks it gives away have left"
    else:
        wait = f"its target {p.pids[a]} is {p.lags.lag(a, t)} records behind (not caught up)"
    warm = (f"a warm-up replica restores on {p.pids[a]}" if t in now.warmups
            else "no warm-up replica left this rebalance (max.warmup.replicas)")
    where = f"stays on {p.pids[h]}" if h == o else (
        f"moved from {p.pids[o]} to caught-up {p.pids[h]}" if o >= 0 else f"runs on caught-up {p.pids[h]}")
    why = _why(p, plan, previous, t, o, a) + _instead(p, plan, t) if o >= 0 else "no previous client runs it"
    return f"Task {task} (active) {where} for now ({why}): {wait}; {warm}; probing rebalance requested."


def _previous_state_loads(p: Problem) -> list[float]:
    """Each client's state (actives and standbys) before the rebalance, in units."""
    loads = [0.0] * p.num_clients
    for t, o in enumerate(p.prev_owner):
        if o >= 0:
            loads[o] += p.state_weight[t]
    for t, holders in p.prev_standby.items():
        for c in holders:
            loads[c] += p.state_weight[t]
    return loads


def _standby_sentences(p: Problem, plan: ActivePlan, standbys: StandbyPlan, now: Transition) -> list[str]:
    """A standby moved when a client that held it before lost it and another got it (a standby placed
    where none was before, or a warm-up, is not a move)."""
    pulled = {(t, u): d for t, d, u in standbys.pulled}
    bins = standbys.bins
    previous: list[float] | None = None
    trigger = f"{p.settings.balance_trigger:.0%}"
    out = []
    for t, before_list in sorted(p.prev_standby.items()):
        if t not in p.changelog:
            continue
        after = now.standby[t]
        lost = [c for c in before_list if c not in after and c != now.active[t]]
        if not lost:
            continue
        if previous is None:
            previous = _previous_state_loads(p)
        before = set(before_list)
        warmup = plan.owner[t] if t in now.warmups else -1
        gained = [c for c in after if c not in before and c not in (p.prev_owner[t], warmup)]
        task = p.task_ids[t]
        for source, c in zip(sorted(lost), gained, strict=False):
            if (t, c) in pulled:
                why = (f"{p.pids[c]} held {_per_thread(p, previous[c], c)} of state per thread (actives and "
                       f"standbys), less than its share of {_per_thread(p, bins.fair[c], c)} -{trigger}: "
                       "balance of state per thread")
            elif source == plan.owner[t]:
                why = f"{p.pids[source]} runs it as active now"
            elif previous[source] > bins.trigger_upper[source]:
                why = (f"{p.pids[source]} held {_per_thread(p, previous[source], source)} of state per thread "
                       f"(actives and standbys), more than its share of {_per_thread(p, bins.fair[source], source)}"
                       f" +{trigger}: balance of state per thread")
            else:
                why = (f"{p.pids[source]} has no room for it next to its new tasks (the standbys are placed after "
                       "the actives, to even out each client's state per thread, spread over racks or client tags)")
            out.append(f"Task {task} (standby) moved from {p.pids[source]} to {p.pids[c]}: {why}; "
                       f"{_cost_note(p, t, -1, c)}.")
    return out
