"""The fields of a scenario's task and partition objects, in one table both readers work from.

``scenario.py`` reads every field through ``JsonObject`` (errors name the JSON path); ``_scenario_fast.py``
reads the well-formed ones without it (a 10^5-task file). Both take the keys, kinds, defaults and bounds
from here, and build through ``model.new_task_info`` / ``TaskTopicPartition`` with each field's ``arg``
as the keyword: a new field is one row here (and, if its kind is new, that kind in both readers, which
tests/formats/test_scenario_fast.py checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from taskassign.model import UNKNOWN_OFFSET_SUM

__all__ = ("INT_MAX", "LONG_MAX", "PARTITION_FIELDS", "REQUIRED", "TASK_FIELDS", "Field", "Kind")

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

#: The default of a field the object must have.
REQUIRED: Any = object()

#: ``task_id``: a task id string; ``string``: a non-empty string; ``int``: a JSON integer within bounds;
#: ``bool``; ``string_set``: an array of distinct strings (a SortedFrozenSet); ``partitions``: an array of
#: partition objects (PARTITION_FIELDS).
Kind = Literal["task_id", "string", "int", "bool", "string_set", "partitions"]


@dataclass(frozen=True, slots=True)
class Field:
    """One key of a task or partition object."""

    key: str  # as the file spells it
    arg: str  # the keyword of new_task_info / TaskTopicPartition it fills
    kind: Kind
    default: Any = REQUIRED  # when the key is absent (never checked: defaults are valid)
    minimum: int | None = None  # int: the bounds (None: Long.MIN_VALUE) ...
    maximum: int = LONG_MAX
    allowed: tuple[int, ...] = ()  # ... and values allowed outside them
    nullable: bool = False  # null is a value (None)


#: A task object (``$.tasks[i]``), in the order the general reader reads it (the first error it meets wins).
TASK_FIELDS: tuple[Field, ...] = (
    Field("id", "task_id", "task_id"),
    Field("stores", "stores", "string_set", []),
    Field("changelog_end_offset_sum", "changelog_end_offset_sum", "int", 0, minimum=0,
          allowed=(UNKNOWN_OFFSET_SUM,)),
    Field("state_bytes", "state_bytes", "int", None, minimum=0, nullable=True),
    Field("partitions", "partitions", "partitions", []),
)

#: A partition object (``$.tasks[i].partitions[j]``).
PARTITION_FIELDS: tuple[Field, ...] = (
    Field("topic", "topic", "string"),
    Field("partition", "partition", "int", minimum=0, maximum=INT_MAX),
    Field("source", "is_source", "bool", False),
    Field("changelog", "is_changelog", "bool", False),
    Field("racks", "rack_ids", "string_set", None, nullable=True),
)
