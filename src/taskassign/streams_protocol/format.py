"""Streams-group files (``taskassign/streams-group/v1``, docs/formats.md) and the assignors' output documents.

The input format is the one of Kafka's own streams-group goldens (camelCase keys, as Kafka's
``GroupSpec`` names them); a ``format`` tag marks taskassign's files, and a document without one is read
as a streams group when it has ``subtopologies`` and ``members``, so the goldens are read as they are.
Every malformed value raises ScenarioError naming its JSON path (``$.members[2].taskOffsets.0.7``).
An optional ``capture`` object holds what ``taskassign capture`` read from a broker (``capture.
streams_group_capture``: epochs, current assignments, the broker's topology and configs, its release line);
files without it read as before, and it is written back as read.

The output document is the goldens' too: ``{"assignor", "error", "members"}``, canonical (members,
subtopologies and partitions sorted, empty subtopology entries left out, every member present); on an
assignor error ``"error": {"type", "message"}`` and ``"members": null``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from taskassign.errors import StreamsAssignorError
from taskassign.formats.json_io import JsonObject, check_int, describe, dump_json, fail, load_json_file
from taskassign.internals.java_order import java_string_key
from taskassign.model import MAX_MEMBERS, MAX_PARTITIONS, MAX_TASKS
from taskassign.streams_protocol.model import (
    ASSIGNOR_NAMES,
    DEFAULT_ASSIGNOR_NAME,
    GroupMember,
    MemberAssignment,
    OffsetMap,
    StreamsGroup,
    StreamsGroupAssignment,
    Subtopology,
    TaskMap,
    task_map,
)

__all__ = (
    "PROPOSALS",
    "STREAMS_GROUP_FORMAT",
    "AssignmentDocument",
    "assignment_document",
    "is_streams_group_document",
    "parse_assignment_document",
    "parse_streams_group",
    "read_streams_group",
    "streams_group_name",
    "streams_group_to_dict",
    "write_streams_group",
)

STREAMS_GROUP_FORMAT = "taskassign/streams-group/v1"
INT_MAX = 2**31 - 1
_PARTITION_KEY = re.compile(r"^[0-9]+$")
_SUFFIXES = (".json", ".input", ".streams-group")

#: An output document read back: Kafka's assignor name, then the members or the error (type, message).
AssignmentDocument = tuple[str, StreamsGroupAssignment | tuple[str, str]]


def is_streams_group_document(doc: Any) -> bool:
    """A decoded JSON document that is a streams group: tagged as one, or untagged with the goldens' keys."""
    if not isinstance(doc, dict):
        return False
    if "format" in doc:
        return bool(doc["format"] == STREAMS_GROUP_FORMAT)
    return "subtopologies" in doc and "members" in doc


def streams_group_name(path: str | Path) -> str:
    """``dir/case.input.json`` -> ``case``; ``app.streams-group.json`` -> ``app``."""
    name = Path(path).name
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def read_streams_group(path: str | Path) -> StreamsGroup:
    """Read and validate a streams-group file; the default name is the file name without its suffixes."""
    return parse_streams_group(load_json_file(path), source=str(path), default_name=streams_group_name(path))


def parse_streams_group(doc: Any, *, source: str | None = None, default_name: str = "streams-group") -> StreamsGroup:
    """Validate a decoded streams-group document."""
    root = JsonObject(doc, "$", source)
    if root.has("format"):
        root.expect_format(STREAMS_GROUP_FORMAT)
    name = root.string("name", default_name, non_empty=True)
    note = root.string("note", None, nullable=True)
    assignor = root.string("assignor", DEFAULT_ASSIGNOR_NAME)
    if assignor not in ASSIGNOR_NAMES:
        root.fail("assignor", f"expected one of {', '.join(map(repr, ASSIGNOR_NAMES))} (Kafka's broker-side "
                              f"assignors), got {assignor!r}")
    configs = _string_map(root, "configs")
    subtopologies = _subtopologies(root.array("subtopologies"), source)
    members = _members(root.array("members"), source)
    capture = root.raw("capture", None)
    if capture is not None and not isinstance(capture, dict):
        root.fail("capture", f"expected an object (what `taskassign capture` read from the broker), got "
                             f"{describe(capture)}")
    root.finish()
    return StreamsGroup(name=name, subtopologies=subtopologies, members=members, configs=configs,
                        assignor=assignor, note=note,
                        capture=None if capture is None else MappingProxyType(dict(capture)))


