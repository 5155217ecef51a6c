"""Misbehaving assignors for the pipeline's failure paths (referenced by file path, so Spark workers load them)."""

from __future__ import annotations

from pathlib import Path

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.errors import TaskAssignmentException
from taskassign.ids import TaskId
from taskassign.model import ApplicationState, KafkaStreamsAssignment, TaskAssignment

HERE = Path(__file__).resolve()


def spec(name: str) -> str:
    return f"{HERE}:{name}"


class GivesUp(BaseTaskAssignor):
    """Raises TaskAssignmentException, the contract's way to keep the previous assignment."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        raise TaskAssignmentException("not today")


class Crashes(BaseTaskAssignor):
    """Has a bug."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        raise ZeroDivisionError("division by zero")


class InventsTasks(BaseTaskAssignor):
    """Assigns a task the application does not have (Kafka: UNKNOWN_TASK_ID)."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        first = next(iter(application_state.process_ids))
        return TaskAssignment((KafkaStreamsAssignment.of_tasks(first, active=[TaskId(99, 0)]),))
