"""The Kafka release line of a run: which line a source asks for, and what it means for the streams protocol.

The classic assignors and the group leader read the line from their configs (``kafka.version``, set by
``--kafka-version``). The streams-protocol (KIP-1071) assignors run on the broker, whose behaviour per line is in
``STREAMS_STICKY_LINE``: the line whose code the broker-side ``sticky`` assignor reproduces for each line (4.2 and 4.3
agree on every input, so do 4.4 and trunk), None where the line has no streams rebalance protocol. The broker-side
assignor takes the line as its ``kafka_line`` keyword (docs/kafka-versions.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from taskassign.configs import DEFAULT_KAFKA_LINE, KAFKA_LINES, KAFKA_VERSION
from taskassign.errors import UserInputError

__all__ = ("STREAMS_STICKY_LINE", "source_kafka_line", "streams_kafka_line")

#: Line -> the line whose broker-side ``sticky`` code it runs (None: no streams rebalance protocol on that line).
STREAMS_STICKY_LINE: Mapping[str, str | None] = MappingProxyType({
    "3.9": None, "4.0": None, "4.1": "4.1", "4.2": "4.2", "4.3": "4.2", "4.4": "4.4", "trunk": "4.4",
})


def source_kafka_line(configs: Mapping[str, object], flag: str | None = None) -> str:
    """The line of a run: ``--kafka-version`` (``flag``), else the source's ``kafka.version``, else the default."""
    if flag is not None:
        return flag
    given = configs.get(KAFKA_VERSION)
    if given is None:
        return DEFAULT_KAFKA_LINE
    if given not in KAFKA_LINES:
        raise UserInputError(f"config {KAFKA_VERSION!r}: must be one of {', '.join(KAFKA_LINES)}; got {given!r}")
    return str(given)


def streams_kafka_line(line: str) -> str:
    """The ``kafka_line`` to hand the broker-side assignors for a run on ``line``; UserInputError on a line without
    the streams rebalance protocol (KIP-1071 arrived in 4.1)."""
    mapped = STREAMS_STICKY_LINE[line]
    if mapped is None:
        raise UserInputError(f"Kafka {line} has no streams rebalance protocol (KIP-1071 arrived in 4.1): the "
                             "streams-protocol assignors need --kafka-version 4.1 or later")
    return mapped
