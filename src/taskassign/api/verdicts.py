"""The verdicts of ``compare``, ``streams-migration`` and the what-ifs (``analysis.verdict`` ranks; this module
gathers each command's options, the probing rebalances each leaves ahead, and the command to run next).

The probing outlook replays the leader as Kafka's ``TaskAssignorConvergenceTest`` does: after each rebalance
every client reports the tasks it was given as caught up (lag 0), and the assignor runs again, until it asks for
no probing rebalance. The rounds it takes are a lower bound (warm-ups that need more than one
``probing.rebalance.interval.ms`` to restore take more rounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from taskassign.analysis.metrics import AssignmentMetrics
from taskassign.analysis.verdict import RANKING, Option, ProbingOutlook, Verdict, verdict
from taskassign.assignors.registry import ResolvedAssignor
from taskassign.formats.client_names import names_for_states
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.assign import assign_scenario
from taskassign.leader.run import RebalanceResult
from taskassign.model import ApplicationState, KafkaStreamsState, SortedFrozenSet

if TYPE_CHECKING:
    from taskassign.api.compare import CompareOutcome
    from taskassign.api.migration import MigrationWhatIf
    from taskassign.api.optimize import ScenarioOptimization
    from taskassign.api.what_if_compare import WhatIfComparison
    from taskassign.formats.events import EventsFile
    from taskassign.formats.group import GroupSpec
    from taskassign.simulate import SimulationResult

__all__ = (
    "MAX_PROBING_ROUNDS",
    "assign_verdict",
    "compare_verdict",
    "group_what_if_verdict",
    "migration_verdict",
    "probing_outlook",
    "simulate_verdict",
    "what_if_compare_verdict",
)

#: Rounds the outlook replays before it says "or more".
MAX_PROBING_ROUNDS = 12
#: Above this many task placements (tasks x clients) the outlook does not replay: "1 or more" rounds.
MAX_REPLAYED_PLACEMENTS = 50_000


def probing_outlook(scenario: Scenario, result: RebalanceResult | None,
                    assignor: ResolvedAssignor | None) -> ProbingOutlook | None:
    """The probing rebalances ``result`` leaves ahead, or None when it asks for none (or cannot be replayed)."""
    if result is None or assignor is None or assignor.is_streams or not result.probing_rebalance_needed:
        return None
    configs = scenario.state.configs
    placed = sum(len(a.standby_tasks()) for a in result.group.clients.values())
    warmups = max(0, placed - _standbys_wanted(scenario.state))
    if len(scenario.state.tasks) * len(scenario.state.clients) > MAX_REPLAYED_PLACEMENTS:
        return ProbingOutlook(1, configs.probing_rebalance_interval_ms, warmups, configs.max_warmup_replicas,
                              converged=False)
    rounds, current = 0, result
    converged = False
    while rounds < MAX_PROBING_ROUNDS:
        rounds += 1
        scenario = replace(scenario, state=_caught_up(scenario.state, current), current_assignment=None)
        try:
            current = assign_scenario(scenario, assignor)
        except Exception:
            return ProbingOutlook(rounds, configs.probing_rebalance_interval_ms, warmups, configs.max_warmup_replicas,
                                  converged=False)
        if not current.probing_rebalance_needed:
            converged = True
            break
    return ProbingOutlook(rounds, configs.probing_rebalance_interval_ms, warmups, configs.max_warmup_replicas,
                          converged)


def _standbys_wanted(state: ApplicationState) -> int:
    per_task = min(state.configs.num_standby_replicas, max(len(state.clients) - 1, 0))
    return per_task * len(state.stateful_task_ids)


def _caught_up(state: ApplicationState, result: RebalanceResult) -> ApplicationState:
    """``state`` one probing interval later: every client caught up on what ``result`` gave it."""
    ends = {t: end for t, end in ((t, state.changelog_end_offset_sums.get(t)) for t in state.tasks)
            if end is not None}
    clients: dict[ProcessId, KafkaStreamsState] = {}
    for pid, client in state.clients.items():
        given = result.group.clients.get(pid)
        active: tuple[TaskId, ...] = tuple(given.active_tasks()) if given else ()
        standby: tuple[TaskId, ...] = tuple(given.standby_tasks()) if given else ()
        offsets = dict(client.task_offset_sums)
        offsets.update({t: ends[t] for t in (*active, *standby) if t in ends})
        clients[pid] = KafkaStreamsState(pid, client.consumer_client_ids, SortedFrozenSet(active),
                                         SortedFrozenSet(standby), offsets, client.host_info, client.client_tags,
                                         client.rack_id)
    return ApplicationState(tasks=state.tasks, clients=clients, configs=state.configs, now_ms=state.now_ms)


def assign_verdict(original: Scenario, altered: Scenario, assignor: ResolvedAssignor,
                   altered_result: RebalanceResult, altered_metrics: AssignmentMetrics | None, *,
                   source: str, flags: str) -> Verdict:
    """A what-if's verdict: the input as it is against the altered input, through the same assignor."""
    from taskassign.analysis.metrics import compute_metrics

    before = assign_scenario(original, assignor)
    before_metrics = compute_metrics(original.state, before.group)
    after_metrics = altered_metrics or compute_metrics(altered.state, altered_result.group)
    names = names_for_states(original.state, altered.state)
    options = (
        Option("as is", before_metrics, before.error.name, probing_outlook(original, before, assignor)),
        Option("what-if", after_metrics, altered_result.error.name, probing_outlook(altered, altered_result,
                                                                                   assignor)),
    )
    steps = (f"taskassign compare {source} -a {assignor.spec} {flags}   (the two side by side, client by client)",
             f"taskassign assign {source} -a {assignor.spec} {flags} -o what-if.assignment.json   (keep the plan)")
    return _what_if_framing(verdict(options, names, next_steps=steps, subject="side"))


