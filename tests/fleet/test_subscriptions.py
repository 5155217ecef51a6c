"""fleet.subscriptions: the fast reader of versions 7-11 gives what the generic wire reader gives, on valid
bytes and on damaged ones (where the generic reader's error, with its field and offset, is the answer)."""

from __future__ import annotations

import random
import struct

from taskassign.fleet.subscriptions import _read_common, _read_generic, decode_subscription, decode_subscriptions
from taskassign.ids import ProcessId, TaskId
from taskassign.wire.subscription_info import SubscriptionInfo

PID = ProcessId("8f6b4a52-0c1e-4a43-9a34-3c2f1a0e9d11")


def _messages() -> list[bytes]:
    offsets = {TaskId(0, 0): -2, TaskId(0, 7): 12, TaskId(3, 1): -3, TaskId(1, 2): 0, TaskId(2, 40_000): 2**62}
    found = []
    for version in range(1, 12):
        for endpoint in (None, "host-é.svc:7070"):
            tags = {"zone": "eu-1", "k": ""} if version >= 11 else None
            for sums in (offsets, {}):
                found.append(SubscriptionInfo.of(version, PID, sums, user_endpoint=endpoint, unique_field=-3,
                                                 error_code=4, client_tags=tags).encode())
    return found


def test_valid_messages_read_alike_and_versions_7_to_11_take_the_fast_reader() -> None:
    for data in _messages():
        version = int.from_bytes(data[:4], "big")
        assert decode_subscription(data) == _read_generic(data)
        assert decode_subscription(data)["_sub_error"] is None
        if version >= 7:
            assert _read_common(data) == _read_generic(data)
    v11 = decode_subscription(_messages()[-1])
    assert v11["_sub_tags"] == [("k", ""), ("zone", "eu-1")]
    assert decode_subscription(_messages()[-4])["_sub_offsets"][:2] == [
        {"task_id": "0_0", "offset_sum": -2}, {"task_id": "0_7", "offset_sum": 12}]


def test_damaged_messages_get_the_generic_readers_errors() -> None:
    rng = random.Random(11)
    checked = errors = 0
    for data in _messages():
        cases = [data[:n] for n in range(len(data))] + [data + b"\x00\x01"]
        for _ in range(60):
            damaged = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                damaged[rng.randrange(len(damaged))] = rng.choice((0, 0x80, 0xFF, rng.randrange(256)))
            cases.append(bytes(damaged))
        for case in cases:
            expected = _read_generic(case)
            assert decode_subscription(case) == expected, case.hex()
            checked += 1
            errors += expected["_sub_error"] is not None
    assert checked > 4_000 and errors > 1_000  # truncations and damage really produced errors


def test_a_named_topology_and_a_negative_task_fall_back_to_the_generic_reader() -> None:
    named = SubscriptionInfo.of(10, PID, {TaskId(1, 2, "orders"): 5}).encode()
    assert decode_subscription(named) == _read_generic(named)
    assert decode_subscription(named)["_sub_offsets"] == [{"task_id": "orders__1_2", "offset_sum": 5}]
    negative = bytearray(SubscriptionInfo.of(10, PID, {TaskId(1, 2): 5}).encode())
    negative[32:36] = (-1).to_bytes(4, "big", signed=True)  # the one task's subtopology
    result = decode_subscription(bytes(negative))
    assert result == _read_generic(bytes(negative))
    assert "negative" in result["_sub_error"]


def test_a_whole_table_of_members_reads_as_each_member_alone() -> None:
    """decode_subscriptions reads every member at once (one block per layout, merged on columns): each member
    gets what the generic reader gives it alone, its tasks in order, whatever its neighbours send (other
    versions, damaged bytes the generic reader reads, nothing)."""
    rng = random.Random(3)
    pool = _messages()
    damaged = []
    for data in pool:
        broken = bytearray(data)
        broken[rng.randrange(len(broken))] = rng.randrange(256)
        damaged.append(bytes(broken))
    for _ in range(20):
        values: list[bytes | None] = [rng.choice([*pool, *damaged, None]) for _ in range(rng.randint(0, 40))]
        found = decode_subscriptions(values)
        assert len(found.members) == len(values)
        reports: list[tuple[int, str, int]] = []
        for index, data in enumerate(values):
            expected = _read_generic(data) if data is not None else decode_subscription(None)
            assert found.members[index] == {k: v for k, v in expected.items() if k != "_sub_offsets"}
            reports += [(index, o["task_id"], o["offset_sum"]) for o in expected["_sub_offsets"] or ()]
        assert list(zip(found.member.tolist(), found.task_ids.to_pylist(), found.offset_sums.tolist(),
                        strict=True)) == reports


def _hand_made(version: int, groups: list[tuple[int, list[tuple[int, int]]]]) -> bytes:
    """A SubscriptionInfo of version 9 or 10 written field by field, its tasks in the order given (repeats
    kept): Kafka writes each task once, in its map's order, but the reader must not rely on either."""
    head = struct.pack(">iiQQ", version, version, 1, 2) + struct.pack(">i", 4) + b"h:70"
    if version >= 10:
        tasks = [(sub, part, offset) for sub, parts in groups for part, offset in parts]
        body = struct.pack(">i", len(tasks)) + b"".join(struct.pack(">iiqh", s, p, o, -1) for s, p, o in tasks)
    else:
        body = struct.pack(">i", len(groups)) + b"".join(
            struct.pack(">ii", sub, len(parts)) + b"".join(struct.pack(">iq", p, o) for p, o in parts)
            for sub, parts in groups)
    return head + body + struct.pack(">bi", 0, 0)


def test_tasks_out_of_order_or_repeated_read_alike() -> None:
    groups = [(3, [(1, 5), (0, 2**62)]), (0, [(2, 7)]), (3, [(1, 9)]), (0, [(0, -2)]), (12, [])]
    for version in (9, 10):
        data = _hand_made(version, groups)
        assert _read_common(data) == _read_generic(data)  # the fast reader read it, not the generic one
        assert decode_subscription(data)["_sub_offsets"] == [
            {"task_id": "0_0", "offset_sum": -2}, {"task_id": "0_2", "offset_sum": 7},
            {"task_id": "3_0", "offset_sum": 2**62}, {"task_id": "3_1", "offset_sum": 9}]
    both = decode_subscriptions([_hand_made(10, groups), None, _hand_made(9, groups[:2])])
    assert both.member.tolist() == [0, 0, 0, 0, 2, 2, 2]
    assert both.task_ids.to_pylist() == ["0_0", "0_2", "3_0", "3_1", "0_2", "3_0", "3_1"]


def test_process_ids_read_as_uuid_text() -> None:
    from uuid import UUID

    from taskassign.fleet.subscriptions import _uuid_text

    rng = random.Random(5)
    halves = [(0, 0), (2**64 - 1, 2**64 - 1), (1, 2**63)] + [(rng.getrandbits(64), rng.getrandbits(64))
                                                            for _ in range(2000)]
    for most, least in halves:
        assert _uuid_text(most, least) == str(UUID(int=most << 64 | least))
