"""The verdict that ends ``compare``, ``streams-migration`` and every what-if (``analysis.verdict``): the better
option and why, the risks, what to run next."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from taskassign.analysis.verdict import Verdict

__all__ = ("verdict_text",)


def verdict_text(verdict: Verdict) -> RenderableType:
    """A few lines, each wrapping under its own text: the headline, the deciding metrics with every option's
    value, the risks, the next steps."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    grid.add_row("verdict", Text(verdict.headline, style="bold green" if verdict.better else "bold"))
    for reason in verdict.reasons:
        grid.add_row("why", reason)
    for risk in verdict.risks:
        grid.add_row("risk", Text(risk, style="yellow"))
    if not verdict.risks:
        grid.add_row("risk", Text("none found (racks, zones, standbys, capacity, probing rebalances)", style="green"))
    for step in verdict.next_steps:
        grid.add_row("next", Text(step, style="cyan"))
    return grid
