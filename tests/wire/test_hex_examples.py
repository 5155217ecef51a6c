"""Hand-checked hex encodings of Subscription / SubscriptionInfo and Assignment / AssignmentInfo, byte for byte."""

from __future__ import annotations

import pytest

from taskassign.ids import ProcessId, TaskId
from taskassign.wire import Assignment, AssignmentInfo, AssignorError, HostInfo, Subscription, SubscriptionInfo


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace("|", " "))


PID_1 = ProcessId.of_ints(0, 1)
SUMS = {TaskId(0, 0): -2, TaskId(0, 1): 10}


def info(version: int, **kw: object) -> SubscriptionInfo:
    return SubscriptionInfo.of(version, PID_1, SUMS, user_endpoint="localhost:8080", unique_field=1, **kw)  # type: ignore[arg-type]


V1 = "00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 00" \
     "00 00 00 01 00 00 00 00 00 00 00 01"
V2 = "00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 00" \
     "00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 0e 6c 6f 63 61 6c 68 6f 73 74 3a 38 30 38 30"
V3 = "00 00 00 03 00 00 00 0b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00" \
     "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 0e 6c 6f 63 61 6c 68 6f 73 74 3a 38 30 38 30"
V7 = "00 00 00 07 00 00 00 0b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 0e 6c 6f 63 61" \
     "6c 68 6f 73 74 3a 38 30 38 30 00 00 00 01 00 00 00 00 00 00 00 02 00 00 00 00 ff ff ff ff ff ff" \
     "ff fe 00 00 00 01 00 00 00 00 00 00 00 0a"
V10 = "00 00 00 0a 00 00 00 0b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 0e 6c 6f 63 61" \
      "6c 68 6f 73 74 3a 38 30 38 30 00 00 00 02 00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff fe ff ff" \
      "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 0a ff ff 01 00 00 00 00"
V11 = "00 00 00 0b 00 00 00 0b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 0e 6c 6f 63 61" \
      "6c 68 6f 73 74 3a 38 30 38 30 00 00 00 02 00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff fe ff ff" \
      "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 0a ff ff 01 00 00 00 00 00 00 00 01 00 00 00 04 7a" \
      "6f 6e 65 00 00 00 03 61 7a 31"


@pytest.mark.parametrize(("version", "expected", "size"), [
    (1, V1, 44), (2, V2, 62), (3, V3, 66),
    (4, "00 00 00 04" + V3[11:], 66), (5, "00 00 00 05" + V3[11:], 66), (6, "00 00 00 06" + V3[11:], 66),
    (7, V7, 78), (8, "00 00 00 08" + V7[11:] + "01", 79), (9, "00 00 00 09" + V7[11:] + "01 00 00 00 00", 83),
    (10, V10, 87),
])
def test_subscription_info_examples(version: int, expected: str, size: int) -> None:
    data = info(version).encode()
    assert data == h(expected) and len(data) == size
    assert SubscriptionInfo.decode(data).offset_sums() == (
        SUMS if version >= 7 else {TaskId(0, 0): -2, TaskId(0, 1): -3})


def test_subscription_info_v11_with_tags_and_fresh_client() -> None:
    assert info(11, client_tags={"zone": "az1"}).encode() == h(V11)
    fresh = SubscriptionInfo.of(11, PID_1, {})
    assert fresh.encode() == h("00 00 00 0b 00 00 00 0b" + " 00" * 15 + " 01" + " 00" * 17)
    assert len(fresh.encode()) == 41


def test_subscription_info_named_task() -> None:
    expected = ("00 00 00 0a 00 00 00 0b 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01"
                "00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 05 00 09 74 6f 70 6f 6c 6f 67 79 30 01 00 00 00 00")
    named = SubscriptionInfo.of(10, PID_1, {TaskId(1, 0, "topology0"): 5}, unique_field=1)  # no endpoint
    assert named.encode() == h(expected) and len(named.encode()) == 64
    assert SubscriptionInfo.decode(h(expected)).offset_sums() == {TaskId(1, 0, "topology0"): 5}


def test_future_subscription_is_two_ints_and_decodes_as_future() -> None:
    future = SubscriptionInfo.decode(h("00 00 00 0c 00 00 00 0c"))
    assert future.is_future and future.version == 12 and future.latest_supported_version == 12
    assert future.process_id is None and future.encode() == h("00 00 00 0c 00 00 00 0c")


T1 = "00 02 74 31"
HOST = HostInfo("localhost", 8080)


def assignment(version: int, **kw: object) -> AssignmentInfo:
    return AssignmentInfo(
        version, 11 if version >= 3 else -1, (TaskId(0, 0),), ((TaskId(0, 1), (("t1", 1),)),),
        ((HOST, (("t1", 0),)),) if version >= 2 else (), ((HOST, (("t1", 1),)),) if version >= 6 else (),
        **kw,  # type: ignore[arg-type]
    )


A1 = "00 00 00 01 | 00 00 00 01 00 00 00 00 00 00 00 00 | 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 01" + T1 \
     + "00 00 00 01"
