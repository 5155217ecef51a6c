"""Follow-up and probing rebalances (KIP-441, KIP-924): which client asks for one and when, and
which of its consumers carries the request.

Sources of a client's deadline: the assignor's ``followup_rebalance_deadline`` on that client's
assignment, and a probing request from Kafka's internal assignors (high-availability warm-ups,
fallback), which becomes ``now_ms + probing.rebalance.interval.ms`` on the leader's own client only.
Per client, the first consumer in sorted order carries the deadline; a consumer with withheld tasks
gets 0 (rebalance immediately) instead, and then no consumer of that client carries the deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, ConsumerAssignment, KafkaStreamsAssignment, TaskAssignment

__all__ = ("IMMEDIATE_FOLLOWUP_MS", "client_assignments", "consumer_deadline", "with_consumer_followups")

#: Deadline meaning "rebalance again immediately" (Kafka encodes nextRebalanceMs = 0).
IMMEDIATE_FOLLOWUP_MS = 0


def client_assignments(
    state: ApplicationState, task_assignment: TaskAssignment, leader: ProcessId | None
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """One assignment per known client, in ProcessId order: the assignor's (a later entry for a client
    overwrites an earlier one, as in Kafka), empty for clients it left out; a probing request puts
    ``now_ms + probing.rebalance.interval.ms`` on the leader's client (the earlier deadline wins if
    the assignor set one too). A ``leader`` that is not a client gets no deadline, as in Kafka's legacy assignor
    path."""
    given = {entry.process_id: entry for entry in task_assignment.assignments}  # a later entry wins
    clients = {pid: given[pid] if pid in given else KafkaStreamsAssignment(pid) for pid in state.process_ids}
    if task_assignment.probing_rebalance_needed and clients:
        leader_pid = leader if leader is not None else state.process_ids[0]
        if leader_pid in clients:
            probe_at = state.now_ms + state.configs.probing_rebalance_interval_ms
            current = clients[leader_pid].followup_rebalance_deadline
            deadline = probe_at if current is None else min(current, probe_at)
            clients[leader_pid] = clients[leader_pid].with_followup_rebalance(deadline)
    return clients


def with_consumer_followups(
    consumers: Mapping[str, ConsumerAssignment], client_deadline: int | None
) -> dict[str, ConsumerAssignment]:
    """Kafka's per-consumer encoding of follow-ups (``AssignmentInfo``'s ``nextRebalanceMs``), consumers in sorted
    order.

    Only the consumers whose deadline changes are copied (a client may have thousands of threads).
    """
    names = list(consumers)
    out = dict(consumers) if names == sorted(names) else {consumer: consumers[consumer] for consumer in sorted(names)}
    if not out:
        return out
    first = next(iter(out))
    carriers = dict.fromkeys(c for c, a in out.items() if a.withheld or a.followup_rebalance_deadline is not None)
    if first not in carriers and client_deadline is not None:
        carriers[first] = None
    for consumer in carriers:
        assignment = out[consumer]
        deadline = consumer_deadline(consumer == first, bool(assignment.withheld), client_deadline)
        if assignment.followup_rebalance_deadline != deadline:
            out[consumer] = replace(assignment, followup_rebalance_deadline=deadline)
    return out


def consumer_deadline(first: bool, withheld: bool, client_deadline: int | None) -> int | None:
    """The follow-up one consumer carries: immediately if a task was withheld from it, else the client's
    deadline on its first consumer (in sorted order) only."""
    if withheld:
        return IMMEDIATE_FOLLOWUP_MS
    return client_deadline if first else None
