"""Rich renderables of a pipeline run's fleet-wide tables: the fleet metrics (sums only where a sum means
something), the needs-attention view and a comparison run's assignor comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from taskassign.cli._common import new_table
from taskassign.formats.units import human_count

__all__ = ("attention_table", "comparison_table", "fleet_metrics_table", "number")


def number(value: float | None) -> str:
    """A table cell in human units: ``-`` for none, counts and large values abbreviated (12.3 M; a p90 between
    two counts is a count too), small fractions with up to three decimals. The Parquet keeps the full value."""
    if value is None:
        return "-"
    if float(value).is_integer() or abs(value) >= 1_000:
        return human_count(round(value))
    return human_count(float(value))


def _table(title: str, columns: Sequence[str], left: Sequence[int] = (0,)) -> Table:
    """A plain table; the columns at positions ``left`` are text (left-aligned), the others numbers."""
    table = new_table(title=title, title_justify="left")
    for position, column in enumerate(columns):
        table.add_column(column, justify="left" if position in left else "right")
    return table


def fleet_metrics_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """fleet_metrics rows: the sum of additive metrics (counts), the distribution of all (p50, p90, max); a
    skew or imbalance has no sum (``-``)."""
    table = _table("fleet metrics (over assigned applications; sums only of counts)", ("metric", "sum", "p50",
                                                                                        "p90", "max"))
    for row in rows:
        table.add_row(row["metric"], *(number(row.get(c)) for c in ("sum", "p50", "p90", "max")))
    return table


def attention_table(rows: Sequence[Mapping[str, Any]], limit: int) -> Table:
    """needs_attention rows, grouped by metric, worst first."""
    table = _table(f"needs attention (the {limit} worst per metric)", ("metric", "rank", "application", "status",
                                                                         "value"), left=(0, 2, 3))
    table.columns[2].overflow = "fold"  # an application's name wraps, never cut
    previous = None
    for row in rows:
        shown = row["metric"] if row["metric"] != previous else ""
        previous = row["metric"]
        table.add_row(shown, str(row["rank"]), row["app_id"], row["status"] or "", number(row["value"]))
    if not rows:
        table.add_row(Text("nothing: no application is over a threshold", style="green"), "", "", "", "")
    return table


def comparison_table(rows: Sequence[Mapping[str, Any]], assignors: Sequence[str]) -> Table:
    """assignor_comparison rows as one line per metric: applications each assignor wins alone, ties, and each
    other assignor's difference from the first (p50, p90; negative: lower, which is better)."""
    baseline, others = assignors[0], assignors[1:]
    letter = {a: chr(ord("A") + i) for i, a in enumerate(assignors)}  # names in the key: columns fit 80
    columns = ["metric (lower is better)", "apps", *(f"{letter[a]} wins" for a in assignors), "ties"]
    for other in others:
        columns += [f"{letter[other]}-{letter[baseline]} p50", "p90"]
    key = "; ".join(f"{letter[a]} = {a}" for a in assignors)
    table = _table(f"assignor comparison ({key}; p50/p90: of the differences per application)", columns)
    by_metric: dict[str, dict[str, Mapping[str, Any]]] = {}
    for row in rows:
        by_metric.setdefault(row["metric"], {})[row["assignor"]] = row
    for metric, per in by_metric.items():
        apps = int(per[baseline]["apps"])
        tied = apps - sum(int(r["wins"]) for r in per.values())  # an application has one sole winner, or a tie
        cells: list[str | Text] = [metric, f"{apps:,}", *(_wins(per, a) for a in assignors), f"{tied:,}"]
        for other in others:
            cells += [_diff(per[other]["diff_p50"]), _diff(per[other]["diff_p90"])]
        table.add_row(*cells)
    return table


def _wins(per: Mapping[str, Mapping[str, Any]], assignor: str) -> Text:
    wins = int(per[assignor]["wins"])
    most = max(int(r["wins"]) for r in per.values())
    return Text(f"{wins:,}", style="bold green" if wins and wins == most else "")


def _diff(value: float | None) -> Text:
    if value is None:
        return Text("-")
    text = "0" if value == 0 else f"{int(value):+,}" if float(value).is_integer() else f"{value:+,.2f}"
    return Text(text, style="green" if value < 0 else "red" if value > 0 else "")
