"""Kafka's assignment invariants as reusable checks (its AssignmentTestUtils, on taskassign's metrics).

Each function returns the problems it found as human-readable strings (empty: the invariant holds),
so tests, the convergence harness and the simulator can all report *why* an assignment is wrong.

* ``validity_problems``: Kafka's ``assertValidAssignment`` (P1-P4: every task active exactly once, no standby of a
  stateless task, never active and standby on one client, min(clients, 1 + replicas) holders per stateful task).
* ``balance_problems``: Kafka's ``verifyBalancedAssignment`` (P5-P7), read off ``AssignmentMetrics``.
* ``standby_pile_up_problems``: one client holding far more standbys than the median client (Kafka's
  standby movement piles them on the lowest ProcessId, docs/kafka-differences.md H8, H10).
"""

from __future__ import annotations

from collections import defaultdict

from taskassign.analysis.metrics import AssignmentLike, AssignmentMetrics, compute_metrics, standby_pile_up
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, GroupAssignment, TaskAssignment

__all__ = ("PILE_UP_FACTOR", "balance_problems", "standby_pile_up_problems", "validity_problems")

#: Kafka's bound on active and stateful load differences between clients (per thread).
LOAD_SKEW_BOUND = 1.0
#: A client holding at least this many times the median client's standbys per thread (and 2 more) is a pile-up.
PILE_UP_FACTOR = 2.0


def validity_problems(
    state: ApplicationState, assignment: AssignmentLike, *, allowed_warmups: int = 0
) -> tuple[str, ...]:
    """P1 every task is active on exactly one client and no client holds an unknown task; P2 no standby
    of a task without a changelog; P4 every changelog task is held (active or standby) by exactly
    ``min(clients, 1 + num.standby.replicas)`` clients, except that up to ``allowed_warmups`` tasks may
    have one extra copy (a warm-up). P3 (active and standby on one client) cannot be expressed by a
    KafkaStreamsAssignment, and two entries for one client are merged as Kafka's leader merges them.
    """
    if isinstance(assignment, GroupAssignment):
        by_client = dict(assignment.clients)
    elif isinstance(assignment, TaskAssignment):
        by_client = assignment.by_process()
    else:
        by_client = dict(assignment)
    problems: list[str] = []
    active_owners: dict[TaskId, list[ProcessId]] = defaultdict(list)
    holders: dict[TaskId, set[ProcessId]] = defaultdict(set)
    for pid in sorted(by_client):
        entry = by_client[pid]
        for t in entry.active_tasks():
            active_owners[t].append(pid)
            holders[t].add(pid)
        for t in entry.standby_tasks():
            holders[t].add(pid)
            if t in state.tasks and t not in state.stateful_task_ids:
                problems.append(f"task {t} has no changelog but a standby on {pid}")
    for t in sorted(holders):
        if t not in state.tasks:
            problems.append(f"task {t} is not a task of the application (held by {min(holders[t])})")
    for t in state.task_ids:
        owners = active_owners.get(t, [])
        if len(owners) != 1:
            problems.append(f"task {t} is active on {len(owners)} clients ({', '.join(map(str, owners)) or 'none'})")
    wanted = min(len(state.clients), 1 + state.configs.num_standby_replicas)
    warmups = 0
    for t in state.stateful_task_ids:
        held = len(holders.get(t, ()))
        if held == wanted + 1 and warmups < allowed_warmups:
            warmups += 1
        elif held != wanted:
            problems.append(f"task {t} is held by {held} clients, expected {wanted}")
    return tuple(problems)


def balance_problems(
    metrics: AssignmentMetrics | tuple[ApplicationState, AssignmentLike], *, subtopology_skew_threshold: int = 1
) -> tuple[str, ...]:
    """P5 active tasks per thread differ by at most 1 between clients; P6 changelog-task replicas per
    thread likewise; P7 every subtopology's active tasks differ by at most ``subtopology_skew_threshold``
    between clients (Kafka uses 1, and 4 for the balance_subtopology rack strategy)."""
    if not isinstance(metrics, AssignmentMetrics):
        metrics = compute_metrics(*metrics)
    problems: list[str] = []
    if metrics.active_load_skew > LOAD_SKEW_BOUND:
        problems.append(f"active tasks per thread range from {metrics.active_load_min:g} to "
                        f"{metrics.active_load_max:g} (skew {metrics.active_load_skew:g} > {LOAD_SKEW_BOUND:g})")
    if metrics.changelog_load_skew > LOAD_SKEW_BOUND:
        problems.append(f"changelog-task replicas per thread skew {metrics.changelog_load_skew:g} > "
                        f"{LOAD_SKEW_BOUND:g}")
    for sub, skew in metrics.subtopology_skews.items():
        if skew > subtopology_skew_threshold:
            problems.append(f"subtopology {sub}: active tasks per client skew {skew} > {subtopology_skew_threshold}")
    return tuple(problems)


def standby_pile_up_problems(metrics: AssignmentMetrics) -> tuple[str, ...]:
    """A standby pile-up: the client with the most standbys per thread holds at least ``PILE_UP_FACTOR`` x
    the median client's (taken as at least 1) and at least 2 more."""
    factor, top, median = standby_pile_up(metrics.client_metrics)
    if top is None or factor < PILE_UP_FACTOR or top.standby / max(top.threads, 1) - median < 2:
        return ()
    total = sum(r.standby for r in metrics.client_metrics)
    return (f"standby pile-up: client {top.process_id} holds {top.standby} of {total} standbys, {factor:.1f} x the "
            f"median client's per thread ({median:g})",)