A2 = "00 00 00 02 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 01" \
     "00 02 74 31 00 00 00 01 00 00 00 01 00 09 6c 6f 63 61 6c 68 6f 73 74 00 00 1f 90 00 00 00 01 00" \
     "02 74 31 00 00 00 00"
A4 = "00 00 00 04 00 00 00 0b 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01" \
     "00 00 00 01 00 02 74 31 00 00 00 01 00 00 00 01 00 09 6c 6f 63 61 6c 68 6f 73 74 00 00 1f 90 00" \
     "00 00 01 00 02 74 31 00 00 00 00 00 00 00 00"
A5 = "00 00 00 05 00 00 00 0b 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01" \
     "00 00 00 01 00 02 74 31 00 00 00 01 00 00 00 01 00 00 00 00 00 02 74 31 00 00 00 01 00 09 6c 6f" \
     "63 61 6c 68 6f 73 74 00 00 1f 90 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00"
A7 = "00 00 00 07 00 00 00 0b 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01" \
     "00 00 00 01 00 02 74 31 00 00 00 01 00 00 00 01 00 00 00 00 00 02 74 31 00 00 00 01 00 09 6c 6f" \
     "63 61 6c 68 6f 73 74 00 00 1f 90 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 01 00 09 6c 6f 63" \
     "61 6c 68 6f 73 74 00 00 1f 90 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 00 7f ff ff ff ff ff" \
     "ff ff"
A11 = "00 00 00 0b 00 00 00 0b 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00" \
      "00 00 00 01 00 00 00 00 00 00 00 01 00 02 74 31 00 00 00 01 00 00 00 01 00 00 00 00 00 02 74 31" \
      "00 00 00 01 00 09 6c 6f 63 61 6c 68 6f 73 74 00 00 1f 90 00 00 00 01 00 00 00 00 00 00 00 00 00" \
      "00 00 01 00 09 6c 6f 63 61 6c 68 6f 73 74 00 00 1f 90 00 00 00 01 00 00 00 00 00 00 00 01 00 00" \
      "00 00 7f ff ff ff ff ff ff ff"


@pytest.mark.parametrize(("version", "expected", "size"), [
    (1, A1, 40), (2, A2, 71), (3, A2[:11] + " 00 00 00 0b" + A2[11:], 75), (4, A4, 79), (5, A5, 91),
    (7, A7, 130), (11, A11, 138),
])
def test_assignment_info_examples(version: int, expected: str, size: int) -> None:
    if version == 3:
        expected = "00 00 00 03 00 00 00 0b" + A2[11:]
    data = assignment(version).encode()
    assert data == h(expected) and len(data) == size
    assert AssignmentInfo.decode(data) == assignment(version)


def test_assignment_info_immediate_rebalance_and_named_task_and_error() -> None:
    assert assignment(11, next_rebalance_ms=0).encode().endswith(h("00 00 00 00" + " 00" * 8))
    named = AssignmentInfo(10, 11, (TaskId(0, 1, "ab"),))
    assert named.encode() == h("00 00 00 0a 00 00 00 0b 00 00 00 01 00 00 00 00 00 00 00 01 00 00 00 02 00 61 00 62"
                               + " 00" * 20 + " 7f ff ff ff ff ff ff ff")
    assert len(named.encode()) == 56
    shutdown = AssignmentInfo.error(AssignorError.SHUTDOWN_REQUESTED).encode()
    assert shutdown == h("00 00 00 0b 00 00 00 0b" + " 00" * 23 + " 04 7f ff ff ff ff ff ff ff")


def test_consumer_protocol_examples() -> None:
    sub = Subscription.of(["topic1"], h("de ad be ef"), [("topic1", 2), ("topic1", 0)], generation_id=5,
                          rack_id="rack1")
    assert sub.encode() == h("00 03 | 00 00 00 01 00 06 74 6f 70 69 63 31 | 00 00 00 04 de ad be ef"
                             "00 00 00 01 00 06 74 6f 70 69 63 31 00 00 00 02 00 00 00 00 00 00 00 02 | 00 00 00 05"
                             "| 00 05 72 61 63 6b 31")
    assert Subscription(0, ("topic1",), None).encode() == h("00 00 00 00 00 01 00 06 74 6f 70 69 63 31 ff ff ff ff")
    asg = Assignment.of([("topic1", 0), ("topic2", 0)], h("de ad be ef"))
    assert asg.encode() == h("00 03 | 00 00 00 02 | 00 06 74 6f 70 69 63 31 00 00 00 01 00 00 00 00 | 00 06 74 6f"
                             "70 69 63 32 00 00 00 01 00 00 00 00 00 00 00 04 de ad be ef")
    assert len(asg.encode()) == 46 and len(sub.encode()) == 57


def test_a_newer_consumer_protocol_version_reads_with_the_latest_schema() -> None:
    data = Subscription(3, ("t",), None, (), -1, None).encode()
    newer = b"\x00\x07" + data[2:] + b"\x01\x02"  # version 7 with an appended unknown field
    decoded = Subscription.decode(newer)
    assert decoded.version == 7 and decoded.topics == ("t",)
