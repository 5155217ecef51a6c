"""The identity assignor: every client keeps what it had (``TaskAssignmentUtils.identity_assignment``).

Useful as a baseline ("what if nothing moved?") and to check a scenario's previous state.
"""

from __future__ import annotations

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.model import ApplicationState, TaskAssignment
from taskassign.task_assignment_utils import identity_assignment

__all__ = ("IdentityTaskAssignor",)


class IdentityTaskAssignor(BaseTaskAssignor):
    """Returns the previous assignment unchanged (tasks nobody owned stay unassigned)."""

    name = "identity"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment(tuple(identity_assignment(application_state).values()))
