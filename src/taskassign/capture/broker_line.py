"""Which Kafka release line a broker runs, as far as its ApiVersions answer reveals it (docs/kafka-versions.md).

Every release line raises the highest version of some requests. ``_MAX_VERSIONS`` holds, for each API key whose
highest stable version differs between the lines 3.9 to 4.4, that version on each line, read from the
``validVersions`` of the line's message schemas (``clients/src/main/resources/common/message/*Request.json`` of
Apache Kafka's release branches; a version marked ``latestVersionUnstable`` is not advertised, so the one below
counts). A broker that advertises exactly one line's versions runs that line; a development build lies between two.

Only what the broker advertises is compared: a key it leaves out (a feature it has switched off, such as share or
streams groups) is no evidence. The broker's line is not the Kafka Streams library's: a classic application's
assignor runs in the application, whose own version is given with ``--kafka-version`` when it differs.

This is the one reading of an ApiVersions answer, for classic and streams captures alike: the exact line when the
advertised versions identify one, else the range they allow. A streams group's assignor runs on the broker, so its
replay needs one line: ``BrokerLine.nearest`` (the exact line; among lines the answer cannot tell apart, the
newest; for a development build, the newest line whose versions it has reached, ``trunk`` past the newest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("BROKER_LINES", "LIBRARY_NOTE", "STREAMS_GROUP_DESCRIBE", "STREAMS_GROUP_HEARTBEAT", "BrokerLine",
           "broker_line", "streams_protocol_versions")

#: The release lines the table covers, oldest first (a trunk build has no fixed versions).
BROKER_LINES = ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4")

#: API key -> (name, highest stable version on 3.9, 4.0, 4.1, 4.2, 4.3, 4.4; None: the line has no such request).
_MAX_VERSIONS: dict[int, tuple[str, tuple[int | None, ...]]] = {
    0: ("Produce", (11, 12, 13, 13, 13, 13)),
    1: ("Fetch", (17, 17, 18, 18, 18, 18)),
    2: ("ListOffsets", (9, 10, 10, 11, 11, 11)),
    3: ("Metadata", (12, 13, 13, 13, 13, 13)),
    8: ("OffsetCommit", (9, 9, 9, 10, 10, 10)),
    9: ("OffsetFetch", (9, 9, 9, 10, 10, 10)),
    15: ("DescribeGroups", (5, 6, 6, 6, 6, 6)),
    18: ("ApiVersions", (4, 4, 4, 4, 4, 5)),
    26: ("EndTxn", (4, 5, 5, 5, 5, 5)),
    27: ("WriteTxnMarkers", (1, 1, 1, 2, 2, 2)),
    28: ("TxnOffsetCommit", (4, 5, 5, 5, 5, 6)),
    35: ("DescribeLogDirs", (4, 4, 4, 4, 5, 5)),
    42: ("DeleteGroups", (2, 2, 2, 2, 2, 3)),
    45: ("AlterPartitionReassignments", (0, 0, 1, 1, 1, 1)),
    57: ("UpdateFeatures", (1, 2, 2, 2, 2, 2)),
    60: ("DescribeCluster", (1, 2, 2, 2, 2, 2)),
    66: ("ListTransactions", (1, 1, 2, 2, 2, 2)),
    68: ("ConsumerGroupHeartbeat", (0, 1, 1, 1, 1, 1)),
    69: ("ConsumerGroupDescribe", (0, 1, 1, 1, 1, 1)),
    74: ("ListClientMetricsResources", (0, 0, 1, 1, 1, 1)),
    76: ("ShareGroupHeartbeat", (None, None, 1, 1, 1, 1)),
    77: ("ShareGroupDescribe", (None, None, 1, 1, 1, 1)),
    78: ("ShareFetch", (None, None, 1, 2, 2, 2)),
    79: ("ShareAcknowledge", (None, None, 1, 2, 2, 2)),
    80: ("AddRaftVoter", (0, 0, 0, 1, 1, 1)),
    83: ("InitializeShareGroupState", (None, None, 0, 0, 0, 0)),
    84: ("ReadShareGroupState", (None, None, 0, 0, 0, 0)),
    85: ("WriteShareGroupState", (None, None, 0, 1, 1, 1)),
    86: ("DeleteShareGroupState", (None, None, 0, 0, 0, 0)),
    87: ("ReadShareGroupStateSummary", (None, None, 0, 1, 1, 1)),
    # 4.1 has v0 of both as unstable: advertised only with unstable.api.versions.enable (streams groups on 4.1)
    88: ("StreamsGroupHeartbeat", (None, None, 0, 0, 0, 1)),
    89: ("StreamsGroupDescribe", (None, None, 0, 0, 0, 1)),
    90: ("DescribeShareGroupOffsets", (None, None, 0, 1, 1, 1)),
    91: ("AlterShareGroupOffsets", (None, None, 0, 0, 0, 0)),
    92: ("DeleteShareGroupOffsets", (None, None, 0, 0, 0, 0)),
    93: ("StreamsGroupTopologyDescriptionUpdate", (None, None, None, None, None, 0)),
    94: ("UnregisterController", (None, None, None, None, None, 0)),
}

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE = 88, 89

LIBRARY_NOTE = ("the broker's release line is not the Kafka Streams library's: a classic application's assignor runs "
                "in the application, on the application's own Kafka Streams version; give that with --kafka-version "
                "(or kafka.version in the configs) when it differs from the broker's")


@dataclass(frozen=True, slots=True)
class BrokerLine:
    """What a broker's ApiVersions answer says of its release line."""

    #: The release line whose versions the broker advertises exactly, or None.
    line: str | None
    #: Without an exact line: the newest line the broker is at least, and the oldest it is at most (None: unbounded).
    after: str | None
    before: str | None
    #: One sentence per telling API key: "ListOffsets v10 (3.9: v9, 4.0: v10, ...)".
    evidence: tuple[str, ...]
    #: When the advertised keys fit several lines alike: those lines.
    candidates: tuple[str, ...] = ()

    @property
    def description(self) -> str:
        if self.line is not None:
            return f"Kafka {self.line}"
        if self.candidates:
            return (f"one of Kafka {self.candidates[0]} to {self.candidates[-1]} (the advertised versions do not tell "
                    "them apart)")
        if self.after is not None and self.before is not None:
            return f"newer than Kafka {self.after} and older than {self.before} (a development build)"
        if self.after is not None:
            return f"newer than Kafka {self.after} (a later line or a trunk build)"
        if self.before is not None:
            return f"older than Kafka {self.before}"
        return "unknown (the advertised versions match no release line)"

    @property
    def nearest(self) -> str | None:
        """One line to run the broker's code as: the exact line; the newest of several the answer cannot tell
        apart; for a development build the newest line it has reached (``trunk`` past the newest release line);
        None for a broker older than every known line."""
        if self.line is not None:
            return self.line
        if self.candidates:
            return self.candidates[-1]
        if self.after is not None:
            return "trunk" if self.before is None and self.after == BROKER_LINES[-1] else self.after
        return None

    def to_document(self) -> dict[str, Any]:
        return {"line": self.line, "description": self.description, "candidates": list(self.candidates),
                "evidence": list(self.evidence), "note": LIBRARY_NOTE}


