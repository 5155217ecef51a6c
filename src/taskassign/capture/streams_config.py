"""A Kafka Streams properties file, as the leader's configs: what taskassign needs of it, and a note of
what it leaves aside.

The application's own properties file (``--streams-config``) carries far more than the assignment reads
(serdes, state directories, client settings). The keys the leader's assignment reads become the group
file's ``configs``; ``task.assignor.class`` / ``internal.task.assignor.class`` say which assignor
Kafka ran; everything else is left out, with a note naming it, so nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskassign.assignors.registry import KAFKA_ASSIGNOR_CLASSES, builtin_name
from taskassign.capture.security import shown_key
from taskassign.configs import CONFIG_KEYS, TASK_ASSIGNOR_CLASS, AssignmentConfigs
from taskassign.errors import ConfigError, UserInputError

__all__ = ("KAFKA_ASSIGNOR_CLASSES", "StreamsConfig", "streams_config")

INTERNAL_TASK_ASSIGNOR_CLASS = "internal.task.assignor.class"
APPLICATION_ID = "application.id"
#: Keys that change how the leader encodes (not only what it assigns): taskassign cannot follow them.
UNSUPPORTED = ("upgrade.from",)
#: Kafka's own spelling of the extension keys taskassign reads is never in a Streams file.
_ASSIGNMENT_KEYS = frozenset(k for k in CONFIG_KEYS if not k.startswith("taskassign."))


@dataclass(frozen=True, slots=True)
class StreamsConfig:
    """The leader's configs (Kafka names, values typed as a group file holds them), the assignor Kafka ran
    (a taskassign name), and notes on what was left aside."""

    configs: Mapping[str, Any]
    assignor: str
    notes: tuple[str, ...]


def streams_config(properties: Mapping[str, str] | None, *, application_id: str, source: str) -> StreamsConfig:
    """Read the assignment's configs out of a Streams properties file; None means Kafka's defaults."""
    if properties is None:
        return StreamsConfig({}, "high_availability", (
            "no --streams-config: the leader's configs are Kafka's defaults (num.standby.replicas=0, "
            "acceptable.recovery.lag=10000, ...); give the application's properties file if it sets any",))
    declared = properties.get(APPLICATION_ID)
    if declared is not None and declared != application_id:
        raise UserInputError(f"{source}: application.id is {declared!r}, but the group is {application_id!r}: "
                             "is this the right application's properties file?")
    given = {k: v for k, v in sorted(properties.items()) if k in _ASSIGNMENT_KEYS}
    try:
        typed = AssignmentConfigs.from_properties(given, coerce_strings=True).to_properties()
    except ConfigError as exc:
        raise UserInputError(f"{source}: {exc}") from None
    configs = {k: typed[k] for k in given}
    notes: list[str] = []
    assignor = _assignor(properties, source, notes)
    for key in UNSUPPORTED:
        if key in properties:
            notes.append(f"{source}: {key}={properties[key]} is set: taskassign follows the members' reported "
                         "versions instead (the leader's own version cap is not modelled)")
    ignored = sorted(set(properties) - set(configs) - {APPLICATION_ID, TASK_ASSIGNOR_CLASS,
                                                        INTERNAL_TASK_ASSIGNOR_CLASS, *UNSUPPORTED})
    if ignored:
        named = sorted({shown_key(key) for key in ignored})  # a pasted secret on a line of its own reads as a key
        shown = ", ".join(named[:8]) + (f" and {len(named) - 8} more" if len(named) > 8 else "")
        notes.append(f"{source}: {len(ignored)} key(s) the assignment does not read were left out: {shown}")
    return StreamsConfig(configs, assignor, tuple(notes))


def _assignor(properties: Mapping[str, str], source: str, notes: list[str]) -> str:
    for key in (TASK_ASSIGNOR_CLASS, INTERNAL_TASK_ASSIGNOR_CLASS):
        value = properties.get(key, "").strip()
        if not value:
            continue
        name = KAFKA_ASSIGNOR_CLASSES.get(value)
        if name is None:
            name = builtin_name(value)
        if name is None:
            notes.append(f"{source}: {key}={value} is a custom assignor taskassign does not know: the recorded "
                         "outcome is compared with high_availability unless you give -a module:Class")
            return "high_availability"
        return name
    return "high_availability"
