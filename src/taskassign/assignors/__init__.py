"""Assignors: the KIP-924 contract, the registry, and one module per assignor."""

from taskassign.assignors.base import BaseTaskAssignor, TaskAssignor
from taskassign.assignors.registry import BUILTIN_ASSIGNORS, DEFAULT_ASSIGNOR, create_assignor

__all__ = ("BUILTIN_ASSIGNORS", "DEFAULT_ASSIGNOR", "BaseTaskAssignor", "TaskAssignor", "create_assignor")
