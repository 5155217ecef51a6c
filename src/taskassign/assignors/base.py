"""The KIP-924 contract every assignor implements: ``assign(ApplicationState) -> TaskAssignment``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

from taskassign.model import (
    ApplicationState,
    AssignmentError,
    GroupAssignment,
    GroupSubscription,
    TaskAssignment,
)

__all__ = ("BaseTaskAssignor", "TaskAssignor")


@runtime_checkable
class TaskAssignor(Protocol):
    """KIP-924's ``TaskAssignor``.

    ``assign`` must not mutate its input and may raise ``TaskAssignmentException`` to keep the
    previous assignment for one more rebalance. ``on_assignment_computed`` is told the final group
    assignment and the validation result (NONE, or the error that fails the rebalance).
    """

    def assign(self, application_state: ApplicationState) -> TaskAssignment: ...

    def on_assignment_computed(
        self, assignment: GroupAssignment, subscription: GroupSubscription, error: AssignmentError
    ) -> None: ...


class BaseTaskAssignor(ABC):
    """Convenience base: no-op ``configure`` and ``on_assignment_computed``; subclasses write ``assign``.

    ``configure`` receives the scenario's ``configs`` mapping (Kafka's ``Configurable.configure``),
    called once after construction, before ``assign``.
    """

    #: Short name shown in output files; the registry's name when created through it.
    name: ClassVar[str] = ""
    #: Kafka's leader swaps its internal assignors for FallbackPrior when changelog end offsets are
    #: unknown; an assignor that wants the same sets the registry name of its fallback here.
    fallback_when_lags_unknown: ClassVar[str | None] = None

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Receive the application's configs (Kafka names). Default: ignore them."""

    @abstractmethod
    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        """Compute the assignment of every task of ``application_state``."""

    def on_assignment_computed(  # noqa: B027 - optional hook
        self, assignment: GroupAssignment, subscription: GroupSubscription, error: AssignmentError
    ) -> None:
        """Called by the leader with the final assignment and its validation result. Default: nothing."""
