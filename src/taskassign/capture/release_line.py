"""Which Kafka release line a broker runs, read off its ApiVersions answer (the version ranges it advertises).

Each line raised the highest version of some request (Kafka's message schemas, ``validVersions`` of the
broker's requests, release branches 3.9 to 4.4); a broker is of the newest line all of whose raised maxima
it advertises. Only requests every broker serves are used (no share-group or controller-only requests, whose
advertisement depends on settings), plus StreamsGroupDescribe, which 4.4 raised to v1 (KIP-1331, KIP-1357).

A build of a later line than the newest known here reports that newest line (``or newer``); a vendor build
(Confluent's ``8.2.x-ccs`` is Apache Kafka 4.2) reports the Apache line its code is.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ("KNOWN_LINES", "release_line", "streams_protocol_versions")

# (api key, name) -> the highest version a line first advertised.
_PRODUCE, _FETCH, _LIST_OFFSETS, _METADATA = (0, "Produce"), (1, "Fetch"), (2, "ListOffsets"), (3, "Metadata")
_WRITE_TXN_MARKERS, _DESCRIBE_LOG_DIRS = (27, "WriteTxnMarkers"), (35, "DescribeLogDirs")
_API_VERSIONS, _DELETE_GROUPS = (18, "ApiVersions"), (42, "DeleteGroups")
_STREAMS_DESCRIBE = (89, "StreamsGroupDescribe")

#: Oldest first: a line and the request maxima it raised.
_MARKERS: tuple[tuple[str, tuple[tuple[tuple[int, str], int], ...]], ...] = (
    ("3.9", ((_METADATA, 12), (_FETCH, 17), (_PRODUCE, 11))),
    ("4.0", ((_METADATA, 13), (_PRODUCE, 12), (_LIST_OFFSETS, 10))),
    ("4.1", ((_FETCH, 18), (_PRODUCE, 13))),
    ("4.2", ((_LIST_OFFSETS, 11), (_WRITE_TXN_MARKERS, 2))),
    ("4.3", ((_DESCRIBE_LOG_DIRS, 5),)),
    ("4.4", ((_API_VERSIONS, 5), (_DELETE_GROUPS, 3), (_STREAMS_DESCRIBE, 1))),
)
KNOWN_LINES = tuple(line for line, _ in _MARKERS)

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE = 88, 89


def release_line(ranges: Mapping[int, tuple[int, int]]) -> str | None:
    """The newest known line whose raised maxima (and every older line's) the broker advertises; ``None``
    for a broker older than 3.9. ``ranges``: api key -> (min, max) as ApiVersions answers."""
    found: str | None = None
    for line, markers in _MARKERS:
        if all(ranges.get(key, (0, -1))[1] >= high for (key, _name), high in markers):
            found = line
        else:
            break
    return found


def streams_protocol_versions(ranges: Mapping[int, tuple[int, int]]) -> tuple[int, int] | None:
    """StreamsGroupDescribe's (min, max) when the broker speaks the streams protocol (it advertises both
    StreamsGroupHeartbeat and StreamsGroupDescribe), else None."""
    if STREAMS_GROUP_HEARTBEAT not in ranges or STREAMS_GROUP_DESCRIBE not in ranges:
        return None
    return ranges[STREAMS_GROUP_DESCRIBE]
