"""The broker's release line from its ApiVersions answer: two real answers (a 4.0 trunk build of 2024-10 and a 4.2
broker) and made-up ones."""

from __future__ import annotations

import base64
import json

from taskassign.capture.broker_line import _MAX_VERSIONS, BROKER_LINES, broker_line, streams_protocol_versions
from taskassign.capture.kafka_codec import decode_api_versions
from tests.helpers import GOLDEN_DIR


def _answer(name: str) -> dict[int, tuple[int, int]]:
    doc = json.loads((GOLDEN_DIR / "broker_api_versions" / f"{name}.json").read_text())
    frame = base64.b64decode(doc["response_b64"])  # the response header (v0 for ApiVersions) is the correlation id
    return decode_api_versions(frame[4:], doc["api_version"]).ranges


def test_a_4_2_broker_is_4_2() -> None:
    found = broker_line(_answer("kafka-4.2"))
    assert (found.line, found.description, found.nearest) == ("4.2", "Kafka 4.2", "4.2")
    assert any(e.startswith("ListOffsets v11 ") for e in found.evidence)


def test_a_4_4_broker_is_4_4_and_speaks_the_streams_protocol_v1() -> None:
    doc = json.loads((GOLDEN_DIR / "broker_api_versions" / "kafka-4.4.ranges.json").read_text())
    ranges = {int(k): (v[0], v[1]) for k, v in doc["ranges"].items()}
    found = broker_line(ranges)
    assert (found.line, found.nearest) == ("4.4", "4.4")
    assert streams_protocol_versions(ranges) == (0, 1)
    assert streams_protocol_versions(_answer("kafka-4.0-trunk-2024-10")) is None


def test_partial_answers_the_streams_capture_meets() -> None:
    """The streams capture replays the broker's assignor as ``nearest``: exact where the versions tell, else the
    newest line they allow."""
    base = {0: (0, 13), 1: (0, 18), 2: (1, 11), 3: (0, 13), 27: (0, 2), 35: (0, 4), 18: (0, 4), 42: (0, 2),
            88: (0, 0), 89: (0, 0)}
    assert broker_line(base).line == "4.2"
    assert broker_line({**base, 35: (0, 5)}).line == "4.3"
    assert broker_line({**base, 35: (0, 5), 18: (0, 5), 42: (0, 3), 88: (0, 1), 89: (0, 1)}).line == "4.4"
    assert broker_line({**base, 2: (1, 10), 27: (0, 1)}).line == "4.1"
    assert broker_line({0: (0, 11), 1: (0, 17), 3: (0, 12)}).line == "3.9"
    assert broker_line({0: (0, 9)}).nearest is None  # older than every known line
    # past the newest line (a trunk build with a raised version): replayed as trunk
    past = broker_line({**base, 35: (0, 5), 18: (0, 6), 42: (0, 3), 88: (0, 1), 89: (0, 1)})
    assert (past.line, past.after, past.before, past.nearest) == (None, "4.4", None, "trunk")


def test_a_trunk_build_between_3_9_and_4_0_is_named_so() -> None:
    found = broker_line(_answer("kafka-4.0-trunk-2024-10"))
    assert found.line is None and (found.after, found.before, found.nearest) == ("3.9", "4.0", "3.9")
    assert "development build" in found.description
    assert found.to_document()["note"].startswith("the broker's release line is not the Kafka Streams library's")


def test_every_line_recognises_its_own_versions() -> None:
    for i, line in enumerate(BROKER_LINES):
        advertised = {key: (0, tops[i]) for key, (_, tops) in _MAX_VERSIONS.items() if tops[i] is not None}
        assert broker_line(advertised).line == line


def test_keys_the_broker_leaves_out_are_no_evidence() -> None:
    # only DescribeLogDirs v5 and ApiVersions v4: 4.3 (4.4 has ApiVersions v5)
    assert broker_line({35: (1, 5), 18: (0, 4)}).line == "4.3"
    vague = broker_line({0: (3, 13)})  # Produce v13: 4.1 to 4.4
    assert vague.line is None and "4.1 to 4.4" in vague.description and vague.nearest == "4.4"


def test_capture_writes_the_broker_line_and_the_group_file_reads_it() -> None:
    import copy

    from taskassign.capture.group_capture import _broker_line
    from taskassign.formats.group import parse_group

    class Reader:
        def api_versions(self) -> dict[int, tuple[int, int]]:
            return _answer("kafka-4.2")

    written = _broker_line(Reader())  # type: ignore[arg-type]
    assert written is not None and written["line"] == "4.2" and written["evidence"]
    doc = json.loads((GOLDEN_DIR / "live_cases" / "sticky-legacy-gen01-cold-3.group.json").read_text())
    with_line = copy.deepcopy(doc)
    with_line["capture"]["broker_kafka_line"] = written
    spec = parse_group(with_line)
    assert spec.capture is not None and spec.capture.broker_kafka_line is not None
    assert spec.capture.broker_kafka_line["line"] == "4.2"
    assert spec.configs.kafka_version == "4.4"  # the broker's line is not the application's


def test_a_reader_without_an_answer_records_nothing() -> None:
    from taskassign.capture.group_capture import _broker_line

    class Fixed:
        def api_versions(self) -> None:
            return None

    assert _broker_line(Fixed()) is None  # type: ignore[arg-type]
