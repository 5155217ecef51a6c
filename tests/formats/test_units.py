"""Human units for text output."""

from __future__ import annotations

import pytest

from taskassign.formats.units import human_bytes, human_count, human_duration, relative_deadline, short_ids
from taskassign.ids import ProcessId


@pytest.mark.parametrize(("value", "text"), [
    (0, "0 B"), (512, "512 B"), (40_000_000, "40.0 MB"), (5_000_000_000, "5.0 GB"), (123_456_789_012, "123 GB"),
    (2_500_000_000_000, "2.5 TB"),
])
def test_bytes(value: int, text: str) -> None:
    assert human_bytes(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (0, "0"), (1234, "1,234"), (99_999, "99,999"), (12_345_678, "12.3 M"), (1.25, "1.25"), (2.0, "2"),
])
def test_counts(value: float, text: str) -> None:
    assert human_count(value) == text


@pytest.mark.parametrize(("ms", "text"), [
    (350, "350 ms"), (12_300, "12.3 s"), (270_000, "4 min 30 s"), (2_700_000, "45 min"), (74_160_000, "20.6 h"),
    (4 * 86_400_000, "4.0 d"),
])
def test_durations(ms: int, text: str) -> None:
    assert human_duration(ms) == text


def test_deadlines_are_relative_to_the_leaders_clock() -> None:
    assert relative_deadline(None, 10) == "-"
    assert relative_deadline(1_700_000_600_000, 1_700_000_000_000) == "in 10 min"
    assert relative_deadline(1_700_000_000_000, 1_700_000_000_000) == "now"
    assert relative_deadline(1_699_999_995_000, 1_700_000_000_000) == "5.0 s ago"


def test_short_ids_stay_unique() -> None:
    a, b = ProcessId("00000000-0000-0000-0000-000000000001"), ProcessId("00000000-0000-0000-0000-000000000002")
    c = ProcessId("1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11")
    short = short_ids([a, b, c])
    assert short[c] == "1b6f8a52"
    assert short[a] == str(a) and short[b] == str(b)  # they differ only in the last digit
    assert len(set(short.values())) == 3