def _string_map(obj: JsonObject, key: str) -> Mapping[str, str]:
    def as_str(value: Any, path: str) -> str:
        if not isinstance(value, str):
            fail(path, f"expected a string, got {describe(value)}", obj.source)
        return value

    return MappingProxyType(obj.map_of(key, as_str))


def _subtopologies(items: list[Any], source: str | None) -> tuple[Subtopology, ...]:
    result: list[Subtopology] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        obj = JsonObject(item, f"$.subtopologies[{i}]", source)
        sid = obj.string("id", non_empty=True)
        if sid in seen:
            obj.fail("id", f"subtopology {sid!r} is listed twice")
        seen.add(sid)
        partitions = obj.integer("partitions", minimum=0, maximum=MAX_PARTITIONS)
        stateful = obj.boolean("stateful", False)
        obj.finish()
        result.append(Subtopology(sid, partitions, stateful))
    if sum(s.partitions for s in result) > MAX_TASKS:  # one task per partition: bounded, as in every input
        fail("$.subtopologies", f"{sum(s.partitions for s in result)} tasks in all, more than the {MAX_TASKS} "
                                "taskassign assigns in one application", source)
    return tuple(result)


def _members(items: list[Any], source: str | None) -> tuple[GroupMember, ...]:
    if len(items) > MAX_MEMBERS:
        fail("$.members", f"{len(items)} members, more than the {MAX_MEMBERS} taskassign takes per group "
                        "(docs/security.md, Work)", source)
    result: list[GroupMember] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        obj = JsonObject(item, f"$.members[{i}]", source)
        member_id = obj.string("memberId", non_empty=True)
        if member_id in seen:
            obj.fail("memberId", f"member {member_id!r} is also $.members[{seen[member_id]}] (member ids are the "
                                 "keys of the coordinator's member map)")
        seen[member_id] = i
        process_id = obj.string("processId", non_empty=True)
        rack = obj.string("rackId", None, nullable=True)
        instance = obj.string("instanceId", None, nullable=True)
        tags = _string_map(obj, "clientTags")
        member = GroupMember(
            member_id=member_id, process_id=process_id, rack_id=rack, instance_id=instance, client_tags=tags,
            active_tasks=_task_map(obj, "activeTasks"), standby_tasks=_task_map(obj, "standbyTasks"),
            warmup_tasks=_task_map(obj, "warmupTasks"), task_offsets=_offset_map(obj, "taskOffsets"),
            task_end_offsets=_offset_map(obj, "taskEndOffsets"),
        )
        obj.finish()
        result.append(member)
    return tuple(result)


def _task_map(member: JsonObject, key: str) -> TaskMap:
    raw = member.obj(key, None)
    pairs: list[tuple[str, int]] = []
    for sid in raw.data:
        path = raw.sub(sid)
        partitions = raw.array(sid)
        seen: set[int] = set()
        for j, value in enumerate(partitions):
            partition = check_int(value, f"{path}[{j}]", minimum=0, maximum=INT_MAX, source=member.source)
            if partition in seen:
                fail(f"{path}[{j}]", f"partition {partition} is listed twice (a set of partitions)", member.source)
            seen.add(partition)
            pairs.append((sid, partition))
    return task_map(pairs)


def _offset_map(member: JsonObject, key: str) -> OffsetMap:
    raw = member.obj(key, None)
    result: dict[str, Mapping[int, int]] = {}
    for sid in sorted(raw.data, key=java_string_key):
        per_partition = raw.obj(sid)
        offsets: dict[int, int] = {}
        for text in per_partition.data:
            path = per_partition.sub(text)
            if not _PARTITION_KEY.match(text) or int(text) > INT_MAX:
                fail(path, f"expected a partition number as the key, got {text!r}", member.source)
            partition = int(text)
            if partition in offsets:
                fail(path, f"partition {partition} is listed twice", member.source)
            offsets[partition] = check_int(per_partition.raw(text), path, source=member.source)
        if offsets:
            result[sid] = MappingProxyType(dict(sorted(offsets.items())))
    return MappingProxyType(result)


