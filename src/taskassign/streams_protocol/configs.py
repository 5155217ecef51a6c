"""The configs each broker-side assignor reads, read the way Kafka's classes read them.

The sticky assignor of 4.1-4.3 (api-v1) gets the coordinator's ``Map<String, String>`` and reads
``Integer.parseInt(configs.get("num.standby.replicas"))`` unless the map is empty, so a non-empty map
without the key throws Java's ``NumberFormatException("Cannot parse null string")`` (a quirk the goldens
keep). From 4.4 it reads ``AssignmentConfigs.numStandbyReplicas()``: a missing key is 0. The balanced
assignor (api-v2, a proposal: KAFKA-20998) gets ``AssignmentConfigs``: ``numStandbyReplicas`` (default 0)
and ``rackAwareAssignmentTags`` (unused by this revision), validated before it runs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from taskassign.errors import ConfigError, JavaNumberFormatException

__all__ = (
    "NUM_STANDBY_REPLICAS",
    "RACK_AWARE_ASSIGNMENT_TAGS",
    "BalancedConfigs",
    "balanced_configs",
    "java_parse_int",
    "sticky_num_standby",
)

NUM_STANDBY_REPLICAS = "num.standby.replicas"
RACK_AWARE_ASSIGNMENT_TAGS = "rack.aware.assignment.tags"
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def java_parse_int(text: str | None) -> int:
    """Java 17's ``Integer.parseInt(text)``: an optional sign, then Unicode decimal digits (one UTF-16 unit
    each, so no supplementary-plane digit), within int range; otherwise JavaNumberFormatException with
    Java's message."""
    if text is None:
        raise JavaNumberFormatException("Cannot parse null string")
    units = text.encode("utf-16-be", "surrogatepass")
    digits = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    start = 1 if digits and digits[0] in (0x2B, 0x2D) else 0  # '+' / '-'
    value = 0
    valid = len(digits) > start
    for unit in digits[start:]:
        digit = -1 if 0xD800 <= unit <= 0xDFFF else unicodedata.decimal(chr(unit), -1)
        if digit < 0:
            valid = False
            break
        value = value * 10 + digit
    if start and digits[0] == 0x2D:
        value = -value
    if not valid or not _INT_MIN <= value <= _INT_MAX:
        raise JavaNumberFormatException(f'For input string: "{text}"')
    return value


def sticky_num_standby(configs: Mapping[str, str], *, typed: bool = False) -> int:
    """The sticky assignor's standby count. A string map (4.1-4.3): 0 for an empty map, else
    ``Integer.parseInt`` of the key (so a non-empty map without it throws). A typed ``AssignmentConfigs``
    (4.4 and later, ``typed``): the key's value, 0 when it is absent."""
    if not configs or (typed and NUM_STANDBY_REPLICAS not in configs):
        return 0
    return java_parse_int(configs.get(NUM_STANDBY_REPLICAS))


@dataclass(frozen=True, slots=True)
class BalancedConfigs:
    """The balanced assignor's ``AssignmentConfigs``."""

    num_standby_replicas: int = 0
    rack_aware_assignment_tags: tuple[str, ...] = ()


def balanced_configs(configs: Mapping[str, str]) -> BalancedConfigs:
    """``AssignmentConfigs`` from the group's string configs: the standby count a non-negative int (Kafka's
    group config validator), the tags a comma list."""
    raw = configs.get(NUM_STANDBY_REPLICAS)
    standby = 0
    if raw is not None:
        try:
            standby = java_parse_int(raw)
        except JavaNumberFormatException:
            raise ConfigError(NUM_STANDBY_REPLICAS, f"expected a non-negative integer, got {raw!r}") from None
        if standby < 0:
            raise ConfigError(NUM_STANDBY_REPLICAS, f"expected a non-negative integer, got {raw!r}")
    tags = tuple(t.strip() for t in configs.get(RACK_AWARE_ASSIGNMENT_TAGS, "").split(",") if t.strip())
    return BalancedConfigs(standby, tags)
