"""Names an operator knows a client by, for every text output: the Kafka Streams ``client.id``, else its
``application.server`` endpoint, else the host it connects from, else a short process id.

One function (``client_names``) names the clients of every command, so that a client is called the same in
``assign``, ``compare``, ``diff``, ``rebalance`` and the what-ifs. Names are unique: a value two clients share
(the same ``client.id`` on every instance, one host for all) is not used, the next kind is tried, and a client
left without a unique value gets its short process id appended (``app~1b6f8a52``). JSON outputs keep the process
id as the key and add the name beside it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from taskassign.formats.group import GroupSpec
from taskassign.formats.units import short_ids, shortest_prefixes
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState

__all__ = (
    "ClientFacts",
    "client_names",
    "facts_from_group",
    "facts_from_state",
    "facts_from_streams_group",
    "names_for_states",
    "streams_client_id",
    "with_client_names",
)

#: A consumer's client id or member id: ``<client.id>-StreamThread-<n>[-consumer][-<member uuid>]``.
_THREAD_SUFFIX = re.compile(r"^(?P<client>.+?)-StreamThread-\d+(?:-.*)?$")


@dataclass(frozen=True, slots=True)
class ClientFacts:
    """What the input says about one client (Kafka Streams instance); None where it says nothing."""

    #: The instance's ``client.id`` (the prefix of its threads' consumer client ids).
    client_id: str | None = None
    #: ``application.server`` (``host:port``) as the instance reported it.
    endpoint: str | None = None
    #: The host its connections came from, as the broker saw it.
    host: str | None = None


def streams_client_id(consumer: str) -> str | None:
    """The Kafka Streams ``client.id`` in a thread's consumer client id or member id, or None."""
    match = _THREAD_SUFFIX.match(consumer)
    return match.group("client") if match else None


def facts_from_state(state: ApplicationState) -> dict[ProcessId, ClientFacts]:
    """Facts from the clients of an application: their consumers' ids and ``application.server``."""
    facts: dict[ProcessId, ClientFacts] = {}
    for pid, client in state.clients.items():
        ids = sorted({c for c in (streams_client_id(x) for x in client.consumer_client_ids) if c})
        facts[pid] = ClientFacts(ids[0] if len(ids) == 1 else None, client.host_info)
    return facts


def facts_from_group(spec: GroupSpec) -> dict[ProcessId, ClientFacts]:
    """Facts from a group file's members: their client ids, ``application.server`` and hosts (the first
    member, by member id, of each process that says something)."""
    facts: dict[ProcessId, ClientFacts] = {}
    for member in sorted(spec.members, key=lambda m: m.member_id):
        pid = member.info.process_id
        if pid is None:
            continue
        had = facts.get(pid, ClientFacts())
        consumer = member.client_id or member.member_id
        host = member.client_host.lstrip("/") if member.client_host and member.client_host.strip("/") else None
        facts[pid] = ClientFacts(had.client_id or streams_client_id(consumer),
                                 had.endpoint or member.info.user_endpoint, had.host or host)
    return facts


def names_for_states(*states: ApplicationState) -> dict[ProcessId, str]:
    """The names of every client of ``states`` together (a what-if's removed clients are in the first, its
    added ones in the second), so that one client keeps one name across the tables of a command."""
    facts: dict[ProcessId, ClientFacts] = {}
    for state in states:
        for pid, fact in facts_from_state(state).items():
            facts.setdefault(pid, fact)
    return client_names(facts)


def facts_from_streams_group(members: Iterable[Any], capture: Mapping[str, Any] | None) -> dict[str, ClientFacts]:
    """Facts per process id of a streams group (KIP-1071): each member's ``clientId``, ``clientHost`` and
    ``userEndpoint`` from the file's ``capture.members``, the first member (by member id) of each process."""
    captured = (capture or {}).get("members") or {}
    facts: dict[str, ClientFacts] = {}
    for member in sorted(members, key=lambda m: (m.process_id, m.member_id)):
        if member.process_id in facts:
            continue
        seen = captured.get(member.member_id) if isinstance(captured, Mapping) else None
        seen = seen if isinstance(seen, Mapping) else {}
        client = seen.get("clientId")
        endpoint = seen.get("userEndpoint")
        host = seen.get("clientHost")
        facts[member.process_id] = ClientFacts(
            streams_client_id(client) or client if isinstance(client, str) and client else None,
            f"{endpoint.get('host')}:{endpoint.get('port')}" if isinstance(endpoint, Mapping) else None,
            host.lstrip("/") if isinstance(host, str) and host.strip("/") else None)
    return facts


def client_names(facts: Mapping[Any, ClientFacts]) -> dict[Any, str]:
    """A unique, deterministic name per key (a ProcessId, or a streams group's process id text)."""
    keys = sorted(facts, key=str)
    short = _short(keys)
    kinds = ("client_id", "endpoint", "host")
    counts = {kind: Counter(v for k in keys if (v := _usable(getattr(facts[k], kind), k)) is not None)
              for kind in kinds}
    names: dict[Any, str] = {}
    for key in keys:
        values = [(kind, _usable(getattr(facts[key], kind), key)) for kind in kinds]
        unique = [v for kind, v in values if v is not None and counts[kind][v] == 1]
        present = [v for _, v in values if v is not None]
        names[key] = unique[0] if unique else f"{present[0]}~{short[key]}" if present else short[key]
    clashes = Counter(names.values())
    return {key: f"{name}~{short[key]}" if clashes[name] > 1 and name != short[key] else name
            for key, name in names.items()}


def _usable(value: str | None, key: Any) -> str | None:
    """A value worth naming a client by: not empty and not Kafka's default ``<application.id>-<process id>``
    client id (the short process id says the same in fewer characters)."""
    if not value or str(key) in value:
        return None
    return value


def _short(keys: list[Any]) -> dict[Any, str]:
    """Short forms of the keys: ``short_ids`` for process ids, the same rule for a streams group's texts."""
    if all(isinstance(k, ProcessId) for k in keys):
        return dict(short_ids(keys))
    prefixes = shortest_prefixes(str(k) for k in keys)
    return {k: prefixes[str(k)] for k in keys}


def with_client_names(document: dict[str, Any], names: Mapping[ProcessId, str]) -> dict[str, Any]:
    """An assignment document with each client's ``name`` (as the text outputs print it) beside its process id:
    the key stays the process id, the name is added first in the client's entry."""
    by_text = {str(pid): name for pid, name in names.items()}
    for text, entry in document.get("clients", {}).items():
        name = by_text.get(text)
        if name is not None:
            document["clients"][text] = {"name": name, **entry}
    return document