# --- writing -------------------------------------------------------------------------------------------


def _tasks_to_dict(tasks: TaskMap) -> dict[str, list[int]]:
    return {sid: list(partitions) for sid, partitions in tasks.items() if partitions}


def _offsets_to_dict(offsets: OffsetMap) -> dict[str, dict[str, int]]:
    return {sid: {str(p): v for p, v in per.items()} for sid, per in offsets.items()}


def streams_group_to_dict(group: StreamsGroup) -> dict[str, Any]:
    """The group as a ``taskassign/streams-group/v1`` document (members in their map-insertion order)."""
    doc: dict[str, Any] = {"format": STREAMS_GROUP_FORMAT, "name": group.name}
    if group.note is not None:
        doc["note"] = group.note
    doc["assignor"] = group.assignor
    doc["configs"] = dict(group.configs)
    doc["subtopologies"] = [{"id": s.id, "partitions": s.partitions, "stateful": s.stateful}
                            for s in group.subtopologies]
    doc["members"] = [
        {
            "memberId": m.member_id, "processId": m.process_id, "rackId": m.rack_id, "instanceId": m.instance_id,
            "clientTags": dict(m.client_tags), "activeTasks": _tasks_to_dict(m.active_tasks),
            "standbyTasks": _tasks_to_dict(m.standby_tasks), "warmupTasks": _tasks_to_dict(m.warmup_tasks),
            "taskOffsets": _offsets_to_dict(m.task_offsets), "taskEndOffsets": _offsets_to_dict(m.task_end_offsets),
        }
        for m in group.members
    ]
    if group.capture is not None:
        doc["capture"] = dict(group.capture)
    return doc


def write_streams_group(group: StreamsGroup, path: str | Path) -> None:
    dump_json(streams_group_to_dict(group), path)


#: Assignors in no Kafka line: the open proposal each reproduces, said in every output document that names them.
PROPOSALS = MappingProxyType({"balanced": "KAFKA-20998 (an open proposal, in no Kafka release)"})


def assignment_document(assignor: str, outcome: StreamsGroupAssignment | StreamsAssignorError, *,
                        kafka_version: str | None = None) -> dict[str, Any]:
    """The goldens' output document of one assignor run (``assignor`` is Kafka's name); an assignor that is only
    a proposal gets a ``proposal`` key naming it, a run on a known line a ``kafka_version`` key."""
    label = {"proposal": PROPOSALS[assignor]} if assignor in PROPOSALS else {}
    if kafka_version is not None:
        label["kafka_version"] = kafka_version
    if isinstance(outcome, StreamsAssignorError):
        return {"assignor": assignor, **label, "error": {"type": outcome.java_type, "message": outcome.message},
                "members": None}
    return {
        "assignor": assignor,
        **label,
        "error": None,
        "members": {
            member_id: {"activeTasks": _tasks_to_dict(a.active_tasks), "standbyTasks": _tasks_to_dict(a.standby_tasks)}
            for member_id, a in sorted(outcome.members.items(), key=lambda item: java_string_key(item[0]))
        },
    }


def parse_assignment_document(doc: Any, *, source: str | None = None) -> AssignmentDocument:
    """Read an output document back (Kafka's goldens or taskassign's ``--json``)."""
    root = JsonObject(doc, "$", source)
    assignor = root.string("assignor")
    error = root.raw("error", None)
    members = root.raw("members", None)
    root.finish(allowed_extra=("proposal", "kafka_version"))
    if error is not None:
        err = JsonObject(error, "$.error", source)
        result: tuple[str, str] = (err.string("type", non_empty=True), err.string("message"))
        err.finish()
        if members is not None:
            fail("$.members", "must be null when $.error is set", source)
        return assignor, result
    if not isinstance(members, dict):
        fail("$.members", f"expected an object, got {describe(members)}", source)
    parsed: dict[str, MemberAssignment] = {}
    for member_id in members:
        entry = JsonObject(members[member_id], f"$.members.{member_id}", source)
        parsed[member_id] = MemberAssignment(_task_map(entry, "activeTasks"), _task_map(entry, "standbyTasks"))
        entry.finish()
    return assignor, StreamsGroupAssignment(MappingProxyType(parsed))
