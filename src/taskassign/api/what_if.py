"""What-if: an application altered before it is assigned, so "what if I add two instances / lose a rack /
raise the standbys?" is one flag rather than an edited JSON file.

``WhatIf`` describes the change (``--set``, ``--add-clients``, ``--remove-client``, ``--rack-down``, parsed by
``parse_what_if`` from the flags' text); ``apply_what_if`` returns a new Scenario and the sentences that say what
changed. The input is never modified. Order: configs, then removals (clients, then racks), then additions, so that
new clients take the shape of the clients that remain. Every error names the flag and its bad value.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from taskassign.assignors.registry import ResolvedAssignor, assignor_from_class_config, resolve
from taskassign.configs import TASK_ASSIGNOR_CLASS, AssignmentConfigs, parse_config_value
from taskassign.errors import ConfigError, UserInputError
from taskassign.formats.client_names import client_names, facts_from_group, names_for_states
from taskassign.formats.group import GroupSpec, group_with_config_overrides
from taskassign.formats.scenario import MAX_THREADS, Scenario
from taskassign.ids import ProcessId
from taskassign.model import MAX_MEMBERS, ApplicationState, KafkaStreamsState

__all__ = (
    "ClientShape",
    "NewClients",
    "WhatIf",
    "apply_what_if",
    "apply_what_if_to_group",
    "chosen_assignor",
    "new_process_ids",
    "parse_what_if",
)

#: Namespace of the process ids of added clients: ``uuid5(namespace, "<scenario>/<n>")``, so the same what-if on
#: the same input names the same clients, and their short forms (first 8 hex digits) differ.
_NEW_CLIENT_NAMESPACE = uuid.UUID("5d1f6c1e-7b0a-4f3e-9a57-0d6a1f3c2b99")
MAX_ADDED_CLIENTS = 10_000


@dataclass(frozen=True, slots=True)
class ClientShape:
    """How an added client looks: threads, rack and client tags (None: as the most common existing client)."""

    threads: int | None = None
    rack: str | None = None
    tags: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True, slots=True)
class NewClients:
    """``--add-clients N[:threads=T,rack=R,tag.K=V]``."""

    count: int
    shape: ClientShape = ClientShape()


@dataclass(frozen=True, slots=True)
class WhatIf:
    """A change to an application before it is assigned. Empty (``WhatIf()``) changes nothing."""

    #: ``--set``: Kafka config name -> value as typed (checked when applied).
    configs: tuple[tuple[str, str], ...] = ()
    #: ``--remove-client``: process ids or unique prefixes of one.
    remove_clients: tuple[str, ...] = ()
    #: ``--rack-down``: every client on these racks goes.
    racks_down: tuple[str, ...] = ()
    add_clients: tuple[NewClients, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.configs or self.remove_clients or self.racks_down or self.add_clients)

    @property
    def assignor(self) -> str | None:
        """The assignor a ``--set task.assignor.class=...`` names (the user's own choice, like ``-a``)."""
        chosen = [v for k, v in self.configs if k == TASK_ASSIGNOR_CLASS]
        return assignor_from_class_config(chosen[-1]) if chosen else None


def parse_what_if(
    sets: Sequence[str] = (), add_clients: Sequence[str] = (), remove_clients: Sequence[str] = (),
    racks_down: Sequence[str] = (),
) -> WhatIf:
    """The flags' texts as a WhatIf; a malformed one is a UserInputError naming the flag and the value."""
    return WhatIf(
        configs=tuple(_parse_set(text) for text in sets),
        remove_clients=tuple(_non_empty("--remove-client", text) for text in remove_clients),
        racks_down=tuple(_non_empty("--rack-down", text) for text in racks_down),
        add_clients=tuple(_parse_new_clients(text) for text in add_clients),
    )


def _non_empty(flag: str, text: str) -> str:
    if not text.strip():
        raise UserInputError(f"{flag} {text!r}: give a value")
    return text.strip()


def _parse_set(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise UserInputError(f"--set {text!r}: expected CONFIG=VALUE, e.g. num.standby.replicas=1")
    try:
        parse_config_value(name.strip(), value)
    except ConfigError as exc:
        raise UserInputError(f"--set {text!r}: {exc}") from None
    return name.strip(), value


def _parse_new_clients(text: str) -> NewClients:
    flag = f"--add-clients {text!r}"
    count_text, _, shape_text = text.partition(":")
    try:
        count = int(count_text.strip())
    except ValueError:
        raise UserInputError(f"{flag}: expected N[:threads=T,rack=R,tag.K=V] with N a whole number") from None
    if not 1 <= count <= MAX_ADDED_CLIENTS:
        raise UserInputError(f"{flag}: N must be between 1 and {MAX_ADDED_CLIENTS}, got {count}")
    threads: int | None = None
    rack: str | None = None
    tags: dict[str, str] = {}
    for part in (p.strip() for p in shape_text.split(",") if p.strip()) if shape_text else ():
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise UserInputError(f"{flag}: {part!r} is not KEY=VALUE (threads=T, rack=R or tag.K=V)")
        if key == "threads":
            if not value.isdigit() or not 1 <= int(value) <= MAX_THREADS:
                raise UserInputError(f"{flag}: threads must be a whole number between 1 and {MAX_THREADS}, "
                                     f"got {value!r}")
            threads = int(value)
        elif key == "rack":
            rack = value
        elif key.startswith("tag.") and len(key) > len("tag."):
            tags[key.removeprefix("tag.")] = value
        else:
            raise UserInputError(f"{flag}: unknown key {key!r}; the keys are threads, rack and tag.<name>")
    shape = ClientShape(threads, rack, tuple(sorted(tags.items())) if tags else None)
    return NewClients(count, shape)


def apply_what_if(scenario: Scenario, what_if: WhatIf) -> tuple[Scenario, tuple[str, ...]]:
    """``scenario`` with ``what_if`` applied, and one sentence per change (none when nothing changed)."""
    if what_if.is_empty:
        return scenario, ()
    notes: list[str] = []
    raw, configs = _with_configs(scenario, what_if.configs, notes)
    state = scenario.state
    clients = dict(state.clients)
    names = names_for_states(state)
    for text in what_if.remove_clients:
        pid = _match_client(text, clients, names)
        notes.append(f"removed client {names[pid]} ({pid}; {_describe(clients.pop(pid))})")
    for rack in what_if.racks_down:
        down = [pid for pid, c in clients.items() if c.rack_id == rack]
        if not down:
            racks = sorted({c.rack_id for c in clients.values() if c.rack_id is not None})
            raise UserInputError(f"--rack-down {rack!r}: no client is on that rack; racks: "
                                 f"{', '.join(racks) if racks else 'none (no client has a rack)'}")
        for pid in down:
            del clients[pid]
        notes.append(f"rack {rack} down: removed {len(down)} client(s) ({', '.join(names[p] for p in down)})")
    for batch in what_if.add_clients:
        added = _new_clients(scenario.name, batch, clients, configs)
        clients.update((c.process_id, c) for c in added)
        shown = names_for_states(ApplicationState(tasks={}, clients=clients, configs=configs))
        notes.append(f"added {batch.count} empty client(s) ({_describe(added[0])}): "
                     + ", ".join(shown[c.process_id] for c in added))
    if state.tasks and not clients:
        raise UserInputError("the what-if removes every client: an application with tasks needs at least one")
    new_state = ApplicationState(tasks=state.tasks, clients=clients, configs=configs, now_ms=state.now_ms)
    current = scenario.current_assignment
    if current is not None:
        current = {pid: a for pid, a in current.items() if pid in clients}
    leader = scenario.leader if scenario.leader in clients else None
    return replace(scenario, state=new_state, raw_configs=MappingProxyType(raw), current_assignment=current,
                   leader=leader), tuple(notes)


def chosen_assignor(cli_choice: ResolvedAssignor | None, scenario: Scenario, what_if: WhatIf, *, default: str,
                    allow_plugins: bool) -> ResolvedAssignor:
    """The assignor to run, resolved: ``-a`` first (resolved by the caller), then ``--set task.assignor.class``
    (both the user's), then the input's own ``task.assignor.class`` (data: a plug-in there needs
    ``--allow-plugins``, else PluginNotAllowedError before anything is imported), else ``default``."""
    if cli_choice is not None:
        return cli_choice
    if what_if.assignor is not None:
        return resolve(what_if.assignor)
    configured = scenario.raw_configs.get(TASK_ASSIGNOR_CLASS)
    if configured is None:
        return resolve(default)
    spec = assignor_from_class_config(str(configured))
    return resolve(spec, allow_plugins=allow_plugins, source=f"{scenario.name}'s configs ({TASK_ASSIGNOR_CLASS})")


def new_process_ids(name: str, count: int, taken: Iterable[ProcessId]) -> list[ProcessId]:
    """``count`` process ids derived from ``name`` alone (deterministic), none of them in ``taken``."""
    used = set(taken)
    found: list[ProcessId] = []
    n = 0
    while len(found) < count:
        n += 1
        pid = ProcessId(uuid.uuid5(_NEW_CLIENT_NAMESPACE, f"{name}/{n}"))
        if pid not in used:
            used.add(pid)
            found.append(pid)
    return found


def _with_configs(scenario: Scenario, sets: tuple[tuple[str, str], ...],
                  notes: list[str]) -> tuple[dict[str, Any], AssignmentConfigs]:
    raw = dict(scenario.raw_configs)
    if not sets:
        return raw, scenario.state.configs
    before = scenario.state.configs.to_properties()
    for name, value in sets:
        typed = parse_config_value(name, value)
        was = raw.get(name, before.get(name, "default"))
        raw[name] = typed
        notes.append(f"{name}={_config_text(typed)} (was {_config_text(was)})")
    try:
        configs = AssignmentConfigs.from_properties(raw, coerce_strings=True)
    except ConfigError as exc:
        raise UserInputError(f"--set: {exc}") from None
    if (problem := configs.now_ms_problem(scenario.state.now_ms)) is not None:  # what is written must read back
        raise UserInputError(f"--set: the input's now_ms {problem}")
    return raw, configs


def _config_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _match_client(text: str, clients: Collection[ProcessId],
                  names: Mapping[ProcessId, str] | None = None) -> ProcessId:
    """The client ``text`` names: its name as the outputs print it (``formats.client_names``), or a unique
    prefix of its process id."""
    named = [pid for pid in clients if (names or {}).get(pid) == text]
    if len(named) == 1:
        return named[0]
    wanted = text.lower()
    matches = [pid for pid in clients if str(pid).startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UserInputError(f"--remove-client {text!r}: no client has that name and no client's process id starts "
                             f"with it ({len(clients)} client(s) left)")
    shown = ", ".join(str(p) for p in matches[:4]) + (" ..." if len(matches) > 4 else "")
    raise UserInputError(f"--remove-client {text!r}: {len(matches)} clients' process ids start with it ({shown}); "
                         "give more of the id")


def _shape_of(client: KafkaStreamsState) -> tuple[int, str | None, tuple[tuple[str, str], ...]]:
    return client.num_processing_threads, client.rack_id, tuple(sorted(client.client_tags.items()))


def _new_clients(name: str, batch: NewClients, clients: dict[ProcessId, KafkaStreamsState],
                 configs: AssignmentConfigs) -> list[KafkaStreamsState]:
    shapes = Counter(_shape_of(c) for c in clients.values())
    # the most common shape; ties go to the smallest in sorted order, so the choice never depends on dict order
    common = min(shapes.items(), key=lambda item: (-item[1], repr(item[0])))[0] if shapes else (1, None, ())
    threads = batch.shape.threads if batch.shape.threads is not None else common[0]
    rack = batch.shape.rack if batch.shape.rack is not None else common[1]
    tags = dict(batch.shape.tags if batch.shape.tags is not None else common[2])
    missing = [k for k in configs.rack_aware_assignment_tags if k not in tags]
    if missing:
        raise UserInputError(f"--add-clients {batch.count}: rack.aware.assignment.tags asks for tag(s) "
                             f"{', '.join(missing)}; give them as tag.{missing[0]}=VALUE")
    members = sum(c.num_processing_threads for c in clients.values()) + batch.count * threads
    if members > MAX_MEMBERS:  # before building a thread: 10000:threads=100000 would be 10^9 of them
        raise UserInputError(
            f"--add-clients {batch.count}{f':threads={threads}' if batch.shape.threads is not None else ''}: "
            f"{batch.count} client(s) of {threads} thread(s) would make {members} stream threads (members) in "
            f"all, more than the {MAX_MEMBERS} taskassign takes per application (docs/security.md, Work)")
    added = []
    for pid in new_process_ids(name, batch.count, clients):
        consumers = tuple(f"{pid}-StreamThread-{i}" for i in range(1, threads + 1))
        added.append(KafkaStreamsState(pid, consumers, client_tags=tags, rack_id=rack))
    return added


def _describe(client: KafkaStreamsState) -> str:
    parts = [f"{client.num_processing_threads} thread(s)"]
    if client.rack_id is not None:
        parts.append(f"rack {client.rack_id}")
    parts.extend(f"{k}={v}" for k, v in sorted(client.client_tags.items()))
    if client.previous_active_tasks or client.previous_standby_tasks:
        parts.append(f"{len(client.previous_active_tasks)} active, {len(client.previous_standby_tasks)} standby "
                     "before")
    return ", ".join(parts)


def apply_what_if_to_group(spec: GroupSpec, what_if: WhatIf) -> tuple[GroupSpec, tuple[str, ...]]:
    """``what_if`` on a group file as ``taskassign rebalance`` runs it (its members' subscription bytes): configs
    are set, removed clients' and down racks' members leave the group. New members would need subscription bytes
    the file cannot supply, so ``--add-clients`` is refused here (``assign``/``simulate`` take it on a group file).
    An altered group is no longer the one Kafka's leader saw, so its recorded outcome is not compared."""
    if what_if.is_empty:
        return spec, ()
    if what_if.add_clients:
        raise UserInputError("--add-clients: `taskassign rebalance` replays the members' own subscription bytes and "
                             "cannot invent new members; `taskassign assign GROUP.json --add-clients ...` (or "
                             "simulate) runs the group's application with them")
    notes: list[str] = []
    members = list(spec.members)
    if what_if.configs:
        overrides = {name: parse_config_value(name, value) for name, value in what_if.configs}
        try:
            spec = group_with_config_overrides(spec, overrides)
        except ConfigError as exc:
            raise UserInputError(f"--set: {exc}") from None
        if (problem := spec.configs.now_ms_problem(spec.now_ms)) is not None:
            raise UserInputError(f"--set: the input's now_ms {problem}")
        notes.extend(f"{name}={_config_text(value)}" for name, value in overrides.items())
    clients = {m.info.process_id: m for m in members if m.info.process_id is not None}
    names = client_names(facts_from_group(spec))
    for text in what_if.remove_clients:
        pid = _match_client(text, list(clients), names)
        gone = [m.member_id for m in members if m.info.process_id == pid]
        members = [m for m in members if m.info.process_id != pid]
        del clients[pid]
        notes.append(f"removed client {pid} (members {', '.join(gone)})")
    for rack in what_if.racks_down:
        gone = [m.member_id for m in members if m.subscription.rack == rack]
        if not gone:
            racks = sorted({m.subscription.rack for m in members if m.subscription.rack is not None})
            raise UserInputError(f"--rack-down {rack!r}: no member is on that rack; racks: "
                                 f"{', '.join(racks) if racks else 'none (no member has a rack)'}")
        members = [m for m in members if m.subscription.rack != rack]
        notes.append(f"rack {rack} down: removed member(s) {', '.join(gone)}")
    if not members:
        raise UserInputError("the what-if removes every member of the group")
    leader = spec.leader if any(m.member_id == spec.leader for m in members) else members[0].member_id
    if leader != spec.leader:
        notes.append(f"the leader left: {leader} leads instead")
    if spec.has_recorded_outcome:
        notes.append("the recorded outcome (Kafka's own assignment) is not compared: the group was altered")
    members = [replace(m, recorded_assignment=None) for m in members]
    return replace(spec, members=tuple(members), leader=leader), tuple(notes)
