"""The engine side of ``taskassign check-assignor``: an assignor (typically a plug-in) run through the group
leader on many applications, each result held to Kafka's rules.

Per application (a shipped scenario or group file, or a random one: ``api.random_applications``), the
assignor runs twice, as Kafka's leader runs it (``leader.assign.assign_scenario``: a fresh, configured
instance each time). What fails the check:

* ``raised``: the assignor raised (a ``TaskAssignmentException`` is KIP-924's way to keep the previous
  assignment, so it is noted, not failed: ``gave_up``);
* ``invalid``: Kafka's ``validateTaskAssignment`` rejects the output (``validation.py``): Kafka's leader
  would fail the rebalance;
* ``unassigned``: tasks without an active owner; ``standbys``: changelog tasks with fewer standbys than
  ``min(num.standby.replicas, clients - 1)`` (the completeness report Kafka lacks; ``assign --strict``);
* ``deterministic``: the second run's assignment file differs from the first's (same input, same output).

Noted, not failed (Kafka's own assignors reach these only after convergence, or not at all):
``balance`` (``analysis.invariants.balance_problems``: P5-P7 of Kafka's verifyBalancedAssignment),
``warmups`` (more standbys beyond ``num.standby.replicas`` than ``max.warmup.replicas`` allows),
``pile_up`` (``analysis.invariants.standby_pile_up_problems``: one client holds far more standbys than the
median client, as Kafka's standby movement can do, docs/kafka-differences.md H8, H10).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskassign.analysis.invariants import balance_problems, standby_pile_up_problems
from taskassign.analysis.metrics import compute_metrics
from taskassign.api.application import read_application
from taskassign.assignors.registry import ResolvedAssignor, resolve
from taskassign.errors import PluginAssignorError, UserInputError
from taskassign.formats.scenario import Scenario
from taskassign.leader.assign import assign_scenario, result_to_document
from taskassign.leader.run import RebalanceResult
from taskassign.model import AssignmentError

__all__ = (
    "CHECKS",
    "FAILING_CHECKS",
    "AssignorCheckReport",
    "CaseReport",
    "Finding",
    "check_case",
    "check_cases",
    "completeness_findings",
    "scenario_files",
)

#: Every check, in report order, with what it means.
CHECKS: dict[str, str] = {
    "raised": "the assignor raised an exception (not TaskAssignmentException)",
    "invalid": "Kafka's validation rejects the assignment (the rebalance would fail)",
    "unassigned": "tasks without an active owner",
    "standbys": "changelog tasks with fewer standbys than min(num.standby.replicas, clients - 1)",
    "deterministic": "the same input gave two different assignments",
    "gave_up": "the assignor raised TaskAssignmentException: previous assignment kept (KIP-924)",
    "balance": "outside Kafka's balance bounds after this rebalance (P5-P7; Kafka's own assignors reach "
               "them after convergence)",
    "warmups": "more standbys beyond num.standby.replicas than max.warmup.replicas",
    "pile_up": "one client holds at least twice the median client's standbys per thread (standby pile-up)",
}
#: The checks whose findings fail the run (the others are noted).
FAILING_CHECKS = frozenset({"raised", "invalid", "unassigned", "standbys", "deterministic"})
_SUFFIXES = (".scenario.json", ".group.json")


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule one application's assignment broke."""

    case: str
    check: str
    message: str

    @property
    def fails(self) -> bool:
        return self.check in FAILING_CHECKS


@dataclass(frozen=True, slots=True)
class CaseReport:
    """One application: its size and what its assignment broke (empty: nothing)."""

    case: str
    tasks: int
    clients: int
    findings: tuple[Finding, ...]
    #: The exception the assignor raised (``raised``), for ``--debug``.
    exception: BaseException | None = None

    @property
    def ok(self) -> bool:
        return not any(f.fails for f in self.findings)


@dataclass(frozen=True, slots=True)
class AssignorCheckReport:
    """Every application checked, in order."""

    assignor: str
    cases: tuple[CaseReport, ...]

    @property
    def ok(self) -> bool:
        """No application failed a check (noted findings do not count)."""
        return all(c.ok for c in self.cases)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for c in self.cases for f in c.findings)

    def cases_by_check(self) -> dict[str, int]:
        """Check -> number of applications with a finding of it (every check, 0 included)."""
        counts = dict.fromkeys(CHECKS, 0)
        for case in self.cases:
            for check in {f.check for f in case.findings}:
                counts[check] += 1
        return counts

    def lines(self) -> list[str]:
        """The failing findings, one line each (``case: check: message``): what a test prints."""
        return [f"{f.case}: {f.check}: {f.message}" for f in self.findings if f.fails]

    def to_dict(self) -> dict[str, Any]:
        return {
            "assignor": self.assignor,
            "ok": self.ok,
            "applications": len(self.cases),
            "failed": sum(not c.ok for c in self.cases),
            "checks": {name: {"fails": name in FAILING_CHECKS, "applications": count, "meaning": CHECKS[name]}
                       for name, count in self.cases_by_check().items()},
            "findings": [{"case": f.case, "check": f.check, "fails": f.fails, "message": f.message}
                         for f in self.findings],
        }


