"""Human units for text output: bytes as MB/GB, durations, deadlines relative to the leader's clock, short
process ids, large counts abbreviated. Text renderers only: JSON and Parquet keep the full values.

One module so that every table says "5.0 GB" and "in 10 min" the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise

from taskassign.ids import ProcessId

__all__ = (
    "SHORT_ID_LENGTH",
    "human_bytes",
    "human_count",
    "human_duration",
    "relative_deadline",
    "short_ids",
    "shortest_prefixes",
)

#: Characters of a process id shown in text (git's abbreviation idea: more when two ids share them).
SHORT_ID_LENGTH = 8
_BYTE_UNITS = (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3))
_COUNT_UNITS = (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def _scaled(value: float, units: tuple[tuple[str, int], ...]) -> str | None:
    for name, size in units:
        if abs(value) >= size:
            scaled = value / size
            return f"{scaled:.1f} {name}" if abs(scaled) < 100 else f"{scaled:,.0f} {name}"
    return None


def human_bytes(value: float) -> str:
    """``5000000000`` -> ``"5.0 GB"``, ``40000000`` -> ``"40.0 MB"``, ``512`` -> ``"512 B"`` (SI units, as disks
    and Kafka's broker metrics count)."""
    scaled = _scaled(value, _BYTE_UNITS)
    return scaled if scaled is not None else f"{value:,.0f} B"


def human_count(value: float) -> str:
    """Counts such as records: ``1234`` stays ``"1,234"``, ``12345678`` -> ``"12.3 M"``; fractions keep three
    significant decimals (``1.234``)."""
    if isinstance(value, float) and value != int(value):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    if abs(value) < 100_000:
        return f"{int(value):,}"
    scaled = _scaled(value, _COUNT_UNITS)
    return scaled if scaled is not None else f"{int(value):,}"


def human_duration(ms: float) -> str:
    """``350`` -> ``"350 ms"``, ``12_300`` -> ``"12.3 s"``, ``2_700_000`` -> ``"45 min"``, ``74_160_000`` ->
    ``"20.6 h"``, three days and more in days."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    if ms < 1_000:
        return f"{sign}{ms:.0f} ms"
    if ms < 60_000:
        return f"{sign}{ms / 1000:.1f} s"
    if ms < 3_600_000:
        minutes, seconds = divmod(round(ms / 1000), 60)
        return f"{sign}{minutes} min" + (f" {seconds} s" if seconds and minutes < 10 else "")
    if ms < 3 * 86_400_000:
        return f"{sign}{ms / 3_600_000:.1f} h"
    return f"{sign}{ms / 86_400_000:.1f} d"


def relative_deadline(deadline_ms: int | None, now_ms: int) -> str:
    """A follow-up deadline against the leader's clock: ``"in 10 min"``, ``"now"``, ``"5.0 s ago"``; ``"-"`` for
    none."""
    if deadline_ms is None:
        return "-"
    delta = deadline_ms - now_ms
    if delta == 0:
        return "now"
    return f"in {human_duration(delta)}" if delta > 0 else f"{human_duration(-delta)} ago"


def short_ids(pids: Iterable[ProcessId]) -> Mapping[ProcessId, str]:
    """Each process id's shortest prefix of at least ``SHORT_ID_LENGTH`` characters that no other id shares."""
    ordered = sorted((str(pid), pid) for pid in set(pids))
    prefixes = shortest_prefixes(text for text, _ in ordered)
    return {pid: prefixes[text] for text, pid in ordered}


def shortest_prefixes(texts: Iterable[str]) -> dict[str, str]:
    """Each text's shortest prefix of at least ``SHORT_ID_LENGTH`` characters that no other text starts with:
    one longer than the longest prefix it shares with another text, which a sorted neighbour shares (no scan of
    every other text: a streams group names 10^4 members)."""
    ordered = sorted(set(texts))
    shared = dict.fromkeys(ordered, 0)
    for before, after in pairwise(ordered):
        common = _common_prefix_length(before, after)
        shared[before] = max(shared[before], common)
        shared[after] = max(shared[after], common)
    return {text: text[:max(SHORT_ID_LENGTH, length + 1)] for text, length in shared.items()}


def _common_prefix_length(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
