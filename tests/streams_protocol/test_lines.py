"""The streams-group ``sticky`` assignor of each Kafka line against that line's outputs
(tests/golden/streams_group_lines/<line>/, README there): every input of tests/golden/streams_group and every
targeted case, on every line; an input without an output in a line's folder gives the pinned output.

4.1 breaks ties between equally loaded processes by the JVM's identity hash codes (``sticky41``): Kafka's
run of a golden drew them from a point of its thread's stream that the golden does not record, so the
4.1 goldens with such ties are expected to differ (strict xfail: a list kept honest). 4.1's logic is
checked instead on outputs of its class computed on a known stream (``4.1-jvm/outputs.json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taskassign.errors import StreamsAssignorError
from taskassign.streams_protocol import assignment_document, parse_streams_group, read_streams_group, run_assignor
from taskassign.streams_protocol.lines import (
    DEFAULT_STREAMS_LINE,
    KAFKA_20719_PROPOSED,
    STREAMS_LINES,
    StreamsProtocolError,
)
from taskassign.streams_protocol.model import StreamsGroup, Subtopology
from taskassign.streams_protocol.sticky import assign_sticky
from taskassign.streams_protocol.sticky41 import IdentityHashes, assign_sticky_41
from tests.helpers import GOLDEN_DIR

PINNED = GOLDEN_DIR / "streams_group"
LINES = GOLDEN_DIR / "streams_group_lines"
#: Inputs Kafka's line did not finish (4.1's task pairs are quadratic): no output to compare with.
UNFINISHED = {("4.1", "sticky_large_6000t_2m_cold")}
#: 4.1 goldens whose ties fell to identity hashes drawn where taskassign cannot know (module docstring).
IDENTITY_TIES_41 = frozenset({
    "sticky_chain_base_3m_s2", "sticky_chain_join", "sticky_chain_join_same_process", "sticky_chain_owner_left_s2",
    "sticky_chain_replace_member", "sticky_cold_1sub_4p_2m", "sticky_cold_more_members_than_tasks",
    "sticky_cold_standby0_4proc", "sticky_cold_standby1_2proc_x3", "sticky_cold_standby2_2proc",
    "sticky_cold_standby2_2proc_x3", "sticky_cold_stateless_only", "sticky_cold_uneven_3m",
    "sticky_hash_colliding_process_ids_cold", "sticky_k20719_restart_fresh_ids_offsets",
    "sticky_k20899_two_standbys_busy_second", "sticky_large_1000t_1000m_cold", "sticky_large_1000t_100m_cold",
    "sticky_racks_tags", "sticky_random_01", "sticky_random_03", "sticky_random_07", "sticky_random_09",
    "sticky_random_10", "sticky_random_12", "sticky_random_13", "sticky_random_16", "sticky_random_18",
    "sticky_restart_offsets_only", "sticky_restart_offsets_only_s1", "sticky_string_subtopology_ids",
    "sticky_warmup_in_prev",
})
JVM_41 = json.loads((LINES / "4.1-jvm" / "outputs.json").read_text(encoding="utf-8"))


def _names(folder: Path, suffix: str) -> set[str]:
    return {p.name.removesuffix(suffix) for p in folder.glob(f"sticky_*{suffix}")}


def cases() -> list[tuple[str, str]]:
    pinned = _names(PINNED, ".input.json")
    return [(line, name) for line in STREAMS_LINES
            for name in sorted(pinned | _names(LINES / line, ".output.json"))
            if (line, name) not in UNFINISHED]


def paths(line: str, name: str) -> tuple[Path, Path]:
    """The input and the expected output of ``name`` on ``line``."""
    folder = LINES / line
    source = folder / f"{name}.input.json"
    expected = folder / f"{name}.output.json"
    return (source if source.exists() else PINNED / f"{name}.input.json",
            expected if expected.exists() else PINNED / f"{name}.output.json")


def output_of(path: Path, line: str) -> dict[str, object]:
    group = read_streams_group(path)
    try:
        return assignment_document(group.assignor, run_assignor(group, kafka_line=line))
    except StreamsAssignorError as exc:
        return assignment_document(group.assignor, exc)


CASES = cases()
PARAMS = [pytest.param(line, name, id=f"{line}-{name}", marks=pytest.mark.xfail(
    reason="4.1: a tie broken by identity hashes from an unknown point of the JVM's stream", strict=True))
    if line == "4.1" and name in IDENTITY_TIES_41 else pytest.param(line, name, id=f"{line}-{name}")
    for line, name in CASES]


def test_every_line_has_its_cases() -> None:
    per_line = {line: sum(1 for c in CASES if c[0] == line) for line in STREAMS_LINES}
    assert per_line == {"4.1": 40, "4.2": 44, "4.3": 44, "4.4": 44, "trunk": 44}


@pytest.mark.parametrize(("line", "name"), PARAMS)
def test_line_golden(line: str, name: str) -> None:
    source, expected_path = paths(line, name)
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    got = output_of(source, line)
    assert got["error"] == expected["error"]
    if expected["members"] is None:
        assert got["members"] is None
        return
    assert got["members"] == expected["members"]


@pytest.mark.parametrize("name", sorted(JVM_41))
def test_41_on_a_known_identity_hash_stream(name: str) -> None:
    """Kafka 4.1's class run in a JDK 17 JVM whose main thread had drawn ``skip`` identity hashes when the
    assignor started: the same output from the same stream."""
    case = JVM_41[name]
    source = LINES / "4.1" / f"{name}.input.json"
    group = read_streams_group(source if source.exists() else PINNED / f"{name}.input.json")
    try:
        got = assignment_document("sticky", assign_sticky_41(group, IdentityHashes(skip=case["skip"])))
    except StreamsAssignorError as exc:
        assert f"{exc.java_type}: {exc.message}" == case["error"]
        return
    assert got["members"] == case["members"]


def test_identity_hashes_are_hotspots() -> None:
    """A JDK 17 main thread's first identity hashes (``System.identityHashCode(new Object())`` in ``main``
    after the 7 that JVM start-up draws)."""
    hashes = IdentityHashes(skip=7)
    assert [hashes.next() for _ in range(6)] == [2060468723, 622488023, 1933863327, 112810359, 2124308362,
                                                 146589023]


@pytest.mark.parametrize("line", ["3.9", "4.0"])
def test_lines_without_streams_groups_are_refused(line: str) -> None:
    group = read_streams_group(PINNED / "sticky_chain_join.input.json")
    with pytest.raises(StreamsProtocolError, match=rf"Kafka {re.escape(line)} has no streams groups"):
        assign_sticky(group, line)
    with pytest.raises(StreamsProtocolError, match=rf"Kafka {re.escape(line)} has no streams groups"):
        run_assignor(group, "balanced", kafka_line=line)


def test_unknown_line_is_refused() -> None:
    group = read_streams_group(PINNED / "sticky_chain_join.input.json")
    with pytest.raises(StreamsProtocolError, match=r"unknown Kafka line '5\.0'"):
        assign_sticky(group, "5.0")


def test_default_is_the_newest_release_line() -> None:
    assert DEFAULT_STREAMS_LINE == "4.4"
    group = read_streams_group(LINES / "4.4" / "sticky_hash_colliding_process_ids_cold.input.json")
    assert assign_sticky(group) == assign_sticky(group, "4.4") != assign_sticky(group, "4.3")
    assert run_assignor(group) == assign_sticky(group, "4.4")


def test_the_proposed_kafka_20719_form_is_only_asked_for_by_name() -> None:
    assert KAFKA_20719_PROPOSED not in STREAMS_LINES
    group = read_streams_group(LINES / "4.4" / "sticky_hash_colliding_process_ids_cold.input.json")
    assert assign_sticky(group, KAFKA_20719_PROPOSED) != assign_sticky(group)


def test_41_fails_on_the_actives_before_reading_the_configs() -> None:
    """4.1 places actives before it parses ``num.standby.replicas`` and names the task by the record's
    ``toString``; 4.2 parses first; 4.4 reads a missing key as 0."""
    group = StreamsGroup("g", (Subtopology("0", 2, True),), (), {"other.config": "1"})
    expected = {
        "4.1": ("TaskAssignorException",
                "No member available to assign active task {}.TaskId[subtopologyId=0, partition=0]"),
        "4.2": ("NumberFormatException", "Cannot parse null string"),
        "4.4": ("TaskAssignorException", "No process available to assign active task 0_0."),
    }
    for line, (java_type, message) in expected.items():
        with pytest.raises(StreamsAssignorError) as caught:
            assign_sticky(group, line)
        assert (caught.value.java_type, caught.value.message) == (java_type, message), line


RANDOM_41 = json.loads((LINES / "4.1-jvm" / "random.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(RANDOM_41))
def test_41_on_seeded_random_groups(name: str) -> None:
    """Seeded random groups (previous tasks in every role, colliding process ids, 0-2 standbys) through 4.1's
    class on a known identity-hash stream, and through taskassign's port on the same stream."""
    case = RANDOM_41[name]
    group = parse_streams_group(case["input"], default_name=name)
    try:
        got = assignment_document("sticky", assign_sticky_41(group, IdentityHashes(skip=case["skip"])))
    except StreamsAssignorError as exc:
        assert f"{exc.java_type}: {exc.message}" == case["error"]
        return
    assert got["members"] == case["members"]
