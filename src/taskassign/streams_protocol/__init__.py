"""KIP-1071 streams groups (``group.protocol=streams``): the broker, not the group leader, assigns tasks.

``model``: the group as Kafka's broker-side assignors see it (members = stream threads, string subtopology
ids, each member's current target assignment and reported offsets) and their answer. ``format``: the
streams-group file (``taskassign/streams-group/v1``, the format of Kafka's own goldens) and the output
document. ``sticky`` (per Kafka line, ``lines``; 4.1's in ``sticky41``) and ``balanced`` (a proposal,
KAFKA-20998): the broker-side assignors, exactly, run by name and line through ``assignors``; ``configs``: the
configs each reads, the way it reads them. ``classic``: a classic scenario put under the streams protocol (one
member per stream thread) and the members' answer back in the classic shape, so one application can be
compared under both protocols.
``coverage``: what an answer leaves unassigned or short of standbys.
"""

from taskassign.streams_protocol.assignors import STREAMS_ASSIGNORS, run_assignor
from taskassign.streams_protocol.format import (
    STREAMS_GROUP_FORMAT,
    assignment_document,
    is_streams_group_document,
    parse_streams_group,
    read_streams_group,
)
from taskassign.streams_protocol.lines import (
    DEFAULT_STREAMS_LINE,
    KAFKA_20719_PROPOSED,
    STREAMS_LINES,
    StreamsProtocolError,
)
from taskassign.streams_protocol.model import StreamsGroup, StreamsGroupAssignment

__all__ = (
    "DEFAULT_STREAMS_LINE",
    "KAFKA_20719_PROPOSED",
    "STREAMS_ASSIGNORS",
    "STREAMS_GROUP_FORMAT",
    "STREAMS_LINES",
    "StreamsGroup",
    "StreamsGroupAssignment",
    "StreamsProtocolError",
    "assignment_document",
    "is_streams_group_document",
    "parse_streams_group",
    "read_streams_group",
    "run_assignor",
)
