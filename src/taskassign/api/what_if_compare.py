"""``taskassign compare`` with one assignor and a what-if: the input as it is against the altered input, through
the same assignor (once, or through the same simulation), as a before -> after diff (``analysis.diff``) and, side by
side, the two runs' metrics and totals (``analysis.compare``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from taskassign.analysis.compare import Comparison, RunTotals
from taskassign.analysis.diff import AssignmentDiff, diff_assignments
from taskassign.api.compare import AssignorRun, compare, simulation_totals
from taskassign.assignors.registry import ResolvedAssignor, resolve
from taskassign.formats.events import EventsFile
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, KafkaStreamsAssignment
from taskassign.simulate import RebalanceRecord

__all__ = ("AS_IS", "WHAT_IF", "WhatIfComparison", "compare_what_if")

#: Column names of the two runs.
AS_IS, WHAT_IF = "as is", "what-if"


@dataclass(frozen=True, slots=True)
class WhatIfComparison:
    """One assignor on the input as it is (``before``) and on the altered input (``after``)."""

    assignor: str
    notes: tuple[str, ...]
    before: AssignorRun
    after: AssignorRun
    diff: AssignmentDiff
    comparison: Comparison
    #: The application the after run's (last) assignment was made for: its sizes tell bytes from store counts.
    after_state: ApplicationState

    @property
    def failed(self) -> bool:
        return self.before.error != "NONE" or self.after.error != "NONE"

    def to_document(self) -> dict[str, Any]:
        """``{"assignor", "what_if": [...], "diff": <assignment-diff/v1>, "assignors": {"as is": ..., "what-if":
        ...}, "best": ...}``: the diff and the side-by-side comparison, full values."""
        doc = self.comparison.to_dict()
        for run, name in ((self.before, AS_IS), (self.after, WHAT_IF)):
            doc["assignors"][name]["error"] = run.error
        return {"assignor": self.assignor, "what_if": list(self.notes), "diff": self.diff.to_document(), **doc}


def compare_what_if(
    original: Scenario, altered: Scenario, notes: tuple[str, ...], spec: ResolvedAssignor | str, *,
    events: EventsFile | None = None,
    seed: int | None = None, on_rebalance: Callable[[str, RebalanceRecord], None] | None = None,
) -> WhatIfComparison:
    """Run ``spec`` on ``original`` and on ``altered`` (``events``: the same simulation on both) and diff the
    (last) assignments; the after side's data to move is priced on the application it was made for."""
    assignor = resolve(spec)
    before = compare(original, (assignor,), events=events, seed=seed, on_rebalance=on_rebalance).runs[0]
    after = compare(altered, (assignor,), events=events, seed=seed, on_rebalance=on_rebalance).runs[0]
    after_state = _last_state(after, altered)
    diff = diff_assignments(_last_assignment(before), _last_assignment(after), state=after_state,
                            before_metrics=before.metrics, after_metrics=after.metrics)
    metrics = {AS_IS: before.metrics.to_dict() if before.metrics else {},
               WHAT_IF: after.metrics.to_dict() if after.metrics else {}}
    totals: dict[str, RunTotals] = {}
    if before.simulation is not None and after.simulation is not None:
        totals = {AS_IS: simulation_totals(before.simulation), WHAT_IF: simulation_totals(after.simulation)}
    return WhatIfComparison(before.name, notes, before, after, diff, Comparison(metrics, totals), after_state)


def _last_assignment(run: AssignorRun) -> dict[ProcessId, KafkaStreamsAssignment]:
    result = run.result if run.simulation is None else run.simulation.last_result
    return dict(result.group.clients) if result is not None else {}


def _last_state(run: AssignorRun, scenario: Scenario) -> ApplicationState:
    return run.simulation.last_state if run.simulation is not None else scenario.state
