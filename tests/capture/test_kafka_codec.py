"""The streams capture's wire codec (``capture.kafka_codec``): Kafka's flexible-version primitives, and tagged
fields a newer broker adds skipped wherever they appear."""

from __future__ import annotations

import pytest

from taskassign.capture import kafka_codec as codec
from taskassign.errors import DecodeError


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1])
def test_unsigned_varints_round_trip(value: int) -> None:
    data = codec.Writer().uvarint(value).bytes()
    reader = codec.Reader(data, "T", 0)
    assert reader.uvarint("v") == value
    reader.finish()


def test_compact_strings_arrays_and_nulls() -> None:
    w = codec.Writer().compact_string("héllo").compact_string(None).compact_array([1, 2], codec.Writer.int32)
    w.compact_array(None, codec.Writer.int32)
    r = codec.Reader(w.bytes(), "T", 0)
    assert r.compact_string("s") == "héllo"
    assert r.compact_nullable_string("n") is None
    assert r.compact_array("a", lambda r, n: r.int32(n)) == [1, 2]
    assert r.compact_nullable_array("b", lambda r, n: r.int32(n)) is None
    r.finish()


def test_tagged_fields_are_read_whole_and_skipped() -> None:
    data = codec.Writer().uvarint(2).uvarint(0).uvarint(3).bytes() + b"abc" + codec.Writer().uvarint(
        9).uvarint(1).bytes() + b"z"
    r = codec.Reader(data, "T", 0)
    assert r.tagged_fields("x") == {0: b"abc", 9: b"z"}
    r.finish()


def test_a_short_or_long_answer_names_the_field_and_offset() -> None:
    with pytest.raises(DecodeError, match=r"field 'Groups' at byte 4"):
        codec.decode_streams_group_describe(b"\x00\x00\x00\x00", 0)
    with pytest.raises(DecodeError, match="2 bytes left after the last field"):
        codec.decode_list_groups(codec.Writer().int32(0).int16(0).compact_array([], codec.Writer.int32)
                                 .tagged_fields().bytes() + b"\x00\x00")
    with pytest.raises(DecodeError, match="array of 1000 elements"):
        codec.decode_list_groups(codec.Writer().int32(0).int16(0).uvarint(1001).bytes())


def test_requests_are_kafkas_bytes() -> None:
    # StreamsGroupDescribeRequest v0 for group "g": GroupIds ["g"], IncludeAuthorizedOperations false, no tags.
    assert codec.encode_streams_group_describe("g", 0) == b"\x02\x02g\x00\x00"
    assert codec.encode_streams_group_describe("g", 1) == b"\x02\x02g\x00\x01\x00"
    # ListGroupsRequest v5 with TypesFilter [streams] (as Kafka's admin client sends it).
    assert codec.encode_list_groups(("streams",)) == b"\x01\x02\x08streams\x00"
    assert codec.request_header(89, 0, 7, "c") == b"\x00\x59\x00\x00\x00\x00\x00\x07\x00\x01c\x00"
