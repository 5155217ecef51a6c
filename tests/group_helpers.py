"""Building GROUP.json documents in tests, and small deterministic assignors for group tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.formats.wire_documents import message_to_json
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, KafkaStreamsAssignment, TaskAssignment
from taskassign.wire import Subscription, SubscriptionInfo

Owned = Iterable[tuple[str, int]]


def member(member_id: str, info: SubscriptionInfo, owned: Owned = (), topics: Iterable[str] = ("topic1",),
           rack: str | None = None) -> dict[str, Any]:
    """A GROUP.json member whose subscription is given as hex bytes."""
    data = Subscription.of(topics, info.encode(), owned, rack_id=rack).encode()
    return {"member_id": member_id, "subscription": data.hex()}


def member_json(member_id: str, info: SubscriptionInfo, owned: Owned = ()) -> dict[str, Any]:
    """A member whose subscription is written as the decoded message (JSON)."""
    return {"member_id": member_id,
            "subscription": message_to_json(Subscription.of(["topic1"], info.encode(), owned))}


def v(version: int, pid: ProcessId, sums: Mapping[str, int] | None = None, **kw: Any) -> SubscriptionInfo:
    return SubscriptionInfo.of(version, pid, {TaskId.parse(t): o for t, o in (sums or {}).items()}, **kw)


def group(members: list[dict[str, Any]], *, partitions: int = 3, stateful: bool = False, **top: Any) -> dict[str, Any]:
    """One subtopology reading ``topic1``; with ``stateful`` a store ``store`` logged to ``app-store-changelog``
    whose partitions all have end offset 100."""
    sub: dict[str, Any] = {"id": 0, "source_topics": ["topic1"]}
    topics: dict[str, Any] = {"topic1": {"partitions": partitions}}
    if stateful:
        sub.update(stores=["store"], changelog_topics=["app-store-changelog"])
        topics["app-store-changelog"] = {"partitions": [{"partition": p, "end_offset": 100} for p in range(partitions)]}
    doc: dict[str, Any] = {"format": "taskassign/group/v1", "name": "g", "now_ms": 1_000,
                           "topology": {"subtopologies": [sub]}, "topics": topics, "members": members}
    doc.update(top)
    return doc


class RoundRobinAssignor(BaseTaskAssignor):
    """Task i (TaskId order) goes to client i mod n (ProcessId order); with num.standby.replicas > 0 each
    task with a changelog gets one standby on the next client."""

    name = "round_robin"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        pids = list(application_state.process_ids)
        active: dict[ProcessId, list[TaskId]] = {p: [] for p in pids}
        standby: dict[ProcessId, list[TaskId]] = {p: [] for p in pids}
        for i, t in enumerate(application_state.task_ids):
            active[pids[i % len(pids)]].append(t)
            if application_state.configs.num_standby_replicas and len(pids) > 1 \
                    and t in application_state.stateful_task_ids:
                standby[pids[(i + 1) % len(pids)]].append(t)
        return TaskAssignment(tuple(KafkaStreamsAssignment.of_tasks(p, active[p], standby[p]) for p in pids))


class ProbingAssignor(RoundRobinAssignor):
    """Round robin, asking for a probing rebalance (as Kafka's high-availability assignor with warm-ups)."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment(super().assign(application_state).assignments, probing_rebalance_needed=True)


class FollowupAssignor(RoundRobinAssignor):
    """Round robin, with a KIP-924 follow-up deadline at 5000 on every client."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment(tuple(a.with_followup_rebalance(5_000) for a in super().assign(application_state)
                                    .assignments))


class GivingUpAssignor(BaseTaskAssignor):
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        from taskassign.errors import TaskAssignmentException

        raise TaskAssignmentException("not now")


class DuplicatingAssignor(BaseTaskAssignor):
    """Every client gets every task as active: ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment(tuple(KafkaStreamsAssignment.of_tasks(p, application_state.task_ids)
                                    for p in application_state.process_ids))


RR = "tests.group_helpers:RoundRobinAssignor"
