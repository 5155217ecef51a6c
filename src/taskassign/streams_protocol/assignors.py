"""The broker-side assignors by Kafka's name, run the way the coordinator runs them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from taskassign.errors import UserInputError
from taskassign.streams_protocol.balanced import assign_balanced
from taskassign.streams_protocol.model import ASSIGNOR_NAMES, StreamsGroup, StreamsGroupAssignment
from taskassign.streams_protocol.sticky import assign_sticky

__all__ = ("STREAMS_ASSIGNORS", "run_assignor")

#: Kafka's assignor name -> the function (``group`` -> assignment; raises StreamsAssignorError as Kafka throws).
STREAMS_ASSIGNORS: Mapping[str, Callable[[StreamsGroup], StreamsGroupAssignment]] = MappingProxyType({
    "sticky": assign_sticky,
    "balanced": assign_balanced,
})
assert tuple(STREAMS_ASSIGNORS) == ASSIGNOR_NAMES


def run_assignor(group: StreamsGroup, assignor: str | None = None) -> StreamsGroupAssignment:
    """Run ``assignor`` (Kafka's name; default: the group's own) on ``group``."""
    name = assignor or group.assignor
    run = STREAMS_ASSIGNORS.get(name)
    if run is None:
        raise UserInputError(f"unknown streams-group assignor {name!r}; Kafka's are {', '.join(ASSIGNOR_NAMES)}")
    return run(group)
