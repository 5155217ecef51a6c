from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskassign.errors import ProcessIdFormatError, TaskIdFormatError
from taskassign.ids import ProcessId, TaskId, java_string_hash


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0_1", TaskId(0, 1)), ("12_345", TaskId(12, 345)), ("topo__3_4", TaskId(3, 4, "topo")),
     ("a_b__1_2", TaskId(1, 2, "a_b"))],
)
def test_task_id_parses_and_prints_back(text: str, expected: TaskId) -> None:
    parsed = TaskId.parse(text)
    assert parsed == expected
    assert str(parsed) == text


@pytest.mark.parametrize("text", ["", "0", "0_", "_1", "a_1", "0_1_2", "-1_0", "0_-1", "0 _1", "x__", "99999999999_0"])
def test_task_id_parse_errors_name_the_text(text: str) -> None:
    with pytest.raises(TaskIdFormatError, match="does not parse") as info:
        TaskId.parse(text)
    assert repr(text) in str(info.value)


def test_task_id_order_is_subtopology_then_partition() -> None:
    ids = [TaskId.parse(t) for t in ["1_0", "0_10", "0_2", "10_0", "2_1"]]
    assert [str(t) for t in sorted(ids)] == ["0_2", "0_10", "1_0", "2_1", "10_0"]


def test_named_and_unnamed_task_ids_are_not_comparable() -> None:
    with pytest.raises(TypeError):
        sorted([TaskId(0, 1), TaskId(0, 0, "t")])
    assert sorted([TaskId(0, 1, "b"), TaskId(5, 5, "a")]) == [TaskId(5, 5, "a"), TaskId(0, 1, "b")]


def test_empty_topology_name_is_normalised_to_none() -> None:
    assert TaskId(1, 2, "") == TaskId(1, 2)
    assert TaskId(1, 2, "").topology_name is None


def test_task_id_java_hash() -> None:
    assert TaskId(0, 0).java_hash() == 29791
    assert TaskId(1, 2).java_hash() == 29791 + 961 + 62
    assert TaskId(0, 0, "ab").java_hash() == 29791 + java_string_hash("ab")
    assert java_string_hash("ab") == 97 * 31 + 98


def test_process_id_orders_like_java_uuid_signed_halves() -> None:
    high = ProcessId("80000000-0000-0000-0000-000000000000")  # negative msb
    low = ProcessId("00000000-0000-0000-0000-000000000001")
    lsb_negative = ProcessId("00000000-0000-0000-8000-000000000000")
    assert sorted([low, high, lsb_negative]) == [high, lsb_negative, low]


def test_process_id_of_ints_and_hash() -> None:
    pid = ProcessId.of_ints(0, 7)
    assert str(pid) == "00000000-0000-0000-0000-000000000007"
    assert pid.java_hash() == 7
    assert ProcessId.of_ints(5, 0).java_hash() == 5


@pytest.mark.parametrize("value", ["not-a-uuid", "", "0000000000000000000000000000000g", 12])
def test_bad_process_ids_raise(value: object) -> None:
    with pytest.raises(ProcessIdFormatError, match="not a UUID"):
        ProcessId(value)  # type: ignore[arg-type]


@given(st.uuids(), st.lists(st.booleans(), min_size=36, max_size=36))
def test_process_id_from_text_is_the_uuids(value: object, upper: list[bool]) -> None:
    """A process id parsed from its text (in any letter case) holds what it holds made from the uuid.UUID."""
    import uuid

    assert isinstance(value, uuid.UUID)
    text = "".join(c.upper() if u else c for c, u in zip(str(value), upper, strict=True))
    parsed, made = ProcessId(text), ProcessId(value)
    assert tuple(parsed) == tuple(made) and type(parsed[2]) is str
    assert (parsed.msb, parsed.lsb, str(parsed), parsed.id, parsed.java_hash()) == (
        made.msb, made.lsb, str(made), value, made.java_hash())


def test_ids_pickle_round_trip() -> None:
    for value in (TaskId(3, 4), TaskId(1, 2, "t"), ProcessId.of_ints(1, 2)):
        assert pickle.loads(pickle.dumps(value)) == value


def test_java_string_hash_of_unpaired_surrogates_is_javas() -> None:
    # "\ud800".hashCode() == 0xD800 and "a\udc00b".hashCode() in Java: a lone code unit hashes as itself.
    assert java_string_hash("\ud800") == 0xD800
    assert java_string_hash("a\udc00b") == (97 * 31 + 0xDC00) * 31 + 98


@given(st.text(st.characters(exclude_categories=()), max_size=40))
def test_java_string_hash_is_the_utf16_polynomial(text: str) -> None:
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    assert java_string_hash(text) == (h - (1 << 32) if h >= 1 << 31 else h)



@pytest.mark.parametrize("text", [
    "0000000g-0000-0000-0000-000000000000", "0000000 -0000-0000-0000-000000000000",
    "000000_0-0000-0000-0000-000000000000", "+0000000-0000-0000-0000-000000000000",
    "0000000é-0000-0000-0000-000000000000", "00000000-0000-0000-0000-00000000000-",
    "-0000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000\n",
    "00000000-0000-0000-0000-00000000000\n", "00000000_0000-0000-0000-000000000000",
    "0x000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-0000000000 0"])
def test_texts_shaped_like_uuids_but_not_are_refused(text: str) -> None:
    """The 8-4-4-4-12 text is read without the regular expression: a text of that shape with a character that is no
    hex digit (a sign, a space, an underscore, a dash too many, a line break) is refused all the same (a line
    break after the text too: it raised uuid's ValueError before)."""
    with pytest.raises(ProcessIdFormatError, match="not a UUID"):
        ProcessId(text)


def test_uuid_texts_read_as_uuid_does() -> None:
    """Every kind of digit in every position, both cases: the text's ProcessId is the uuid.UUID's."""
    import random
    import uuid

    rng = random.Random(11)
    for _ in range(2000):
        digits = [rng.choice("0123456789abcdefABCDEF" if rng.random() < 0.9 else "0f8F7") for _ in range(32)]
        text = "-".join("".join(digits[a:b]) for a, b in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32)))
        parsed, made = ProcessId(text), ProcessId(uuid.UUID(text))
        assert tuple(parsed) == tuple(made) and str(parsed) == text.lower()
