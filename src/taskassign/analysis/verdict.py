"""A bottom line for a choice between assignments (``compare``, ``streams-migration``, every what-if): which option
is better for this application and why, the risks each one carries, and what to do next.

Options are ranked on a fixed order of what an operator loses first: a valid assignment, every task running,
the standbys Kafka promises, copies spread over racks and zones, no client above its share, then the data the
change restores, then balance and cross-rack traffic. The first metric on which the options differ decides; it
and the next differing ones (up to three) are the reasons, each with every option's value. Risks are read from
each option's metrics and per-client rows (``AssignmentMetrics``), named with the clients' names
(``formats.client_names``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from taskassign.analysis.metrics import AssignmentMetrics
from taskassign.formats.units import human_count, human_duration
from taskassign.ids import ProcessId

__all__ = ("RANKING", "Option", "ProbingOutlook", "Verdict", "over_capacity", "verdict")

Number = int | float

#: The order options are ranked in (metric, lower is better), and how a reason names the metric.
RANKING: tuple[tuple[str, str], ...] = (
    ("invalid", "invalid assignment"),
    ("unassigned_tasks", "tasks without an active"),
    ("standby_shortfall_tasks", "tasks short of standbys"),
    ("rack_colocated_tasks", "tasks with all copies in one rack"),
    ("tag_colocated_tasks", "tasks with all copies in one zone (client tag)"),
    ("clients_over_capacity", "clients over capacity"),
    ("records_to_restore", "records to restore"),
    ("total_load_skew", "load skew per thread"),
    ("cross_rack_cost", "cross-rack traffic cost"),
    ("standby_pile_up", "standby pile-up"),
    ("active_moves", "actives moved"),
)
#: A standby pile-up from this ratio on is a risk (one client holds twice the median client's standbys).
PILE_UP_RISK = 2.0
MAX_REASONS = 3


@dataclass(frozen=True, slots=True)
class ProbingOutlook:
    """The probing rebalances an option leaves ahead: ``rounds`` follow-ups if every warm-up catches up within one
    ``probing.rebalance.interval.ms`` (a lower bound on the time), ``warmups`` placed now."""

    rounds: int
    interval_ms: int
    warmups: int
    max_warmup_replicas: int
    converged: bool = True

    def text(self) -> str:
        more = "" if self.converged else " or more"
        warmups = (f"; {self.warmups} warm-up(s) now, at most {self.max_warmup_replicas} at a time "
                   "(max.warmup.replicas)") if self.warmups else ""
        return (f"{self.rounds}{more} probing rebalance(s) ahead, one every {human_duration(self.interval_ms)} "
                f"(probing.rebalance.interval.ms): at least {human_duration(self.rounds * self.interval_ms)} "
                f"until the assignment settles{warmups}")


@dataclass(frozen=True, slots=True)
class Option:
    """One side of the choice: its name, its metrics (None when it has none), its error and what follows it."""

    name: str
    metrics: AssignmentMetrics | None
    error: str = "NONE"
    probing: ProbingOutlook | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The bottom line: ``better`` (None when no option is better), ``reasons`` (the deciding metrics and their
    values), ``risks`` (per option), ``next_steps`` (commands to run)."""

    better: str | None
    headline: str
    reasons: tuple[str, ...]
    risks: tuple[str, ...]
    next_steps: tuple[str, ...] = ()
    deciding: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"better": self.better, "headline": self.headline, "deciding_metrics": list(self.deciding),
                "reasons": list(self.reasons), "risks": list(self.risks), "next_steps": list(self.next_steps)}


def over_capacity(metrics: AssignmentMetrics) -> tuple[ProcessId, ...]:
    """Clients running more actives than their threads' share: ceil(threads x actives / all threads)."""
    rows = metrics.client_metrics
    threads = sum(r.threads for r in rows)
    actives = sum(r.active for r in rows)
    if not threads:
        return ()
    return tuple(r.process_id for r in rows if r.active > math.ceil(r.threads * actives / threads))