def broker_line(advertised: Mapping[int, tuple[int, int]]) -> BrokerLine:
    """The broker's release line from its ApiVersions answer (API key -> (min, max) version)."""
    newer: list[bool] = []
    older: list[bool] = []
    evidence: list[str] = []
    for i in range(len(BROKER_LINES)):
        ahead = behind = False
        for key, (_, top) in advertised.items():
            row = _MAX_VERSIONS.get(key)
            if row is None:
                continue
            expected = row[1][i]
            if expected is None or top > expected:
                ahead = True
            elif top < expected:
                behind = True
        newer.append(ahead)
        older.append(behind)
    for key in sorted(advertised):
        row = _MAX_VERSIONS.get(key)
        if row is not None:
            name, tops = row
            lines = ", ".join(f"{line}: {'-' if t is None else f'v{t}'}" for line, t in zip(BROKER_LINES, tops,
                                                                                         strict=True))
            evidence.append(f"{name} v{advertised[key][1]} ({lines})")
    exact = [line for line, a, b in zip(BROKER_LINES, newer, older, strict=True) if not a and not b]
    if len(exact) == 1:
        return BrokerLine(exact[0], None, None, tuple(evidence))
    if exact:  # too few telling keys advertised: one of several lines
        return BrokerLine(None, None, None, tuple(evidence), tuple(exact))
    at_least = [line for line, b in zip(BROKER_LINES, older, strict=True) if not b]
    at_most = [line for line, a in zip(BROKER_LINES, newer, strict=True) if not a]
    return BrokerLine(None, at_least[-1] if at_least else None, at_most[0] if at_most else None, tuple(evidence))


def streams_protocol_versions(ranges: Mapping[int, tuple[int, int]]) -> tuple[int, int] | None:
    """StreamsGroupDescribe's (min, max) when the broker speaks the streams protocol (it advertises both
    StreamsGroupHeartbeat and StreamsGroupDescribe), else None."""
    if STREAMS_GROUP_HEARTBEAT not in ranges or STREAMS_GROUP_DESCRIBE not in ranges:
        return None
    return ranges[STREAMS_GROUP_DESCRIBE]