def compare_verdict(outcome: CompareOutcome, assignors: Sequence[ResolvedAssignor], *, source: str,
                    events: str | None = None) -> Verdict:
    """``compare``: which assignor suits this application, the risks of each, and how to look closer."""
    by_name = {a.name: a for a in assignors}
    scenario = outcome.scenario
    options = [Option(run.name, run.metrics, run.error,
                      None if run.simulation is not None else probing_outlook(scenario, run.result,
                                                                             by_name.get(run.name)))
               for run in outcome.runs]
    found = verdict(options, names_for_states(scenario.state), subject="assignor")
    best = found.better or options[0].name
    steps = (f"taskassign assign {source} -a {best} --metrics --explain   (its assignment, client by client)",
             f"taskassign simulate {source} -a {best} -e {events or 'EVENTS.json'}   (how it converges over "
             "restarts and probing rebalances)")
    return replace(found, next_steps=steps)


def what_if_compare_verdict(outcome: WhatIfComparison, original: Scenario, altered: Scenario,
                            assignor: ResolvedAssignor, *, source: str, flags: str) -> Verdict:
    """``compare`` with one assignor and a what-if: the input as it is against the altered input."""
    simulated = outcome.before.simulation is not None
    options = [
        Option("as is", outcome.before.metrics, outcome.before.error,
               None if simulated else probing_outlook(original, outcome.before.result, assignor)),
        Option("what-if", outcome.after.metrics, outcome.after.error,
               None if simulated else probing_outlook(altered, outcome.after.result, assignor)),
    ]
    steps = (f"taskassign assign {source} -a {assignor.spec} {flags} --metrics -o what-if.assignment.json   "
             "(the altered assignment, to keep)",
             f"taskassign simulate {source} -a {assignor.spec} {flags} -e EVENTS.json   (the rebalances that "
             "follow)")
    return _what_if_framing(verdict(options, names_for_states(original.state, altered.state), next_steps=steps,
                                    subject="side"))


def _what_if_framing(found: Verdict) -> Verdict:
    """A what-if is a change, not a choice between equals: say whether it makes the application better or
    worse."""
    if found.better is None:
        return replace(found, headline="the what-if changes none of the ranked metrics")
    label = dict(RANKING).get(found.deciding[0], found.deciding[0]) if found.deciding else "the ranked metrics"
    if found.better == "what-if":
        return replace(found, headline=f"the what-if leaves this application better off: fewer {label}")
    return replace(found, headline=f"the what-if leaves this application worse off: more {label}")