def _values(option: Option) -> dict[str, Number] | None:
    if option.metrics is None:
        return None
    values: dict[str, Number] = dict(option.metrics.to_dict())
    values["invalid"] = 0 if option.error == "NONE" else 1
    values["clients_over_capacity"] = len(over_capacity(option.metrics))
    return values


def _show(value: Number) -> str:
    return human_count(value) if not isinstance(value, float) or value != int(value) else f"{value:.1f}"


def verdict(options: Sequence[Option], names: Mapping[ProcessId, str] | None = None, *,
            next_steps: Sequence[str] = (), subject: str = "option") -> Verdict:
    """Rank ``options`` (``RANKING``), give the deciding metrics and every option's risks."""
    measured = [(o, v) for o in options if (v := _values(o)) is not None]
    risks = tuple(r for o in options for r in _risks(o, names or {}))
    if len(measured) < 2:
        return Verdict(None, f"no {subject} to weigh against another (a run has no metrics)", (), risks,
                       tuple(next_steps))
    deciding = [(key, label) for key, label in RANKING
                if len({v.get(key) for _, v in measured if v.get(key) is not None}) > 1]
    if not deciding:
        return Verdict(None, f"no {subject} is better: every ranked metric is equal", (), risks, tuple(next_steps))
    ranked = sorted(measured, key=lambda ov: tuple(ov[1].get(k, 0) for k, _ in deciding))
    best, best_values = ranked[0]
    key, label = deciding[0]
    tied = [o.name for o, v in measured if v.get(key) == best_values.get(key)]
    reasons = tuple(f"{k} ({lab}): " + ", ".join(f"{o.name} {_show(v[k])}" for o, v in measured)
                    for k, lab in deciding[:MAX_REASONS])
    others = [name for name in tied if name != best.name]
    why = f"fewest {label}" if not others else \
        f"fewest {label} (as {', '.join(others)}), then fewest {deciding[1][1] if len(deciding) > 1 else label}"
    return Verdict(best.name, f"{best.name} is better for this application: {why}", reasons, risks,
                   tuple(next_steps), tuple(k for k, _ in deciding[:MAX_REASONS]))


def _risks(option: Option, names: Mapping[ProcessId, str]) -> list[str]:
    m = option.metrics
    out: list[str] = []
    if option.error != "NONE":
        out.append(f"{option.name}: the assignment is invalid ({option.error})")
    if m is None:
        return out
    if m.unassigned_tasks:
        out.append(f"{option.name}: {m.unassigned_tasks} task(s) without an active")
    if m.rack_colocated_tasks:
        out.append(f"{option.name}: all copies of {m.rack_colocated_tasks} task(s) in one rack (losing that rack "
                   "loses their state)")
    if m.tag_colocated_tasks:
        out.append(f"{option.name}: all copies of {m.tag_colocated_tasks} task(s) share a zone "
                   "(rack.aware.assignment.tags)")
    if m.standby_shortfall_tasks:
        out.append(f"{option.name}: {m.standby_shortfall_tasks} task(s) short of standbys "
                   f"({m.missing_standby_replicas} replica(s) missing)")
    over = over_capacity(m)
    if over:
        shown = ", ".join(names.get(p, str(p)[:8]) for p in over[:4]) + (" ..." if len(over) > 4 else "")
        out.append(f"{option.name}: {len(over)} client(s) over capacity, more actives than their threads' share "
                   f"({shown})")
    if m.standby_pile_up >= PILE_UP_RISK:
        out.append(f"{option.name}: standby pile-up {m.standby_pile_up:.1f} (one client holds "
                   f"{m.standby_pile_up:.1f}x the median client's standbys per thread)")
    if option.probing is not None and option.probing.rounds:
        out.append(f"{option.name}: {option.probing.text()}")
    return out