def scenario_files(paths: Iterable[Path]) -> list[Path]:
    """The scenario and group files among ``paths``: files as given, directories' ``*.scenario.json`` and
    ``*.group.json`` (sorted); a path that is neither is a UserInputError."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES))
        elif path.is_file():
            found.append(path)
        else:
            raise UserInputError(f"--scenarios {path}: no such file or directory")
    return found


def check_cases(spec: ResolvedAssignor | str, scenarios: Iterable[Scenario | Path]) -> AssignorCheckReport:
    """``check_case`` on every scenario (a Path is read first: a scenario or group file)."""
    assignor = resolve(spec)
    cases = tuple(check_case(assignor, read_application(s) if isinstance(s, Path) else s) for s in scenarios)
    return AssignorCheckReport(assignor.spec, cases)


def check_case(spec: ResolvedAssignor | str, scenario: Scenario) -> CaseReport:
    """Run the assignor ``spec`` (resolved here if a spec) twice on ``scenario`` and hold its result to every
    check."""
    assignor = resolve(spec)
    state = scenario.state
    name = scenario.name

    def report(findings: Sequence[Finding], exception: BaseException | None = None) -> CaseReport:
        return CaseReport(name, len(state.tasks), len(state.clients), tuple(findings), exception)

    try:
        first = assign_scenario(scenario, assignor)
        second = assign_scenario(scenario, assignor)
    except UserInputError:
        raise  # the input is wrong, not the assignor
    except Exception as exc:  # a checker: whatever the assignor does is a finding
        message = str(exc) if isinstance(exc, PluginAssignorError) else f"{type(exc).__name__}: {exc}"
        return report([Finding(name, "raised", message)], exc)
    findings = [Finding(name, check, message) for check, message in _judge(scenario, first)]
    if result_to_document(first) != result_to_document(second):
        findings.append(Finding(name, "deterministic", "two runs on this input gave different assignment files"))
    return report(findings)


def _judge(scenario: Scenario, result: RebalanceResult) -> list[tuple[str, str]]:
    state = scenario.state
    found: list[tuple[str, str]] = []
    if result.fallback_reason is not None:
        found.append(("gave_up", result.fallback_reason))
    if result.error is not AssignmentError.NONE:
        found.append(("invalid", f"{result.error.name} (Kafka's leader fails the rebalance)"))
        return found  # an assignment Kafka refuses has nothing more worth measuring
    found += completeness_findings(result)
    metrics = compute_metrics(state, result.group)
    found += [("balance", problem) for problem in balance_problems(metrics, subtopology_skew_threshold=(
        4 if state.configs.rack_aware_assignment_strategy == "balance_subtopology" else 1))]
    warmups = state.configs.max_warmup_replicas
    if metrics.extra_standby_replicas > warmups:
        found.append(("warmups", f"{metrics.extra_standby_replicas} standby replica(s) beyond "
                                 f"num.standby.replicas, max.warmup.replicas is {warmups}"))
    found += [("pile_up", problem) for problem in standby_pile_up_problems(metrics)]
    return found


def completeness_findings(result: RebalanceResult) -> list[tuple[str, str]]:
    """``unassigned`` and ``standbys`` findings of the leader's completeness report (what ``assign --strict``
    fails on too), as (check, message)."""
    report = result.completeness
    found = []
    if report.unassigned_tasks:
        found.append(("unassigned", f"{len(report.unassigned_tasks)} task(s) have no active owner: "
                                    + _preview(str(t) for t in report.unassigned_tasks)))
    if report.standby_shortfalls:
        missing = sum(s.wanted - s.placed for s in report.standby_shortfalls)
        found.append(("standbys", f"{missing} standby replica(s) missing over {len(report.standby_shortfalls)} "
                                  "task(s): " + _preview(f"{s.task} ({s.placed}/{s.wanted})"
                                                        for s in report.standby_shortfalls)))
    return found


def _preview(items: Iterable[str], limit: int = 5) -> str:
    values = list(items)
    shown = ", ".join(values[:limit])
    return shown + (f", ... (+{len(values) - limit} more)" if len(values) > limit else "")
