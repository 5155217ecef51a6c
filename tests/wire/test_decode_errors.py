"""Decoders never crash on bad bytes: every failure is a DecodeError naming the field and byte offset."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.errors import DecodeError, UserInputError
from taskassign.formats.wire_documents import MESSAGE_KINDS, message_to_json
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import Assignment, AssignmentInfo, HostInfo, Subscription, SubscriptionInfo
from tests.wire.strategies import assignment_infos, assignments, subscription_infos, subscriptions

PID = ProcessId.of_ints(0, 1)
V11 = SubscriptionInfo.of(11, PID, {TaskId(0, 0): -2}, user_endpoint="h:1", client_tags={"k": "v"}).encode()


def decode_error(fn: object, data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        fn(data)  # type: ignore[operator]
    return info.value


def test_truncated_input_names_the_field_and_offset() -> None:
    err = decode_error(SubscriptionInfo.decode, V11[:30])
    assert err.field == "user_endpoint" and err.offset == 28 and "needs 3 bytes, only 2 left" in err.reason
    assert "field 'user_endpoint' at byte 28" in str(err)
    for decode in (SubscriptionInfo.decode, AssignmentInfo.decode, Subscription.decode, Assignment.decode):
        assert decode_error(decode, b"\x00").field == "version"


def test_length_beyond_the_buffer() -> None:
    data = bytearray(V11)
    data[24:28] = (10_000).to_bytes(4, "big")  # user_endpoint length
    err = decode_error(SubscriptionInfo.decode, bytes(data))
    assert err.field == "user_endpoint" and err.offset == 28 and "10000" in err.reason


def test_huge_array_count_fails_before_allocating() -> None:
    data = bytearray(AssignmentInfo(11, 11).encode())
    data[8:12] = (2**31 - 1).to_bytes(4, "big")  # active_tasks count
    err = decode_error(AssignmentInfo.decode, bytes(data))
    assert err.field == "active_tasks" and err.offset == 8 and "count 2147483647" in err.reason


def test_nested_path_and_offset() -> None:
    info = SubscriptionInfo.of(10, PID, {TaskId(0, 0): -2, TaskId(0, 1): 7})
    data = bytearray(info.encode())
    name_at = len(data) - 5 - 2  # the second task's topology_name length (before unique_field + errorCode)
    data[name_at:name_at + 2] = b"\x00\x09"
    err = decode_error(SubscriptionInfo.decode, bytes(data))
    assert err.field == "task_offset_sums[1].topology_name" and err.offset == name_at + 2


@pytest.mark.parametrize("version", [0, -4, 12])
def test_unknown_assignment_info_versions(version: int) -> None:
    err = decode_error(AssignmentInfo.decode, version.to_bytes(4, "big", signed=True) + bytes(40))
    assert err.field == "version" and err.offset == 0 and f"unknown version {version}" in err.reason


def test_subscription_versions_are_checked_like_kafka() -> None:
    assert decode_error(SubscriptionInfo.decode, bytes(4) + bytes(20)).field == "version"
    too_new = (5).to_bytes(4, "big") + (3).to_bytes(4, "big") + bytes(40)
    err = decode_error(SubscriptionInfo.decode, too_new)
    assert err.field == "latest_supported_version" and err.offset == 4
    assert decode_error(SubscriptionInfo.decode, bytes.fromhex("0000000c0000000b")).field == "latest_supported_version"


def test_invalid_utf8_names_the_offset_of_the_bad_byte() -> None:
    data = bytearray(V11)
    data[28 + 1] = 0xFF  # second byte of the endpoint "h:1"
    err = decode_error(SubscriptionInfo.decode, bytes(data))
    assert err.field == "user_endpoint" and err.offset == 29 and "UTF-8" in err.reason


def test_invalid_modified_utf8_and_utf16() -> None:
    good = AssignmentInfo(11, 11, (), ((TaskId(0, 1, "ab"), (("t", 1),)),)).encode()
    bad_topic = bytearray(good)
    at = good.index(b"\x00\x01t") + 2
    bad_topic[at] = 0x80  # a continuation byte cannot start a character
    err = decode_error(AssignmentInfo.decode, bytes(bad_topic))
    assert err.field == "standby_tasks[0].partitions[0].topic" and err.offset == at
    bad_name = bytearray(good)
    name_at = good.index(b"\x00a\x00b")
    bad_name[name_at:name_at + 2] = b"\xd8\x00"  # a lone high surrogate
    err = decode_error(AssignmentInfo.decode, bytes(bad_name))
    assert err.field == "standby_tasks[0].task.topology_name" and "UTF-16" in err.reason


def test_negative_task_ids_and_unknown_topic_indexes() -> None:
    data = bytearray(AssignmentInfo(11, 11, (TaskId(0, 1),)).encode())
    data[12:16] = (-1).to_bytes(4, "big", signed=True)
    assert "negative" in decode_error(AssignmentInfo.decode, bytes(data)).reason
    v5 = bytearray(AssignmentInfo(5, 11, (), (), ((HostInfo("h", 1), (("t", 0),)),)).encode())
    index_at = len(v5) - 4 - 8  # topic index of the only host partition
    v5[index_at:index_at + 4] = (9).to_bytes(4, "big")
    err = decode_error(AssignmentInfo.decode, bytes(v5))
    assert err.field == "partitions_by_host" and "topic index 9" in err.reason


def test_consumer_protocol_errors_and_nested_offsets() -> None:
    assert decode_error(Subscription.decode, b"\xff\xff").reason.startswith("negative version")
    envelope = Subscription.of(["topic"], V11[:20], []).encode()
    err = decode_error(lambda d: message_to_json(Subscription.decode(d)), envelope)
    # userData starts at byte 2 + 4 + (2 + 5) + 4 = 17; its process id (inner byte 8) is cut short
    assert err.message_type == "SubscriptionInfo" and err.field == "process_id" and err.offset == 17 + 8


def _mutations(data: bytes, rng: st.DataObject) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.draw(st.integers(1, 4))):
        op = rng.draw(st.sampled_from(["flip", "cut", "insert", "set"]))
        at = rng.draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "flip" and buf:
            buf[at] ^= 1 << rng.draw(st.integers(0, 7))
        elif op == "cut":
            del buf[at:]
        elif op == "insert":
            buf[at:at] = rng.draw(st.binary(min_size=1, max_size=4))
        elif buf:
            buf[at] = rng.draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFF]))
    return bytes(buf)


VALID = {
    "subscription_info": subscription_infos(),
    "assignment_info": assignment_infos(),
    "subscription": subscriptions(),
    "assignment": assignments(),
}


def _only_decode_errors(kind: str, data: bytes) -> None:
    try:
        message, size = MESSAGE_KINDS[kind](data)
        assert 0 <= size <= len(data)
        message_to_json(message)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data) and exc.field
    except UserInputError:  # pragma: no cover - any other user error would be a bug
        raise


@settings(max_examples=150)
@given(kind=st.sampled_from(sorted(MESSAGE_KINDS)), data=st.binary(max_size=80))
def test_random_bytes_never_crash(kind: str, data: bytes) -> None:
    _only_decode_errors(kind, data)


@settings(max_examples=150)
@given(kind=st.sampled_from(sorted(MESSAGE_KINDS)), rng=st.data())
def test_mutated_messages_never_crash(kind: str, rng: st.DataObject) -> None:
    valid = rng.draw(VALID[kind])
    if kind == "subscription":
        valid = Subscription(valid.version, valid.topics, V11, valid.owned_partitions, valid.generation_id,
                             valid.rack_id)
    elif kind == "assignment":
        valid = Assignment(valid.version, valid.assigned_partitions, AssignmentInfo(7, 11, (TaskId(0, 0),)).encode())
    _only_decode_errors(kind, _mutations(valid.encode(), rng))


@pytest.mark.parametrize("version", [5, 8, 11])
def test_encoding_a_lone_surrogate_topic_is_an_encode_error(version: int) -> None:
    from taskassign.errors import EncodeError

    info = AssignmentInfo(version=version, commonly_supported_version=version, active_tasks=(TaskId(0, 0),),
                          partitions_by_host=((HostInfo("h", 1), (("\ud800", 0),)),))
    with pytest.raises(EncodeError, match=r"topic.*lone surrogate"):
        info.encode()