def migration_verdict(migration: MigrationWhatIf, scenario: Scenario, classic: ResolvedAssignor, *,
                      source: str) -> Verdict:
    """``streams-migration``: stay on the classic protocol or move, and to which broker-side assignor."""
    options = [Option(run.assignor, run.metrics, run.error or (run.result.error.name if run.result else "NONE"),
                      probing_outlook(scenario, run.result, classic) if run.protocol == "classic" else None)
               for run in migration.runs]
    found = verdict(options, names_for_states(scenario.state), subject="protocol")
    best = found.better or options[0].name
    steps: tuple[str, ...]
    if best == options[0].name:
        steps = (f"taskassign assign {source} -a {best} --metrics   (stay on the classic protocol: its assignment)",)
    else:
        steps = (f"taskassign assign {source} -a {best} --metrics   (the streams protocol's assignment, per member)",
                 "then set group.protocol=streams on every instance (KIP-1071; docs/streams-protocol.md)")
    return replace(found, next_steps=steps)


def simulate_verdict(original: Scenario, after: SimulationResult, assignor: ResolvedAssignor, events: EventsFile,
                     *, seed: int | None, source: str, flags: str, events_path: str) -> Verdict:
    """``simulate`` with a what-if: the same simulation on the input as it is, then the two last assignments
    weighed, and each run's probing rebalances and time to settle as risks."""
    from taskassign.formats.units import human_duration
    from taskassign.simulate import simulate

    before = simulate(original, events, assignor, seed=seed)
    options = [Option("as is", before.last_metrics, before.rebalances[-1].error if before.rebalances else "NONE"),
               Option("what-if", after.last_metrics, after.rebalances[-1].error if after.rebalances else "NONE")]
    steps = (f"taskassign compare {source} -a {assignor.spec} {flags} -e {events_path}   (both runs side by side, "
             "client by client)",)
    found = _what_if_framing(verdict(options, names_for_states(original.state, after.last_state), next_steps=steps,
                                     subject="side"))
    runs = [f"{name}: {run.probing_rebalances} probing rebalance(s), "
            + (f"settled after {human_duration(run.settled_at_ms)}" if run.settled_at_ms is not None
               else "never settled")
            for name, run in (("as is", before), ("what-if", after)) if run.probing_rebalances or not run.converged]
    return replace(found, risks=found.risks + tuple(runs))


def group_what_if_verdict(original: GroupSpec, altered: GroupSpec, assignor: ResolvedAssignor, *, source: str,
                          flags: str) -> Verdict:
    """``rebalance`` with a what-if: the group's application as it is against the altered group, each as its
    leader sees it (``leader.group.group_scenario``), through the same assignor."""
    from taskassign.leader.group import group_scenario

    before, after = group_scenario(original), group_scenario(altered)
    found = assign_verdict(before, after, assignor, assign_scenario(after, assignor), None, source=source,
                           flags=flags)
    steps = (f"taskassign assign {source} -a {assignor.spec} {flags} --metrics   (the altered application, client "
             "by client)",)
    return replace(found, next_steps=steps)


def optimize_verdict(original: Scenario, altered: Scenario, as_is: ScenarioOptimization,
                     after: ScenarioOptimization, *, source: str, flags: str) -> Verdict:
    """``optimize`` with a what-if: the optimised assignment of the input as it is against the altered one's."""
    from taskassign.analysis.metrics import compute_metrics

    options = [Option("as is", compute_metrics(original.state, as_is.assignments)),
               Option("what-if", compute_metrics(altered.state, after.assignments))]
    steps = (f"taskassign optimize {source} --{after.role.value} {flags} -o optimized.assignment.json   (keep the "
             "altered optimisation)",)
    return _what_if_framing(verdict(options, names_for_states(original.state, altered.state), next_steps=steps,
                                    subject="side"))
