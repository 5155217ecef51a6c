"""predict-check on a classic group's history (``api.predict_check`` says what is checked and how causes are found):
two captured group files, the leader's view of each (``leader.group.group_scenario``), Kafka's recorded
assignment of each, and the substitution steps from the what-if's input to the later file's."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from taskassign.api.prediction import (
    CAUSE_LAGS,
    CAUSE_MEMBER_IDS,
    CAUSE_NEW_IDS,
    CAUSE_PREVIOUS,
    CAUSE_SUBSCRIPTION,
    CAUSE_TASKS,
    ChangeCheck,
    Placement,
    attribute,
    best_pairing,
    describe_change,
    what_if_flags,
)
from taskassign.api.what_if import ClientShape, NewClients, WhatIf, apply_what_if
from taskassign.errors import DecodeError, TaskassignError, UserInputError
from taskassign.formats.group import GroupSpec, parse_group
from taskassign.formats.json_io import load_json_file
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.assign import assign_scenario
from taskassign.leader.group import group_scenario
from taskassign.model import LATEST_OFFSET, ApplicationState, AssignedTask, KafkaStreamsState, SortedFrozenSet
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment

__all__ = ("ClassicCapture", "check_classic_pair", "read_classic")

Shape = tuple[int, str | None, tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class ClassicCapture:
    """One captured generation: the file, the leader's view, and what Kafka's leader sent each member."""

    name: str
    spec: GroupSpec
    scenario: Scenario | None
    problem: str | None
    #: member id -> (active tasks, standby tasks) Kafka's leader sent it.
    sent: Mapping[str, tuple[tuple[TaskId, ...], tuple[TaskId, ...]]]


def read_classic(path: Path) -> ClassicCapture:
    spec = parse_group(load_json_file(path), source=str(path), default_name=path.stem)
    if not spec.has_recorded_outcome:
        raise UserInputError(f"{path}: carries no recorded assignment (Kafka's outcome); predict-check needs "
                             "captured files (`taskassign capture --watch`)")
    sent = {}
    for m in spec.members:
        assert m.recorded_assignment is not None
        try:
            info = AssignmentInfo.decode(Assignment.decode(m.recorded_assignment).user_data or b"")
        except DecodeError as exc:
            raise UserInputError(f"{path}: member {m.member_id}'s recorded assignment: {exc}") from None
        sent[m.member_id] = (tuple(info.active_tasks), tuple(t for t, _ in info.standby_tasks))
    try:
        scenario, problem = group_scenario(spec), None
    except TaskassignError as exc:  # a group Kafka's leader would not assign: reported on the pair
        scenario, problem = None, str(exc)
    return ClassicCapture(path.name, spec, scenario, problem, MappingProxyType(sent))


def _client_of(capture: ClassicCapture) -> dict[str, str]:
    return {m.member_id: str(m.info.process_id) for m in capture.spec.members if m.info.process_id is not None}


def kafka_placement(capture: ClassicCapture) -> Placement:
    clients = _client_of(capture)
    active: dict[str, str] = {}
    standby: dict[str, set[str]] = {}
    for member, (actives, standbys) in capture.sent.items():
        for t in actives:
            active[str(t)] = clients[member]
        for t in standbys:
            standby.setdefault(str(t), set()).add(clients[member])
    tasks = sorted(set(active) | set(standby) | ({str(t) for t in capture.scenario.state.tasks}
                                                 if capture.scenario is not None else set()))
    return {t: (active.get(t), frozenset(standby.get(t, ()))) for t in tasks}


def _placement(scenario: Scenario, assignor: str) -> Placement:
    result = assign_scenario(scenario, assignor)
    placement: dict[str, tuple[str | None, set[str]]] = {str(t): (None, set()) for t in scenario.state.tasks}
    for client in result.task_assignment.assignments:
        for task in client.tasks.values():
            _, standbys = placement.setdefault(str(task.id), (None, set()))
            if task.type is AssignedTask.Type.ACTIVE:
                placement[str(task.id)] = (str(client.process_id), standbys)
            else:
                standbys.add(str(client.process_id))
    return {t: (a, frozenset(s)) for t, (a, s) in placement.items()}


def _static_restart(before: ClassicCapture, after: ClassicCapture) -> str | None:
    """Why the pair shows no rebalance, or None. The coordinator hands a static member that rejoins within
    ``session.timeout.ms`` its cached assignment under a new member id, and keeps its new subscription."""
    sent_before = Counter(m.recorded_assignment for m in before.spec.members)
    sent_after = Counter(m.recorded_assignment for m in after.spec.members)
    if sent_before != sent_after:
        return None
    ids_before = {m.member_id for m in before.spec.members}
    ids_after = {m.member_id for m in after.spec.members}
    if ids_before == ids_after:
        return "no rebalance between the captures (same members, same assignment)"
    old = {m.group_instance_id: m for m in before.spec.members if m.group_instance_id is not None}
    restarted = sorted(m.group_instance_id for m in after.spec.members if m.group_instance_id in old
                       and old[m.group_instance_id].member_id != m.member_id
                       and old[m.group_instance_id].recorded_assignment == m.recorded_assignment)
    if restarted:
        return (f"static restart without a rebalance: {', '.join(restarted)} came back within session.timeout.ms "
                "under new member id(s) and kept the assignment of the generation before; the capture pairs the "
                "new subscription(s) with that old assignment (KIP-345), so there is no change to predict: not "
                "predicted")
    return ("the same assignment under other member ids and no static member (group.instance.id) to explain it: "
            "no rebalance was seen; not predicted")


def _after(scenario: Scenario, capture: ClassicCapture) -> Scenario:
    """``scenario`` as it stands after its rebalance: every client holds what Kafka sent it, its actives running
    (Kafka's ``Task.LATEST_OFFSET``), its standbys caught up with their changelogs."""
    state = scenario.state
    by_name = {str(t): t for t in state.tasks}
    ends = state.changelog_end_offset_sums
    client_of = _client_of(capture)
    clients = {}
    for pid, client in state.clients.items():
        members = [m for m in client.consumer_client_ids if client_of.get(m) == str(pid)]
        actives = {by_name[str(t)] for m in members for t in capture.sent.get(m, ((), ()))[0] if str(t) in by_name}
        standbys = {by_name[str(t)] for m in members for t in capture.sent.get(m, ((), ()))[1] if str(t) in by_name}
        sums = dict(client.task_offset_sums)
        sums.update((t, LATEST_OFFSET) for t in actives if t in ends)
        sums.update((t, ends[t]) for t in standbys if t in ends and ends[t] >= 0)
        per_member = {m: SortedFrozenSet(by_name[str(t)] for t in (*capture.sent.get(m, ((), ()))[0],
                                                                    *capture.sent.get(m, ((), ()))[1])
                                         if str(t) in by_name) for m in members}
        clients[pid] = dataclasses.replace(client, previous_active_tasks=SortedFrozenSet(actives),
                                           previous_standby_tasks=SortedFrozenSet(standbys), task_offset_sums=sums,
                                           consumer_previous_tasks=per_member)
    return dataclasses.replace(scenario, state=_state(state, clients))


def _state(like: ApplicationState, clients: Mapping[ProcessId, KafkaStreamsState],
           tasks: ApplicationState | None = None) -> ApplicationState:
    source = tasks or like
    arrival = None
    if like.client_arrival_order is not None:  # the clients the leader met keep its order; new ones come after
        arrival = (*(p for p in like.client_arrival_order if p in clients),
                   *sorted(p for p in clients if p not in like.client_arrival_order))
    return ApplicationState(tasks=source.tasks, clients=dict(clients), configs=like.configs, now_ms=like.now_ms,
                            subtopology_walk_order=source.subtopology_walk_order, client_arrival_order=arrival)


def _shape(client: KafkaStreamsState) -> Shape:
    return client.num_processing_threads, client.rack_id, tuple(sorted(client.client_tags.items()))


def _config_changes(before: Scenario, after: Scenario) -> dict[str, str]:
    from taskassign.configs import parse_config_value
    from taskassign.errors import ConfigError

    changed = {}
    for key in sorted(set(before.raw_configs) | set(after.raw_configs)):
        new = after.raw_configs.get(key)
        if new is None or before.raw_configs.get(key) == new:
            continue
        text = ",".join(map(str, new)) if isinstance(new, list | tuple) else str(new).lower() \
            if isinstance(new, bool) else str(new)
        try:
            parse_config_value(key, text)
        except ConfigError:
            continue
        changed[key] = text
    return changed


def check_classic_pair(before: ClassicCapture, after: ClassicCapture) -> ChangeCheck:
    reason = _static_restart(before, after)
    if reason is not None:
        return ChangeCheck(before.name, after.name, "no rebalance", skipped=reason)
    if before.scenario is None or after.scenario is None:
        problem = before.problem if before.scenario is None else after.problem
        return ChangeCheck(before.name, after.name, "unreadable", skipped=f"Kafka's leader would not assign: {problem}")
    base = _after(before.scenario, before)
    old, new = base.state.clients, after.scenario.state.clients
    removed = sorted(str(p) for p in old if p not in new)
    joined = sorted((p for p in new if p not in old), key=str)
    shapes: dict[Shape, list[ProcessId]] = {}
    for pid in joined:
        shapes.setdefault(_shape(new[pid]), []).append(pid)
    sets = _config_changes(base, after.scenario)
    what_if = WhatIf(configs=tuple(sets.items()), remove_clients=tuple(removed),
                     add_clients=tuple(NewClients(len(p), ClientShape(s[0], s[1], s[2])) for s, p in shapes.items()))
    flags = what_if_flags(removed, {s: len(p) for s, p in shapes.items()}, sets)
    change = describe_change(removed, [str(p) for p in joined], sets)
    assignor = before.spec.capture.assignor if before.spec.capture is not None else "high_availability"
    try:
        predicted_input, _ = apply_what_if(base, what_if)
        first = _placement(predicted_input, assignor)
    except TaskassignError as exc:
        return ChangeCheck(before.name, after.name, change, flags, assignor, skipped=f"the what-if fails: {exc}")
    kafka = kafka_placement(after)
    invented = {s: sorted((p for p in predicted_input.state.clients if p not in old
                           and _shape(predicted_input.state.clients[p]) == s), key=str) for s in shapes}
    rename = best_pairing(first, kafka, [[str(p) for p in invented[s]] for s in shapes],
                          [[str(p) for p in shapes[s]] for s in shapes])
    steps, moved = _substitutions(predicted_input, after.scenario, rename, assignor)
    actives, standbys, standbys_right, misses = attribute(first, kafka, steps, rename)
    notes = []
    if any(m.group_instance_id for m in after.spec.members):
        notes.append("static members: " + ", ".join(sorted(str(m.group_instance_id) for m in after.spec.members
                                                          if m.group_instance_id)))
    return ChangeCheck(before.name, after.name, change, flags, assignor, len(kafka), actives, standbys,
                       standbys_right, misses, tuple(moved), None, tuple(notes))


def _substitutions(start: Scenario, target: Scenario, rename: Mapping[str, str],
                   assignor: str) -> tuple[list[tuple[str, Placement]], list[str]]:
    """The what-if's input moved towards ``target``'s one kind at a time; each kind that changed something, with
    the assignor's placement after it."""
    goal = target.state.clients
    by_text = {str(p): p for p in goal}
    steps: list[tuple[str, Placement]] = []
    moved: list[str] = []
    scenario = start

    def step(cause: str, clients: Mapping[ProcessId, KafkaStreamsState], tasks: ApplicationState | None = None
             ) -> None:
        nonlocal scenario
        state = _state(scenario.state, clients, tasks)
        if state.clients == scenario.state.clients and state.tasks == scenario.state.tasks:
            return
        leader = target.leader if target.leader in state.clients else None
        scenario = dataclasses.replace(scenario, state=state, leader=leader, current_assignment=None)
        moved.append(cause)
        steps.append((cause, _placement(scenario, assignor)))

    current = dict(scenario.state.clients)
    renamed = {}
    for pid, client in current.items():
        real = by_text.get(rename.get(str(pid), str(pid)), pid)
        renamed[real] = dataclasses.replace(client, process_id=real)
    step(CAUSE_NEW_IDS, renamed)
    if set(target.state.tasks) != set(scenario.state.tasks):
        step(CAUSE_TASKS, {p: _only_tasks(c, target.state) for p, c in scenario.state.clients.items()}, target.state)
    step(CAUSE_MEMBER_IDS, {p: _member_ids(c, goal.get(p)) for p, c in scenario.state.clients.items()})
    step(CAUSE_SUBSCRIPTION, {p: _subscription(c, goal.get(p)) for p, c in scenario.state.clients.items()})
    step(CAUSE_PREVIOUS, {p: _previous(c, goal.get(p)) for p, c in scenario.state.clients.items()})
    step(CAUSE_LAGS, dict(goal), target.state)
    return steps, moved


def _only_tasks(client: KafkaStreamsState, state: ApplicationState) -> KafkaStreamsState:
    keep = state.tasks
    return dataclasses.replace(
        client, previous_active_tasks=SortedFrozenSet(t for t in client.previous_active_tasks if t in keep),
        previous_standby_tasks=SortedFrozenSet(t for t in client.previous_standby_tasks if t in keep),
        task_offset_sums={t: o for t, o in client.task_offset_sums.items() if t in keep},
        consumer_previous_tasks={c: SortedFrozenSet(t for t in ts if t in keep)
                                 for c, ts in client.consumer_previous_tasks.items()})


def _member_ids(client: KafkaStreamsState, goal: KafkaStreamsState | None) -> KafkaStreamsState:
    if goal is None or len(goal.consumer_client_ids) != len(client.consumer_client_ids):
        return client
    pairs = dict(zip(client.consumer_client_ids, goal.consumer_client_ids, strict=True))
    return dataclasses.replace(client, consumer_client_ids=goal.consumer_client_ids,
                               consumer_previous_tasks={pairs.get(c, c): ts
                                                        for c, ts in client.consumer_previous_tasks.items()})


def _subscription(client: KafkaStreamsState, goal: KafkaStreamsState | None) -> KafkaStreamsState:
    if goal is None:
        return client
    consumers = {c: client.consumer_previous_tasks.get(c, goal.consumer_previous_tasks.get(c, SortedFrozenSet(())))
                 for c in goal.consumer_client_ids}
    return dataclasses.replace(client, consumer_client_ids=goal.consumer_client_ids, rack_id=goal.rack_id,
                               client_tags=goal.client_tags, host_info=goal.host_info,
                               consumer_previous_tasks=consumers)


def _previous(client: KafkaStreamsState, goal: KafkaStreamsState | None) -> KafkaStreamsState:
    if goal is None:
        return client
    return dataclasses.replace(client, previous_active_tasks=goal.previous_active_tasks,
                               previous_standby_tasks=goal.previous_standby_tasks,
                               consumer_previous_tasks=goal.consumer_previous_tasks)
