"""The broker-side assignors by Kafka's name, run the way the coordinator of a Kafka line runs them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from taskassign.errors import UserInputError
from taskassign.streams_protocol.balanced import assign_balanced
from taskassign.streams_protocol.format import PROPOSALS
from taskassign.streams_protocol.lines import DEFAULT_STREAMS_LINE, check_streams_line
from taskassign.streams_protocol.model import ASSIGNOR_NAMES, StreamsGroup, StreamsGroupAssignment
from taskassign.streams_protocol.sticky import assign_sticky

__all__ = ("PROPOSED_ASSIGNORS", "STREAMS_ASSIGNORS", "assignor_label", "run_assignor")

#: Kafka's assignor name -> the function (``group``, ``kafka_line`` -> assignment; raises StreamsAssignorError
#: as Kafka throws). ``balanced`` is in no Kafka line: its function ignores the line.
STREAMS_ASSIGNORS: Mapping[str, Callable[[StreamsGroup, str], StreamsGroupAssignment]] = MappingProxyType({
    "sticky": assign_sticky,
    "balanced": lambda group, kafka_line: assign_balanced(group),
})
assert tuple(STREAMS_ASSIGNORS) == ASSIGNOR_NAMES

#: Assignors that no Kafka line has: the open proposal each reproduces (output documents say so).
PROPOSED_ASSIGNORS: Mapping[str, str] = PROPOSALS


def assignor_label(name: str) -> str:
    """``name`` as listings print it: ``balanced (proposal: KAFKA-20998 ...)``."""
    proposal = PROPOSED_ASSIGNORS.get(name)
    return name if proposal is None else f"{name} (proposal: {proposal})"


def run_assignor(
    group: StreamsGroup, assignor: str | None = None, *, kafka_line: str = DEFAULT_STREAMS_LINE
) -> StreamsGroupAssignment:
    """Run ``assignor`` (Kafka's name; default: the group's own) on ``group`` as Kafka ``kafka_line`` does
    (default: the newest release line; StreamsProtocolError for a line without streams groups)."""
    check_streams_line(kafka_line)
    name = assignor or group.assignor
    run = STREAMS_ASSIGNORS.get(name)
    if run is None:
        raise UserInputError(f"unknown streams-group assignor {name!r}; Kafka's are {', '.join(ASSIGNOR_NAMES)}")
    return run(group, kafka_line)
